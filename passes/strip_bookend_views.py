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
  A ``reshape`` also moves when the input is row-major with gaps (a padded product's
  slice: rows further apart than long) and the gap stays on one axis (a split, or a
  merge of axes contiguous with each other); a cast or unary op of an input whose
  only use is a view swaps with it first (``hoist_views_to_inputs``).
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

The helpers it shares with the other host-program passes (programs and launches,
host views of fuser views, layout rules, symbolic extents) are in
``passes/host_rewrites.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.passes.host_rewrites import (
    add_fusion_input,
    drop_outs,
    ensure_programs,
    erase_fusion_input,
    erase_op,
    fusions_by_name,
    host_view_ops,
    host_view_ops_typed,
    input_end_type,
    insert_ops_after,
    insert_ops_before,
    is_host_viewable,
    laid_out_outputs,
    launches_by_callee,
    output_end_ok,
    rebuild_launch,
    set_fusion_outputs,
    swap_view_before,
    view_of,
)

__all__ = ["StripBookendViews", "strip_input_end", "strip_output_end"]


# =====================================================================================
# The pass
# =====================================================================================


def _launch_result_returned_only(launch: H.LaunchOp, index: int) -> bool:
    uses = launch.res[index].uses
    return bool(uses) and all(isinstance(u.operation, H.ReturnOp) for u in uses)


def hoist_views_to_inputs(fusion: F.FusionOp) -> bool:
    """Move a reshape or squeeze of a cast or unary op of a fusion input before that
    op, when neither the op nor the input has another use and the host can do the
    view on the input: ``view(e(x))``
    becomes ``e(view(x))``, whose view is then an input-end view (a ``.float()``
    before a reshape). Returns whether anything changed."""
    block = fusion.body.block
    laid_out = laid_out_outputs(fusion)
    changed_any = False
    for op in list(block.ops):
        if not isinstance(op, F.ReshapeOp | F.SqueezeOp) or not is_host_viewable(op):
            continue  # (a permute swapped before the op would make its kernel a transpose)
        src = op.operands[0]
        e = src.owner
        if not isinstance(e, F.CastOp | F.UnaryOp) or len(e.operands) != 1 or not src.has_one_use():
            continue
        x = e.operands[0]
        if not isinstance(x, BlockArgument) or x.owner is not block or not isinstance(x.type, F.TensorType):
            continue
        if not x.has_one_use():
            continue  # (x and its view would be two kernel inputs over the same memory)
        if any(r in laid_out for r in op.results):
            continue
        view = view_of(op, x)
        if input_end_type(view, x.type) is None:
            view.erase()
            continue
        swap_view_before(op, e, {x: view})
        changed_any = True
    return changed_any


def strip_input_end(fusion: F.FusionOp, launches: Sequence[H.LaunchOp]) -> list[H.LaunchOp]:
    """Move input-end views of ``fusion`` to the host at every launch (after
    ``hoist_views_to_inputs``); returns the (rebuilt) launches."""
    launches = list(launches)
    block = fusion.body.block
    hoist_views_to_inputs(fusion)
    laid_out = laid_out_outputs(fusion)
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            if not op.operands or not isinstance(op.operands[0], BlockArgument):
                continue
            if any(r in laid_out for r in op.results):
                continue  # returned in a declared layout: a kernel writes it
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
                insert_ops_before(vops, launch)
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
                    insert_ops_after(vops, new)
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
            launches = [drop_outs(la) for la in launches]
            launches = strip_input_end(fusion, launches)
            strip_output_end(fusion, launches)
