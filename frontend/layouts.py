"""Input layouts: allocation order and contiguity (``stride_order``), and the key of a
run's input layouts: what nvFuser's kernel strings
(``fd.last_cuda_code``, ``fd.cuda_code_for``) and user schedules are kept by. Tensors
count by dtype, shape and strides (GPU arrays by their metadata), Int scalars by value
(they may be sizes), other scalars by type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fuser.ir.fp8 import as_strided

if TYPE_CHECKING:
    from fuser.frontend.cache import CacheEntry

__all__ = ["allocation_axes", "allocation_contiguity", "layout_key", "logical_contiguity"]


def _metadata(x: np.ndarray) -> np.ndarray:
    """An array with ``x``'s dtype, shape and strides over a one-element buffer (for
    layouts only; never read)."""
    return as_strided(np.zeros(1, x.dtype), x.shape, x.strides, writeable=False)


def layout_key(entry: CacheEntry, inputs: Sequence[Any]) -> tuple[tuple, list[Any]]:
    """(the key of these inputs' layouts, their metadata) after the frontend's input
    checks; GPU arrays count by their metadata."""
    from fuser.frontend.validation import plain_inputs, validate_inputs
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import meta_array

    if not isinstance(inputs, list | tuple):
        raise ValueError(f"inputs must be a list or tuple, got {type(inputs).__name__}")
    metas = [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    key: list[Any] = []
    kept: list[Any] = []
    for x in plain:
        if isinstance(x, np.ndarray):
            strides = tuple(s // x.itemsize for s in x.strides)
            key.append(("tensor", x.dtype.str, tuple(x.shape), strides))
            kept.append(_metadata(x))
        elif isinstance(x, list | tuple):
            key.append(("vector", tuple(int(e) for e in x)))
            kept.append(list(x))
        else:
            v = x.item() if isinstance(x, np.generic) else x
            sized = isinstance(v, int) and not isinstance(v, bool)
            key.append(("scalar", type(v).__name__, v if sized else None))
            kept.append(v)
    return tuple(key), kept


def allocation_axes(rank: int, stride_order: Sequence[int] | None) -> list[int]:
    """The logical axes in allocation order, outermost first: ``stride_order[i]`` is
    the rank of axis ``i``'s stride, so axis ``i`` is allocation position
    ``rank - 1 - stride_order[i]`` (None: row-major, position ``i``)."""
    if stride_order is None:
        return list(range(rank))
    axes = [0] * rank
    for i, r in enumerate(stride_order):
        axes[rank - 1 - r] = i
    return axes


def logical_contiguity(
    allocation: Sequence[bool | None], stride_order: Sequence[int] | None
) -> list[bool | None]:
    """Contiguity per logical axis from contiguity in allocation order."""
    out: list[bool | None] = [None] * len(allocation)
    for p, i in enumerate(allocation_axes(len(allocation), stride_order)):
        out[i] = allocation[p]
    return out


def allocation_contiguity(
    logical: Sequence[bool | None], stride_order: Sequence[int] | None
) -> list[bool | None]:
    """Contiguity in allocation order (outermost first) from contiguity per logical axis."""
    return [logical[i] for i in allocation_axes(len(logical), stride_order)]
