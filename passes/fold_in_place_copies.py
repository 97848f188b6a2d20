"""``fold-in-place-copies``: write an in-place update straight into its input when
the segment that computes it can (after ``segment``).

``mark-aliases`` decides before segmentation. An update ``x' = f(x, ...)`` that
another output also reads ``x`` for (an optimizer step: the new moments feed the
new parameter) stays in its kernel only when the whole fusion is pointwise, because
only a pointwise kernel stores all its outputs after all its loads; beside a
reduction it is cut (``fuser.segment_set``): computed into a temporary, then copied
into ``x`` by a later kernel. Segmentation often puts the reduction in a segment of
its own, and the update's segment is pointwise after all (an Adam step with
gradient-norm clipping: the norm's reduction, then one pointwise segment for the
moments and the parameter). There the copy is a whole extra read and write of
``x``.

The pass removes such a copy: a launch of a copy segment (``%r = segment_set %t``)
that writes ``%t`` into buffer ``%X`` (``outs(%X)``, ``hir.alias %r, %X``), where

* ``%t`` is result ``k`` of an earlier launch ``S``, written into a temporary
  (``hir.allocate``) that nothing else uses, and read by nothing but the copy;
* ``%X`` is dense (the layout ``%t`` has) and of ``%t``'s shape;
* no op between ``S`` and the copy touches ``%X``'s buffer (else it would see the
  update early);
* ``S`` may write output ``k`` into ``%X`` itself: the rule ``mark-aliases`` applies
  to a fusion (``needs_cut``) holds for ``S``'s fusion, or ``S`` does not read
  ``%X``'s buffer at all.

``S`` then writes ``%t`` into ``%X`` (``outs``), and the copy launch, its segment,
the temporary and its deallocation go. ``codegen.aliased_args`` checks the kernels
of ``S`` for the order of their loads and stores, as for any in-place launch.

Before::

    %t0 = hir.allocate : !fuser.tensor<1024xf32>
    %m1, %p1 = hir.launch @f_seg1(%p, %g, %m, %s) outs(%t0, %p : ...) : ...
    %c = hir.launch @f_seg2(%m1) outs(%m : ...) : ...
    hir.deallocate %t0 : !fuser.tensor<1024xf32>
    hir.alias %c, %m : ...
    hir.alias %p1, %p : ...

After (``@f_seg2`` erased)::

    %m1, %p1 = hir.launch @f_seg1(%p, %g, %m, %s) outs(%m, %p : ...) : ...
    hir.alias %m1, %m : ...
    hir.alias %p1, %p : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.passes.host_rewrites import fusions_by_name, launches_by_callee
from fuser.passes.mark_aliases import alias_target, args_sharing, buffer_of, needs_cut

__all__ = ["FoldInPlaceCopies", "FoldInPlaceCopy", "is_copy_segment"]


def is_copy_segment(fusion: F.FusionOp) -> bool:
    """Whether ``fusion`` only copies its one tensor input to its one output
    (``fuser.output (segment_set %0)``): what ``segment`` makes of a cut update."""
    ops = [op for op in fusion.body.block.ops if not op.name.startswith("iterdomain.")]
    if len(ops) != 2 or len(fusion.inputs) != 1:
        return False
    copy, term = ops
    return (
        isinstance(copy, F.SegmentSetOp | F.SetOp)
        and copy.operands[0] is fusion.inputs[0]
        and isinstance(term, F.OutputOp)
        and list(term.values) == list(copy.results)
        and all(a < 0 for a in term.get_alias_inputs())
    )


def _touches(op: Operation, buffer: SSAValue) -> bool:
    """Whether ``op`` (or an op nested in it) has an operand in ``buffer``'s memory."""
    return any(
        isinstance(v.type, F.TensorType) and buffer_of(v) is buffer for inner in op.walk() for v in inner.operands
    )


def _temporary(launch: H.LaunchOp, k: int) -> H.AllocateOp | None:
    """The ``hir.allocate`` that result ``k`` of ``launch`` is written into, when
    nothing but the launch and one ``hir.deallocate`` uses it."""
    if k >= len(launch.outs):
        return None
    alloc = launch.outs[k].owner
    if not isinstance(alloc, H.AllocateOp) or alloc.preallocated:
        return None
    users = [u.operation for u in alloc.result.uses]
    if sum(1 for u in users if u is launch) != 1:
        return None
    return alloc if all(u is launch or isinstance(u, H.DeallocateOp) for u in users) else None


@dataclass
class FoldInPlaceCopy(RewritePattern):
    """One copy launch folded into the launch that computed its input (module
    docstring); ``fusions``: the module's fusions by name."""

    fusions: dict[str, F.FusionOp]
    launches: dict[str, list[H.LaunchOp]]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, copy: H.LaunchOp, rewriter: PatternRewriter, /) -> None:
        name = copy.callee.string_value()
        seg = self.fusions.get(name)
        if seg is None or not is_copy_segment(seg) or len(copy.args) != 1 or len(copy.outs) != 1:
            return
        t, target, r = copy.args[0], copy.outs[0], copy.res[0]
        if not (
            isinstance(t.type, F.TensorType) and isinstance(target.type, F.TensorType)
            and t.type.get_shape() == target.type.get_shape() and t.type.element_type == target.type.element_type
            and t.type.has_default_layout and target.type.has_default_layout
            and alias_target(r) is target
        ):
            return
        writer = t.owner
        if not isinstance(writer, H.LaunchOp) or t.uses.get_length() != 1 or writer.parent_block() is not copy.parent_block():
            return
        k = list(writer.res).index(t)
        alloc = _temporary(writer, k)
        callee = writer.callee.string_value()
        fusion = self.fusions.get(callee)
        if alloc is None or fusion is None or len(self.launches.get(callee, [])) != 1:
            return
        if any(a >= 0 for a in fusion.output_op.get_alias_inputs()):
            return
        buffer = buffer_of(target)
        between = writer.next_op
        while between is not None and between is not copy:
            if _touches(between, buffer):
                return
            between = between.next_op
        readers = args_sharing(writer, target)
        if readers:
            direct = [a for a in readers if writer.args[a] is target]
            v = fusion.output_op.returned_values()[k]
            if not direct or needs_cut(fusion, [writer], direct[0], v):
                return
        outs = list(writer.outs)
        outs[k] = target
        new = H.LaunchOp(callee, list(writer.args), outs, [x.type for x in writer.res])
        rewriter.replace(writer, new)
        r.replace_all_uses_with(new.res[k])
        rewriter.erase(copy)
        for use in list(alloc.result.uses):
            rewriter.erase(use.operation)
        rewriter.erase(alloc)
        self.launches[name] = [la for la in self.launches.get(name, []) if la is not copy]
        self.launches[callee] = [new]


def fold_in_place_copies(module: ModuleOp) -> None:
    """Fold every foldable copy launch of ``module`` (module docstring), then erase
    the copy segments no launch calls any more (after the walk: the walker may still
    hold their ops)."""
    pattern = FoldInPlaceCopy(fusions_by_name(module), launches_by_callee(module))
    PatternRewriteWalker(pattern, apply_recursively=True).rewrite_module(module)
    for name, launches in pattern.launches.items():
        fusion = pattern.fusions.get(name)
        if not launches and fusion is not None and is_copy_segment(fusion):
            fusion.detach()
            fusion.erase()


@dataclass(frozen=True)
class FoldInPlaceCopies(ModulePass):
    """Write a cut in-place update straight into its input where its segment can."""

    name = "fold-in-place-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_in_place_copies(op)
