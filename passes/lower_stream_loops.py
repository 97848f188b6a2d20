"""``lower-stream-loops{num-streams=4}``: run the stream-parallel axes of a fusion as
host for-loops over CUDA streams (seed 001, nvFuser's ``StreamParallelType`` pass).

A tensor axis is *stream-parallel* when the tensor's loop domain binds the axis's
logical id, untransformed, to ``stream``::

    %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
    %s0 = iterdomain.parallelize %i0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
    iterdomain.loop %t1 [%s0, %i1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]

(``fuser.frontend.streams.parallelize_stream`` writes these ops from Python.)

Each launch of a fusion with a stream-parallel tensor is replaced by the fusion's
*expressions* (its tensor-producing ops), each launched as its own one-op
``fuser.fusion`` (named ``@<fusion>_<op>``; identical ones are shared), in program
order (the model of seed 001, where each host expression is one ``Set``):

* an expression whose (first) result is stream-parallel on axis ``d`` runs inside a
  ``hir.for`` over that axis: its full outputs are allocated before the loop; in the
  body the current stream is read, the loop switches to pool stream ``i %
  num_streams`` and makes it wait for the original stream, ``hir.alias_select``
  takes slice ``i`` of the inputs (on the axis that maps to ``d``) and of the
  outputs, the expression is launched on the slices, and the original stream is
  restored and made to wait for the worker stream;
* the next expression joins the open loop when it is stream-parallel too, its
  stream extent is the loop's (the same fusion input extent, or the same static
  extent) and every operand produced inside the loop is read on that producer's
  stream axis (seed 001's ``TwoSetOps``: one merged loop, no synchronization
  between the two expressions);
* any other expression closes the loop: it is launched on whole tensors after it,
  and a later stream-parallel expression opens a new loop
  (``ThreeSetOpsWithDisjointsForLoops``).

Before (``SingleSetOp``)::

    fuser.fusion @f(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
      %t1 = fuser.set %t0 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
      <iterdomain ops: axis 0 of %t1 is stream-parallel>
      fuser.output %t1 : !fuser.tensor<?x?xf32>
    }

After::

    fuser.fusion @f_set(%t0 : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
      %t1 = fuser.set %t0 : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      fuser.output %t1 : !fuser.tensor<?xf32>
    }
    hir.program @main(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
      %t0_size0 = fuser.size %t0 {dim = 0 : i64} : (!fuser.tensor<?x?xf32>) -> i64
      %t0_size1 = fuser.size %t0 {dim = 1 : i64} : (!fuser.tensor<?x?xf32>) -> i64
      %c0 = arith.constant 0 : i64
      %c1 = arith.constant 1 : i64
      %t1 = hir.allocate sizes(%t0_size0, %t0_size1 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
      hir.for %stream_idx = %c0 to %t0_size0 step %c1 : i64 {
        %user_stream = hir.get_current_stream : !hir.stream
        %worker_stream = hir.stream_for_index %stream_idx {num_streams = 4 : i64} : i64
        hir.set_current_stream %worker_stream
        hir.synchronize_stream %user_stream
        %t0_slice = hir.alias_select %t0[axis = 0, %stream_idx] : ... -> !fuser.tensor<?xf32>
        %t1_slice = hir.alias_select %t1[axis = 0, %stream_idx] : ... -> !fuser.tensor<?xf32>
        %0 = hir.launch @f_set(%t0_slice) outs(%t1_slice : !fuser.tensor<?xf32>) : ...
        hir.set_current_stream %user_stream
        hir.synchronize_stream %worker_stream
      } {stream_axis = "t1[0]"}
      hir.return %t1 : !fuser.tensor<?x?xf32>
    }

A full output returned by the program is ``preallocated`` (the caller may pass its
buffer); every other buffer the pass creates is dropped by ``hir.deallocate`` after
its last use. A module without ``hir.program`` gets one per fusion first.

Options: ``num-streams`` (default 4) becomes the ``num_streams`` of every
``hir.stream_for_index``; ``0`` leaves it out (the runtime's stream count is used).
``join-after-loop`` (default false) moves each iteration's final
``hir.synchronize_stream %worker_stream`` out of the loop into a second loop after
it (``hir.for %j { %w = hir.stream_for_index %j; hir.synchronize_stream %w }``).
Seed 001's in-loop join makes the user's stream wait for worker ``i`` before
worker ``i + 1`` waits for the user's stream, so the iterations are serialized on
the GPU (measured on an H100: no two slices overlap); with the join after the
loop, the slices of different streams run concurrently.

Restrictions (each is a diagnostic naming the tensor or the op): the stream id must
be a logical id parallelized directly (no split, merge or resize on its way); a
fusion input cannot be stream-parallel; a reduction cannot reduce its stream axis;
only elementwise ops, casts and reductions can be stream-parallel (views, pads,
concatenations and indexing ops cannot); an operand cannot broadcast along the
stream axis; scalar operands of a stream-parallel expression cannot depend on a
tensor; the stream extent must be known on the host (a fusion input's extent or a
static extent); outputs aliasing inputs are not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dialects import iterdomain as I
from fuser.ir.rebuild import rebuilt
from fuser.ir.shapes import DYN, normalize_dim
from fuser.passes.host_rewrites import (
    Extent,
    HostPassError,
    InputExtent,
    drop_outs,
    ensure_programs,
    erase_op,
    fusions_by_name,
    launches_by_callee,
    symbolic_extents,
)

__all__ = [
    "LowerStreamLoops",
    "lower_stream_loops",
    "stream_axes",
]

_REDUCTIONS = (F.ReductionOp, F.VarOp, F.VarMeanOp, F.WelfordOp)


def _hint(v: SSAValue) -> str:
    return v.name_hint or (f"arg{v.index}" if isinstance(v, BlockArgument) else "t")


def _what(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a value of type {v.type}"


def _drop_axis(t: Attribute, axis: int) -> F.TensorType:
    assert isinstance(t, F.TensorType)
    shape = t.get_shape()
    return F.TensorType([e for i, e in enumerate(shape) if i != axis], t.element_type)


def _plain(t: Attribute) -> Attribute:
    return F.TensorType(t.get_shape(), t.element_type) if isinstance(t, F.TensorType) else t


# =====================================================================================
# Which axes are stream-parallel
# =====================================================================================


def stream_axes(fusion: F.FusionOp) -> dict[SSAValue, int]:
    """The stream-parallel tensor axis of each tensor of ``fusion`` that has one.

    Raises ``HostPassError`` for the unsupported forms (a transformed stream id, a
    stream-parallel fusion input, a stream-parallel reduction id)."""
    where = f"lower-stream-loops: @{fusion.sym_name.data}"
    out: dict[SSAValue, int] = {}
    for loop in fusion.walk():
        if not isinstance(loop, I.LoopOp):
            continue
        for v in loop.ids:
            t = v.type
            if not isinstance(t, I.IterDomainType) or t.parallel_type != I.ParallelType.stream:
                continue
            tensor = loop.tensor
            name = _what(tensor)
            if isinstance(tensor, BlockArgument):
                raise HostPassError(
                    f"{where}: input {name} is stream-parallel; only tensors computed by the "
                    "fusion can be (the input is already in memory)"
                )
            par = v.owner
            assert isinstance(par, I.ParallelizeOp)
            src = par.input
            if not isinstance(src.owner, I.LogicalOp):
                kind = src.owner.name if isinstance(src.owner, Operation) else "a block argument"
                raise HostPassError(
                    f"{where}: the stream id of {name} comes from {kind}; a stream axis must be "
                    "a logical id parallelized directly (split or merged stream axes are not "
                    "supported)"
                )
            k = list(src.owner.ids).index(src)
            axis = I.logical_to_tensor_axes(tensor)[k]
            if axis is None or I.logical_domain_types(tensor)[k].iter_type == I.IterType.reduction:
                raise HostPassError(
                    f"{where}: the stream id of {name} is reduction id #{k}; a reduced axis "
                    "cannot be stream-parallel"
                )
            out[tensor] = axis
    return out


def operand_stream_axis(op: Operation, operand: SSAValue, axis: int) -> int | None:
    """The axis of ``operand`` that maps to axis ``axis`` of ``op``'s results, or
    None when the operand is used whole (a scalar, or a tensor broadcast from the
    right that lacks the axis). Raises ``HostPassError`` when ``op`` cannot be
    stream-parallel on ``axis``."""
    if not isinstance(operand.type, F.TensorType):
        return None
    name = f"lower-stream-loops: {op.name}"
    res = op.results[0].type
    assert isinstance(res, F.TensorType)
    if isinstance(op, F.ElementwiseOp | F.CastOp):
        t = operand.type
        a = axis - (res.rank - t.rank)
        if a < 0:
            return None
        if t.get_shape()[a] == 1 and res.get_shape()[axis] != 1:
            raise HostPassError(
                f"{name}: operand {_what(operand)} broadcasts along stream axis {axis}; "
                "a stream-parallel operand must have the axis"
            )
        return a
    if isinstance(op, _REDUCTIONS):
        t = operand.type
        dims = sorted({normalize_dim(int(d), t.rank) for d in op.dims.get_values()})
        keep = bool(getattr(op, "keepdim", None) and op.keepdim.value.data)  # type: ignore[union-attr]
        kept = list(range(t.rank)) if keep else [i for i in range(t.rank) if i not in dims]
        a = kept[axis]
        if a in dims:
            raise HostPassError(
                f"{name}: the stream axis {axis} of the result is reduced (input axis {a}); "
                "a reduction cannot reduce its stream axis"
            )
        return a
    raise HostPassError(
        f"{name} cannot be stream-parallel: only elementwise ops, casts and reductions can "
        "be (views, pads, concatenations and indexing ops cannot)"
    )


# =====================================================================================
# One-op fusions
# =====================================================================================


def _is_expression(op: Operation) -> bool:
    return not isinstance(op, F.OutputOp) and any(
        isinstance(r.type, F.TensorType) for r in op.results
    ) and op.name.startswith("fuser.")


def _scalar_cone(op: Operation) -> list[Operation]:
    """The scalar ops ``op``'s operands depend on, in program order."""
    seen: set[Operation] = set()
    stack = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
    while stack:
        o = stack.pop()
        if o in seen or not isinstance(o, Operation) or _is_expression(o):
            continue
        seen.add(o)
        stack.extend(v.owner for v in o.operands if isinstance(v.owner, Operation))
    block = op.parent_block()
    assert block is not None
    return [o for o in block.ops if o in seen]


