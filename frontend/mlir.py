"""``FusionDefinition.from_mlir``: rebuild a definition from ``fuser`` IR text.

Each op of the (first) ``fuser.fusion`` is replayed as the ``fd.ops`` call that
builds it; block arguments become ``define_tensor``/``define_scalar`` inputs and
``fuser.output`` becomes ``add_output`` calls. Mixed sizes (``-1`` entries bound to
size operands) come back as lists of ints and scalars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdsl.ir import Operation, SSAValue

from fuser.frontend.datatype import DataType
from fuser.frontend.layouts import allocation_contiguity

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition
from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.shapes import DYN


def _mixed(static: list[int], sizes: list[Any]) -> list[Any]:
    it = iter(sizes)
    return [next(it) if d == DYN else d for d in static]


def _dt(t: Any) -> DataType:
    return DataType.from_dtype(F.dtype_of(t))


def definition_from_mlir(text: str, cls: type[FusionDefinition]) -> FusionDefinition:
    """A definition of class ``cls`` (``FusionDefinition``, which calls this) replaying
    the one ``fuser.fusion`` of ``text``."""
    try:
        module = parse_module(text)
    except Exception as e:  # noqa: BLE001 - any parse or verify error
        raise ValueError(f"from_mlir: {e}") from None
    fusions = [op for op in module.walk() if isinstance(op, F.FusionOp)]
    if len(fusions) != 1:
        raise ValueError(f"from_mlir: expected one fuser.fusion, found {len(fusions)}")
    return definition_from_fusion(fusions[0], cls)[0]


def definition_from_fusion(
    fusion: F.FusionOp, cls: type[FusionDefinition], nvfuser_form: bool = False
) -> tuple[FusionDefinition, dict[SSAValue, Any]]:
    """A finalized definition replaying ``fusion``, and the state (``T3``, ``S4``)
    that each of the fusion's values became (the segment index space of seed 000).
    ``nvfuser_form``: ops nvFuser's IR does not have are replayed as nvFuser translates
    its own IR (a reduction with ``keepdim`` is the reduction, then a broadcast)."""
    fd = cls()
    env: dict[SSAValue, Any] = {}
    with fd:
        for arg in fusion.inputs:
            t = arg.type
            if isinstance(t, F.TensorType):
                so = t.get_stride_order() if t.stride_order.data else None
                # define_tensor takes the contiguity in allocation order.
                contig = allocation_contiguity(t.get_contiguity(), so)
                env[arg] = fd.define_tensor(
                    shape=list(t.get_shape()), contiguity=contig, dtype=_dt(t), stride_order=so
                )
            else:
                env[arg] = fd.define_scalar(dtype=_dt(t))
        outs = list(fusion.function_type.outputs.data)
        for op in fusion.body.block.ops:
            if isinstance(op, F.OutputOp):
                k = 0
                for v, alias in zip(op.values, op.get_alias_inputs(), strict=True):
                    if alias >= 0:
                        fd.add_output(env[v], alias_input=env[fusion.inputs[alias]])
                        continue
                    t = outs[k]
                    k += 1
                    so = t.get_stride_order() if isinstance(t, F.TensorType) and t.stride_order.data else None
                    fd.add_output(env[v], stride_order=so)
                continue
            results = _replay_op(fd, op, [env[o] for o in op.operands], nvfuser_form)
            if not isinstance(results, tuple):
                results = (results,)
            for r, v in zip(op.results, results, strict=True):
                env[r] = v
    return fd, env


def _replay_op(fd: FusionDefinition, op: Operation, a: list[Any], nvfuser_form: bool = False) -> Any:
    o = fd.ops
    name = op.name.removeprefix("fuser.")
    if isinstance(op, F.ConstantOp):
        return fd.define_scalar(op.python_value, dtype=_dt(op.results[0].type))
    if isinstance(op, F.UnaryOp | F.BinaryOp | F.WhereOp | F.ClampOp | F.LerpOp | F.ThresholdOp | F.AddcmulOp):
        return getattr(o, name)(*a)
    if isinstance(op, F.CastOp):
        return o.cast(a[0], _dt(op.result.type))
    if isinstance(op, F.ReductionOp):
        if nvfuser_form and op.is_keepdim:
            rank = len(op.result.type.get_shape())
            reduced = {d % rank for d in F._ints(op.dims)}
            r = getattr(o, name)(a[0], F._ints(op.dims), False, _dt(op.result.type))
            return o.broadcast(r, [d in reduced for d in range(rank)])
        return getattr(o, name)(a[0], F._ints(op.dims), op.is_keepdim, _dt(op.result.type))
    if isinstance(op, F.VarOp | F.VarMeanOp):
        return getattr(o, name)(a[0], F._ints(op.dims), op.correction.value.data, F._bool(op.keepdim))
    if isinstance(op, F.WelfordOp):
        return o.welford(a[0], F._ints(op.dims))
    if isinstance(op, F.BroadcastOp):
        return o.broadcast(a[0], op.get_flags())
    if isinstance(op, F.BroadcastInDimOp):
        return o.broadcast_in_dim(a[0], _mixed(F._ints(op.shape), a[1:]), F._ints(op.broadcast_dims))
    if isinstance(op, F.ExpandOp):
        return o.expand(a[0], _mixed(F._ints(op.shape), a[1:]))
    if isinstance(op, F.ReshapeOp):
        return o.reshape(a[0], _mixed(F._ints(op.new_shape), a[1:]))
    if isinstance(op, F.PermuteOp | F.SqueezeOp):
        return getattr(o, name)(a[0], F._ints(op.dims))
    if isinstance(op, F.SliceOp):
        starts, ends, strides = F._ints(op.starts), F._ints(op.ends), F._ints(op.strides)
        if any(s != 1 for s in strides) or any(b < 0 for b in starts + ends):
            # Python's rules with any step: fuser's extension (nvFuser's slice has step 1
            # and rejects negative constants).
            return o.strided_slice(a[0], starts, ends, strides)
        return o.slice(a[0], starts, ends, strides)
    if isinstance(op, F.DynamicSliceOp):
        n = len(op.starts)
        return o.slice(a[0], a[1 : 1 + n], a[1 + n :])
    if isinstance(op, F.PadOp):
        return o.pad(a[0], F._ints(op.widths), a[1])
    if isinstance(op, F.DynamicPadOp):
        return o.pad(a[0], a[2:], a[1])
    if isinstance(op, F.CatOp):
        return o.cat(a, op.dim.value.data)
    if isinstance(op, F.IndexSelectOp | F.SelectOp | F.GatherOp | F.TakeAlongAxisOp):
        return getattr(o, name)(a[0], a[1], op.dim.value.data)
    if isinstance(op, F.FullOp):
        return o.full(_mixed(F._ints(op.shape), a[1:]), a[0], _dt(op.result.type))
    if isinstance(op, F.IotaOp):
        return o.iota(a[0], a[1], a[2], _dt(op.result.type))
    if isinstance(op, F.UniformOp | F.NormalOp):
        # The IR's seed and offset are explicit: the replay passes them.
        fn = o.uniform if isinstance(op, F.UniformOp) else o.normal
        shape = _mixed(F._ints(op.shape), a[4:])
        return fn(a[0], a[1], shape, rng_seed=a[2], rng_offset=a[3], dtype=_dt(op.result.type))
    if isinstance(op, F.SizeOp):
        return o.size(a[0], op.dim.value.data)
    if isinstance(op, F.ScatterOp):
        return o.scatter(a[0], a[1], a[2], op.dim.value.data)
    if isinstance(op, F.CumsumOp):
        return o.cumsum(a[0], op.dim.value.data)
    if isinstance(op, F.MatmulOp):
        return o.matmul(a[0], a[1])
    if isinstance(op, F.LinearOp):
        return o.linear(a[0], a[1], a[2] if len(a) > 2 else None)
    raise ValueError(f"from_mlir: {op.name} has no frontend equivalent")
