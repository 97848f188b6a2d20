"""Shared pytest setup.

- ``@pytest.mark.gpu`` tests are skipped unless a CUDA driver and a device are present
  (``cuInit`` succeeds and at least one device is found): CI has no GPU.
- The kernel cache goes to a per-session temporary directory unless ``FUSER_CACHE_DIR``
  is set, so test runs never write to ``~/.cache``.
- Every generated kernel is verified (``FUSER_VERIFY_KERNELS``; off by default
  outside the tests, where it costs a third of a large fusion's lowering).
- The repository root is on ``sys.path`` (for ``tests.*`` and ``benchmarks.*``), which
  would make the layers' folders importable under their bare names (``passes``,
  ``runtime``, ...); ``BareFolderBlocker`` refuses those imports, so code and tests use
  the ``fuser.*`` names that an installation has.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
import tempfile
from typing import Any

import pytest

from fuser import SOURCE_FOLDERS

_BARE_FOLDERS = frozenset(SOURCE_FOLDERS.values())


class BareFolderBlocker(importlib.abc.MetaPathFinder):
    """Refuses ``import passes`` (and the other layer folders' bare names)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".")[0] in _BARE_FOLDERS:
            raise ImportError(
                f"import of {fullname!r}: the folder is imported as fuser.* "
                "(fuser_ir -> fuser.ir, passes -> fuser.passes, ...)"
            )
        return None


os.environ.setdefault("FUSER_VERIFY_KERNELS", "1")

if not any(isinstance(f, BareFolderBlocker) for f in sys.meta_path):
    sys.meta_path.insert(0, BareFolderBlocker())


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("FUSER_CACHE_DIR"):
        os.environ["FUSER_CACHE_DIR"] = tempfile.mkdtemp(prefix="fuser-kernels-")


def _gpu_skip_reason() -> str | None:
    try:
        from fuser.runtime import cuda_driver
    except Exception as e:  # cuda-bindings missing
        return f"cuda-bindings unavailable: {e}"
    try:
        if cuda_driver.device_count() == 0:
            return "no CUDA device"
    except cuda_driver.CudaError as e:
        return f"no CUDA driver: {e}"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = _gpu_skip_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in gpu_items:
        item.add_marker(skip)


@pytest.fixture
def own_fusion_cache() -> Any:
    """A fusion cache of the test's own: its definitions (some are other tests' too)
    leave no programs in the process-wide cache that other tests count."""
    from fuser.frontend.cache import FusionCache

    saved = FusionCache._instance  # noqa: SLF001
    FusionCache.reset()
    yield
    FusionCache._instance = saved  # noqa: SLF001
