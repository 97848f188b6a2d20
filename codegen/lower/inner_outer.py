"""Lower an inner-outer persistent segment (layer-norm backward's shape) as the
kernels of its two halves.

The segment has row (inner) and column (outer) reductions of the same inputs, e.g.
layer-norm backward: ``dx`` needs per-row sums, ``dw = sum(dy * xhat, rows)`` and
``db = sum(dy, rows)`` per-column sums. The outputs are split by the kind of
reduction they depend on; each half is the fusion with only its outputs (dead ops
removed, all inputs kept so argument indices do not move) and is lowered on its own
— the row half by ``rows.lower_rows`` (one block per row, the row in registers),
the column half by ``columns.lower_columns`` (partials, finish) — and the kernels
run one after the other::

    @ln_bwd (inner_outer_persistent)  ->  kernel 0: @ln_bwd_rows  (dx)
                                          kernel 1: @ln_bwd_cols_partials  (dw, db)
                                          kernel 2: @ln_bwd_cols_finish

This reads the shared inputs twice, where nvFuser's fused inner-outer kernel reads
them once (its column partials are accumulated in the row kernel's registers); the
fused kernel is future work. An output that depends on both kinds of reduction is
rejected with a ``LoweringError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fuser.codegen.lower.common import (
    ArgRef,
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    TensorLayout,
)
from fuser.ir.dialects import fuser as F
from fuser.schedulers.analysis.output_groups import half_fusion, split_by_reduction_kind

__all__ = ["half_fusion", "lower_inner_outer", "lower_output_groups"]

LowerSegment = Callable[..., LoweredFusion]
"""``fuser.codegen.lower.lower_segment``'s signature: (fusion, input layouts, scalar values,
output layouts, target, name=...) -> LoweredFusion."""


def lower_inner_outer(
    fusion: F.FusionOp,
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout],
    target: object,
    name: str,
    lower: LowerSegment,
) -> LoweredFusion:
    """The row half and the column half of an inner-outer fusion, each lowered by
    ``lower`` (``fuser.codegen.lower.lower_segment``, which dispatches here)."""
    groups = split_by_reduction_kind(fusion)
    if isinstance(groups, str):
        raise LoweringError(groups)
    inner, outer = groups
    return lower_output_groups(
        fusion, [(inner, "rows"), (outer, "cols")], in_layouts, scalar_values, out_layouts,
        target, name, "inner_outer_persistent", lower,
    )


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
    split: Callable[[F.FusionOp, Sequence[int], str], F.FusionOp] = half_fusion,
) -> LoweredFusion:
    """Lower ``fusion`` as one sub-fusion per group of ``fuser.output`` operands
    (``split``: ``half_fusion`` by default), each by its own scheduler through ``lower``
    (the dispatcher ``fuser.codegen.lower.lower_segment``, passed in: it imports this
    module), and run their kernels in order."""
    kernels: list[LoweredKernel] = []
    scratch = []
    for keep, suffix in groups:
        half = split(fusion, keep, suffix)
        low = lower(half, in_layouts, scalar_values, [out_layouts[i] for i in keep], target,
                            name=f"{name}_{suffix}")
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