def _expression_inputs(ops: Sequence[Operation]) -> list[SSAValue]:
    defined = {r for o in ops for r in o.results}
    used: list[SSAValue] = []
    for o in ops:
        for v in o.operands:
            if v not in defined and v not in used:
                used.append(v)
    return used


def _sliced_op(op: Operation, operands: Sequence[SSAValue], axes: Sequence[int | None], axis: int) -> Operation:
    """``op`` on the slices: operands as given, the stream axis dropped from the results
    and from the reduced ``dims``."""
    props = dict(op.properties)
    if isinstance(op, _REDUCTIONS):
        t = op.operands[0].type
        assert isinstance(t, F.TensorType)
        a = axes[0]
        assert a is not None
        dims = sorted({normalize_dim(int(d), t.rank) for d in op.dims.get_values()})
        props["dims"] = DenseArrayBase.from_list(i64, [d - (d > a) for d in dims])
    new = rebuilt(op, operands=operands, result_types=[_drop_axis(r.type, axis) for r in op.results], properties=props)
    for r, old in zip(new.results, op.results, strict=True):
        r.name_hint = old.name_hint
    try:
        new.verify()
    except VerifyException as e:
        raise HostPassError(
            f"lower-stream-loops: {op.name} on slices of stream axis {axis} does not verify: {e}"
        ) from None
    return new


