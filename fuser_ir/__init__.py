"""fuser: an MLIR-style fusion compiler for NVIDIA GPUs, written in Python on xDSL.

The user-facing API is nvFuser's Python frontend::

    from fuser_ir import FusionDefinition, DataType

It is imported lazily, so that ``import fuser_ir.dtypes`` (and the dialects) stay
light and free of import cycles.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DataType", "Fusion", "FusionCache", "FusionDefinition"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from fuser_ir import frontend

        return getattr(frontend, name)
    raise AttributeError(f"module 'fuser_ir' has no attribute {name!r}")
