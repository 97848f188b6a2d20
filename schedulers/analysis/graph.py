"""Small graph helpers over a fusion body: ops in order, reductions, producers and
consumers, and the dtype/shape of values."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator

from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects.fuser import (
    CastOp,
    ElementwiseOp,
    FusionOp,
    OutputOp,
    ReductionOp,
    TensorType,
    VarMeanOp,
    VarOp,
    WelfordOp,
)
from fuser.ir.dtypes import DType
from fuser.ir.shapes import normalize_dim

ReductionLike = ReductionOp | VarMeanOp | VarOp | WelfordOp
REDUCTION_TYPES = (ReductionOp, VarMeanOp, VarOp, WelfordOp)
ELEMENTWISE_OPS: tuple[type[Operation], ...] = (ElementwiseOp, CastOp)
"""Ops computing each element from the operands' elements at the same (broadcast) index:
the dialect's ``ElementwiseOp`` family (unary, binary, where, clamp, lerp, threshold,
addcmul) and casts."""


def is_elementwise(op: Operation) -> bool:
    return isinstance(op, ELEMENTWISE_OPS)


def body_ops(fusion: FusionOp) -> list[Operation]:
    """The computing ops of the fusion body in order: no terminator, and no
    iter-domain schedule ops (``schedule-fusions`` annotations compute nothing)."""
    return [
        op
        for op in fusion.body.block.ops
        if not isinstance(op, OutputOp) and op.name.startswith("fuser.")
    ]


def reductions(fusion: FusionOp) -> list[Operation]:
    return [op for op in body_ops(fusion) if isinstance(op, REDUCTION_TYPES)]


def is_reduction(op: Operation | None) -> bool:
    return isinstance(op, REDUCTION_TYPES)


def reduction_input(op: Operation) -> SSAValue:
    assert isinstance(op, REDUCTION_TYPES)
    return op.input


def reduction_dims(op: Operation) -> list[int]:
    """The reduced axes of the reduction's input, normalized and sorted."""
    assert isinstance(op, REDUCTION_TYPES)
    t = op.input.type
    assert isinstance(t, TensorType)
    raw = [int(d) for d in op.dims.get_values()]  # type: ignore[union-attr]
    return sorted({normalize_dim(d, t.rank) for d in raw})


def tensor_type(v: SSAValue) -> TensorType | None:
    return v.type if isinstance(v.type, TensorType) else None


def itemsize(v: SSAValue) -> int:
    t = v.type
    if isinstance(t, TensorType):
        return t.dtype.itemsize
    return DType.from_xdsl(t).itemsize


def producer_op(v: SSAValue) -> Operation | None:
    owner = v.owner
    return owner if isinstance(owner, Operation) else None


def users(v: SSAValue) -> list[Operation]:
    return [use.operation for use in v.uses]


def returned_outputs(fusion: FusionOp) -> list[SSAValue]:
    """Every value ``fuser.output`` writes (returned or aliased into an input)."""
    return list(fusion.output_op.values)


def ancestors(values: Iterable[SSAValue], stop: Container[SSAValue] = ()) -> set[SSAValue]:
    """``values`` and every value they are computed from; a value in ``stop`` is
    included but what it is computed from is not walked."""
    seen: set[SSAValue] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        op = producer_op(v)
        if op is not None and v not in stop:
            stack.extend(op.operands)
    return seen


def descendant_ops(values: Iterable[SSAValue]) -> set[Operation]:
    """Every op that (transitively) consumes one of ``values``."""
    seen: set[Operation] = set()
    stack = [u for v in values for u in users(v)]
    while stack:
        op = stack.pop()
        if op in seen or isinstance(op, OutputOp):
            continue
        seen.add(op)
        for r in op.results:
            stack.extend(users(r))
    return seen


def descendants(values: Iterable[SSAValue]) -> set[SSAValue]:
    """``values`` and every value computed from them (``ancestors``' twin, forward)."""
    values = list(values)
    return {r for op in descendant_ops(values) for r in op.results} | set(values)


def tensor_values(fusion: FusionOp) -> Iterator[SSAValue]:
    """Every tensor value of the fusion: inputs, then op results in order."""
    for a in fusion.inputs:
        if isinstance(a.type, TensorType):
            yield a
    for op in body_ops(fusion):
        for r in op.results:
            if isinstance(r.type, TensorType):
                yield r


def fastest_axis(t: TensorType, shape: tuple[int, ...] | None = None) -> int | None:
    """The fastest-varying axis that is not a broadcast (extent 1), following the
    stride order; None when every axis has extent 1."""
    shape = shape if shape is not None else t.get_shape()
    order = t.get_stride_order()
    for axis in sorted(range(t.rank), key=lambda a: order[a]):
        if shape[axis] != 1:
            return axis
    return None
