"""The outer persistent scheduler: normalizations over an outer axis (batch-norm
style: ``x - mean(x, 0)``). It accepts a fusion when nvFuser's single-pass kernel
could keep the buffers on chip: columns vectorized on ``block.x``, the reduced axis
spread over ``block.y`` and, when one block cannot hold its columns' buffers, over
``grid.y`` blocks (grid persistence). fuser runs the accepted fusion in two passes
(``OuterPersistentParams``): the statistics shaped as the reduction kind shapes an
outer reduction, and the outputs at the input's shape as a pointwise loop nest."""

from __future__ import annotations

from fuser.ir.dialects.fuser import FusionOp, TensorType

from .analysis.column_kernel import column_kernel_reject
from .analysis.graph import reduction_dims, reduction_input, reductions
from .analysis.reduction_type import ReductionType
from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler, ceil_div, max_itemsize, tensor_io
from .params import OuterPersistentParams
from .persistent import (
    buffer_itemsize,
    chained_reductions,
    common_compile_time_check,
    first_extents,
    fusion_buffer_sizes,
    register_budget,
)
from .pointwise import pointwise_params
from .reduction import column_threads, reduction_params, same_axes_reject, same_sizes_reject
from .target import GpuTarget


class OuterPersistentScheduler(Scheduler):
    """Accepts an outer normalization when nvFuser's single-pass kernel could hold its
    buffers on chip (``grid.y`` blocks per column group at most half the SMs); fuser
    runs it as two passes (``heuristic``)."""

    kind = "outer_persistent"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        if reject := common_compile_time_check(fusion, ReductionType.OUTER):
            return reject
        if chained_reductions(fusion):
            # Its two passes compute one level of statistics: the segmenter splits the
            # chain (a two-pass variance, sum((x - mean)^2)) into segments instead.
            return Reject("a reduction reads another reduction's result (one level of statistics)")
        return same_axes_reject(reductions(fusion))

    @classmethod
    def _grid_split(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> tuple[int, int, int]:
        ext = first_extents(fusion, sizes)
        vec, bdimx = column_threads(ext, buffer_itemsize(fusion), target)
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
    ) -> OuterPersistentParams:
        """Two passes (``OuterPersistentParams``): the statistics as the reduction
        kind shapes an outer reduction, then the outputs at the input's shape as a
        pointwise loop nest (its vectors 16 bytes of the widest tensor read or
        written there: a bf16 normalization stores 8 lanes while its f32 statistics
        are 4 a vector)."""
        reds = reductions(fusion)
        ext = first_extents(fusion, sizes, pick=False)
        stats = reduction_params(ext, buffer_itemsize(fusion), target)
        shape = sizes.shape(reduction_input(reds[0]))
        at_shape = [v for v in tensor_io(fusion) if sizes.shape(v) == shape]
        inputs = [sizes.shape(a) for a in fusion.inputs if isinstance(a.type, TensorType)]
        # The apply kernel reads the statistics as an input broadcast along the
        # reduced axes (a 2-D schedule reads them once per column of threads).
        dims = reduction_dims(reds[0])
        stats_shape = tuple(1 if i in dims else e for i, e in enumerate(shape))
        apply = pointwise_params(shape, max_itemsize(at_shape), [*inputs, stats_shape], target)
        return OuterPersistentParams(stats=stats, apply=apply, reverse_apply=True)
