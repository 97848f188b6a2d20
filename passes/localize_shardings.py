"""``localize-shardings``: turn a propagated multi-device fusion into the fusion every
device runs on its own shards (MLIR's spmdization).

After ``propagate-shardings`` every tensor has a sharding (``iterdomain.shard``) and
every change of sharding is a ``fuser.reshard``. This pass rewrites the types to
per-device shapes (a sharded axis of extent ``n`` on a mesh of ``d`` devices has
``n / d``), rewrites the shapes ops carry (``broadcast_in_dim``, ``expand``, ``full``)
the same way, marks each ``fuser.reshard`` ``local`` (from now on a communication,
which ``lower-communications`` turns into an ``hir`` collective), and moves the
shardings of the fusion's inputs and outputs to attributes of the fusion, which is
all the runtime needs to split inputs and join outputs::

    fuser.fusion @mlp(...) attributes {fuser.mesh = #iterdomain.mesh<[0, 1]>,
        fuser.input_shardings = [#iterdomain.sharding<[0, 1]>, ...],
        fuser.output_shardings = [#iterdomain.sharding<[0, 1]>]}

Before (after ``propagate-shardings``, two devices)::

    %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>,
                                      !fuser.tensor<32xf32>) -> !fuser.tensor<8x32xf32>
    iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : ...

After::

    %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<16x16xf32>,
                                      !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32>

A tensor without a sharding (the fusion was not propagated), a ``fuser.size`` of a
sharded axis (its value would be the local extent), or a size operand giving a
sharded extent is a diagnostic. A fusion without shardings is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, FunctionType, ModuleOp, UnitAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import iterdomain as I
from fuser.ir.dialects.sharding import ShardingAttr, ShardingError
from fuser.ir.shapes import DYN, normalize_dim
from fuser.passes.bind_sizes import retype

__all__ = ["INPUT_SHARDINGS", "MESH", "OUTPUT_SHARDINGS", "LocalizeShardings", "localize_shardings"]

MESH = "fuser.mesh"
INPUT_SHARDINGS = "fuser.input_shardings"
OUTPUT_SHARDINGS = "fuser.output_shardings"


class LocalizeError(DiagnosticException):
    """A sharded fusion this pass cannot localize; names the op."""


def _localize(v: SSAValue, s: ShardingAttr, what: str) -> None:
    """Give the tensor ``v`` its per-device extents under ``s`` (layout kept, as
    ``bind-sizes`` keeps it: ``with_extents``)."""
    t = v.type
    if not isinstance(t, F.TensorType):
        return
    try:
        shape = s.local_shape(t.get_shape())
    except ShardingError as e:
        raise LocalizeError(f"localize-shardings: {what}: {e}") from None
    retype(v, tuple(shape))


def _local_shape_property(op: Operation, s: ShardingAttr) -> None:
    """Divide the sharded axis of the shape ``op`` carries (``broadcast_in_dim``,
    ``expand``, ``full``)."""
    a = s.axis
    if a is None or not isinstance(op, F.BroadcastInDimOp | F.ExpandOp | F.FullOp):
        return
    shape = [int(x) for x in op.shape.get_values()]
    if op.sizes:
        raise LocalizeError(
            f"localize-shardings: {op.name}: a size operand gives the extents of a result sharded "
            f"on axis {a}; sharded extents must be static"
        )
    if shape[a] not in (DYN, -1):
        shape[a] //= s.size
    op.properties["shape"] = DenseArrayBase.from_list(i64, shape)


def localize_shardings(fusion: F.FusionOp) -> bool:
    """Localize ``fusion`` (module docstring); False when it has no shardings."""
    sh = I.shardings_of(fusion)
    if not sh:
        return False
    name = f"@{fusion.sym_name.data}"
    block = fusion.body.block

    def sharding(v: SSAValue, what: str) -> ShardingAttr:
        s = sh.get(v)
        if s is None:
            raise LocalizeError(
                f"localize-shardings: {name}: {what} has no sharding; run propagate-shardings first"
            )
        return s

    ins: list[Attribute] = []
    for a in block.args:
        if isinstance(a.type, F.TensorType):
            s = sharding(a, f"input #{a.index}")
            ins.append(s)
            _localize(a, s, f"{name} input #{a.index}")
        else:
            ins.append(UnitAttr())
    for op in list(block.ops):
        if isinstance(op, I.ShardOp):
            continue
        if isinstance(op, F.OutputOp):
            continue
        if isinstance(op, F.SizeOp):
            s = sh.get(op.input)
            rank = op.input.type.rank  # type: ignore[attr-defined]
            if s is not None and s.axis is not None and normalize_dim(op.dim.value.data, rank) == s.axis:
                raise LocalizeError(
                    f"localize-shardings: {name}: fuser.size of axis {s.axis}, which is sharded: its "
                    "value would be the local extent"
                )
            continue
        if isinstance(op, F.ReshardOp):
            op.properties["local"] = UnitAttr()
        for i, r in enumerate(op.results):
            if not isinstance(r.type, F.TensorType):
                continue
            s = sharding(r, f"result #{i} of {op.name}")
            _local_shape_property(op, s)
            _localize(r, s, f"{name} {op.name}")
    outs: list[Attribute] = []
    for i, v in enumerate(fusion.output_op.values):
        s = sharding(v, f"output #{i}")
        if s.is_partial:
            raise LocalizeError(
                f"localize-shardings: {name}: output #{i} is partial sums; run propagate-shardings first"
            )
        outs.append(s)
    for op in list(block.ops):
        if isinstance(op, I.ShardOp):
            block.erase_op(op)
    returned = fusion.output_op.returned_values()
    fusion.function_type = FunctionType.from_lists([a.type for a in block.args], [v.type for v in returned])
    fusion.attributes[MESH] = next(iter(sh.values())).mesh
    fusion.attributes[INPUT_SHARDINGS] = ArrayAttr(ins)
    fusion.attributes[OUTPUT_SHARDINGS] = ArrayAttr(outs)
    return True


@dataclass(frozen=True)
class LocalizeShardings(ModulePass):
    """Per-device types and shapes for every sharded fusion (module docstring)."""

    name = "localize-shardings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fusion in [f for f in op.walk() if isinstance(f, F.FusionOp)]:
            localize_shardings(fusion)
