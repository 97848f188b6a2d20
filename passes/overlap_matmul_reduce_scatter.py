"""``overlap-matmul-reduce-scatter``: overlap the reduce-scatter of a product's
partial sums with the product itself (the other half of nvFuser's collective matmul,
``doc/reading/multigpu.md``: a row-parallel ``linear`` whose output is
sequence-parallel).

Each device multiplies its slice of the contracted axis into partial sums of the
whole output, then a reduce-scatter sums them over the devices and leaves each device
its rows: no transfer starts before the whole GEMM is done. The pass splits the
product along the output rows, one chunk per device, and turns the reduce-scatter
into a ring that accumulates chunk by chunk. At step ``k = 0 .. d - 1`` device ``p``
multiplies chunk ``c = (p - k - 1) mod d``, adds the running sum of that chunk that
position ``p - 1`` sent it (``k > 0``), and sends the result on to position ``p + 1``
(``k < d - 1``); at the last step ``c = p`` and the sum is this device's output. The
exchange of step ``k`` runs on a stream of its own while the GEMM of step ``k + 1``
runs on the program's stream; the addition waits for both.

Before (2 devices; ``x`` 8x8 local, ``w`` 12x8 local)::

    %2 = hir.allocate : !fuser.tensor<8x12xf32>
    %3 = hir.launch @mm_rs_seg0(%0, %1) outs(%2 : !fuser.tensor<8x12xf32>) : ...
    %4 = hir.allocate {preallocated} : !fuser.tensor<4x12xf32>
    hir.reduce_scatter %3, %4 {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : ...

After (the index arithmetic trimmed)::

    %x3 = hir.reshape %0 {new_shape = array<i64: 2, 4, 8>} : ...     // row chunks
    %p = hir.mesh_position {mesh = #iterdomain.mesh<[0, 1]>} : index
    %s = hir.get_current_stream : !hir.stream
    %t = hir.stream_for_index %c0 : index                             // the ring's stream
    %a0 = hir.allocate : !fuser.tensor<4x12xf32>
    %x0 = hir.alias_select %x3[axis = 0, %c_0] : ...                 // chunk (p - 1) mod 2
    %g0 = hir.launch @mm_rs_seg0_chunk4(%x0, %1) outs(%a0 : ...) : ...
    %r1 = hir.allocate : !fuser.tensor<4x12xf32>
    hir.set_current_stream %t
    hir.synchronize_stream %s
    hir.send %a0 to(%next : index) {mesh = ...} : ...
    hir.recv %r1 from(%prev : index) {mesh = ...} : ...
    hir.set_current_stream %s
    %x1 = hir.alias_select %x3[axis = 0, %p] : ...                   // this device's chunk
    %g1 = hir.launch @mm_rs_seg0_chunk4(%x1, %1) outs(%b1 : ...) : ...   // meanwhile
    hir.synchronize_stream %t
    %o = hir.launch @mm_rs_seg0_acc(%b1, %r1) outs(%4 : ...) : ...   // + the peer's sum

``@mm_rs_seg0_chunk4`` is the product on 4 rows, ``@mm_rs_seg0_acc`` the elementwise
sum of two chunks (a pointwise segment the schedulers then schedule). The pattern
applies where the product's result feeds only the reduce-scatter along its rows (axis
0, the rows of its first operand), every extent is static and the rows divide among
the devices; elsewhere the program is left as it is (the product, then the
reduce-scatter: still correct).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fuser.codegen.kernel_builders import index_constant
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.shapes import DYN
from fuser.passes.overlap_allgather_matmul import chunk_fusion, product_of_rows

__all__ = ["OverlapMatmulReduceScatter"]


def _sum_fusion(name: str, t: F.TensorType) -> F.FusionOp:
    """``@name(%a, %b) = %a + %b`` on two tensors of type ``t``."""
    fusion = F.FusionOp(name, [t, t], [t])
    a, b = fusion.body.block.args
    a.name_hint, b.name_hint = "partial", "received"
    add = F.BINARY_OP_CLASSES["add"](a, b)
    fusion.body.block.add_ops([add, F.OutputOp([add.results[0]])])
    return fusion


@dataclass
class OverlapPattern(RewritePattern):
    """A product's launch feeding ``hir.reduce_scatter`` (rows) -> the ring of chunk
    products and sums."""

    replaced: set[str] = field(default_factory=set)
    """The products whose launches became chunk products."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: H.ReduceScatterOp, rewriter: PatternRewriter) -> None:
        if op.axis.value.data != 0:
            return
        launch = op.input.owner
        if not isinstance(launch, H.LaunchOp) or len(launch.outs) != 1 or launch.parent_block() is not op.parent_block():
            return
        if any(u.operation is not op for u in launch.res[0].uses):
            return  # the partial sums feed something else too
        buf = launch.outs[0]
        if any(not isinstance(u.operation, H.LaunchOp | H.DeallocateOp) for u in buf.uses):
            return
        fusion = launch.callee_fusion()
        if fusion is None or len(F.library_ops(fusion)) != 1:
            return
        first = F.library_ops(fusion)[0].operands[0]
        if first not in fusion.inputs:
            return
        p = list(fusion.inputs).index(first)
        if not product_of_rows(fusion, p):
            return
        x, out = launch.args[p], op.output
        tx, tp, to = x.type, buf.type, out.type
        assert isinstance(tx, F.TensorType) and isinstance(tp, F.TensorType) and isinstance(to, F.TensorType)
        shapes = (tx.get_shape(), tp.get_shape(), to.get_shape())
        d = op.mesh.size
        m = tx.get_shape()[0]
        if any(DYN in s for s in shapes) or d < 2 or m % d or to.get_shape()[0] * d != m:
            return
        c = m // d
        module = fusion.parent_op()
        assert isinstance(module, ModuleOp)
        chunk = chunk_fusion(fusion, p, c)
        name = fusion.sym_name.data
        acc = _sum_fusion(f"{name}_acc", to)
        module.body.block.insert_op_after(chunk, fusion)
        module.body.block.insert_op_after(acc, chunk)

        x3 = H.ReshapeOp(x, [d, c, *tx.get_shape()[1:]])
        me = H.MeshPositionOp(op.mesh)
        s0 = H.GetCurrentStreamOp()
        zero, one, cd, last = index_constant(0), index_constant(1), index_constant(d), index_constant(d - 1)
        ring = H.StreamForIndexOp(zero.result)
        nxt = arith.AddiOp(me.result, one.result)
        to_next = arith.RemSIOp(nxt.result, cd.result)  # send to position p + 1
        prv = arith.AddiOp(me.result, last.result)
        from_prev = arith.RemSIOp(prv.result, cd.result)  # receive from position p - 1
        ops: list[Operation] = [x3, me, s0, zero, one, cd, last, ring, nxt, to_next, prv, from_prev]
        args = list(launch.args)
        received: SSAValue | None = None
        frees: list[SSAValue] = []
        for k in range(d):
            # Step k multiplies chunk (p - k - 1) mod d = (p + d - k - 1) mod d.
            shift = index_constant(d - k - 1)
            up = arith.AddiOp(me.result, shift.result)
            which = arith.RemSIOp(up.result, cd.result)
            xs = H.AliasSelectOp(x3.result, 0, which.result)
            part = H.AllocateOp(to)
            args[p] = xs.result
            ops += [shift, up, which, xs, part, H.LaunchOp(chunk, list(args), [part.result])]
            frees.append(part.result)
            total: SSAValue = part.result
            if received is not None:  # + the running sum of this chunk, from position p - 1
                if k == d - 1:
                    target = out  # this device's rows: the sum over every device
                else:
                    alloc = H.AllocateOp(to)
                    ops.append(alloc)
                    target = alloc.result
                    frees.append(target)
                ops += [H.SynchronizeStreamOp(ring.result), H.LaunchOp(acc, [total, received], [target])]
                total = target
            if k < d - 1:  # pass the sum on to p + 1; receive the next chunk's from p - 1
                incoming = H.AllocateOp(to)
                frees.append(incoming.result)
                ops += [
                    incoming,
                    H.SetCurrentStreamOp(ring.result),
                    H.SynchronizeStreamOp(s0.result),
                    H.SendOp(total, to_next.result, op.mesh),
                    H.RecvOp(incoming.result, from_prev.result, op.mesh),
                    H.SetCurrentStreamOp(s0.result),
                ]
                received = incoming.result
        # The buffers outlive the transfers: freed once the ring's stream is joined.
        ops.append(H.SynchronizeStreamOp(ring.result))
        ops += [H.DeallocateOp(v) for v in frees]
        rewriter.insert(ops, InsertPoint.before(op))
        for use in list(buf.uses):
            if isinstance(use.operation, H.DeallocateOp):
                rewriter.erase(use.operation)
        rewriter.erase(op)
        rewriter.erase(launch)
        alloc = buf.owner
        if isinstance(alloc, H.AllocateOp) and not alloc.result.uses:
            rewriter.erase(alloc)
        self.replaced.add(name)


@dataclass(frozen=True)
class OverlapMatmulReduceScatter(ModulePass):
    """Product + reduce-scatter -> a ring of chunk products and sums (module
    docstring)."""

    name = "overlap-matmul-reduce-scatter"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = OverlapPattern()
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
        launched = {la.callee.root_reference.data for la in op.walk() if isinstance(la, H.LaunchOp)}
        for f in [f for f in op.ops if isinstance(f, F.FusionOp)]:
            if f.sym_name.data in pattern.replaced and f.sym_name.data not in launched:
                op.body.block.erase_op(f)  # a product every launch now runs in chunks