def build_expression_fusion(
    name: str, op: Operation, axis: int | None
) -> tuple[F.FusionOp, list[SSAValue], list[int | None]]:
    """A ``fuser.fusion`` running ``op`` alone (with the scalar ops it needs).

    With ``axis`` (stream-parallel), its tensor inputs are the slices at one index of
    the axis mapping to ``axis``. Returns the fusion, the original values of its
    inputs and, per input, the axis to slice (None: passed whole)."""
    cone = _scalar_cone(op)
    ins = _expression_inputs([*cone, op])
    slice_axes: list[int | None] = []
    for v in ins:
        if axis is None or v not in op.operands:
            slice_axes.append(None)
        else:
            slice_axes.append(operand_stream_axis(op, v, axis))
    if axis is not None:
        for c in cone:
            for v in c.operands:
                if isinstance(v.type, F.TensorType):
                    raise HostPassError(
                        f"lower-stream-loops: {op.name}: its scalar operand computed by {c.name} "
                        f"reads the tensor {_what(v)}; not supported in a stream-parallel "
                        "expression"
                    )
    in_types = [
        _plain(v.type) if a is None else _drop_axis(v.type, a)
        for v, a in zip(ins, slice_axes, strict=True)
    ]
    out_types = [
        _plain(r.type) if axis is None else _drop_axis(r.type, axis) for r in op.results
    ]
    fusion = F.FusionOp(name, in_types, out_types)
    block = fusion.body.block
    mapper: dict[SSAValue, SSAValue] = {}
    for arg, v in zip(block.args, ins, strict=True):
        arg.name_hint = v.name_hint
        mapper[v] = arg
    for c in cone:
        block.add_op(c.clone(value_mapper=mapper))
    if axis is None:
        new = op.clone(value_mapper=mapper)
    else:
        axes = [operand_stream_axis(op, v, axis) for v in op.operands]
        new = _sliced_op(op, [mapper.get(v, v) for v in op.operands], axes, axis)
    block.add_op(new)
    block.add_op(F.OutputOp(list(new.results)))
    return fusion, ins, slice_axes


