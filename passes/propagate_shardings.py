"""``propagate-shardings``: give every tensor of a multi-device fusion a sharding, and
make every change of sharding an explicit ``fuser.reshard`` (nvFuser's sharding
propagation plus its insertion of resharding ``set`` s).

A user shards a fusion by declaring how some tensors are distributed
(``iterdomain.shard``, nvFuser's ``set_device_mesh`` and ``DIDx``); the inputs at
least, and any tensor whose sharding the user wants fixed (an output's is how
``execute`` returns it). The pass walks the fusion forward and gives each op's result
its *natural* sharding, the one computing it on local shards gives:

* elementwise ops, casts and views keep the sharded axis (moved by broadcasts,
  permutes, squeezes); a replicated operand of a sharded op is sliced locally
  (``fuser.reshard`` replicated -> ``DIDx``: no communication);
* a sum over the sharded axis, or a ``linear``/``matmul`` contracting it, gives
  **partial sums**: each device holds the sum of its part. A partial value feeds
  only a ``fuser.reshard`` to a replicated value (an allreduce) or a sharded one (a
  reduce-scatter: a ``set`` of the partial sums declared sharded, or the partial
  result itself declared so): the pass inserts the allreduce before any other
  consumer, and splits a ``linear``'s bias off (added after the allreduce, once);
* ``linear``'s output features are sharded when its weight's rows are (column
  parallel), its rows when its input's are.

Where a user declaration differs from the natural sharding, the result keeps the
natural one and a ``fuser.reshard`` to the declared one follows (an allgather when a
sharded value is declared replicated). Undeclared inputs are replicated. Shardings
that cannot meet (two sharded axes in one elementwise op, a 2-D sharding of a
``linear``, a max over a sharded axis, a reshape of one, two meshes) are diagnostics
naming the op and its operands. A fusion without ``iterdomain.shard`` is left alone.

Before (tensor parallel MLP: column-, then row-sharded weights)::

    fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>,
                      %w2: !fuser.tensor<16x32xf32>, %b2: !fuser.tensor<16xf32>) -> ... {
      %h = fuser.linear %x, %w1 : ... -> !fuser.tensor<8x32xf32>
      %g = fuser.gelu %h : ...
      %y = fuser.linear %g, %w2, %b2 : ... -> !fuser.tensor<8x16xf32>
      iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : ...
      iterdomain.shard %w2 {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : ...
      fuser.output %y : !fuser.tensor<8x16xf32>
    }

After::

      %h = fuser.linear %x, %w1 : ...                       // DIDx = 1 (columns)
      %g = fuser.gelu %h : ...                              // DIDx = 1
      %0 = fuser.linear %g, %w2 : ...                       // partial
      %1 = fuser.reshard %0 {from = #iterdomain.sharding<[0, 1], partial>,
                             to = #iterdomain.sharding<[0, 1]>} : ...   // allreduce
      %2 = fuser.broadcast %b2 {is_broadcast_dim = array<i1: true, false>} : ...
      %y = fuser.add %1, %2 : ...
      iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1]>} : ...
      ... one iterdomain.shard per tensor ...
      fuser.output %y : !fuser.tensor<8x16xf32>
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import iterdomain as I
from fuser.ir.dialects.sharding import DeviceMeshAttr, ShardingAttr, ShardingError

__all__ = ["PropagateShardings", "ShardingConflict", "propagate_shardings"]


class ShardingConflict(DiagnosticException):
    """Shardings that cannot meet; the message names the op and its operands."""


def _axes(op: Operation, v: SSAValue) -> str:
    i = list(op.operands).index(v)
    return f"operand #{i}"


class _Propagation:
    """One forward walk over a fusion body (see the module docstring)."""

    def __init__(self, fusion: F.FusionOp, declared: dict[SSAValue, ShardingAttr]) -> None:
        self.fusion = fusion
        self.declared = declared
        meshes = {s.mesh for s in declared.values()}
        if len(meshes) > 1:
            names = sorted(str(m.devices) for m in meshes)
            raise ShardingConflict(
                f"propagate-shardings: @{fusion.sym_name.data} declares shardings on {len(meshes)} "
                f"meshes ({', '.join(names)}); a fusion runs on one mesh"
            )
        self.mesh: DeviceMeshAttr = next(iter(meshes))
        self.replicated = ShardingAttr(self.mesh)
        self.partial = ShardingAttr(self.mesh, partial=True)
        self.sh: dict[SSAValue, ShardingAttr] = {}

    # ---- helpers --------------------------------------------------------------------
    def sharded(self, axis: int) -> ShardingAttr:
        return ShardingAttr(self.mesh, axis)

    def of(self, v: SSAValue) -> ShardingAttr:
        return self.sh.get(v, self.replicated)

    def reshard_before(self, op: Operation, index: int, to: ShardingAttr) -> None:
        """Operand ``index`` of ``op`` resharded to ``to`` just before ``op``."""
        v = op.operands[index]
        r = F.ReshardOp(v, self.of(v), to)
        op.parent_block().insert_op_before(r, op)  # type: ignore[union-attr]
        self.sh[r.result] = to
        op.operands[index] = r.result

    # ---- the walk -------------------------------------------------------------------
    def run(self) -> None:
        block = self.fusion.body.block
        for a in block.args:
            if isinstance(a.type, F.TensorType):
                s = self.declared.get(a, self.replicated)
                if s.is_partial:
                    raise ShardingConflict(
                        f"propagate-shardings: input #{a.index} of @{self.fusion.sym_name.data} is "
                        "declared partial; inputs are replicated or sharded"
                    )
                self.sh[a] = s
        for op in list(block.ops):
            if isinstance(op, F.OutputOp) or not op.name.startswith("fuser."):
                continue
            self.visit(op)
        out = self.fusion.output_op
        for i, v in enumerate(list(out.values)):
            if self.of(v).is_partial:
                self.reshard_before(out, i, self.replicated)
        self.annotate()

    def visit(self, op: Operation) -> None:
        if isinstance(op, F.ReshardOp):
            self.sh[op.result] = op.dst
            return
        if self.is_reduce_scatter(op):
            # partial sums declared sharded through a set: one reduce-scatter (not an
            # allreduce, then a local slice: twice the traffic)
            self.reshard_after(op, op.results[0], self.partial, self.declared[op.results[0]])
            return
        for i, v in enumerate(op.operands):
            if self.of(v).is_partial:
                self.reshard_before(op, i, self.replicated)
        if isinstance(op, F.LinearOp) and op.bias is not None and self.contracts_sharded(op):
            op = self.split_bias(op)
        results = [r for r in op.results if isinstance(r.type, F.TensorType)]
        if not results:
            return
        natural = self.natural(op)
        for r in results:
            want = self.declared.get(r)
            if want is not None and natural.is_replicated and want.axis is not None and self.new_axis(op, want.axis):
                natural = want  # a broadcast straight into local shards
            self.sh[r] = natural
            if want is not None and want != natural:
                self.reshard_after(op, r, natural, want)

    def is_reduce_scatter(self, op: Operation) -> bool:
        """Whether ``op`` is a ``set`` of partial sums whose result is declared sharded."""
        if not isinstance(op, F.UNARY_OP_CLASSES["set"]) or not isinstance(op.operands[0].type, F.TensorType):
            return False
        want = self.declared.get(op.results[0])
        return want is not None and want.axis is not None and self.of(op.operands[0]).is_partial

    def reshard_after(self, op: Operation, r: SSAValue, natural: ShardingAttr, want: ShardingAttr) -> None:
        if want.is_partial:
            raise ShardingConflict(f"propagate-shardings: {op.name}: a result cannot be declared partial")
        if natural.axis is not None and want.axis is not None:
            raise ShardingConflict(
                f"propagate-shardings: {op.name}: its result is {natural.describe()}, but it is declared "
                f"{want.describe()}; moving a sharded axis (an all-to-all) is not supported"
            )
        if isinstance(op, F.UNARY_OP_CLASSES["set"]) and isinstance(op.operands[0].type, F.TensorType):
            # a set whose result is declared otherwise is the resharding itself
            rs = F.ReshardOp(op.operands[0], natural, want)
            op.parent_block().insert_op_after(rs, op)  # type: ignore[union-attr]
            r.replace_all_uses_with(rs.result)
            self.declared[rs.result] = self.declared.pop(r)
            op.parent_block().erase_op(op)  # type: ignore[union-attr]
            self.sh[rs.result] = want
            return
        rs = F.ReshardOp(r, natural, want)
        op.parent_block().insert_op_after(rs, op)  # type: ignore[union-attr]
        r.replace_uses_with_if(rs.result, lambda use: use.operation is not rs and not isinstance(use.operation, I.ShardOp))
        self.sh[rs.result] = want

    # ---- rules ----------------------------------------------------------------------
    def conflict(self, op: Operation, detail: str) -> ShardingConflict:
        return ShardingConflict(f"propagate-shardings: {op.name}: {detail}")

    def natural(self, op: Operation) -> ShardingAttr:
        tensors = [(i, v) for i, v in enumerate(op.operands) if isinstance(v.type, F.TensorType)]
        sharded = [(i, v, self.of(v).axis) for i, v in tensors if self.of(v).axis is not None]
        if not sharded:
            return self.replicated
        if isinstance(op, F.ElementwiseOp | F.CastOp):
            return self.elementwise(op, tensors, sharded)
        (i, v, a), *rest = sharded
        assert a is not None
        if isinstance(op, F.ReductionOp):
            dims = op.get_dims()
            if a in dims:
                if not isinstance(op, F.SumOp):
                    raise self.conflict(
                        op, f"it reduces over axis {a}, which is sharded; only a sum decomposes into "
                        "local sums and an allreduce"
                    )
                return self.partial
            return self.sharded(a if op.is_keepdim else a - sum(1 for d in dims if d < a))
        if isinstance(op, F.VarMeanOp | F.VarOp | F.WelfordOp):
            t = op.operands[0].type
            assert isinstance(t, F.TensorType)
            dims = sorted(int(x) % t.rank for x in op.dims.get_values())
            if a in dims:
                raise self.conflict(
                    op, f"it reduces over axis {a}, which is sharded; only a sum decomposes into "
                    "local sums and an allreduce"
                )
            keep = getattr(op, "keepdim", None) is not None and bool(op.keepdim.value.data)  # type: ignore[union-attr]
            return self.sharded(a if keep else a - sum(1 for x in dims if x < a))
        if isinstance(op, F.BroadcastInDimOp):
            return self.sharded(op.broadcast_dims.get_values()[a])
        if isinstance(op, F.BroadcastOp):
            kept = [k for k, f in enumerate(op.get_flags()) if not f]
            return self.sharded(kept[a])
        if isinstance(op, F.PermuteOp):
            return self.sharded(op.get_dims().index(a))
        if isinstance(op, F.SqueezeOp):
            dims = op.get_dims()
            if a in dims:
                raise self.conflict(op, f"it squeezes axis {a}, which is sharded")
            return self.sharded(a - sum(1 for d in dims if d < a))
        if isinstance(op, F.ExpandOp):
            return self.sharded(a)
        if isinstance(op, F.LinearOp):
            return self.linear(op)
        if isinstance(op, F.MatmulOp):
            return self.matmul(op)
        raise self.conflict(
            op, f"{_axes(op, v)} is {self.of(v).describe()}, and sharded operands of {op.name} are not "
            "supported; declare it replicated"
        )

    def elementwise(
        self, op: Operation, tensors: Sequence[tuple[int, SSAValue]], sharded: Sequence[tuple[int, SSAValue, int | None]]
    ) -> ShardingAttr:
        out = op.results[0].type
        assert isinstance(out, F.TensorType)
        axes = {a for _, _, a in sharded}
        if len(axes) > 1:
            (i, _, a), (j, _, b) = sharded[0], next(s for s in sharded if s[2] != sharded[0][2])
            raise self.conflict(
                op, f"operand #{i} is sharded on axis {a} but operand #{j} on axis {b} (mesh "
                f"{self.mesh.devices}); one elementwise op runs on one sharded axis"
            )
        (a,) = axes
        assert a is not None
        for i, v in tensors:
            t = v.type
            assert isinstance(t, F.TensorType)
            if self.of(v).is_replicated and t.rank == out.rank and t.get_shape()[a] != 1:
                if self.broadcasts_new_axis(v, a):
                    self.sh[v] = self.sharded(a)  # broadcast straight into local shards
                else:
                    self.reshard_before(op, i, self.sharded(a))  # each device keeps its part
        return self.sharded(a)

    def broadcasts_new_axis(self, v: SSAValue, a: int) -> bool:
        """Whether ``v`` (read once, not declared) broadcasts its operand to a new axis
        ``a``: then each device broadcasts to its local part of that axis."""
        if len(list(v.uses)) != 1 or v in self.declared or not isinstance(v.owner, Operation):
            return False
        return self.new_axis(v.owner, a)

    @staticmethod
    def new_axis(op: Operation, a: int) -> bool:
        """Whether ``op`` is a broadcast whose result axis ``a`` is new."""
        if isinstance(op, F.BroadcastInDimOp) and not op.sizes:
            return a not in [int(d) for d in op.broadcast_dims.get_values()]
        if isinstance(op, F.BroadcastOp):
            return op.get_flags()[a]
        return False

    def contracts_sharded(self, op: F.LinearOp) -> bool:
        x, w = self.of(op.input), self.of(op.weight)
        tx, tw = op.input.type, op.weight.type
        assert isinstance(tx, F.TensorType) and isinstance(tw, F.TensorType)
        return x.axis == tx.rank - 1 or w.axis == tw.rank - 1

    def split_bias(self, op: F.LinearOp) -> F.LinearOp:
        """``linear(x, w, b)`` contracting a sharded axis: ``linear(x, w)`` (partial sums),
        an allreduce, then ``+ b`` once."""
        assert op.bias is not None
        bias = op.bias
        if self.of(bias).axis is not None:
            raise self.conflict(op, f"the bias is {self.of(bias).describe()}, but the output features are not")
        bare = F.LinearOp(op.input, op.weight)
        out = bare.result.type
        assert isinstance(out, F.TensorType)
        tb = bias.type
        assert isinstance(tb, F.TensorType)
        flags = [True] * (out.rank - tb.rank) + [False] * tb.rank  # [N] -> [1, ..., N]
        reduced = F.ReshardOp(bare.result, self.partial, self.replicated)
        b = F.BroadcastOp(bias, flags)
        add = F.BINARY_OP_CLASSES["add"](reduced.result, b.result)
        block = op.parent_block()
        assert block is not None
        block.insert_ops_before([bare, reduced, b, add], op)
        op.result.replace_uses_with_if(add.result, lambda use: not isinstance(use.operation, I.ShardOp))
        want = self.declared.pop(op.result, None)
        if want is not None:
            self.declared[add.result] = want
        for use in list(op.result.uses):
            block.erase_op(use.operation)
        block.erase_op(op)
        self.sh[reduced.result] = self.replicated
        self.sh[b.result] = self.replicated
        self.sh[add.result] = self.replicated
        # the add is visited as the linear's replacement: its own declaration is checked
        if want is not None and want != self.replicated:
            self.reshard_after(add, add.result, self.replicated, want)
        return bare

    def contraction(
        self, op: Operation, names: tuple[str, str], axes: tuple[int | None, int | None], ks: tuple[int, int]
    ) -> ShardingAttr | None:
        """Partial sums when the contracted axis (``ks``: of the two operands) is
        sharded, the other operand sliced along its contracted axis to match; None
        when it is not."""
        (a, b), (ka, kb) = axes, ks
        if a != ka and b != kb:
            return None
        if a not in (None, ka) or b not in (None, kb):
            raise self.conflict(
                op, f"{names[0]} is sharded on axis {a} and {names[1]} on axis {b}: only the "
                "contracted axis may be sharded on both"
            )
        if a is None:
            self.reshard_before(op, 0, self.sharded(ka))
        if b is None:
            self.reshard_before(op, 1, self.sharded(kb))
        return self.partial

    def linear(self, op: F.LinearOp) -> ShardingAttr:
        tx, tw = op.input.type, op.weight.type
        assert isinstance(tx, F.TensorType) and isinstance(tw, F.TensorType)
        x, w = self.of(op.input).axis, self.of(op.weight).axis
        out_rank = tx.rank - 1 + (1 if tw.rank == 2 else 0)
        partial = self.contraction(op, ("the input", "the weight"), (x, w), (tx.rank - 1, tw.rank - 1))
        if partial is not None:
            return partial
        if x is not None and w is not None:
            raise self.conflict(
                op, f"the input is sharded on axis {x} and the weight on axis {w} (output features): "
                "a 2-D sharding one mesh axis cannot hold"
            )
        if x is not None:
            if op.bias is not None and self.of(op.bias).axis is not None:
                raise self.conflict(op, "the bias is sharded, but the output features are not")
            return self.sharded(x)
        if op.bias is not None and self.of(op.bias).is_replicated:
            tb = op.bias.type
            assert isinstance(tb, F.TensorType)
            if tb.rank == 1:
                self.reshard_before(op, 2, self.sharded(0))
        return self.sharded(out_rank - 1)

    def matmul(self, op: F.MatmulOp) -> ShardingAttr:
        ta, tb = op.a.type, op.b.type
        assert isinstance(ta, F.TensorType) and isinstance(tb, F.TensorType)
        a, b = self.of(op.a).axis, self.of(op.b).axis
        if ta.rank < 2 or tb.rank != 2:
            raise self.conflict(op, "a sharded matmul needs a matrix (or batch of them) times a 2-D matrix")
        partial = self.contraction(op, ("operand a", "operand b"), (a, b), (ta.rank - 1, 0))
        if partial is not None:
            return partial
        if a is not None and b is not None:
            raise self.conflict(op, f"operand a is sharded on axis {a} and operand b on axis {b}: a 2-D sharding")
        if a is not None:
            return self.sharded(a)
        return self.sharded(ta.rank - 1)

    # ---- annotations ----------------------------------------------------------------
    def annotate(self) -> None:
        block = self.fusion.body.block
        for op in list(block.ops):
            if isinstance(op, I.ShardOp):
                block.erase_op(op)
        out = self.fusion.output_op
        values = [a for a in block.args if isinstance(a.type, F.TensorType)]
        for op in block.ops:
            if op.name.startswith("fuser.") and not isinstance(op, F.OutputOp):
                values += [r for r in op.results if isinstance(r.type, F.TensorType)]
        for v in values:
            try:
                block.insert_op_before(I.ShardOp(v, self.of(v)), out)
            except ShardingError as e:  # pragma: no cover - the verifier reports it
                raise ShardingConflict(f"propagate-shardings: {e}") from None


def propagate_shardings(fusion: F.FusionOp) -> bool:
    """Propagate the declared shardings of ``fusion`` (module docstring); False when it
    declares none. On a propagated fusion it changes nothing: every declaration is
    then what the rules give, and partial sums feed only reshards."""
    declared = I.shardings_of(fusion)
    if not declared:
        return False
    _Propagation(fusion, declared).run()
    return True


@dataclass(frozen=True)
class PropagateShardings(ModulePass):
    """Every tensor of a sharded fusion gets a sharding; reshardings become
    ``fuser.reshard`` ops (module docstring)."""

    name = "propagate-shardings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # A forward dataflow walk over each fusion body, not a local rewrite: the
        # sharding of an op's result depends on everything before it.
        for fusion in [f for f in op.walk() if isinstance(f, F.FusionOp)]:
            propagate_shardings(fusion)
