"""``shrink-stream-buffers``: give an intermediate that lives inside one stream loop
iteration ``num_streams`` slices instead of one per iteration (seed 001's suggested
optimization, after ``lower-stream-loops``).

A buffer is shrunk when it is safe:

* it is a top-level ``hir.allocate`` that is not ``preallocated`` (not a result);
* every use is an ``hir.alias_select`` directly in the body of one ``hir.for``, on
  one axis, at the loop's induction variable, or a top-level ``hir.deallocate``
  (so the slice written by iteration ``i`` is read only by iteration ``i``);
* that loop picks its stream with ``hir.stream_for_index %i {num_streams = N}``.

Iteration ``i`` then uses slot ``i % N``: the iterations that share a slot (``i``,
``i + N``, ...) run on the same stream ``i % N``, in order, so slot reuse never
races. A buffer read after the loop (``ThreeSetOpsWithDisjointsForLoops``'s ``T1``,
read by the non-stream ``Set``), returned, or read in another loop stays whole.

Before (``TwoSetOps`` lowered with ``num-streams=2``)::

    %t1 = hir.allocate sizes(%n, %m : i64, i64) : !fuser.tensor<?x?xf32>
    hir.for %i = %c0 to %n step %c1 : i64 {
      ...
      %worker = hir.stream_for_index %i {num_streams = 2 : i64} : i64
      ...
      %t1_slice = hir.alias_select %t1[axis = 0, %i] : ... -> !fuser.tensor<?xf32>
    }
    hir.deallocate %t1 : !fuser.tensor<?x?xf32>

After::

    %t1 = hir.allocate sizes(%m : i64) : !fuser.tensor<2x?xf32>
    hir.for %i = %c0 to %n step %c1 : i64 {
      ...
      %worker = hir.stream_for_index %i {num_streams = 2 : i64} : i64
      %c2 = arith.constant 2 : i64
      %slot = arith.remsi %i, %c2 : i64
      ...
      %t1_slice = hir.alias_select %t1[axis = 0, %slot] : ... -> !fuser.tensor<?xf32>
    }
    hir.deallocate %t1 : !fuser.tensor<2x?xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.shapes import DYN

__all__ = ["ShrinkStreamBuffers", "shrink_stream_buffers"]


def _loop_streams(loop: H.ForOp) -> tuple[H.StreamForIndexOp, int] | None:
    """The ``hir.stream_for_index`` of ``loop``'s induction variable and its stream count."""
    for op in loop.body.block.ops:
        if isinstance(op, H.StreamForIndexOp) and op.index == loop.induction_var:
            n = op.get_num_streams()
            return None if n is None else (op, n)
    return None


def shrinkable(alloc: H.AllocateOp) -> tuple[H.ForOp, int, int] | None:
    """``(loop, axis, num_streams)`` when ``alloc`` can be shrunk (see the module
    docstring), else None."""
    if alloc.is_preallocated or not isinstance(alloc.parent_op(), H.ProgramOp):
        return None
    loop: H.ForOp | None = None
    axis: int | None = None
    for use in alloc.result.uses:
        u = use.operation
        if isinstance(u, H.DeallocateOp) and u.parent_block() is alloc.parent_block():
            continue
        if not isinstance(u, H.AliasSelectOp) or use.index != 0:
            return None
        parent = u.parent_op()
        if not isinstance(parent, H.ForOp) or u.index != parent.induction_var:
            return None
        if loop not in (None, parent) or axis not in (None, u.get_axis()):
            return None
        loop, axis = parent, u.get_axis()
    if loop is None or axis is None:
        return None
    streams = _loop_streams(loop)
    if streams is None:
        return None
    return loop, axis, streams[1]


def _shrink(alloc: H.AllocateOp, loop: H.ForOp, axis: int, n: int) -> None:
    t = alloc.result.type
    assert isinstance(t, F.TensorType)
    shape = t.get_shape()
    if shape[axis] != DYN and shape[axis] <= n:
        return  # already no bigger than the stream count
    sizes = list(alloc.sizes)
    if shape[axis] == DYN:
        k = sum(1 for d in shape[:axis] if d == DYN)
        del sizes[k]
    new_shape = [n if i == axis else d for i, d in enumerate(shape)]
    new = H.AllocateOp(
        F.TensorType(new_shape, t.element_type), sizes, zero_init=alloc.is_zero_init
    )
    new.result.name_hint = alloc.result.name_hint
    block = alloc.parent_block()
    assert block is not None
    block.insert_op_before(new, alloc)
    alloc.result.replace_all_uses_with(new.result)
    alloc.detach()
    alloc.erase()
    pick, _ = _loop_streams(loop) or (None, 0)
    assert pick is not None
    slot = _slot(loop, pick, n)
    for use in list(new.result.uses):
        u = use.operation
        if isinstance(u, H.AliasSelectOp):
            u.operands[1] = slot


def _slot(loop: H.ForOp, pick: H.StreamForIndexOp, n: int) -> SSAValue:
    """``%slot = %i % n`` in ``loop``'s body (made once, after the stream pick)."""
    iv = loop.induction_var
    for op in loop.body.block.ops:
        if (
            isinstance(op, arith.RemSIOp)
            and op.lhs == iv
            and isinstance(c := op.rhs.owner, arith.ConstantOp)
            and c.value == IntegerAttr(n, iv.type)
        ):
            return op.result
    c = arith.ConstantOp(IntegerAttr(n, iv.type))
    c.result.name_hint = f"c{n}"
    rem = arith.RemSIOp(iv, c.result)
    rem.result.name_hint = "slot"
    loop.body.block.insert_ops_after([c, rem], pick)
    return rem.result


def shrink_stream_buffers(module: ModuleOp) -> int:
    """Shrink every safe buffer of the module's programs; returns how many."""
    count = 0
    allocs = [op for op in module.walk() if isinstance(op, H.AllocateOp)]
    for alloc in allocs:
        found = shrinkable(alloc)
        if found is None:
            continue
        loop, axis, n = found
        _shrink(alloc, loop, axis, n)
        count += 1
    return count


@dataclass(frozen=True)
class ShrinkStreamBuffers(ModulePass):
    """Shrink per-iteration intermediates of stream loops to ``num_streams`` slices."""

    name = "shrink-stream-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        shrink_stream_buffers(op)