def _structure_key(fusion: F.FusionOp) -> str:
    """The text of ``fusion`` without its name and value names."""
    clone = fusion.clone()
    clone.sym_name = StringAttr("__key__")
    for arg in clone.body.block.args:
        arg.name_hint = None
    for op in clone.walk():
        for r in op.results:
            r.name_hint = None
    return str(clone)


class _FusionTable:
    """The one-op fusions made so far, shared when identical."""

    def __init__(self, module: ModuleOp, anchor: Operation) -> None:
        self.module = module
        self.anchor = anchor
        self.by_key: dict[str, F.FusionOp] = {}
        self.names = {
            op.sym_name.data  # type: ignore[attr-defined]
            for op in module.ops
            if isinstance(op, F.FusionOp | H.ProgramOp)
        }

    def add(self, base: str, fusion: F.FusionOp) -> F.FusionOp:
        key = _structure_key(fusion)
        found = self.by_key.get(key)
        if found is not None:
            return found
        name, k = base, 1
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        fusion.sym_name = StringAttr(name)
        self.module.body.block.insert_op_before(fusion, self.anchor)
        self.by_key[key] = fusion
        return fusion


# =====================================================================================
# Host program
# =====================================================================================


@dataclass
class _Loop:
    op: H.ForOp
    extent: Extent
    epilogue: Operation
    produced: dict[SSAValue, tuple[SSAValue, int]] = field(default_factory=dict)

    @property
    def iv(self) -> BlockArgument:
        return self.op.induction_var


