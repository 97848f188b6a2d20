"""Helpers shared by the host-program passes (``strip-bookend-views``,
``mark-aliases``, ``segment``, ``lower-stream-loops``): programs and launches
(finding, rebuilding, dropping preallocated outputs), fusion signatures (adding,
erasing and syncing inputs and outputs), host views of fuser views and the layout
rules that decide which views can move to the host, and symbolic extents of a
fusion's values for host allocations. No pass lives here: the passes import this
module and never each other for these helpers (issue 12: no import cycles).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.rebuild import rebuilt
from fuser.ir.reshape_analysis import analyze_reshape
from fuser.ir.shapes import DYN


class HostPassError(DiagnosticException):
    """A module the host-program passes cannot handle (printed as a diagnostic)."""


# =====================================================================================
# Programs, launches and fusion signatures
# =====================================================================================


def fusions_by_name(module: ModuleOp) -> dict[str, F.FusionOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, F.FusionOp)}


def programs(module: ModuleOp) -> list[H.ProgramOp]:
    return [op for op in module.ops if isinstance(op, H.ProgramOp)]


def launches_by_callee(module: ModuleOp) -> dict[str, list[H.LaunchOp]]:
    out: dict[str, list[H.LaunchOp]] = {}
    for p in programs(module):
        for op in p.walk():
            if isinstance(op, H.LaunchOp):
                out.setdefault(op.callee.string_value(), []).append(op)
    return out


def ensure_programs(module: ModuleOp) -> None:
    """Give a module without ``hir.program`` one program per fusion that launches it
    (``@main`` for a single fusion, ``@<fusion>_main`` otherwise)."""
    if programs(module):
        return
    fusions = list(fusions_by_name(module).values())
    for f in fusions:
        name = "main" if len(fusions) == 1 else f"{f.sym_name.data}_main"
        ins = list(f.function_type.inputs.data)
        outs = list(f.function_type.outputs.data)
        prog = H.ProgramOp(name, ins, outs)
        block = prog.body.block
        launch = H.LaunchOp(f, list(block.args))
        block.add_ops([launch, H.ReturnOp(list(launch.res))])
        module.body.block.add_op(prog)


def rebuild_launch(
    launch: H.LaunchOp,
    args: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    outs: Sequence[SSAValue] = (),
) -> H.LaunchOp:
    """A new launch of the same callee inserted before ``launch`` (which the caller
    rewires and erases)."""
    new = H.LaunchOp(launch.callee.string_value(), list(args), list(outs), list(result_types))
    block = launch.parent_block()
    assert block is not None
    block.insert_op_before(new, launch)
    return new


def set_fusion_outputs(
    fusion: F.FusionOp,
    values: Sequence[SSAValue],
    alias_inputs: Sequence[int] | None = None,
    result_types: Sequence[Attribute] | None = None,
) -> None:
    """Replace the terminator and the declared result types of ``fusion``
    (``result_types``, one per returned value; by default the values' types without
    layout)."""
    old = fusion.output_op
    new = F.OutputOp(list(values), alias_inputs)
    fusion.body.block.insert_op_before(new, old)
    erase_op(old)
    returned = new.returned_values()
    if result_types is None:
        result_types = [default_layout(v.type) for v in returned]
    fusion.function_type = type(fusion.function_type).from_lists(
        list(fusion.body.block.arg_types), list(result_types)
    )


def laid_out_outputs(fusion: F.FusionOp) -> dict[SSAValue, F.TensorType]:
    """The returned values of ``fusion`` whose declared result type has a layout
    (``add_output(t, stride_order=...)``), with that type: a kernel must write them in
    it, so they are never host views."""
    return {
        v: t
        for v, t in zip(fusion.output_op.returned_values(), fusion.function_type.outputs.data, strict=True)
        if isinstance(t, F.TensorType) and not t.has_default_layout
    }


def sync_fusion_inputs(fusion: F.FusionOp) -> None:
    fusion.function_type = type(fusion.function_type).from_lists(
        list(fusion.body.block.arg_types), list(fusion.function_type.outputs.data)
    )


def add_fusion_input(fusion: F.FusionOp, t: Attribute) -> BlockArgument:
    block = fusion.body.block
    arg = block.insert_arg(t, len(block.args))
    sync_fusion_inputs(fusion)
    return arg


def erase_fusion_input(fusion: F.FusionOp, index: int) -> None:
    """Erase input ``index`` (unused, and no in-place target) and renumber the
    ``alias_inputs`` of the later inputs."""
    term = fusion.output_op
    aliases = term.get_alias_inputs()
    assert index not in aliases, "an in-place target is never erased"
    fusion.body.block.erase_arg(fusion.body.block.args[index])
    if any(a > index for a in aliases):
        renumbered = [a - 1 if a > index else a for a in aliases]
        term.alias_inputs = DenseArrayBase.from_list(i64, renumbered)
    sync_fusion_inputs(fusion)


def erase_op(op: Operation, safe: bool = True) -> None:
    """Detach ``op`` from its block and erase it."""
    if op.parent is not None:
        op.detach()
    op.erase(safe_erase=safe)


def erase_dead_ops(block: Block) -> None:
    """Erase side-effect-free fuser ops whose results are unused (bottom-up)."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if isinstance(op, F.OutputOp) or not op.results:
                continue
            if op.name.startswith("fuser.") and all(not r.uses for r in op.results):
                erase_op(op)
                changed = True


