"""The inner-outer persistent scheduler (layer-norm backward): row reductions of a
persistent input and column reductions of the same rows in one kernel. Blocks
stay resident (one per SM) and loop over rows; each keeps its rows' buffers in
registers and shared memory and accumulates partial column sums in shared memory,
which a grid reduction finishes (``inner``, ``outer_vectorization``: that one-kernel
schedule is not lowered yet). What runs today is a kernel group per reduction loop
nest: the heuristic also records the scheduler and parameters of the row half and of
the column half (``rows_kind``/``rows``, ``cols_kind``/``cols``, each half's own
heuristic), and ``schedule-fusions`` writes both loop nests from them."""

from __future__ import annotations

from dataclasses import replace

from fuser.ir.dialects.fuser import FusionOp, TensorType

from .analysis.graph import reductions
from .analysis.output_groups import half_fusion, split_by_reduction_kind
from .analysis.reduction_type import ReductionType, is_fastest_dim_reduction
from .analysis.sizes import ConcreteSizes, bind_sizes
from .base import Reject, Scheduler, ceil_div, vector_width
from .communication import CommunicationScheduler
from .inner_persistent import InnerPersistentScheduler
from .matmul import MatmulScheduler
from .no_op import ExprEvalScheduler, NoOpScheduler
from .outer_persistent import OuterPersistentScheduler
from .params import InnerOuterParams, OuterPersistentParams, ReductionParams
from .persistent import (
    buffer_itemsize,
    common_compile_time_check,
    first_extents,
    fusion_buffer_sizes,
    inner_persistent_params,
    register_budget,
    smem_budget,
)
from .pointwise import PointwiseScheduler
from .reduction import ReductionScheduler, reduction_extents, reduction_signature
from .selection import Selection, select_among
from .target import GpuTarget
from .transpose import TransposeScheduler

HALF_SCHEDULERS: tuple[type[Scheduler], ...] = (
    NoOpScheduler,
    ExprEvalScheduler,
    MatmulScheduler,
    CommunicationScheduler,
    ReductionScheduler,
    TransposeScheduler,
    PointwiseScheduler,
    InnerPersistentScheduler,
    OuterPersistentScheduler,
)
"""The schedulers of fusions with one kind of reduction, in priority order: those a half
of an inner-outer fusion can get (``fuser.schedulers.registry.SCHEDULERS`` is these, then the
inner-outer scheduler)."""

PARTIAL_BYTES = 4
"""Partial outer-reduction results are kept in float32."""


def _partial_bytes(fusion: FusionOp, sizes: ConcreteSizes) -> int:
    outer = [r for r in reductions(fusion) if not reduction_extents(r, sizes).fastest_dim]
    return sum(reduction_extents(r, sizes).iteration * PARTIAL_BYTES for r in outer)


def half_selections(fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> list[Selection] | Reject:
    """The kernels run the row half and the column half of the fusion one after the
    other (a kernel group per reduction loop nest): the scheduler and parameters each
    half gets, or why a half gets none (each must be a reduction the registry accepts
    at these sizes)."""
    groups = split_by_reduction_kind(fusion)
    if isinstance(groups, str):
        return Reject(groups)
    args = [
        sizes.shape(a) if isinstance(a.type, TensorType) else sizes.scalar(a)
        for a in fusion.inputs
    ]
    out = []
    for keep, suffix in zip(groups, ("rows", "cols"), strict=True):
        half = half_fusion(fusion, keep, suffix)
        sel = select_among(half, bind_sizes(half, args), target, HALF_SCHEDULERS)
        if sel.scheduler is None:
            return Reject(f"no scheduler accepts its {suffix} half:\n{sel.explain()}")
        if isinstance(sel.params, OuterPersistentParams):
            # The half's kernels are its statistics' (what it computes at the input's
            # shape runs in the row kernel group).
            sel = replace(sel, scheduler=ReductionScheduler, params=sel.params.stats)
        if not isinstance(sel.params, ReductionParams):
            return Reject(f"its {suffix} half is a {sel.kind} fusion, not a reduction")
        out.append(sel)
    return out


def halves_reject(fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> Reject | None:
    """Why a half of the fusion gets no reduction scheduler (``half_selections``), or None."""
    sel = half_selections(fusion, sizes, target)
    return sel if isinstance(sel, Reject) else None


class InnerOuterPersistentScheduler(Scheduler):
    kind = "inner_outer_persistent"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        if reject := common_compile_time_check(fusion, ReductionType.INNER_OUTER):
            return reject
        inner = {reduction_signature(r) for r in reductions(fusion) if is_fastest_dim_reduction(r)}
        outer = {
            reduction_signature(r) for r in reductions(fusion) if not is_fastest_dim_reduction(r)
        }
        if len(inner) != 1 or len(outer) != 1:
            return Reject("inner (or outer) reductions reduce different axes")
        (rank_i, dims_i), (rank_o, dims_o) = next(iter(inner)), next(iter(outer))
        if rank_i != rank_o or sorted(dims_i + dims_o) != list(range(rank_i)):
            return Reject(
                f"outer reductions (dims {list(dims_o)}) must reduce the axes the inner "
                f"reductions (dims {list(dims_i)}) keep"
            )
        return None

    @classmethod
    def can_schedule_run_time(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        ext = first_extents(fusion, sizes, pick=True)
        if ext.iteration < target.sm_count:
            return Reject(
                f"only {ext.iteration} rows: the combined schedule needs at least one row "
                f"per SM ({target.sm_count})"
            )
        need = fusion_buffer_sizes(fusion, sizes).bytes_per_row
        partial = _partial_bytes(fusion, sizes)
        have = register_budget(target) + smem_budget(target) - partial
        if need > have:
            return Reject(
                f"persistent buffers need {need} B per row; {target.name} has {have} B "
                f"(registers + shared memory less {partial} B of partial outer results)"
            )
        return halves_reject(fusion, sizes, target)

    @classmethod
    def heuristic(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> InnerOuterParams:
        ext = first_extents(fusion, sizes, pick=True)
        itemsize = buffer_itemsize(fusion)
        inner = inner_persistent_params(ext, fusion_buffer_sizes(fusion, sizes), itemsize, target)
        # Persistent grid: one block per SM loops over the rows; partial column
        # results are finished by a grid reduction.
        blocks = min(target.sm_count, ceil_div(ext.iteration, inner.rows_per_block))
        inner = replace(inner, grid=(blocks, 1, 1), cross_grid=True)
        outer_vec = vector_width(PARTIAL_BYTES, [ext.reduction], target)
        threads = inner.threads_per_row * inner.rows_per_block
        halves = half_selections(fusion, sizes, target)
        if isinstance(halves, Reject):  # can_schedule_run_time checked it
            raise ValueError(f"inner_outer_persistent heuristic: {halves.reason}")
        rows, cols = halves
        return InnerOuterParams(
            inner=inner,
            outer_vectorization=outer_vec,
            outer_threads_per_column=max(1, threads * outer_vec // max(1, ext.reduction)),
            partial_buffer_bytes=_partial_bytes(fusion, sizes),
            rows_kind=rows.kind,  # type: ignore[arg-type]
            rows=rows.params,  # type: ignore[arg-type]
            cols_kind=cols.kind,  # type: ignore[arg-type]
            cols=cols.params,  # type: ignore[arg-type]
        )
