"""What a compiled program is specialized for: the shapes of its tensor inputs and
the values of the integer scalars that set extents (``Signature``), and its
``bind-sizes`` option; and what its kernels are not specialized for
(``symbolic_axes``: the extents they take as parameters, so that programs for
different batch sizes share their compiled kernels)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fuser.ir.dialects import fuser as F
from fuser.schedulers.analysis.sizes import has_size_operands

__all__ = ["SYMBOLIC_EXTENTS", "Signature", "kernel_layouts", "symbolic_axes"]


@dataclass(frozen=True)
class Signature:
    """What a compiled program is specialized for: per input, its shape (tensors),
    its value (an integer scalar of a fusion whose extents come from scalars), or
    None (any other scalar)."""

    inputs: tuple[tuple[int, ...] | int | None, ...]

    @staticmethod
    def of(fusion: F.FusionOp, flat: Sequence[Any]) -> Signature:
        """The signature of ``flat`` (arrays of any kind with ``.shape``, GPU arrays,
        shapes given as tuples for tensor inputs, scalars) for ``fusion``."""
        from fuser.runtime import gpu_arrays as ga

        sized: bool | None = None
        out: list[tuple[int, ...] | int | None] = []
        for x, t in zip(flat, fusion.function_type.inputs.data, strict=True):
            if isinstance(t, F.TensorType):
                if isinstance(x, tuple):
                    out.append(x)
                elif ga.is_gpu_array(x):
                    out.append(tuple(ga.array_info(x).shape))
                else:
                    out.append(tuple(int(d) for d in np.shape(x)))
                continue
            if sized is None:
                sized = has_size_operands(fusion)
            v = x.item() if isinstance(x, np.generic | np.ndarray) else x
            out.append(int(v) if sized and isinstance(v, int) and not isinstance(v, bool) else None)
        return Signature(tuple(out))

    def sizes_option(self) -> str:
        """The ``sizes`` option of ``bind-sizes`` (``sizes_option``'s grammar)."""
        parts = []
        for i, s in enumerate(self.inputs):
            if isinstance(s, tuple):
                parts.append(f"{i}=" + "x".join(str(d) for d in s))
            elif s is not None:
                parts.append(f"{i}={s}")
        return ",".join(parts)


SYMBOLIC_EXTENTS = os.environ.get("FUSER_STATIC_EXTENTS", "") in ("", "0")
"""Whether kernels take the batch extent as a parameter (``symbolic_axes``); set
``FUSER_STATIC_EXTENTS=1`` to bake every extent into the kernel text."""


def symbolic_axes(shapes: Sequence[Sequence[int] | None]) -> list[tuple[int, int]]:
    """The (input, axis) extents a program's kernels take as parameters: the batch
    (``fuser.codegen.lower.common.batch_axes``), unless ``SYMBOLIC_EXTENTS`` is off.
    Kernels of launches that differ only in these extents print the same CUDA and
    share one binary (``fuser.ir.symbolic``)."""
    from fuser.codegen.lower.common import batch_axes

    return batch_axes(shapes) if SYMBOLIC_EXTENTS else []


def kernel_layouts(layouts: Sequence[Any]) -> list[Any]:
    """``layouts`` (``TensorLayout`` or None per input) as every route to a kernel
    lowers them: the ``symbolic_axes`` extents symbolic (``symbolic_layouts``)."""
    from fuser.codegen.lower.common import symbolic_layouts

    return symbolic_layouts(layouts, symbolic_axes([lay.shape if lay is not None else None for lay in layouts]))