# =====================================================================================
# Layouts and host views
# =====================================================================================


def default_layout(t: Attribute) -> Attribute:
    """``t`` without layout (contiguous row-major), scalars unchanged."""
    return F.TensorType(t.get_shape(), t.element_type) if isinstance(t, F.TensorType) else t


def _normalized(t: F.TensorType) -> F.TensorType:
    return F.TensorType(t.get_shape(), t.element_type) if t.has_default_layout else t


def _ints(attr: object) -> list[int]:
    return [int(v) for v in attr.get_values()]  # type: ignore[attr-defined]


def _non_expanding(op: F.BroadcastInDimOp) -> bool:
    """No stride-0 axis: every input axis keeps its extent and every new axis has
    extent 1 (a ``[17, 2] -> [17, 3, 2]`` broadcast expands its new axis)."""
    t = op.input.type
    r = op.result.type
    assert isinstance(t, F.TensorType) and isinstance(r, F.TensorType)
    out = r.get_shape()
    dims = _ints(op.broadcast_dims)
    kept = all(t.get_shape()[i] == out[d] for i, d in enumerate(dims))
    return kept and all(e == 1 for d, e in enumerate(out) if d not in dims)


def is_host_viewable(op: Operation) -> bool:
    """Whether a host view can express ``op`` at all (before layout rules)."""
    if isinstance(op, F.ReshapeOp | F.BroadcastInDimOp):
        return not op.sizes and (not isinstance(op, F.BroadcastInDimOp) or _non_expanding(op))
    return isinstance(op, F.PermuteOp | F.SqueezeOp | F.BroadcastOp | F.SliceOp)


def _slice_contiguity(shape: Sequence[int], op: F.SliceOp) -> list[bool | None]:
    strides = [prod(shape[i + 1 :]) for i in range(len(shape))]
    steps = _ints(op.strides)
    res = op.result.type
    assert isinstance(res, F.TensorType)
    out = res.get_shape()
    new_strides = [s * k for s, k in zip(strides, steps, strict=True)]
    contig: list[bool | None] = []
    for i, e in enumerate(out):
        if e == 1:
            contig.append(None)
            continue
        inner = [j for j in range(i + 1, len(out)) if out[j] != 1]
        if not inner:
            contig.append(new_strides[i] == 1)
        else:
            j = inner[0]
            contig.append(new_strides[i] == new_strides[j] * out[j])
    return contig


