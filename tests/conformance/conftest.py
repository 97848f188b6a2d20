"""Collects nvFuser's frontend suite, prepared for the CPU or the GPU, and marks what
cannot pass yet.

At import, ``prepare.prepare`` writes the copies of ``upstream/`` to a temporary folder
(package ``python``, as upstream imports it) and puts that folder and ``shim/`` (the
test-only ``nvfuser`` module) on ``sys.path``; ``test_conformance.py`` imports the upstream
test class from there. ``FUSER_CONFORMANCE_DEVICE`` picks the mode: ``cpu`` (default, CI)
rewrites the device strings so the tests run on CPU tensors; ``cuda`` leaves upstream as
it is, so the tests run on torch CUDA tensors through fuser's GPU path (it needs a GPU),
and fusions without tensor inputs run on the GPU too (``set_default_device("cuda")``).
``SKIPS`` and ``XFAILS`` (``known.py``) are applied by test name (``marking.py``); an
xfail is strict on the CPU and not strict on the GPU, where the list was not measured.

Every upstream test starts with an empty ``FusionCache`` (``fresh_fusion_cache``).
Upstream runs the file in one process, in order, and some tests count on a reset made
by a test before them: ``test_fusion_information`` expects a new fusion where
``test_basic`` cached the same one. Under pytest-xdist the tests before it vary with
the worker, and it failed now and then.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from tests.conformance.marking import markers_for
from tests.conformance.prepare import DEVICE_ENV, conformance_device, prepare

HERE = Path(__file__).resolve().parent
collect_ignore_glob = ["upstream/*", "shim/*"]

DEVICE = conformance_device()
if DEVICE == "cuda":
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(
            f"{DEVICE_ENV}=cuda needs a CUDA device; torch.cuda.is_available() is False"
        )
    from fuser.frontend.execute_options import set_default_device

    # nvFuser runs every fusion on cuda:0: those without tensor inputs too (iota, full,
    # uniform/normal ...), returning CUDA tensors.
    set_default_device("cuda")
    from fuser.frontend.devices import set_cpu_tensors

    set_cpu_tensors(False)  # nvFuser's device model: from_pytorch takes CUDA tensors only
PREPARED = Path(tempfile.mkdtemp(prefix=f"fuser-conformance-{DEVICE}-"))
REWRITES = prepare(PREPARED, DEVICE)
for _path in (str(HERE / "shim"), str(PREPARED)):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def pytest_report_header(config: pytest.Config) -> str:
    rewrites = sum(n for per_file in REWRITES.values() for n in per_file.values())
    return f"conformance: device {DEVICE} ({DEVICE_ENV}), {rewrites} rewrites of the upstream suite"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not item.nodeid.startswith("tests/conformance/test_conformance.py::TestNvFuserFrontend"):
            continue
        for marker in markers_for(item.name, DEVICE):
            item.add_marker(marker)


@pytest.fixture(autouse=True)
def fresh_fusion_cache(request: pytest.FixtureRequest) -> None:
    """An empty ``FusionCache`` before each upstream test (module docstring)."""
    if request.node.nodeid.startswith("tests/conformance/test_conformance.py::"):
        from fuser.frontend.cache import FusionCache

        FusionCache.reset()
