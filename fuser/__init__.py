"""fuser: an MLIR-style fusion compiler for NVIDIA GPUs, written in Python on xDSL.

The user-facing API is nvFuser's Python frontend::

    from fuser import DataType, FusionDefinition

Every layer imports under this one namespace (``pyproject.toml`` maps the repository's
top-level folders onto it), bottom to top::

    fuser.ir          fuser_ir/     dialects, types, shapes, reference semantics
    fuser.schedulers  schedulers/   heuristics: which scheduler, which parameters
    fuser.codegen     codegen/      kernel lowering, the CUDA printer, NVRTC
    fuser.passes      passes/       the passes fuser-opt runs (lower-to-kernels uses codegen)
    fuser.runtime     runtime/      host programs, compile-and-launch, the GPU executor
    fuser.frontend    frontend/     FusionDefinition (nvFuser's API)
    fuser.tools       tools/        fuser-opt, fuser-run, the xdsl-opt registration

A layer imports only the layers below it (``lint-imports`` checks it). The frontend's
names are exported here lazily, so that importing ``fuser.ir`` (what ``xdsl-opt`` does
to find fuser's dialects) does not import the compiler above it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

# pyproject.toml's [tool.setuptools.package-dir] (tests/test_layers.py checks that
# they agree): where each layer's folder sits in a source checkout.
SOURCE_FOLDERS: dict[str, str] = {
    "fuser.ir": "fuser_ir",
    "fuser.schedulers": "schedulers",
    "fuser.codegen": "codegen",
    "fuser.passes": "passes",
    "fuser.runtime": "runtime",
    "fuser.frontend": "frontend",
    "fuser.tools": "tools",
}


class SourceCheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``fuser.ir``, ``fuser.passes``, ... in a source checkout's top-level
    folders, as an installation would lay them out: ``PYTHONPATH=<checkout>`` is enough
    to import fuser (the device machine, scratch copies of the repository). Installed
    only when this package is a checkout's ``fuser/`` folder (an installed ``fuser``
    has the layers as real subfolders)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        folder = SOURCE_FOLDERS.get(fullname)
        if folder is None:
            return None
        where = self.root / folder
        return importlib.util.spec_from_file_location(
            fullname, where / "__init__.py", submodule_search_locations=[str(where)]
        )


def _install_source_finder() -> None:
    here = Path(__file__).resolve().parent
    if (here / "ir").exists() or not (here.parent / "fuser_ir" / "__init__.py").exists():
        return  # installed (or linked) layout: the layers are subfolders of this one
    if not any(isinstance(f, SourceCheckoutFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, SourceCheckoutFinder(here.parent))


_install_source_finder()

if TYPE_CHECKING:
    from fuser.frontend import (
        DataType,
        DeviceMesh,
        Fusion,
        FusionCache,
        FusionDefinition,
        ParallelType,
        Scalar,
        Tensor,
        Vector,
        explain,
        get_executor,
        set_executor,
    )

__all__ = [
    "DataType",
    "DeviceMesh",
    "Fusion",
    "FusionCache",
    "FusionDefinition",
    "ParallelType",
    "Scalar",
    "Tensor",
    "Vector",
    "explain",
    "get_executor",
    "set_executor",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from fuser import frontend

        return getattr(frontend, name)
    raise AttributeError(f"module 'fuser' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