def _reshape_contiguity(in_type: F.TensorType, op: F.ReshapeOp) -> list[bool | None] | None:
    """The contiguity of the host view ``op`` of a row-major buffer with gaps (``in_type``,
    e.g. the row pitch a slice leaves), or None when the view needs a copy: a split
    axis keeps its contiguity on its innermost part (its outer parts are contiguous
    with it); axes merge only when every one but the innermost is contiguous with the
    next. Another stride order, a symbolic extent or an expanding step: None."""
    shape = in_type.get_shape()
    new_shape = _ints(op.new_shape)
    if DYN in shape or DYN in new_shape or in_type.get_stride_order() != tuple(range(len(shape) - 1, -1, -1)):
        return None
    steps = op.view.resolved_steps(shape) if op.view is not None else analyze_reshape(shape, new_shape)
    contig = in_type.get_contiguity()
    out: list[bool | None] = []
    i = 0
    for step in steps:
        axes = range(i, i + step.num_inputs)
        i += step.num_inputs
        real = [a for a in axes if shape[a] != 1]  # (extent-1 axes have no stride to keep)
        if any(not contig[a] for a in real[:-1]):
            return None  # a merge across a gap
        sizes = step.out_sizes
        innermost = max((k for k, e in enumerate(sizes) if e != 1), default=-1)
        inner = contig[real[-1]] if real else None
        out += [None if e == 1 else (inner if k == innermost else True) for k, e in enumerate(sizes)]
    return out


def input_end_type(op: Operation, in_type: F.TensorType) -> F.TensorType | None:
    """The type (with layout) of the host view ``op`` of a buffer of type ``in_type``,
    or None when the host cannot view it without a copy (see the module docstring)."""
    if not is_host_viewable(op):
        return None
    res = op.results[0].type
    assert isinstance(res, F.TensorType)
    plain = F.TensorType(res.get_shape(), res.element_type)
    if isinstance(op, F.PermuteOp):
        dims = op.get_dims()
        c, o = in_type.get_contiguity(), in_type.get_stride_order()
        return _normalized(
            F.TensorType(
                res.get_shape(), res.element_type, [c[d] for d in dims], [o[d] for d in dims]
            )
        )
    if isinstance(op, F.ReshapeOp) and not in_type.has_default_layout:
        contig = _reshape_contiguity(in_type, op)
        return None if contig is None else _normalized(F.TensorType(res.get_shape(), res.element_type, contig))
    if not in_type.has_default_layout:
        return None
    if isinstance(op, F.SliceOp):
        shape = in_type.get_shape()
        if DYN in shape:
            return None
        contig = _slice_contiguity(shape, op)
        return _normalized(F.TensorType(res.get_shape(), res.element_type, contig))
    return plain


def output_end_ok(op: Operation) -> bool:
    """Whether ``op`` of a fresh (contiguous) kernel output can be a host view; the
    permute's extra condition (returned directly) is checked by the caller."""
    return is_host_viewable(op) and not isinstance(op, F.SliceOp)


def host_sizes(x: SSAValue, axes: Sequence[int | None]) -> tuple[list[Operation], list[SSAValue]]:
    """``fuser.size`` ops reading the extents of ``x`` on ``axes`` (None: skip)."""
    ops: list[Operation] = []
    for a in axes:
        if a is not None:
            ops.append(
                F.SizeOp.create(
                    operands=[x],
                    properties={"dim": _i64_attr(a)},
                    result_types=[i64],
                )
            )
    return ops, [o.results[0] for o in ops]


def _i64_attr(v: int) -> Attribute:
    from xdsl.dialects.builtin import IntegerAttr

    return IntegerAttr(v, i64)


