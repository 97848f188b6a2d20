"""One kernel group per reduction loop nest: a written schedule whose reductions are
scheduled with different loop nests (an inner-outer persistent fusion: layer-norm
backward's row sums and column sums) is lowered as one sub-fusion per loop nest.

The reductions are classed by their loop structure (the loops' extents and types, and
how the loop indices give the reduced input's index). Each output joins the class of
the reductions it is computed from (outputs computed from none join the first class);
each class is the fusion with only its outputs (``half_fusion``: dead ops and their
``iterdomain`` ops removed, all inputs kept so argument indices do not move), lowered
on its own by ``lower_segment`` (which dispatches here first), and the kernels run one
after the other::

    @ln_bwd   dx: row sums a, c on [BIDx, serial, TIDy | unroll, TIDx, vectorize]
              dw, db: column sums on [BIDx, serial, TIDy | serial, TIDx, vectorize]

    ->  @ln_bwd_nest0 (dx: the row sums placed at the rows' loop, dy and x in registers)
        @ln_bwd_nest1 (dw, db: each block's partial sums) + @ln_bwd_nest1_finish

A fusion input placed at a loop (``compute_at``, held in registers or shared memory)
is placed for the stages of the kernel that shares that loop: in a sub-fusion where no
tensor the fusion computes is placed, the inputs' placements are dropped (they are
read where they are used). An output computed from reductions of two classes cannot
be split so; ``loop_nest_groups`` then leaves the fusion whole (its dispatcher decides
whether one kernel can run it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import BlockArgument, Operation

from fuser.codegen.lower.common import (
    ArgRef,
    LoweredFusion,
    LoweredKernel,
    TensorLayout,
)
from fuser.codegen.lower.loop_index import reduction_nest
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import LoopOp
from fuser.schedulers.analysis.graph import ancestors
from fuser.schedulers.analysis.output_groups import half_fusion

__all__ = ["loop_nest_groups", "loop_nest_half", "lower_output_groups"]

LowerSegment = Callable[..., LoweredFusion]
"""``fuser.codegen.lower.lower_segment``'s signature: (fusion, input layouts, scalar values,
output layouts, target, name=...) -> LoweredFusion."""


def loop_nest_groups(fusion: F.FusionOp, reductions: Sequence[Operation]) -> list[tuple[list[int], str]] | None:
    """The ``fuser.output`` operands of each reduction loop-nest class (with the
    sub-fusion's name suffix), or None when one class (or no split) covers them."""
    classes: dict[tuple, int] = {}
    class_of: dict[Operation, int] = {}
    for red in reductions:
        ls = reduction_nest(fusion, red)
        key = (tuple(ls.loops), tuple(ls.logical))
        class_of[red] = classes.setdefault(key, len(classes))
    if len(classes) < 2:
        return None
    groups: list[list[int]] = [[] for _ in classes]
    for i, v in enumerate(fusion.output_op.values):
        seen = ancestors([v])
        deps = {class_of[r] for r in reductions if any(res in seen for res in r.results)}
        if len(deps) > 1:
            return None
        groups[min(deps, default=0)].append(i)
    return [(g, f"nest{k}") for k, g in enumerate(groups) if g]


def loop_nest_half(fusion: F.FusionOp, keep: Sequence[int], suffix: str) -> F.FusionOp:
    """``half_fusion`` of a written schedule: the fusion with only the outputs ``keep``
    and the schedules of what they compute; inputs' placements are dropped when the
    half places nothing it computes (module docstring)."""
    half = half_fusion(fusion, keep, suffix)
    loops = [op for op in half.body.block.ops if isinstance(op, LoopOp) and op.compute_at is not None]
    if not any(not isinstance(op.tensor, BlockArgument) for op in loops):
        for op in loops:
            for prop in LoopOp.PROPERTY_NAMES:
                op.properties.pop(prop, None)
    return half


def lower_output_groups(
    fusion: F.FusionOp,
    groups: Sequence[tuple[Sequence[int], str]],
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout],
    target: object,
    name: str,
    scheduler: str,
    lower: LowerSegment,
) -> LoweredFusion:
    """Lower ``fusion`` as one sub-fusion per group of ``fuser.output`` operands
    (``loop_nest_half``), each through ``lower`` (the dispatcher
    ``fuser.codegen.lower.lower_segment``, passed in: it imports this module), and run
    their kernels in order; output and scratch indices are renumbered into the whole
    fusion's."""
    kernels: list[LoweredKernel] = []
    scratch = []
    for keep, suffix in groups:
        half = loop_nest_half(fusion, keep, suffix)
        low = lower(half, in_layouts, scalar_values, [out_layouts[i] for i in keep], target, name=f"{name}_{suffix}")
        offset = len(scratch)
        scratch.extend(low.scratch)
        for k in low.kernels:
            args = [
                ArgRef("output", keep[a.index]) if a.kind == "output"
                else ArgRef("scratch", a.index + offset) if a.kind == "scratch"
                else a
                for a in k.args
            ]
            kernels.append(LoweredKernel(k.module, k.name, k.block, k.grid, args, k.shared_bytes))
    return LoweredFusion(scheduler, kernels, scratch)
