"""The inner-outer persistent scheduler (layer-norm backward): row reductions of a
persistent input and column reductions of the same rows in one pass over the inputs.

With ``single_kernel`` (the heuristic's choice when a row's persistent buffers fit in
registers) the row schedule ``inner`` runs on a persistent grid
(``single_kernel_params``: 2 to 4 blocks an SM, each looping over its rows): each
iteration holds its rows in registers, computes the row sums and the row outputs,
and folds the rows into the thread's column accumulators; after the loop each block
combines its threads' accumulators and stores one partial result per column, which a
small finishing kernel adds up. Otherwise the fusion runs as a kernel group per
reduction loop nest: the heuristic also records the scheduler and parameters of the
row half and of the column half (``rows_kind``/``rows``, ``cols_kind``/``cols``, each
half's own heuristic), and ``schedule-fusions`` writes both loop nests from them
(the inputs are read twice)."""

from __future__ import annotations

from dataclasses import replace

from xdsl.ir import SSAValue

from fuser.ir.dialects.fuser import FusionOp, ReductionOp, TensorType
from fuser.ir.shapes import same_elements

from .analysis.graph import descendants, reductions, returned_outputs
from .analysis.output_groups import half_fusion, split_by_reduction_kind
from .analysis.persistent_buffers import BufferSizes
from .analysis.reduction_type import ReductionType, is_fastest_dim_reduction
from .analysis.sizes import ConcreteSizes, bind_sizes
from .base import Reject, Scheduler, ceil_div, max_itemsize, tensor_io, vector_width
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
    row_params,
    smem_budget,
)
from .pointwise import PointwiseScheduler
from .reduction import ReductionExtents, ReductionScheduler, reduction_extents, reduction_signature
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

SINGLE_KERNEL_BLOCKS_PER_SM = (2, 4)
SINGLE_KERNEL_BYTES_IN_FLIGHT = 48 * 1024
SINGLE_KERNEL_ROWS_PER_BLOCK = 4
SINGLE_KERNEL_MIN_BATCH = 4
SINGLE_KERNEL_TILE_BYTES = 32 * 1024
"""The one-kernel schedule (``single_kernel_params``): a persistent grid of 2 to 4
blocks an SM (``SINGLE_KERNEL_BLOCKS_PER_SM``), as many as it takes for the rows one
iteration of the SM's blocks loads to reach ``SINGLE_KERNEL_BYTES_IN_FLIGHT`` (each
iteration of a block waits for its loads before its row sums: the other blocks keep
the memory busy), each block of ``SINGLE_KERNEL_ROWS_PER_BLOCK`` rows of threads
(fewer when the tile that combines their column sums would pass
``SINGLE_KERNEL_TILE_BYTES``), each thread holding at least
``SINGLE_KERNEL_MIN_BATCH`` 16-byte vectors of a row. Measured on the H100
(``benchmarks/tune.py --only layernorm_backward``, 16384 x 1024, us f32 / bf16): one
block an SM of 2 x 64 threads (the inner persistent kind's choice) 123 / 110, a
latency-bound loop of 63 iterations with 4 warps an SM; 4 x 32 threads, 2 blocks an
SM 79.3 / 50.8, 3 blocks an SM 81.0 / 46.8, 4 blocks 84.7 / 55.3 (the halves: 130.5 /
78.0): 2 blocks of 32 KB of f32 rows, 3 of 16 KB of bf16."""
SINGLE_KERNEL_HOLD_ITEMSIZE = 4
"""The one-kernel schedule holds the persistent buffers it computes (``hold_buffers``:
a layer-norm backward's ``xhat`` and ``dy * w``, float32) in registers, instead of
recomputing them after the row sums, when the tensors it streams have elements of at
least this many bytes: a held float32 buffer then takes no more registers than the
input it replaces. Measured on the H100 (``benchmarks/tune.py --only
layernorm_backward --variants hold``, the heuristic's grid with and without held
buffers, us): f32 16384x1024 85.0 -> 82.9, 32768x768 123.2 -> 118.9, 4096x4096
92.9 -> 92.3; bf16 (8-lane float32 vectors held for 8 bf16 inputs: 168 -> 216
registers at 4096) 51.9 -> 51.2, 70.4 -> 83.1, 85.5 -> 96.4."""

SINGLE_KERNEL_WIDE_ROW_BYTES = 8192
SINGLE_KERNEL_WIDE_THREADS = 256
"""Rows of narrower elements (bf16) of at least ``SINGLE_KERNEL_WIDE_ROW_BYTES`` hold
the computed buffers too, on ``SINGLE_KERNEL_WIDE_THREADS`` threads a row, 2 rows a
block while a thread holds at most 3 vectors (else 1), one block an SM. Measured on the
H100 (``tune.py --only layernorm_backward_16384 --dtypes bfloat16 --shapes
4096x4096,2048x8192,8192x2048,4096x6144 --variants "hold T"``; the heuristic's
schedule -> the best variant, which this rule is, us): 4096x4096 83.2 -> 76.4 (256 x 2
rows, 2 vectors), 2048x8192 113.4 -> 85.2 (256 x 1, 4 vectors), 4096x6144 108.6 ->
104.0 (256 x 2, 3 vectors); 8192x2048 (4096-byte rows) keeps its schedule, 61.8 against
62.3 for the best held variant."""


