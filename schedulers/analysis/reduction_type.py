"""Reduction type of a fusion (seed 004's ``getReductionType``).

A reduction is *inner* when the fastest-varying logical axis of its input (the
innermost axis of extent other than 1, following the input's stride order) is among
the reduced axes, *outer* otherwise. A fusion is ``INNER`` when all its reductions are
inner, ``OUTER`` when all are outer, ``INNER_OUTER`` when both kinds exist and
``NONE`` without reductions::

    %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> ...   // inner
    %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> ...   // outer
"""

from __future__ import annotations

from enum import Enum

from xdsl.ir import Operation

from fuser.ir.dialects.fuser import FusionOp, TensorType

from .graph import fastest_axis, reduction_dims, reductions


class ReductionType(Enum):
    NONE = "none"
    INNER = "inner"
    OUTER = "outer"
    INNER_OUTER = "inner_outer"


def is_fastest_dim_reduction(op: Operation) -> bool:
    """Whether the reduction reduces the fastest-varying axis of its input."""
    t = op.operands[0].type
    assert isinstance(t, TensorType)
    axis = fastest_axis(t)
    dims = reduction_dims(op)
    if axis is None:  # every axis has extent 1: treat as inner
        return True
    return axis in dims


def reduction_type(fusion: FusionOp) -> ReductionType:
    inner = outer = False
    for op in reductions(fusion):
        if is_fastest_dim_reduction(op):
            inner = True
        else:
            outer = True
    if inner and outer:
        return ReductionType.INNER_OUTER
    if inner:
        return ReductionType.INNER
    if outer:
        return ReductionType.OUTER
    return ReductionType.NONE
