"""Persistent buffers: tensors that must stay live across a reduction.

A normalization reads a tensor, reduces it, broadcasts the result back and combines
it with values computed from that same tensor. Those values must be kept (in
registers or shared memory) from before the reduction until after it, or re-read.
For reduction ``R`` with input ``r``, a tensor ``v`` is a persistent buffer of ``R``
when

* ``v`` is ``r`` or one of its producers (it is needed to compute ``R``),
* ``v`` has a use, other than on the way to ``R``, that feeds a consumer of ``R``'s
  result (it is needed again after ``R``), and
* ``v`` spans a reduced axis (the axis is not of extent 1): per-row values such as a
  ``mean`` of shape ``[?, 1]`` are not buffers.

In softmax (``x -> max -> sub -> exp -> sum -> div``) the buffers are ``x`` (for
``max``) and ``exp(x - max)`` (for ``sum``)::

    %1 = fuser.max %0 ...          // %0 is persistent: fuser.sub uses it after %1
    %4 = fuser.exp %3 ...          // %4 is persistent: fuser.div uses it after %5
    %5 = fuser.sum %4 ...

*Projection to inputs* (nvFuser's project-to-inputs): a buffer can instead be
recomputed after the reduction from the fusion inputs it is computed from (and from
earlier reductions' results, which are small). Softmax projects ``exp(x - max)`` to
``x``, so one float per element is kept instead of two. The schedulers project when
that makes the buffers smaller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.ir.dialects.fuser import FusionOp, SizeOp, TensorType
from fuser.ir.shapes import DYN

from .graph import (
    ancestors,
    descendant_ops,
    is_reduction,
    itemsize,
    producer_op,
    reduction_dims,
    reduction_input,
    reductions,
    users,
)
from .sizes import ConcreteSizes


@dataclass(frozen=True)
class PersistentBuffer:
    value: SSAValue
    reduction: Operation
    """The (first) reduction across which ``value`` must stay live."""
    inputs: tuple[SSAValue, ...]
    """Fusion tensor inputs spanning the reduced axes that ``value`` is computed
    from: what is kept instead when the buffer is projected to inputs."""


@dataclass(frozen=True)
class PersistentBufferInfo:
    buffers: tuple[PersistentBuffer, ...]

    @property
    def values(self) -> tuple[SSAValue, ...]:
        return tuple(b.value for b in self.buffers)

    def projected(self) -> tuple[tuple[SSAValue, Operation], ...]:
        """The fusion inputs kept when every buffer is projected, each with the
        reduction it is kept across (in order, without repeats)."""
        out: dict[SSAValue, Operation] = {}
        for b in self.buffers:
            for i in b.inputs:
                out.setdefault(i, b.reduction)
        return tuple(out.items())

    def __bool__(self) -> bool:
        return bool(self.buffers)


def _aligned_reduced_extents(
    v_shape: Sequence[int], r_shape: Sequence[int], dims: Sequence[int]
) -> list[int]:
    """The extents of ``v`` along the reduced axes of ``r``, shapes right-aligned."""
    offset = len(r_shape) - len(v_shape)
    return [v_shape[d - offset] for d in dims if 0 <= d - offset < len(v_shape)]


def _spans_reduced_axis(v: SSAValue, red: Operation) -> bool:
    vt = v.type
    rt = reduction_input(red).type
    if not isinstance(vt, TensorType) or not isinstance(rt, TensorType):
        return False
    ext = _aligned_reduced_extents(vt.get_shape(), rt.get_shape(), reduction_dims(red))
    return any(e == DYN or e > 1 for e in ext)


def _projection_inputs(v: SSAValue, red: Operation) -> tuple[SSAValue, ...]:
    """The fusion inputs spanning ``red``'s reduced axes in ``v``'s producer cone,
    which stops at fusion inputs and at reduction results (per-row, cheap)."""
    seen: set[SSAValue] = set()
    found: list[SSAValue] = []
    stack = [v]
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if isinstance(u, BlockArgument):
            if isinstance(u.type, TensorType) and _spans_reduced_axis(u, red):
                found.append(u)
            continue
        op = producer_op(u)
        if op is None or is_reduction(op):
            continue
        stack.extend(op.operands)
    return tuple(sorted(found, key=lambda a: a.index))  # type: ignore[attr-defined]


def find_persistent_buffers(fusion: FusionOp) -> PersistentBufferInfo:
    found: dict[SSAValue, PersistentBuffer] = {}
    for red in reductions(fusion):
        before = ancestors([reduction_input(red)])
        before_ops = {producer_op(v) for v in before} - {None}
        after_ops = descendant_ops(red.results)
        after_vals = ancestors(o for op in after_ops for o in op.operands)
        for v in sorted(before, key=_position):
            if v in found or not isinstance(v.type, TensorType):
                continue
            if not _spans_reduced_axis(v, red):
                continue
            for u in users(v):
                if u is red or u in before_ops or isinstance(u, SizeOp):
                    continue  # fuser.size only reads metadata
                if u in after_ops or any(r in after_vals for r in u.results):
                    found[v] = PersistentBuffer(v, red, _projection_inputs(v, red))
                    break
    return PersistentBufferInfo(tuple(found.values()))


def _position(v: SSAValue) -> tuple[int, int]:
    if isinstance(v, BlockArgument):
        return (-1, v.index)
    op = producer_op(v)
    assert op is not None and op.parent_block() is not None
    block = op.parent_block()
    assert block is not None
    return (block.get_operation_index(op), v.index)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class BufferSizes:
    """Bytes that one row (one iteration element) keeps live across the reduction."""

    unprojected: int
    projected: int

    @property
    def project_to_inputs(self) -> bool:
        return self.projected < self.unprojected

    @property
    def bytes_per_row(self) -> int:
        return min(self.projected, self.unprojected)


def _row_bytes(v: SSAValue, red: Operation, sizes: ConcreteSizes) -> int:
    ext = _aligned_reduced_extents(
        sizes.shape(v), sizes.shape(reduction_input(red)), reduction_dims(red)
    )
    n = 1
    for e in ext:
        n *= e
    return n * itemsize(v)


def buffer_sizes(info: PersistentBufferInfo, sizes: ConcreteSizes) -> BufferSizes:
    unprojected = sum(_row_bytes(b.value, b.reduction, sizes) for b in info.buffers)
    projected = sum(_row_bytes(v, red, sizes) for v, red in info.projected())
    return BufferSizes(unprojected, projected)
