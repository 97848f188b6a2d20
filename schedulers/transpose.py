"""The transpose scheduler: pointwise fusions whose inputs/outputs fall in two
groups with different innermost axes (``analysis.transpose``), e.g.
``permute(a) + b``. A block moves a ``tile1 x tile2`` tile through shared memory so
that both groups are read and written along their own contiguous axis with
vectorized accesses. Small innermost extents (below ``MIN_INNER_EXTENT``) gain
nothing from tiling, and a resize (``RESIZE_OPS``) breaks the tiles' correspondence:
the pointwise scheduler takes both."""

from __future__ import annotations

from fuser.ir.dialects.fuser import CatOp, DynamicSliceOp, FusionOp, PadOp, SliceOp, TensorType

from .analysis.graph import reductions
from .analysis.sizes import ConcreteSizes
from .analysis.transpose import find_transpose_groups
from .base import Reject, Scheduler, ceil_div, prod, vector_width
from .params import TransposeParams
from .pointwise import output_shapes_reject
from .target import GpuTarget

MIN_INNER_EXTENT = 32
RESIZE_OPS = (CatOp, PadOp, SliceOp, DynamicSliceOp)
"""Ops whose output extents differ from their input's along an axis they map."""
BLOCK_THREADS = 128


def _group_itemsize(values: tuple) -> int:
    return max((v.type.dtype.itemsize for v in values if isinstance(v.type, TensorType)), default=4)


class TransposeScheduler(Scheduler):
    kind = "transpose"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        if reductions(fusion):
            return Reject("the fusion has reductions")
        if resize := next((op for op in fusion.body.walk() if isinstance(op, RESIZE_OPS)), None):
            # The tiles of the two groups are the same tiles of the reference only when
            # every tensor has the reference's extents: a resize shifts or cuts them (a
            # cat's output has more row tiles than its transposed input, whose rows may
            # also start mid-tile, and the vector width of the reference's extent need
            # not divide the input's).
            return Reject(f"{resize.name} changes an extent between the tensors of a tile (pointwise takes it)")
        if find_transpose_groups(fusion) is None:
            return Reject("no two groups of inputs/outputs with different innermost axes")
        return None

    @classmethod
    def can_schedule_run_time(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        if reject := output_shapes_reject(fusion, sizes):
            return reject
        groups = find_transpose_groups(fusion)
        assert groups is not None
        shape = sizes.shape(groups.reference)
        e1, e2 = shape[groups.inner1], shape[groups.inner2]
        if min(e1, e2) < MIN_INNER_EXTENT:
            return Reject(
                f"innermost extents {e1} and {e2}: below {MIN_INNER_EXTENT}, tiling does not "
                "pay off (pointwise takes it)"
            )
        return None

    @classmethod
    def heuristic(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> TransposeParams:
        groups = find_transpose_groups(fusion)
        assert groups is not None
        shape = sizes.shape(groups.reference)
        e1, e2 = shape[groups.inner1], shape[groups.inner2]
        s1, s2 = _group_itemsize(groups.group1), _group_itemsize(groups.group2)
        # 32x32 tiles of 4-byte elements; 64 for 2-byte ones so a tile row is 128 B.
        tile1 = 64 if s1 <= 2 and e1 >= 64 else 32
        tile2 = 64 if s2 <= 2 and e2 >= 64 else 32
        per_thread = tile1 * tile2 // BLOCK_THREADS
        vec1 = min(vector_width(s1, [e1, tile1], target), per_thread)
        vec2 = min(vector_width(s2, [e2, tile2], target), per_thread)
        rest = prod(shape) // max(1, e1 * e2)
        grid = (ceil_div(e1, tile1) * ceil_div(e2, tile2), max(1, rest), 1)
        return TransposeParams(tile1, tile2, vec1, vec2, (BLOCK_THREADS, 1, 1), grid)
