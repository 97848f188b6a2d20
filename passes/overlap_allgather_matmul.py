"""``overlap-allgather-matmul``: overlap the allgather that feeds a matrix product with
the product itself (seed 001's stream-parallel loops applied to communication: the
collective matmul of nvFuser's ``doc/reading/multigpu.md``).

Sequence parallelism gathers an input sharded on its rows before a ``linear`` or
``matmul``: every device waits for the whole gather before its GEMM starts. The pass
decomposes both along the gathered rows, ``chunks`` chunks (an option) per device's
rows, each chunk's product on its own stream:

1. the transfers, first: at ring step ``k = 1 .. d - 1`` every device sends its
   chunks to mesh position ``p - k`` and receives those of position ``p + k``
   (``hir.send`` and ``hir.recv``, posted together), each chunk on its own stream.
   They are queued before any GEMM, so the communication kernels hold their few SMs
   before a GEMM takes them all;
2. this device's own chunks (``hir.mesh_position``), multiplied straight from its
   input with no transfer, while the transfers run;
3. each received chunk's product, on the stream of its transfer (so after it).

Before (2 devices, ``x`` 32 local rows)::

    %2 = hir.allocate : !fuser.tensor<64x32xf32>
    hir.allgather %0, %2 {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : ...
    %3 = hir.allocate {preallocated} : !fuser.tensor<64x48xf32>
    %4 = hir.launch @agmm_seg1(%1, %2) outs(%3 : !fuser.tensor<64x48xf32>) : ...

After (``chunks = 2``; the constants and the stream switches trimmed)::

    %4 = hir.reshape %0 {new_shape = array<i64: 2, 16, 32>} : ...   // own chunks
    %5 = hir.reshape %2 {new_shape = array<i64: 4, 16, 32>} : ...   // gathered chunks
    %6 = hir.reshape %3 {new_shape = array<i64: 4, 16, 48>} : ...   // output chunks
    %7 = hir.mesh_position {mesh = #iterdomain.mesh<[0, 1]>} : index
    %14 = arith.muli %7, %c2 : index
    hir.for %i = %c0 to %c2 step %c1 {                     // own rows: no transfer
      %18 = arith.remsi %i, %c2 : index
      %19 = hir.alias_select %4[axis = 0, %18] : ...
      %20 = arith.addi %14, %18 : index
      %21 = hir.alias_select %6[axis = 0, %20] : ...
      %22 = hir.launch @agmm_seg1_chunk16(%1, %19) outs(%21 : ...) : ...
    } {stream_axis = "allgather rows (own)"}
    hir.for %i = %c2 to %c4 step %c1 {                     // ring steps k = i / 2
      ...                                                  // src = (p + k) % 2, dst = (p - k) % 2
      hir.send %27 to(%32 : index) {mesh = #iterdomain.mesh<[0, 1]>} : ...
      hir.recv %35 from(%30 : index) {mesh = #iterdomain.mesh<[0, 1]>} : ...
      %37 = hir.launch @agmm_seg1_chunk16(%1, %35) outs(%36 : ...) : ...
    } {stream_axis = "allgather rows (ring)"}

``@agmm_seg1_chunk16`` is ``@agmm_seg1`` on 16 rows. The pattern applies where the
gathered buffer feeds only the product (as its first operand, whose rows stay the
result's rows) and every extent is static, the local rows divisible by ``chunks``;
elsewhere the program is left as it is (the gather, then the product: still correct).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from fuser.codegen.kernel_builders import index_constant
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.shapes import DYN

__all__ = ["OverlapAllgatherMatmul", "chunk_fusion", "product_of_rows"]


def product_of_rows(fusion: F.FusionOp, p: int) -> bool:
    """Whether ``fusion`` is one ``linear``/``matmul`` whose first operand is input
    ``p`` (and no other operand is) and whose result rows are that operand's rows
    (axis 0 kept: rank >= 2)."""
    lib = F.library_ops(fusion)
    ops = [o for o in fusion.body.block.ops if not isinstance(o, F.OutputOp)]
    if len(lib) != 1 or len(ops) != 1 or len(fusion.output_op.values) != 1:
        return False
    op = lib[0]
    first = op.operands[0]
    t = first.type
    if first is not fusion.inputs[p] or list(op.operands).count(first) != 1:
        return False
    if not isinstance(t, F.TensorType) or t.rank < 2:
        return False
    if isinstance(op, F.MatmulOp):
        tb = op.b.type
        return isinstance(tb, F.TensorType) and tb.rank == 2
    return isinstance(op, F.LinearOp)


def _with_rows(t: F.TensorType, rows: int) -> F.TensorType:
    return F.TensorType([rows, *t.get_shape()[1:]], t.element_type)


def chunk_fusion(fusion: F.FusionOp, p: int, rows: int) -> F.FusionOp:
    """``fusion`` (a product of the rows of input ``p``) on ``rows`` rows."""
    chunk = fusion.clone()
    chunk.sym_name = type(chunk.sym_name)(f"{fusion.sym_name.data}_chunk{rows}")
    arg = chunk.inputs[p]
    assert isinstance(arg.type, F.TensorType)
    arg._type = _with_rows(arg.type, rows)  # noqa: SLF001 - xDSL has no public type setter
    res = chunk.output_op.values[0]
    assert isinstance(res.type, F.TensorType)
    res._type = _with_rows(res.type, rows)  # noqa: SLF001
    chunk.function_type = FunctionType.from_lists(
        [a.type for a in chunk.inputs], [v.type for v in chunk.output_op.returned_values()]
    )
    return chunk


@dataclass
class OverlapPattern(RewritePattern):
    """``hir.allgather`` (rows) feeding a product's launch -> a stream loop."""

    chunks: int
    replaced: set[str] = field(default_factory=set)
    """The products whose launches became chunk loops."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: H.AllgatherOp, rewriter: PatternRewriter) -> None:
        if op.axis.value.data != 0:
            return
        buf, x = op.output, op.input
        tx, tg = x.type, buf.type
        assert isinstance(tx, F.TensorType) and isinstance(tg, F.TensorType)
        m = tx.get_shape()[0]
        if DYN in tx.get_shape() or DYN in tg.get_shape() or m % self.chunks:
            return
        users = [u.operation for u in buf.uses if u.operation is not op]
        launches = [u for u in users if isinstance(u, H.LaunchOp)]
        if len(launches) != 1 or any(not isinstance(u, H.LaunchOp | H.DeallocateOp) for u in users):
            return
        launch = launches[0]
        if launch.parent_block() is not op.parent_block() or list(launch.args).count(buf) != 1:
            return
        p = list(launch.args).index(buf)
        fusion = launch.callee_fusion()
        if fusion is None or len(launch.outs) != 1 or not product_of_rows(fusion, p):
            return
        out = launch.outs[0]
        to = out.type
        assert isinstance(to, F.TensorType)
        if DYN in to.get_shape():
            return
        d, s = op.mesh.size, self.chunks
        c = m // s
        module = fusion.parent_op()
        assert isinstance(module, ModuleOp)
        chunk = chunk_fusion(fusion, p, c)
        module.body.block.insert_op_after(chunk, fusion)

        x3 = H.ReshapeOp(x, [s, c, *tx.get_shape()[1:]])
        g3 = H.ReshapeOp(buf, [d * s, c, *tg.get_shape()[1:]])
        o3 = H.ReshapeOp(out, [d * s, c, *to.get_shape()[1:]])
        me = H.MeshPositionOp(op.mesh)
        s0 = H.GetCurrentStreamOp()
        zero, one, cs, cd, cn = index_constant(0), index_constant(1), index_constant(s), index_constant(d), index_constant(d * s)
        ms = arith.MuliOp(me.result, cs.result)  # the first row chunk of this device
        setup: list[Operation] = [x3, g3, o3, me, s0, zero, one, cs, cd, cn, ms]

        def iteration(i: SSAValue, part: str) -> list[Operation]:
            """One chunk: ``transfer`` (ring rows: the exchange), ``own`` (this
            device's rows: the product) or ``ring`` (ring rows: the product)."""
            stream = H.StreamForIndexOp(i)
            body: list[Operation] = [stream, H.SetCurrentStreamOp(stream.result)]
            if part != "ring":  # a ring chunk's stream waited in its transfer
                body.append(H.SynchronizeStreamOp(s0.result))
            sub = arith.RemSIOp(i, cs.result)
            body.append(sub)
            if part == "own":
                xs = H.AliasSelectOp(x3.result, 0, sub.result)
                row = arith.AddiOp(ms.result, sub.result)
                os_ = H.AliasSelectOp(o3.result, 0, row.result)
                body += [xs, row, os_]
                operand = xs.result  # this device's rows: no transfer
            else:
                k = arith.DivSIOp(i, cs.result)  # ring step k >= 1 (0: this device's rows)
                up = arith.AddiOp(me.result, k.result)
                src = arith.RemSIOp(up.result, cd.result)  # receive from position p + k
                row0 = arith.MuliOp(src.result, cs.result)
                row = arith.AddiOp(row0.result, sub.result)
                gs = H.AliasSelectOp(g3.result, 0, row.result)
                body += [k, up, src, row0, row, gs]
                operand = gs.result
                if part == "transfer":
                    pd = arith.AddiOp(me.result, cd.result)
                    down = arith.SubiOp(pd.result, k.result)
                    dst = arith.RemSIOp(down.result, cd.result)  # send to position p - k
                    xs = H.AliasSelectOp(x3.result, 0, sub.result)
                    body += [pd, down, dst, xs]
                    body += [H.SendOp(xs.result, dst.result, op.mesh), H.RecvOp(gs.result, src.result, op.mesh)]
                    body.append(H.SetCurrentStreamOp(s0.result))
                    return body
                os_ = H.AliasSelectOp(o3.result, 0, row.result)
                body.append(os_)
            args = list(launch.args)
            args[p] = operand
            body.append(H.LaunchOp(chunk, args, [os_.result]))
            body += [H.SetCurrentStreamOp(s0.result), H.SynchronizeStreamOp(stream.result)]
            return body

        loops = []
        for part, lb, ub in (("transfer", cs, cn), ("own", zero, cs), ("ring", cs, cn)):
            loop = H.ForOp(lb.result, ub.result, one.result, stream_axis=f"allgather rows ({part})")
            loop.body.block.add_ops(iteration(loop.induction_var, part))
            loops.append(loop)
        rewriter.insert([*setup, *loops], InsertPoint.before(launch))
        rewriter.replace(launch, [], [out])
        self.replaced.add(fusion.sym_name.data)
        rewriter.erase(op)


@dataclass(frozen=True)
class OverlapAllgatherMatmul(ModulePass):
    """Allgather + product -> a stream loop of broadcasts and chunk products (module
    docstring)."""

    name = "overlap-allgather-matmul"

    chunks: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.chunks <= 0:
            raise DiagnosticException(f"overlap-allgather-matmul: chunks must be positive, got {self.chunks}")
        pattern = OverlapPattern(self.chunks)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
        launched = {la.callee.root_reference.data for la in op.walk() if isinstance(la, H.LaunchOp)}
        for f in [f for f in op.ops if isinstance(f, F.FusionOp)]:
            if f.sym_name.data in pattern.replaced and f.sym_name.data not in launched:
                op.body.block.erase_op(f)  # a product every launch now runs in chunks