def view_of(op: Operation, x: SSAValue) -> Operation:
    """The view ``op`` (a reshape, permute, squeeze or broadcast) applied to ``x``
    (result type inferred from ``x``)."""
    if isinstance(op, F.ReshapeOp):
        return F.ReshapeOp(x, [int(d) for d in op.new_shape.get_values()])
    if isinstance(op, F.PermuteOp):
        return F.PermuteOp(x, op.get_dims())
    if isinstance(op, F.SqueezeOp):
        return F.SqueezeOp(x, op.get_dims())
    assert isinstance(op, F.BroadcastOp)
    return F.BroadcastOp(x, op.get_flags())


def swap_view_before(view: Operation, e: Operation, views: dict[SSAValue, Operation]) -> None:
    """Rewrite ``view(e(...))``, where ``e`` (an elementwise op or cast, one result)
    is read only by ``view``, as ``e`` of the views of its tensor operands: ``views``
    maps each of them to its view (new ops, inserted here before ``e``); ``view`` and
    ``e`` are erased."""
    res, et = view.results[0].type, e.results[0].type
    assert isinstance(res, F.TensorType) and isinstance(et, F.TensorType)
    new_e = rebuilt(e, operands=[views[x].results[0] if x in views else x for x in e.operands],
                    result_types=[F.TensorType(res.get_shape(), et.element_type)])
    block = e.parent_block()
    assert block is not None
    block.insert_ops_before([*views.values(), new_e], e)
    view.results[0].replace_all_uses_with(new_e.results[0])
    erase_op(view)
    erase_op(e)


def host_view_ops(op: Operation, x: SSAValue) -> list[Operation]:
    """Host ops computing the view ``op`` of the host value ``x``; the last op's
    result is the view. ``op`` must satisfy ``is_host_viewable``."""
    xt = x.type
    assert isinstance(xt, F.TensorType)
    if isinstance(op, F.ReshapeOp):
        return [H.ReshapeOp(x, _ints(op.new_shape))]
    if isinstance(op, F.PermuteOp):
        return [H.PermuteOp(x, op.get_dims())]
    if isinstance(op, F.SqueezeOp):
        return [H.SqueezeOp(x, op.get_dims())]
    if isinstance(op, F.SliceOp):
        return [H.SliceOp(x, _ints(op.starts), _ints(op.ends), _ints(op.strides))]
    if isinstance(op, F.BroadcastOp):
        flags = op.get_flags()
        bdims = [i for i, f in enumerate(flags) if not f]
        res = op.result.type
        assert isinstance(res, F.TensorType)
        shape = list(res.get_shape())
        axes = [bdims.index(d) if shape[d] == DYN else None for d in range(len(shape))]
        sizes_ops, sizes = host_sizes(x, axes)
        return [*sizes_ops, H.BroadcastOp(x, shape, bdims, sizes)]
    assert isinstance(op, F.BroadcastInDimOp)
    return [H.BroadcastOp(x, _ints(op.shape), _ints(op.broadcast_dims))]


def insert_ops_before(ops: Sequence[Operation], anchor: Operation) -> None:
    block = anchor.parent_block()
    assert block is not None
    block.insert_ops_before(list(ops), anchor)


def insert_ops_after(ops: Sequence[Operation], anchor: Operation) -> None:
    block = anchor.parent_block()
    assert block is not None
    block.insert_ops_after(list(ops), anchor)


# =====================================================================================
# Symbolic extents (for host allocations)
# =====================================================================================


@dataclass(frozen=True)
class InputExtent:
    """Extent ``axis`` of fusion input ``input``."""

    input: int
    axis: int


Extent = int | InputExtent | None
"""A static extent, an input's extent, or None (not known on the host)."""