class _Expansion:
    """Replaces one launch of a stream-parallel fusion by host loops and launches."""

    def __init__(
        self,
        launch: H.LaunchOp,
        fusion: F.FusionOp,
        axes: dict[SSAValue, int],
        table: _FusionTable,
        num_streams: int | None,
        join_after_loop: bool = False,
    ) -> None:
        self.join_after_loop = join_after_loop
        self.launch = launch
        self.fusion = fusion
        self.axes = axes
        self.table = table
        self.num_streams = num_streams
        self.extents = symbolic_extents(fusion)
        self.env: dict[SSAValue, SSAValue] = dict(zip(fusion.inputs, launch.args, strict=True))
        for inner, outer in self.env.items():
            if isinstance(outer, BlockArgument) and not outer.name_hint and inner.name_hint:
                outer.name_hint = inner.name_hint
        self.loop: _Loop | None = None
        self.buffers: list[SSAValue] = []
        self.c0 = arith.ConstantOp(IntegerAttr(0, i64))
        self.c1 = arith.ConstantOp(IntegerAttr(1, i64))
        self.c0.result.name_hint, self.c1.result.name_hint = "c0", "c1"
        self.block = launch.parent_block()
        assert self.block is not None
        self.block.insert_ops_before([self.c0, self.c1], launch)
        self.sizes: dict[Extent, SSAValue] = {}
        returned = self.block.last_op
        self.returned: set[SSAValue] = set(returned.values) if isinstance(returned, H.ReturnOp) else set()

    # ---- host sizes ---------------------------------------------------------------
    def host_extent(self, e: Extent, what: str) -> SSAValue:
        if e is None:
            raise HostPassError(
                f"lower-stream-loops: @{self.fusion.sym_name.data}: the extent of {what} is "
                "computed inside the fusion; a stream loop needs it on the host"
            )
        found = self.sizes.get(e)
        if found is not None:
            return found
        if isinstance(e, InputExtent):
            arg = self.launch.args[e.input]
            op: Operation = F.SizeOp(arg, e.axis)
            op.results[0].name_hint = f"{_hint(arg)}_size{e.axis}"
        else:
            op = arith.ConstantOp(IntegerAttr(e, i64))
            op.results[0].name_hint = f"c{e}"
        self.block.insert_op_before(op, self.c0)
        self.sizes[e] = op.results[0]
        return op.results[0]

    def allocate(self, v: SSAValue, anchor: Operation, preallocated: bool) -> SSAValue:
        t = v.type
        assert isinstance(t, F.TensorType)
        ext = self.extents[v]
        sizes = [
            self.host_extent(e, f"axis {i} of {_what(v)}")
            for i, (d, e) in enumerate(zip(t.get_shape(), ext, strict=True))
            if d == DYN
        ]
        alloc = H.AllocateOp(F.TensorType(t.get_shape(), t.element_type), sizes, preallocated=preallocated)
        alloc.result.name_hint = v.name_hint
        self.block.insert_op_before(alloc, anchor)
        if not preallocated:
            self.buffers.append(alloc.result)
        return alloc.result

    def _is_output(self, v: SSAValue) -> list[int]:
        return [
            i for i, r in enumerate(self.fusion.output_op.returned_values()) if r == v
        ]

    def _returned(self, v: SSAValue) -> bool:
        return any(self.launch.res[i] in self.returned for i in self._is_output(v))

    # ---- loops --------------------------------------------------------------------
    def open_loop(self, extent: Extent, tensor: SSAValue, axis: int) -> _Loop:
        ub = self.host_extent(extent, f"stream axis {axis} of {_what(tensor)}")
        loop = H.ForOp(self.c0.result, ub, self.c1.result, stream_axis=f"{_hint(tensor)}[{axis}]")
        iv = loop.induction_var
        iv.name_hint = "stream_idx"
        get = H.GetCurrentStreamOp()
        get.result.name_hint = "user_stream"
        pick = H.StreamForIndexOp(iv, self.num_streams)
        pick.result.name_hint = "worker_stream"
        restore = H.SetCurrentStreamOp(get.result)
        loop.body.block.add_ops([
            get,
            pick,
            H.SetCurrentStreamOp(pick.result),
            H.SynchronizeStreamOp(get.result),
            restore,
        ])
        if not self.join_after_loop:
            loop.body.block.add_op(H.SynchronizeStreamOp(pick.result))
        self.block.insert_op_before(loop, self.launch)
        self.loop = _Loop(loop, extent, restore)
        return self.loop

    def close_loop(self) -> None:
        """End the open loop; with ``join_after_loop``, the user's stream waits for
        every worker stream in a second loop after it."""
        loop, self.loop = self.loop, None
        if loop is None or not self.join_after_loop:
            return
        join = H.ForOp(self.c0.result, loop.op.ub, self.c1.result)
        join.induction_var.name_hint = "join_idx"
        pick = H.StreamForIndexOp(join.induction_var, self.num_streams)
        pick.result.name_hint = "worker_stream"
        join.body.block.add_ops([pick, H.SynchronizeStreamOp(pick.result)])
        block = loop.op.parent_block()
        assert block is not None
        block.insert_op_after(join, loop.op)

    def can_join(self, op: Operation, axis: int, extent: Extent) -> bool:
        loop = self.loop
        if loop is None or loop.extent != extent:
            return False
        for v in op.operands:
            if v in loop.produced:
                if operand_stream_axis(op, v, axis) != loop.produced[v][1]:
                    return False
        return True

    # ---- expressions --------------------------------------------------------------
    def stream_expression(self, op: Operation, axis: int) -> None:
        first = op.results[0]
        for r in op.results[1:]:
            if isinstance(r.type, F.TensorType) and self.axes.get(r, axis) != axis:
                raise HostPassError(
                    f"lower-stream-loops: {op.name}: its results are stream-parallel on "
                    "different axes"
                )
        extent = self.extents[first][axis]
        for v in op.operands:
            operand_stream_axis(op, v, axis)  # diagnoses unsupported ops first
        if not self.can_join(op, axis, extent):
            self.close_loop()
            self.open_loop(extent, first, axis)
        loop = self.loop
        assert loop is not None
        fusion, ins, slice_axes = build_expression_fusion(
            f"{self.fusion.sym_name.data}_{op.name.removeprefix('fuser.')}", op, axis
        )
        fusion = self.table.add(fusion.sym_name.data, fusion)
        body = loop.op.body.block
        args: list[SSAValue] = []
        for v, a in zip(ins, slice_axes, strict=True):
            if v in loop.produced:
                args.append(loop.produced[v][0])
                continue
            full = self.env[v]
            if a is None:
                args.append(full)
                continue
            sel = H.AliasSelectOp(full, a, loop.iv)
            sel.result.name_hint = f"{_hint(full)}_slice"
            body.insert_op_before(sel, loop.epilogue)
            args.append(sel.result)
        outs: list[SSAValue] = []
        for r in op.results:
            buf = self.allocate(r, loop.op, self._returned(r))
            self.env[r] = buf
            sel = H.AliasSelectOp(buf, axis, loop.iv)
            sel.result.name_hint = f"{_hint(buf)}_slice"
            body.insert_op_before(sel, loop.epilogue)
            outs.append(sel.result)
            loop.produced[r] = (sel.result, axis)
        body.insert_op_before(H.LaunchOp(fusion, args, outs), loop.epilogue)

    def plain_expression(self, op: Operation) -> None:
        self.close_loop()
        fusion, ins, _ = build_expression_fusion(
            f"{self.fusion.sym_name.data}_{op.name.removeprefix('fuser.')}", op, None
        )
        fusion = self.table.add(fusion.sym_name.data, fusion)
        launch = H.LaunchOp(fusion, [self.env[v] for v in ins])
        self.block.insert_op_before(launch, self.launch)
        for r, new in zip(op.results, launch.res, strict=True):
            new.name_hint = r.name_hint
            self.env[r] = new
            if not self._returned(r):
                self.buffers.append(new)

    def run(self) -> None:
        out = self.fusion.output_op
        if any(a >= 0 for a in out.get_alias_inputs()):
            raise HostPassError(
                f"lower-stream-loops: @{self.fusion.sym_name.data} has outputs aliasing its "
                "inputs; not supported with stream-parallel axes"
            )
        for op in self.fusion.body.block.ops:
            if not _is_expression(op):
                continue
            axis = self.axes.get(op.results[0])
            if axis is None:
                self.plain_expression(op)
            else:
                self.stream_expression(op, axis)
        self.close_loop()
        for res, v in zip(self.launch.res, out.returned_values(), strict=True):
            res.replace_all_uses_with(self.env[v])
        erase_op(self.launch)
        for c in (self.c0, self.c1):
            if not c.result.uses:
                erase_op(c)
        for buf in self.buffers:
            _deallocate_after_last_use(self.block, buf)