SINGLE_KERNEL_PREFETCH_ITEMSIZE = 2
SINGLE_KERNEL_PREFETCH_LEVEL = "L2"
"""The one-kernel schedule prefetches the next row of the inputs it holds into L2
(``prefetch``: ``iterdomain.loop {prefetch = "L2"}``, ``codegen/prefetch_loads.py``)
when the tensors it streams have elements of at most this many bytes. Measured on the
H200 (``benchmarks/run.py --no-compile --dtypes bfloat16``, with and without
``FUSER_PREFETCH=L2``, twice each, kernel us): layer-norm backward bf16 4096x4096
60.4 -> 55.0, 16384x1024 44.6 -> 43.8, 32768x768 57.2 -> 56.5; the f32 ones lose 4-7%
(``benchmarks/tune.py``, twentieth session: 16384x1024 64.7 -> 68.5, 4096x4096 71.2 ->
75.9): their rows hold twice the bytes in flight. On the H100's older kernels (eleventh
session) bf16 4096x4096 83.9 -> 83.2."""


def outputs_past_columns(fusion: FusionOp, sizes: ConcreteSizes) -> list[SSAValue]:
    """The outputs computed from a column (outer) reduction at another shape than its
    result (up to extent-1 axes): the one-kernel schedule folds the column reductions
    across its rows' loop and has their results only in its finishing kernel, which
    stores outputs at the reduction's index; the halves compute them (the column
    half's own kind, an outer normalization's apply). Random fusion 3878 planned for a
    GPU of 4 SMs: ``minimum(var_mean(x, 0).mean, x)`` beside a row sum."""
    outer = [r for r in reductions(fusion) if not is_fastest_dim_reduction(r)]
    if not outer:
        return []
    after = descendants(res for r in outer for res in r.results)
    ref = sizes.shape(outer[0].results[0])
    return [
        v for v in returned_outputs(fusion)
        if v in after and isinstance(v.type, TensorType) and not same_elements(sizes.shape(v), ref)
    ]


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


def single_kernel_params(
    fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget, ext: ReductionExtents, buf: BufferSizes
) -> ReductionParams:
    """The row schedule of the one-kernel inner-outer kind (see
    ``SINGLE_KERNEL_BLOCKS_PER_SM``): 16-byte vectors of the tensors it streams (the
    fusion's inputs and outputs at the full shape), the fewest threads on a row (a
    power of two, at least a warp) that leave each thread
    ``SINGLE_KERNEL_MIN_BATCH`` vectors, and a persistent grid. ``ext``, ``buf``: the
    fusion's extents and buffers at ``sizes`` (``first_extents``,
    ``fusion_buffer_sizes``)."""
    full = [v for v in tensor_io(fusion) if len(sizes.shape(v)) >= 2 and sizes.shape(v)[-1] == ext.reduction]
    itemsize = max_itemsize(full)
    vec = vector_width(itemsize, [ext.inner, ext.reduction], target)
    vecs = ceil_div(ext.reduction, vec)
    if itemsize < SINGLE_KERNEL_HOLD_ITEMSIZE and ext.reduction * itemsize >= SINGLE_KERNEL_WIDE_ROW_BYTES:
        tpr = min(SINGLE_KERNEL_WIDE_THREADS, target.max_threads_per_block)
        batch = ceil_div(vecs, tpr)
        rows = 2 if batch <= 3 else 1
        blocks = min(target.sm_count, ceil_div(ext.iteration, rows))
        params = row_params(vec, tpr, rows, batch, (blocks, 1, 1), buf, target, True)
        return replace(params, hold_buffers=True, prefetch=_prefetch(itemsize))
    tpr = target.warp_size
    while tpr * 2 <= target.max_threads_per_block and ceil_div(vecs, tpr * 2) >= SINGLE_KERNEL_MIN_BATCH:
        tpr *= 2
    batch = ceil_div(vecs, tpr)
    columns = sum(3 if not isinstance(r, ReductionOp) else 1 for r in reductions(fusion) if not is_fastest_dim_reduction(r))
    rows = max(1, min(SINGLE_KERNEL_ROWS_PER_BLOCK, target.max_threads_per_block // tpr))
    while rows > 1 and rows * tpr * batch * vec * columns * PARTIAL_BYTES > SINGLE_KERNEL_TILE_BYTES:
        rows //= 2
    row_bytes = ext.reduction * sum(  # what a row loads (the inputs of the full shape, not a broadcast)
        v.type.dtype.itemsize for v in full
        if isinstance(v.type, TensorType) and v in fusion.inputs and sizes.shape(v)[0] != 1
    )
    lo, hi = SINGLE_KERNEL_BLOCKS_PER_SM
    per_sm = max(lo, min(hi, ceil_div(SINGLE_KERNEL_BYTES_IN_FLIGHT, max(1, rows * row_bytes))))
    blocks = min(per_sm * target.sm_count, ceil_div(ext.iteration, rows))
    params = row_params(vec, tpr, rows, batch, (blocks, 1, 1), buf, target, True)
    return replace(params, hold_buffers=itemsize >= SINGLE_KERNEL_HOLD_ITEMSIZE, prefetch=_prefetch(itemsize))


def _prefetch(itemsize: int) -> str:
    """The one-kernel schedule's ``prefetch`` for streamed elements of ``itemsize``
    bytes (``SINGLE_KERNEL_PREFETCH_ITEMSIZE``)."""
    return SINGLE_KERNEL_PREFETCH_LEVEL if itemsize <= SINGLE_KERNEL_PREFETCH_ITEMSIZE else ""


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
        buf = fusion_buffer_sizes(fusion, sizes)
        single = register_budget(target) >= buf.bytes_per_row and not outputs_past_columns(fusion, sizes)
        if single:
            inner = single_kernel_params(fusion, sizes, target, ext, buf)
        else:
            # Recorded for the one-kernel schedule with buffers in shared memory (not
            # lowered: the halves run): one block per SM loops over the rows.
            inner = inner_persistent_params(ext, buf, buffer_itemsize(fusion), target)
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
            single_kernel=single,
        )
