"""The inner persistent scheduler: normalizations over the innermost axis
(softmax, layer norm, RMS norm). Each row is loaded once into registers (or shared
memory when registers do not suffice), reduced, and reused after the reduction."""

from __future__ import annotations

from dataclasses import replace

from fuser.ir.dialects.fuser import FusionOp

from .analysis.graph import body_ops, reductions
from .analysis.reduction_type import ReductionType
from .analysis.row_kernel import aligned_rows, row_kernel_reject
from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler, ceil_div
from .params import ReductionParams
from .persistent import (
    buffers_fit,
    chained_reductions,
    common_compile_time_check,
    first_extents,
    fusion_buffer_sizes,
    holds_to_avoid_recompute,
    inner_persistent_params,
    io_itemsize,
    row_cluster,
)
from .reduction import same_axes_reject, same_sizes_reject
from .target import GpuTarget


class InnerPersistentScheduler(Scheduler):
    kind = "inner_persistent"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        return common_compile_time_check(fusion, ReductionType.INNER) or same_axes_reject(
            reductions(fusion)
        )

    @classmethod
    def can_schedule_run_time(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        if reject := same_sizes_reject(reductions(fusion), sizes):
            return reject
        if why := row_kernel_reject(fusion, sizes.shape):
            return Reject(why)
        # Few long rows stay one persistent kernel while a row fits on chip: a block a
        # row reads it once (bf16 softmax, 8 rows of 32000: 29 us, 1.0 of a copy, on
        # the H100), where the segmented grid reductions took 82 us in 6 kernels.
        # A row split over a thread-block cluster (``row_cluster``) holds a part a block.
        buf = fusion_buffer_sizes(fusion, sizes)
        blocks = row_cluster(first_extents(fusion, sizes), buf, target)
        return buffers_fit(ceil_div(buf.bytes_per_row, blocks), target)

    @classmethod
    def heuristic(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> ReductionParams:
        buf = fusion_buffer_sizes(fusion, sizes)
        ops = len(body_ops(fusion))
        params = inner_persistent_params(
            first_extents(fusion, sizes),
            buf,
            io_itemsize(fusion),
            target,
            chained_reductions(fusion),
            ops,
            aligned_rows(fusion, sizes),
        )
        if holds_to_avoid_recompute(fusion, buf, params, ops):
            params = replace(
                params, hold_buffers=True, project_to_inputs=False, buffer_bytes_per_row=buf.unprojected
            )
        return params