def _top_level(op: Operation, block: Block) -> Operation | None:
    o: Operation | None = op
    while o is not None and o.parent_block() is not block:
        o = o.parent_op()
    return o


def _deallocate_after_last_use(block: Block, buf: SSAValue) -> None:
    """``hir.deallocate buf`` after the last top-level op using it or a view of it;
    nothing when the program returns it (or a view of it)."""
    family = [buf]
    users: list[Operation] = []
    k = 0
    while k < len(family):
        for use in family[k].uses:
            u = use.operation
            if isinstance(u, H.ReturnOp) or (isinstance(u, H.AliasOp) and u.value == family[k]):
                return  # returned, or the caller's buffer (an in-place update)
            users.append(u)
            if isinstance(u, H.HostViewOp) and u.view_input() == family[k]:
                family.extend(u.results)
        k += 1
    tops = [t for t in (_top_level(u, block) for u in users) if t is not None]
    if not tops:
        return
    last = max(tops, key=block.get_operation_index)
    nxt = last.next_op
    if isinstance(last, H.ForOp) and isinstance(nxt, H.ForOp) and _is_join_loop(nxt):
        last = nxt  # workers may still use the buffer until the user's stream joins them
    block.insert_op_after(H.DeallocateOp(buf), last)


def _is_join_loop(op: H.ForOp) -> bool:
    return op.stream_axis is None and all(
        isinstance(o, H.StreamForIndexOp | H.SynchronizeStreamOp) for o in op.body.block.ops
    )


