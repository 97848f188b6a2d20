"""Inputs that share memory with an input the fusion updates in place.

``fd.add_output(out, alias_input=x)`` writes ``out`` into ``x``'s buffer.
``mark-aliases`` makes that safe inside the program: the kernel that writes ``x``
reads ``x`` (and any view of ``x`` the program passes it) only at the element it
writes, or the update goes through a temporary. It cannot see what the caller
passes: another input that is ``x`` itself, a view of it or any array overlapping
its memory is read by a kernel while that kernel overwrites it, which on the GPU
gives a result that depends on the order the blocks run in (on the CPU the
reference computes before it writes). ``in_place_conflict`` finds such an input, and
the frontend raises a ``ValueError`` naming it, as torch does for an ``out=`` that
partially overlaps an input::

    fd.add_output(fd.ops.add(x, fd.ops.permute(y, [1, 0])), alias_input=x)
    fd.execute([t, t])   # ValueError: input #1 shares memory with input #0, ...

The same array passed twice is fine when the fusion reads that input only element
by element (``aligned``: ``x * y`` with ``y`` being ``x``), as torch allows
``torch.mul(t, t, out=t)``. Otherwise the check is by bounds: the bytes from an
array's lowest to its highest element. Two views that interleave without sharing an
element (``t[::2]`` and ``t[1::2]``) count as overlapping: an error, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["byte_span", "in_place_conflict", "spans_overlap"]


def byte_span(x: Any) -> tuple[str, int, int, tuple[Any, ...]] | None:
    """(memory space, first byte, one past the last byte, the view: its data pointer,
    shape and byte strides) of the elements of array ``x`` (a numpy array or a GPU
    array ``gpu_arrays.array_info`` reads); None for a scalar or an array without
    elements."""
    if isinstance(x, np.ndarray):
        if x.size == 0:
            return None
        start = x.__array_interface__["data"][0]
        shape, strides, item = x.shape, x.strides, x.itemsize
        space = "host"
    else:
        from fuser.runtime import gpu_arrays as ga

        if not ga.is_gpu_array(x):
            return None
        info = ga.array_info(x)
        if any(e == 0 for e in info.shape):
            return None
        item = info.dtype.itemsize
        start, shape = info.ptr, info.shape
        strides = tuple(s * item for s in info.strides)
        space = f"cuda:{info.device}"
    lo = start + sum((e - 1) * s for e, s in zip(shape, strides, strict=True) if s < 0)
    hi = start + sum((e - 1) * s for e, s in zip(shape, strides, strict=True) if s > 0) + item
    return space, lo, hi, (start, tuple(shape), tuple(strides))


def spans_overlap(a: tuple[str, int, int, Any] | None, b: tuple[str, int, int, Any] | None) -> bool:
    """Whether two ``byte_span``s (None: no elements) share bytes of one memory space."""
    return a is not None and b is not None and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def in_place_conflict(
    alias_inputs: Sequence[int], flat: Sequence[Any], aligned: Callable[[int], bool]
) -> str | None:
    """The problem, when an input other than ``alias_inputs[k]`` (the input output
    ``k`` is written into; -1: none) shares memory with it, unless it is the same
    view and ``aligned(j)`` (the fusion reads input ``j`` only element by element);
    None when no input does. ``flat``: one value per fusion input."""
    targets = sorted({a for a in alias_inputs if a >= 0})
    if not targets:
        return None
    spans = [byte_span(x) for x in flat]
    for a in targets:
        sa = spans[a]
        if sa is None:
            continue
        for j, sj in enumerate(spans):
            if j == a or not spans_overlap(sa, sj):
                continue
            if not (sj[3] == sa[3] and aligned(j)):  # type: ignore[index]
                k = list(alias_inputs).index(a)
                return (
                    f"input #{j} shares memory with input #{a}, which output #{k} updates in "
                    f"place (alias_input): a kernel would read input #{j} while it overwrites "
                    f"it; pass a copy of input #{j}"
                )
    return None
