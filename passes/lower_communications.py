"""``lower-communications``: each launch of a communication segment becomes the ``hir``
collective it is (nvFuser's lowering of resharding expressions to ``Communication``
host IR).

After ``segment`` every ``fuser.reshard`` (made ``local`` by ``localize-shardings``)
is alone in a segment of the ``communication`` scheduler. Its launch becomes, by the
reshard's kind, ``hir.allgather``, ``hir.allreduce``, ``hir.reduce_scatter`` or
``hir.shard`` into the launch's output buffer (allocated here when the launch had
none); the segment fusion goes when nothing else launches it.

Before::

    %11 = hir.allocate : !fuser.tensor<8x16xf32>
    %12 = hir.launch @mlp_seg3(%10) outs(%11 : !fuser.tensor<8x16xf32>) : ...
    ...
    fuser.fusion @mlp_seg3(%0: !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32> {
      %1 = fuser.reshard %0 {from = #iterdomain.sharding<[0, 1], partial>,
                             to = #iterdomain.sharding<[0, 1]>, local} : ...
      fuser.output %1 : !fuser.tensor<8x16xf32>
    }

After::

    %11 = hir.allocate : !fuser.tensor<8x16xf32>
    hir.allreduce %10, %11 {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<8x16xf32>, !fuser.tensor<8x16xf32>

and the uses of ``%12`` read ``%11``. A ``fuser.reshard`` that is not ``local`` (the
fusion was not localized) or that shares its segment is a diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.shapes import DYN
from fuser.passes.host_rewrites import HostPassError

__all__ = ["LowerCommunications", "communication_segment"]


def communication_segment(fusion: F.FusionOp) -> F.ReshardOp | None:
    """The ``fuser.reshard`` a segment is (its only op but the output), or None when
    the segment holds none; a diagnostic when it holds one among other ops."""
    comm = F.communication_ops(fusion)
    if not comm:
        return None
    op = comm[0]
    ops = [o for o in fusion.body.block.ops if not isinstance(o, F.OutputOp)]
    outs = fusion.output_op.values
    if len(ops) != 1 or len(outs) != 1 or outs[0] is not op.results[0] or op.operands[0] not in fusion.inputs:
        raise HostPassError(
            f"lower-communications: @{fusion.sym_name.data}: {op.name} shares its segment with other "
            "ops; segment gives each communication a segment of its own"
        )
    assert isinstance(op, F.ReshardOp)
    if not op.is_local:
        raise HostPassError(
            f"lower-communications: @{fusion.sym_name.data}: {op.name} has global types; run "
            "localize-shardings before segment"
        )
    return op


def _output_buffer(launch: H.LaunchOp, reshard: F.ReshardOp, rewriter: PatternRewriter) -> SSAValue:
    """The launch's ``outs`` buffer, or a new ``hir.allocate`` of the result type."""
    if launch.outs:
        return launch.outs[0]
    t = launch.res[0].type
    assert isinstance(t, F.TensorType)
    src, dst = reshard.src, reshard.dst
    sizes: list[SSAValue] = []
    ops: list[Operation] = []
    d = arith.ConstantOp.from_int_and_width(src.size, i64)
    ops.append(d)
    for a, e in enumerate(t.get_shape()):
        if e != DYN:
            continue
        size = F.SizeOp(launch.args[0], a)
        ops.append(size)
        v: SSAValue = size.result
        if src.axis == a:
            mul = arith.MuliOp(v, d.result)
            ops.append(mul)
            v = mul.result
        if dst.axis == a:
            div = arith.DivSIOp(v, d.result)
            ops.append(div)
            v = div.result
        sizes.append(v)
    alloc = H.AllocateOp(t, sizes)
    rewriter.insert([*ops, alloc], InsertPoint.before(launch))
    return alloc.result


def _collective(reshard: F.ReshardOp, inp: SSAValue, out: SSAValue) -> H.CommunicationOp:
    mesh = reshard.src.mesh
    kind = reshard.kind
    if kind == "allgather":
        assert reshard.src.axis is not None
        return H.AllgatherOp(inp, out, mesh, reshard.src.axis)
    if kind == "allreduce":
        return H.AllreduceOp(inp, out, mesh)
    assert reshard.dst.axis is not None
    if kind == "reduce_scatter":
        return H.ReduceScatterOp(inp, out, mesh, reshard.dst.axis)
    return H.ShardOp(inp, out, mesh, reshard.dst.axis)


class LowerCommunicationLaunch(RewritePattern):
    """``hir.launch`` of a communication segment -> the ``hir`` collective."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: H.LaunchOp, rewriter: PatternRewriter) -> None:
        fusion = op.callee_fusion()
        if fusion is None:
            return
        reshard = communication_segment(fusion)
        if reshard is None:
            return
        out = _output_buffer(op, reshard, rewriter)
        rewriter.insert(_collective(reshard, op.args[0], out), InsertPoint.before(op))
        rewriter.replace(op, [], [out])


def _unused_communication_segments(module: ModuleOp) -> list[F.FusionOp]:
    launched = {
        op.callee.root_reference.data for op in module.walk() if isinstance(op, H.LaunchOp)
    }
    return [
        f
        for f in module.ops
        if isinstance(f, F.FusionOp) and f.sym_name.data not in launched and F.communication_ops(f)
    ]


@dataclass(frozen=True)
class LowerCommunications(ModulePass):
    """Launches of communication segments become ``hir`` collectives (module
    docstring)."""

    name = "lower-communications"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(isinstance(f, F.FusionOp) and F.communication_ops(f) for f in op.ops):
            return
        PatternRewriteWalker(LowerCommunicationLaunch(), apply_recursively=False).rewrite_module(op)
        for f in _unused_communication_segments(op):
            op.body.block.erase_op(f)
