"""``strip-bookend-views``: run the view-like ops at both ends of a fusion on the host.

A view-like op (``reshape``, ``permute``, ``squeeze``, ``broadcast``,
``broadcast_in_dim``, ``slice``) only changes metadata. At the *input end* of a
fusion (its operand is a fusion input) or at the *output end* (its only use is
``fuser.output``) a kernel gains nothing by doing it: the pass moves it out of the
fusion into a host view of the ``hir.program`` that launches the fusion (seed 002;
nvFuser strips only the output end, fuser strips both). A module without a
``hir.program`` gets one (``@main`` when it holds one fusion, ``@<fusion>_main``
otherwise) that launches each fusion with ``hir.launch``.

Before (seed 002's GELU)::

    fuser.fusion @gelu(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
      %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>, ...} : ...
      ... pointwise on %t1 ...
      %t10 = fuser.reshape %t9 {new_shape = array<i64: 8192, 3072>, ...} : ...
      fuser.output %t10 : !fuser.tensor<8192x3072xf32>
    }

After::

    fuser.fusion @gelu(%0 : !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
      ... pointwise on %0 ...
      fuser.output %t9 : !fuser.tensor<64x128x3072xf32>
    }
    hir.program @main(%0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
      %1 = hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>} : ... -> !fuser.tensor<64x128x3072xf32>
      %2 = hir.launch @gelu(%1) : (!fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
      %3 = hir.reshape %2 {new_shape = array<i64: 8192, 3072>} : ... -> !fuser.tensor<8192x3072xf32>
      hir.return %3 : !fuser.tensor<8192x3072xf32>
    }

The rules (a view moves only when the host can do it without a copy):

* **Input end**: the fusion input's type carries its layout (``contiguity``,
  ``stride_order``; none means contiguous row-major). ``reshape``, ``squeeze``,
  ``broadcast`` and a non-expanding ``broadcast_in_dim`` move when the input is
  contiguous row-major; ``slice`` when it is contiguous row-major with static
  extents (the new fusion input gets the slice's contiguity). ``permute`` always
  moves: the kernel reads through the strides, the new fusion input gets the
  permuted ``stride_order``/``contiguity`` (so a transpose is a strided read feeding
  a ``set``). The new fusion input replaces the old one when nothing else reads it.
* **Output end**: kernel outputs are written contiguous row-major, so ``reshape``,
  ``squeeze``, ``broadcast`` and non-expanding ``broadcast_in_dim`` of a value the
  kernel computes (a compute op's result or a reshape/squeeze/broadcast of one;
  not a fusion input, not a permute or slice) move; ``permute`` moves only where every launch returns its result directly
  (``hir.return``): the caller then gets a strided view, as torch's eager permute
  does; a host reshape of it would need a copy, so there the permute stays and the
  kernel writes through the permuted strides. ``set(y)`` of a value the kernel
  computes (not a fusion input nor a view) is dropped: the kernel output is
  already a fresh buffer.
* What stays in the kernel: ``expand`` and expanding ``broadcast_in_dim`` (stride-0
  axes are not a layout ``!fuser.tensor`` expresses), views with size operands
  (symbolic reshapes), output-end ``slice`` (the kernel would compute elements
  nobody reads), ``set`` of a fusion input or of a view (a real copy), outputs
  written in place (``alias_inputs``).

The module also holds the helpers the other host-program passes share
(``mark-aliases``, ``segment``): programs and launches, host views of fuser views,
layout rules, and symbolic output extents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from fuser_ir.dialects import fuser as F
from fuser_ir.dialects import hir as H
from fuser_ir.shapes import DYN

__all__ = [
    "StripBookendViews",
    "HostPassError",
    "ensure_programs",
    "fusions_by_name",
    "launches_by_callee",
    "host_view_ops",
    "input_end_type",
    "output_end_ok",
    "symbolic_extents",
    "host_sizes",
    "rebuild_launch",
    "set_fusion_outputs",
]


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
    fusion: F.FusionOp, values: Sequence[SSAValue], alias_inputs: Sequence[int] | None = None
) -> None:
    """Replace the terminator and the declared result types of ``fusion``."""
    old = fusion.output_op
    new = F.OutputOp(list(values), alias_inputs)
    fusion.body.block.insert_op_before(new, old)
    erase_op(old)
    returned = new.returned_values()
    fusion.function_type = type(fusion.function_type).from_lists(
        list(fusion.body.block.arg_types), [default_layout(v.type) for v in returned]
    )


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
    t = op.input.type
    r = op.result.type
    assert isinstance(t, F.TensorType) and isinstance(r, F.TensorType)
    out = r.get_shape()
    return all(t.get_shape()[i] == out[d] for i, d in enumerate(_ints(op.broadcast_dims)))


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


def _insert_ops_before(ops: Sequence[Operation], anchor: Operation) -> None:
    block = anchor.parent_block()
    assert block is not None
    block.insert_ops_before(list(ops), anchor)


def _insert_ops_after(ops: Sequence[Operation], anchor: Operation) -> None:
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


# =====================================================================================
# The pass
# =====================================================================================


def _launch_result_returned_only(launch: H.LaunchOp, index: int) -> bool:
    uses = launch.res[index].uses
    return bool(uses) and all(isinstance(u.operation, H.ReturnOp) for u in uses)


def strip_input_end(fusion: F.FusionOp, launches: Sequence[H.LaunchOp]) -> list[H.LaunchOp]:
    """Move input-end views of ``fusion`` to the host at every launch; returns the
    (rebuilt) launches."""
    launches = list(launches)
    block = fusion.body.block
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            if not op.operands or not isinstance(op.operands[0], BlockArgument):
                continue
            if op.operands[0].owner is not block or len(op.operands) != 1:
                continue
            arg = op.operands[0]
            assert isinstance(arg, BlockArgument)
            at = arg.type
            if not isinstance(at, F.TensorType):
                continue
            new_t = input_end_type(op, at)
            if new_t is None:
                continue
            new_arg = add_fusion_input(fusion, new_t)
            op.results[0].replace_all_uses_with(new_arg)
            erase_op(op)
            rebuilt: list[H.LaunchOp] = []
            for launch in launches:
                vops = host_view_ops_typed(op, launch.args[arg.index], new_t)
                _insert_ops_before(vops, launch)
                rebuilt.append(_replace_launch(launch, [*launch.args, vops[-1].results[0]], None))
            launches = rebuilt
            if not arg.uses and arg.index not in fusion.output_op.get_alias_inputs():
                idx = arg.index
                erase_fusion_input(fusion, idx)
                launches = [
                    _replace_launch(la, [a for i, a in enumerate(la.args) if i != idx], None)
                    for la in launches
                ]
            changed = True
            break
    return launches


def host_view_ops_typed(op: Operation, x: SSAValue, t: F.TensorType) -> list[Operation]:
    """``host_view_ops`` whose result carries the layout ``t``."""
    vops = host_view_ops(op, x)
    last = vops[-1]
    if last.results[0].type == t:
        return vops
    typed = type(last).create(
        operands=list(last.operands),
        properties=dict(last.properties),
        attributes=dict(last.attributes),
        result_types=[t],
    )
    return [*vops[:-1], typed]


def _replace_launch(
    launch: H.LaunchOp, args: Sequence[SSAValue], result_types: Sequence[Attribute] | None
) -> H.LaunchOp:
    types = [r.type for r in launch.res] if result_types is None else list(result_types)
    new = rebuild_launch(launch, args, types, list(launch.outs) if result_types is None else ())
    if result_types is None:
        for old, r in zip(launch.res, new.res, strict=True):
            old.replace_all_uses_with(r)
    erase_op(launch, safe=result_types is None)
    return new


def strip_output_end(fusion: F.FusionOp, launches: Sequence[H.LaunchOp]) -> list[H.LaunchOp]:
    """Move output-end views of ``fusion`` to the host at every launch."""
    launches = list(launches)
    changed = True
    while changed:
        changed = False
        term = fusion.output_op
        aliases = term.get_alias_inputs()
        returned = [i for i, a in enumerate(aliases) if a < 0]
        for k, i in enumerate(returned):
            v = term.values[i]
            op = v.owner
            if not isinstance(op, Operation) or not isinstance(v.type, F.TensorType):
                continue
            if any(u.operation is not term for u in v.uses):
                continue
            if sum(1 for w in term.values if w == v) != 1:
                continue
            kind = _output_strip_kind(op, term, launches, k)
            if kind is None:
                continue
            src = op.operands[0]
            values = list(term.values)
            values[i] = src
            set_fusion_outputs(fusion, values, aliases if any(a >= 0 for a in aliases) else None)
            new_types = list(fusion.function_type.outputs.data)
            rebuilt = []
            for launch in launches:
                new = rebuild_launch(launch, list(launch.args), new_types)
                for j, (old, r) in enumerate(zip(launch.res, new.res, strict=True)):
                    if j != k:
                        old.replace_all_uses_with(r)
                if kind == "view":
                    vops = host_view_ops(op, new.res[k])
                    _insert_ops_after(vops, new)
                    launch.res[k].replace_all_uses_with(vops[-1].results[0])
                else:
                    launch.res[k].replace_all_uses_with(new.res[k])
                erase_op(launch)
                rebuilt.append(new)
            launches = rebuilt
            erase_op(op)
            changed = True
            break
    return launches


def _computed_contiguous(v: SSAValue) -> bool:
    """Whether the kernel computes ``v`` into a contiguous row-major buffer: a
    compute op's result, or a layout-preserving view (reshape, squeeze,
    broadcast) of one. Fusion inputs and other views may be strided."""
    while True:
        owner = v.owner
        if not isinstance(owner, Operation):
            return False
        if isinstance(owner, F.ReshapeOp | F.SqueezeOp | F.BroadcastOp | F.BroadcastInDimOp):
            if not is_host_viewable(owner):
                return False
            v = owner.operands[0]
            continue
        return not isinstance(owner, F.ViewLikeOp)


def _output_strip_kind(
    op: Operation, term: F.OutputOp, launches: Sequence[H.LaunchOp], k: int
) -> str | None:
    if op.name == "fuser.set":
        y = op.operands[0]
        if isinstance(y, BlockArgument) or y in term.values:
            return None
        prod_op = y.owner
        if isinstance(prod_op, F.ViewLikeOp):
            return None
        return "drop"
    if not output_end_ok(op):
        return None
    src = op.operands[0]
    if not _computed_contiguous(src):
        return None
    if isinstance(op, F.PermuteOp) and not all(
        _launch_result_returned_only(la, k) for la in launches
    ):
        return None
    if not isinstance(src.type, F.TensorType):
        return None
    return "view"


@dataclass(frozen=True)
class StripBookendViews(ModulePass):
    """Move view-like ops at both ends of each fusion into host views."""

    name = "strip-bookend-views"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ensure_programs(op)
        table = launches_by_callee(op)
        for name, fusion in fusions_by_name(op).items():
            launches = table.get(name, [])
            if not launches:
                continue
            from passes.mark_aliases import drop_outs  # mark_aliases imports this module

            launches = [drop_outs(la) for la in launches]
            launches = strip_input_end(fusion, launches)
            strip_output_end(fusion, launches)
