"""The outer persistent scheduler: normalizations over an outer axis (batch-norm
style: ``x - mean(x, 0)``). Columns are vectorized on ``block.x``; the reduced axis
is spread over ``block.y`` and, when one block cannot hold its columns' buffers,
over ``grid.y`` blocks (grid persistence, ``cross_grid``)."""

from __future__ import annotations

from fuser.ir.dialects.fuser import FusionOp

from .analysis.column_kernel import column_kernel_reject
from .analysis.graph import reductions
from .analysis.reduction_type import ReductionType
from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler, ceil_div, next_pow2, vector_width
from .params import ReductionParams
from .persistent import (
    REGISTER_OVERHEAD,
    buffer_itemsize,
    common_compile_time_check,
    first_extents,
    fusion_buffer_sizes,
    register_budget,
)
from .reduction import same_axes_reject, same_sizes_reject
from .target import GpuTarget


def _columns_per_block(
    inner: int, iteration: int, itemsize: int, target: GpuTarget
) -> tuple[int, int]:
    vec = vector_width(itemsize, [inner], target)
    bdimx = min(target.warp_size, next_pow2(ceil_div(iteration, vec)))
    return vec, bdimx


class OuterPersistentScheduler(Scheduler):
    kind = "outer_persistent"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        return common_compile_time_check(fusion, ReductionType.OUTER) or same_axes_reject(
            reductions(fusion)
        )

    @classmethod
    def _grid_split(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> tuple[int, int, int]:
        ext = first_extents(fusion, sizes)
        vec, bdimx = _columns_per_block(ext.inner, ext.iteration, buffer_itemsize(fusion), target)
        per_block = fusion_buffer_sizes(fusion, sizes).bytes_per_row * bdimx * vec
        # An empty buffer (a reduction result broadcast back, nothing else kept)
        # still needs one block per column group.
        return max(1, ceil_div(per_block, register_budget(target))), vec, bdimx

    @classmethod
    def can_schedule_run_time(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        if reject := same_sizes_reject(reductions(fusion), sizes):
            return reject
        if why := column_kernel_reject(fusion, sizes.shape):
            return Reject(why)
        split, _, _ = cls._grid_split(fusion, sizes, target)
        if split > target.sm_count // 2:
            return Reject(
                f"grid persistence would need {split} blocks per column group, more than "
                f"half of the {target.sm_count} SMs"
            )
        return None

    @classmethod
    def heuristic(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> ReductionParams:
        ext = first_extents(fusion, sizes)
        buf = fusion_buffer_sizes(fusion, sizes)
        split, vec, bdimx = cls._grid_split(fusion, sizes, target)
        rows_per_split = ceil_div(ext.reduction, split)
        bdimy = max(
            1, min(target.max_threads_per_block // bdimx, next_pow2(ceil_div(rows_per_split, 8)))
        )
        batch = ceil_div(rows_per_split, bdimy)
        # Keep the buffer registers of one thread under the per-thread budget.
        per_elem = max(1, buf.bytes_per_row // max(1, ext.reduction))
        while (
            batch * vec * per_elem > (target.max_regs_per_thread - REGISTER_OVERHEAD) * 4
            and bdimx * bdimy * 2 <= target.max_threads_per_block
        ):
            bdimy *= 2
            batch = ceil_div(rows_per_split, bdimy)
        return ReductionParams(
            fastest_dim=False,
            vectorization=vec,
            threads_per_row=bdimy,
            rows_per_block=bdimx * vec,
            persistent_batch=batch,
            cross_block=bdimy > 1,
            cross_grid=split > 1,
            block=(bdimx, bdimy, 1),
            grid=(ceil_div(ext.iteration, bdimx * vec), split, 1),
            project_to_inputs=buf.project_to_inputs,
            buffer_bytes_per_row=buf.bytes_per_row,
        )
