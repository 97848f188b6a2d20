"""The reduction scheduler: reductions with no persistent buffer.

It takes fusions whose reductions all reduce the same axes and whose inputs are
read once (no persistent buffer), with no reduction result broadcast back to the
full size (that needs a persistent schedule or a second kernel, seed 000's
example). Inner reductions put ``threads_per_row`` threads (``block.x``) on a row
and several rows in a block when rows are short; outer reductions put columns on
``block.x`` (vectorized) and the reduced axis on ``block.y``. When there are too
few rows (inner) or columns (outer) to give every SM a block, the reduction is also
split across ``grid.y`` blocks (``cross_grid``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.ir import Operation

from fuser.ir.dialects.fuser import (
    BroadcastOp,
    FusionOp,
    PermuteOp,
    ReshapeOp,
    SqueezeOp,
    TensorType,
)

from .analysis.column_kernel import column_kernel_reject
from .analysis.graph import (
    body_ops,
    descendant_ops,
    reduction_dims,
    reduction_input,
    reductions,
)
from .analysis.persistent_buffers import find_persistent_buffers
from .analysis.reduction_type import ReductionType, is_fastest_dim_reduction, reduction_type
from .analysis.row_kernel import aligned_rows, row_kernel_reject
from .analysis.sizes import ConcreteSizes
from .base import (
    Reject,
    Scheduler,
    ceil_div,
    max_itemsize,
    next_pow2,
    prod,
    tensor_io,
    vector_width,
)
from .params import ReductionParams
from .target import GpuTarget

MAX_THREADS_PER_ROW = 512
INNER_BATCH = 2
"""Vectors each thread of an inner reduction covers per row and pass (16-byte vectors of
the loaded element: 256 threads x 2 x 8 bfloat16 on a 4096-wide row rather than 512
threads with one vector each; ``benchmarks/TUNING.md``)."""
UNROLL = 4
"""Vectors each thread loads per row before a grid split is worth it."""
ALIGNED_MIN_VECTORS = 128
"""Rows at least this many full vectors long whose width the vector does not divide
(a 1-D sum of an odd extent) are walked in aligned groups of 16 bytes
(``aligned_vectors``: vector loads inside the row, element by element at its edges)
rather than element by element; shorter rows keep the narrower vector that divides
(the persistent scheduler's measurements on short rows, ``analysis.row_kernel.aligned_rows``)."""
OUTER_MIN_ROWS = 8
"""Rows each thread of an outer reduction folds, at least, when the rows are split
over ``grid.y``."""

OUTER_ONE_KERNEL_WAVE = 0.9
"""An outer reduction whose column tiles give at least this many blocks per SM is one
kernel (no row split over ``grid.y``, no finishing kernel)."""


@dataclass(frozen=True)
class ReductionExtents:
    reduction: int
    """Elements reduced per row (product of the reduced extents)."""
    iteration: int
    """Rows: the product of the kept extents."""
    inner: int
    """Extent of the input's innermost axis (a row kernel's vectors run along it)."""
    fastest_dim: bool
    kept_inner: int
    """Extent of the innermost axis the reduction keeps: a column kernel's vectors run
    along it (the kept axes merged into columns: a vector's lanes must be consecutive
    elements of that axis), so its width divides this extent as well as ``inner``'s.
    The innermost axis itself for an outer reduction; axis 2 of a ``[16, 4, 2, 256]``
    input reduced over axes 1 and 3 (random seeds 16951 and 22808 vectorized its
    columns by 4 and the lowering refused the plan)."""


def reduction_extents(red: Operation, sizes: ConcreteSizes) -> ReductionExtents:
    shape = sizes.shape(reduction_input(red))
    dims = reduction_dims(red)
    kept = [e for i, e in enumerate(shape) if i not in dims]
    return ReductionExtents(
        prod([shape[d] for d in dims]),
        prod(kept),
        shape[-1] if shape else 1,
        is_fastest_dim_reduction(red),
        kept[-1] if kept else 1,
    )


def reduction_signature(red: Operation) -> tuple[int, tuple[int, ...]]:
    t = reduction_input(red).type
    assert isinstance(t, TensorType)
    return (t.rank, tuple(reduction_dims(red)))


def same_axes_reject(reds: list[Operation]) -> Reject | None:
    sigs = {reduction_signature(r) for r in reds}
    if len(sigs) > 1:
        return Reject(
            "reductions reduce different axes: "
            + ", ".join(f"rank {r} dims {list(d)}" for r, d in sorted(sigs))
        )
    return None


def same_sizes_reject(reds: list[Operation], sizes: ConcreteSizes) -> Reject | None:
    ext = {(e.reduction, e.iteration) for e in (reduction_extents(r, sizes) for r in reds)}
    if len(ext) > 1:
        return Reject(f"reductions have different sizes (reduced x rows): {sorted(ext)}")
    return None


def post_reduction_broadcast(fusion: FusionOp) -> Operation | None:
    """An op that combines a value computed from a reduction result with a larger
    tensor: the reduction result is broadcast back (e.g. ``x - mean``)."""
    reds = reductions(fusion)
    after = descendant_ops(r for red in reds for r in red.results)
    downstream = {r for op in after for r in op.results} | {r for red in reds for r in red.results}
    for op in body_ops(fusion):
        if op not in after or not op.results or not isinstance(op.results[0].type, TensorType):
            continue
        if isinstance(op, BroadcastOp | ReshapeOp | SqueezeOp | PermuteOp):
            continue  # relabel axes or insert extent-1 ones: nothing grows
        out = op.results[0].type.get_shape()
        for x in op.operands:
            if x not in downstream or not isinstance(x.type, TensorType):
                continue
            if x.type.rank > len(out):
                continue  # a reduction or an indexing op of fewer axes: nothing grows
            shape = (1,) * (len(out) - x.type.rank) + x.type.get_shape()
            if any(a == 1 and b != 1 for a, b in zip(shape, out, strict=True)):
                return op
    return None


def reduction_kernel(fusion: FusionOp, sizes: ConcreteSizes) -> bool | Reject:
    """Whether a plain reduction runs as a row kernel (True: ``fastest_dim`` parameters)
    or as column kernels (False), or why neither schedule can compute it. The reduction's memory order picks one; when only
    the other can lower the fusion (a reduction over the fastest axis that is not the
    trailing logical axis, for example) that one runs it."""
    first = reductions(fusion)[0]
    rows_why = row_kernel_reject(fusion, sizes.shape)
    cols_why = column_kernel_reject(fusion, sizes.shape)
    if rows_why is None and (cols_why is not None or is_fastest_dim_reduction(first)):
        return True
    if cols_why is None:
        return False
    return Reject(rows_why if is_fastest_dim_reduction(first) else cols_why)


def column_threads(ext: ReductionExtents, itemsize: int, target: GpuTarget) -> tuple[int, int]:
    """A column kernel's vector width (16 bytes of ``itemsize`` elements at most,
    dividing both ``ext.inner`` and ``ext.kept_inner``) and its threads across the
    columns (``TIDx``: a warp at most, as many as the columns' vectors)."""
    vec = vector_width(itemsize, [ext.inner, ext.kept_inner], target)
    return vec, min(target.warp_size, next_pow2(ceil_div(ext.iteration, vec)))


def reduction_params(
    ext: ReductionExtents, itemsize: int, target: GpuTarget, persistent_batch: int = 1, alignable: bool = False
) -> ReductionParams:
    """Block and grid shape of a plain (non-persistent) reduction. ``itemsize``: the
    element size of the loaded tensors (one vector is 16 bytes of them).
    ``alignable``: the rows may be walked in aligned groups (``aligned_rows``), which
    long rows that no full vector divides are (``ALIGNED_MIN_VECTORS``)."""
    if ext.fastest_dim:
        vec = vector_width(itemsize, [ext.inner, ext.reduction], target)
        full = max(1, target.max_access_bytes // itemsize)
        aligned = alignable and vec < full and ext.reduction >= ALIGNED_MIN_VECTORS * full
        if aligned:
            vec = full
        width = ext.reduction + (vec - 1 if aligned else 0)  # an aligned row's places
        threads = min(
            MAX_THREADS_PER_ROW,
            max(target.warp_size, next_pow2(ceil_div(width, vec * INNER_BATCH))),
        )
        rows = max(1, min(128 // threads, next_pow2(ext.iteration)))
        blocks = max(1, ceil_div(ext.iteration, rows))  # an empty iteration axis: one block
        split = 1
        if blocks < target.sm_count:
            split = max(
                1, min(ceil_div(width, threads * vec * UNROLL), target.sm_count // blocks)
            )
        return ReductionParams(
            fastest_dim=True,
            vectorization=vec,
            aligned_vectors=aligned,
            threads_per_row=threads,
            rows_per_block=rows,
            persistent_batch=persistent_batch,
            cross_block=threads > target.warp_size,
            cross_grid=split > 1,
            block=(threads, rows, 1),
            grid=(blocks, split, 1),
        )
    vec, bdimx = column_threads(ext, itemsize, target)
    bdimy = min(256 // bdimx, next_pow2(ext.reduction))
    blocks = max(1, ceil_div(ext.iteration, bdimx * vec))  # an empty iteration axis: one block
    if blocks >= OUTER_ONE_KERNEL_WAVE * target.sm_count:
        # Enough columns to occupy every SM: one kernel, up to a full block of rows of
        # threads, each folding at least OUTER_MIN_ROWS rows (a [64, 1024, 256] middle
        # sum: 34.1 against 38.2 us f32, 20.4 against 24.2 us bf16 with the split and
        # its finishing kernel, H100).
        bdimy = min(
            target.max_threads_per_block // bdimx,
            next_pow2(ext.reduction),
            max(bdimy, next_pow2(ceil_div(ext.reduction, OUTER_MIN_ROWS))),
        )
        split = 1
    else:
        # The rows split over grid.y: one full-occupancy wave of blocks, each thread
        # folding at least OUTER_MIN_ROWS rows (a wave of one block per SM leaves the
        # loads latency-bound: 44 against 38.6 us on a 16384x1024 f32 column sum).
        per_sm = max(2, target.max_threads_per_sm // (bdimx * bdimy))
        split = max(1, min(ceil_div(target.sm_count * per_sm, blocks), ext.reduction // (bdimy * OUTER_MIN_ROWS)))
    return ReductionParams(
        fastest_dim=False,
        vectorization=vec,
        threads_per_row=bdimy,
        rows_per_block=bdimx * vec,
        persistent_batch=persistent_batch,
        cross_block=bdimy > 1,
        cross_grid=split > 1,
        block=(bdimx, bdimy, 1),
        grid=(blocks, split, 1),
    )


class ReductionScheduler(Scheduler):
    kind = "reduction"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        reds = reductions(fusion)
        if not reds:
            return Reject("the fusion has no reduction")
        rtype = reduction_type(fusion)
        if rtype is ReductionType.INNER_OUTER:
            return Reject("the fusion has both inner and outer reductions")
        if reject := same_axes_reject(reds):
            return reject
        buffers = find_persistent_buffers(fusion)
        if buffers:
            return Reject(
                f"the fusion has {len(buffers.buffers)} persistent buffer(s); "
                "a persistent scheduler keeps them"
            )
        if (op := post_reduction_broadcast(fusion)) is not None:
            return Reject(f"a reduction result is broadcast back to full size by {op.name}")
        return None

    @classmethod
    def can_schedule_run_time(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        if reject := same_sizes_reject(reductions(fusion), sizes):
            return reject
        kernel = reduction_kernel(fusion, sizes)
        return kernel if isinstance(kernel, Reject) else None

    @classmethod
    def heuristic(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> ReductionParams:
        reds = reductions(fusion)
        ext = reduction_extents(reds[0], sizes)
        kernel = reduction_kernel(fusion, sizes)
        if isinstance(kernel, bool):  # else the run-time check rejects it
            ext = replace(ext, fastest_dim=kernel)
        if ext.fastest_dim:  # the row lowering loads 16 bytes of the fusion's own tensors
            itemsize = max_itemsize(tensor_io(fusion))
        else:
            itemsize = max_itemsize([reduction_input(r) for r in reds])
        return reduction_params(ext, itemsize, target, alignable=ext.fastest_dim and aligned_rows(fusion, sizes))