def lower_stream_loops(
    module: ModuleOp, num_streams: int | None = 4, join_after_loop: bool = False
) -> None:
    """Lower every launch of a fusion with stream-parallel axes (see the module docstring)."""
    targets = {
        name: (f, axes)
        for name, f in fusions_by_name(module).items()
        if (axes := stream_axes(f))
    }
    if not targets:
        return
    ensure_programs(module)
    launches = launches_by_callee(module)
    for name, (fusion, axes) in targets.items():
        table = _FusionTable(module, fusion)
        for launch in launches.get(name, []):
            launch = drop_outs(launch)  # mark-aliases' buffers: the loops allocate their own
            if not isinstance(launch.parent_op(), H.ProgramOp):
                raise HostPassError(
                    f"lower-stream-loops: the launch of @{name} must be at the top level of a "
                    "hir.program"
                )
            _Expansion(launch, fusion, axes, table, num_streams, join_after_loop).run()
        erase_op(fusion)


@dataclass(frozen=True)
class LowerStreamLoops(ModulePass):
    """Lower stream-parallel axes to host for-loops over a stream pool."""

    name = "lower-stream-loops"

    num_streams: int = 4
    join_after_loop: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_streams < 0:
            raise HostPassError(
                f"lower-stream-loops: num-streams={self.num_streams} must be positive (or 0 "
                "for the runtime's stream count)"
            )
        lower_stream_loops(op, self.num_streams or None, self.join_after_loop)