def symbolic_extents(fusion: F.FusionOp) -> dict[SSAValue, list[Extent]]:
    """The extents of every tensor value of ``fusion`` as static ints or input axes
    (None where an extent is computed, e.g. a symbolic reshape)."""
    env: dict[SSAValue, list[Extent]] = {}
    for i, a in enumerate(fusion.inputs):
        if isinstance(a.type, F.TensorType):
            env[a] = [
                e if e != DYN else InputExtent(i, k) for k, e in enumerate(a.type.get_shape())
            ]

    def of(v: SSAValue) -> list[Extent]:
        t = v.type
        assert isinstance(t, F.TensorType)
        return env.get(v, [None if e == DYN else e for e in t.get_shape()])

    for op in fusion.body.block.ops:
        for r in op.results:
            t = r.type
            if not isinstance(t, F.TensorType):
                continue
            shape = t.get_shape()
            ext: list[Extent] = [None if e == DYN else e for e in shape]
            if DYN in shape:
                ext = _infer_extents(op, of, ext)
            env[r] = ext
    return env


def _infer_extents(op: Operation, of: object, ext: list[Extent]) -> list[Extent]:
    get = of  # type: ignore[assignment]
    tensors = [v for v in op.operands if isinstance(v.type, F.TensorType)]
    if isinstance(op, F.PermuteOp):
        src = get(op.input)  # type: ignore[operator]
        return [src[d] for d in op.get_dims()]
    if isinstance(op, F.SqueezeOp):
        src = get(op.input)  # type: ignore[operator]
        return [e for i, e in enumerate(src) if i not in op.get_dims()]
    if isinstance(op, F.BroadcastOp):
        src = iter(get(op.input))  # type: ignore[operator]
        return [1 if f else next(src) for f in op.get_flags()]
    if isinstance(op, F.ReductionOp | F.VarOp | F.VarMeanOp | F.WelfordOp):
        src = get(op.input)  # type: ignore[operator]
        t = op.input.type
        assert isinstance(t, F.TensorType)
        dims = {d % t.rank for d in _ints(op.dims)}  # type: ignore[attr-defined]
        keep = bool(getattr(op, "keepdim", None) and op.keepdim.value.data)  # type: ignore[attr-defined]
        out = (
            [1 if i in dims else e for i, e in enumerate(src)]
            if keep
            else [e for i, e in enumerate(src) if i not in dims]
        )
        return out if len(out) == len(ext) else ext
    if isinstance(op, F.ElementwiseOp | F.CastOp) and tensors:
        rank = len(ext)
        out = list(ext)
        for k in range(rank):
            if out[k] is not None:
                continue
            for v in tensors:
                src = get(v)  # type: ignore[operator]
                j = k - (rank - len(src))
                if j >= 0 and src[j] not in (1, None):
                    out[k] = src[j]
                    break
        return out
    return ext


def host_view_ops_typed(op: Operation, x: SSAValue, t: F.TensorType) -> list[Operation]:
    """``host_view_ops`` whose result carries the layout ``t``."""
    vops = host_view_ops(op, x)
    last = vops[-1]
    if last.results[0].type == t:
        return vops
    typed = rebuilt(last, result_types=[t])
    last.erase()  # never inserted: else it stays a use of its operand
    return [*vops[:-1], typed]


def drop_outs(launch: H.LaunchOp) -> H.LaunchOp:
    """Undo ``preallocate_outputs``: a launch that allocates its own results (the
    buffers and their ``fuser.size`` ops are erased when nothing else uses them)."""
    if not launch.outs:
        return launch
    buffers = list(launch.outs)
    new = rebuild_launch(launch, list(launch.args), [r.type for r in launch.res])
    for old, r, buf in zip(launch.res, new.res, buffers, strict=True):
        old.replace_all_uses_with(r)
        if isinstance(buf.owner, H.AllocateOp):
            buf.replace_all_uses_with(r)
    erase_op(launch)
    for buf in buffers:
        alloc = buf.owner
        if isinstance(alloc, H.AllocateOp) and not alloc.result.uses:
            sizes = list(alloc.sizes)
            erase_op(alloc)
            for s in sizes:
                if isinstance(s.owner, Operation) and not s.uses:
                    erase_op(s.owner)
    return new
