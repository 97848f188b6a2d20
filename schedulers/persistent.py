"""Checks and budgets shared by the three persistent schedulers (seed 004).

``inner_persistent``, ``outer_persistent`` and ``inner_outer_persistent`` each take
one reduction type (``analysis.reduction_type``); all need persistent buffers
(``analysis.persistent_buffers``) and reject when those do not fit on chip for the
given sizes.

Register budget: a block of ``T`` threads may use ``min(255, 65536 / T)`` registers
per thread; ``REGISTER_OVERHEAD`` of them are kept for indexing and temporaries, the
rest hold buffers. The best ``T`` (256 on Hopper: 256 x 215 x 4 B = 220160 B, 215
KiB) bounds the bytes one row may keep in registers. Shared memory budget: the
opt-in maximum per block (227 KiB) less ``SMEM_RESERVED`` for the reduction
workspace.
"""

from __future__ import annotations

import os

from xdsl.ir import Operation

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.fuser import FusionOp

from .analysis.graph import (
    ancestors,
    descendant_ops,
    reduction_input,
    reductions,
)
from .analysis.persistent_buffers import BufferSizes, buffer_sizes, find_persistent_buffers
from .analysis.reduction_type import ReductionType, reduction_type
from .analysis.sizes import ConcreteSizes
from .base import Reject, ceil_div, max_itemsize, next_pow2, round_up, tensor_io, vector_width
from .params import ReductionParams
from .reduction import ReductionExtents, post_reduction_broadcast, reduction_extents
from .target import GpuTarget

REGISTER_OVERHEAD = 40
"""Registers per thread not available to persistent buffers."""
SMEM_RESERVED = 4096
"""Shared memory per block kept for the block reduction's workspace."""
MAX_THREADS_PREFERRED = 512
MAX_THREADS_ONE_PASS = 256
"""Threads on a row when no reduction depends on another (layer norm, RMS norm): long
rows then keep more vectors a thread (layernorm 4096x16384 bf16: 256 x 8 at 0.99 of copy
against 512 x 4 at 0.91). Chained reductions (softmax: ``exp(x - max)`` between the max
and the sum, transcendental work on every element while no load is in flight) keep
``MAX_THREADS_PREFERRED`` (softmax 4096x16384 bf16: 512 x 4 at 0.87, 256 x 8 at 0.75)."""
TARGET_BATCH = 4
LARGE_FUSION_OPS = 512
"""A fusion of more ops than this gets one vector a thread (``inner_persistent_params``):
its kernel holds every op once per element a thread computes, unrolled, so a 10,000-op
chain of normalizations at ``TARGET_BATCH`` vectors of 4 lanes was 260,000 kernel ops
to build, print and compile (``benchmarks/compile_scaling.py``); at this size the
kernel is bound by its arithmetic, not by the loads a long batch keeps in flight."""
"""Vectors (16 bytes each) a thread of an inner persistent kernel aims to hold: 128-256
threads on a 4096-wide row rather than 512 threads with one or two vectors each (more
rows in flight per SM, cheaper block reductions; ``benchmarks/TUNING.md``)."""


CLUSTER_MIN_ELEMENTS = 2048
"""A row is split over a thread-block cluster (``row_cluster``) only while each block
keeps at least this many of its elements."""
CLUSTER_ELEMENTS_PER_THREAD = 16
"""Elements of a row a thread of a clustered row holds (``inner_persistent_params``)."""
CLUSTER_ALIGNED_ELEMENTS_PER_THREAD = 32
"""The same, for a clustered row walked in aligned groups (``aligned_vectors``):
vector accesses keep more elements a thread in flight for the same instructions."""
MAX_ROW_CLUSTER = 8
"""Blocks a row is split over at most (a portable cluster)."""

ALIGNED_MAX_ITEMSIZE = 4
"""Under ``ALIGNED_ROWS`` (off by default), rows whose width a 16-byte vector does not
divide are walked in aligned groups of 16 bytes (``ReductionParams.aligned_vectors``:
one vector access a group, its lanes outside the row masked; ``aligned_rows`` says
which fusions) when the kernel's widest
loaded or stored element is at most this many bytes, on a power of two of threads of
``TARGET_BATCH`` groups each. H100, ``tune.py --only unaligned --variants aligned,xR``
(us, the one-element schedule -> aligned groups at this rule's threads): softmax
4096x3001 bf16 36.8 -> 29.4 (128 threads), f32 42.9 -> 39.8 (256); 8192x1023 bf16
43.3 -> 32.6 (64 x 2 rows), f32 41.9 -> 29.7 (128). A layer norm's weights are read
by column, element by element in a shifted group (16384x771 bf16: 39.3 one-element
against 41.3-43.8 aligned), so fusions with such inputs keep one-element accesses."""

ALIGNED_ROWS = os.environ.get("FUSER_ALIGNED_ROWS", "0") == "1"
"""Whether the heuristic takes aligned groups (``FUSER_ALIGNED_ROWS=1``; read at
import). Off by default since one-element rows lost their per-step bounds predicates
(899690d) and their index math (10f8986): H200, one call, bf16 softmax kernel us,
aligned groups -> one-element accesses (copy): 8192x1023 27.7 -> 18.7 (15.7),
4096x3001 27.8 -> 24.2 (19.6), 8192x1535 32.2 -> 28.1 (19.6), 2048x5003 28.0 -> 22.7
(17.8), 16384x771 30.5 -> 24.7 (19.7), 64x20001 10.6 -> 9.6 (8.6), 32x50257 (a
cluster a row) 12.5 -> 11.7 (8.9); f32 8192x1023 31.1 -> 25.5, 8192x1535 40.0 ->
30.4, 4096x3001 30.9 -> 31.4, 32x50257 13.0 -> 12.6 (``benchmarks/RESULTS.md``,
seventeenth session). A schedule in IR still asks for them itself
(``aligned_vectors``; ``iterdomain.align``)."""

AVOID_RECOMPUTE_MAX_BYTES = 24 * 1024
"""Rows whose computed persistent buffers are computed from an exponential are held
(``ReductionParams.hold_buffers``: ``exp(x - max)`` kept across softmax's sum instead
of recomputed from ``x`` after it) while all their buffers take at most this many
bytes a row (``recomputes_exponentials``): nvFuser's ``NoProjectToAvoidRecompute``,
with its H100 figure of 24 KB. H200, softmax kernel us (L2 flushed), recomputed ->
held: bf16 16384x2048 55.9 -> 48.5 (copy 39.8), 8192x1535 28.0 -> 25.3 (19.3), f32
8192x1023 25.2 -> 22.2 (23.4); within 3% on 1024, 1023 and 3001 wide rows of either
dtype (bf16 8192x1023 18.3 -> 18.9 the largest loss); the 4096- to 32768-wide rows
over the bound, unchanged when held (``benchmarks/RESULTS.md``, eighteenth session)."""

EXPENSIVE_OPS = (F.ExpOp, F.Exp2Op, F.Expm1Op)
"""Ops whose recomputation after a reduction ``AVOID_RECOMPUTE_MAX_BYTES`` avoids."""

FEW_ROWS_MAX_BATCH = 16
"""With fewer rows than SMs, a thread holding more vectors than this at
``MAX_THREADS_PREFERRED`` threads gets a whole block of threads instead."""


def register_budget(target: GpuTarget) -> int:
    """Most bytes of persistent buffer one block can hold in registers."""
    best = 0
    t = target.warp_size
    while t <= target.max_threads_per_block:
        best = max(best, t * thread_registers(t, target) * 4)
        t *= 2
    return best


def smem_budget(target: GpuTarget) -> int:
    return target.smem_per_block_optin - SMEM_RESERVED


def common_compile_time_check(fusion: FusionOp, expected: ReductionType) -> Reject | None:
    if not reductions(fusion):
        return Reject("the fusion has no reduction")
    rtype = reduction_type(fusion)
    if rtype is not expected:
        return Reject(f"reduction type is {rtype.value}, this scheduler takes {expected.value}")
    if not find_persistent_buffers(fusion) and post_reduction_broadcast(fusion) is None:
        return Reject(
            "no persistent buffer and no reduction result used at full size: the "
            "reduction scheduler takes it"
        )
    # A reduction result broadcast back over its rows with no buffer (seed 000's
    # ``t1 + sum(t0)[:, None]``) is one persistent kernel with an empty buffer: the
    # epilogue reads its other inputs on the same rows after the reduction.
    return None


def fusion_buffer_sizes(fusion: FusionOp, sizes: ConcreteSizes) -> BufferSizes:
    return buffer_sizes(find_persistent_buffers(fusion), sizes)


def buffers_fit(bytes_per_row: int, target: GpuTarget, what: str = "per row") -> Reject | None:
    regs, smem = register_budget(target), smem_budget(target)
    if bytes_per_row > max(regs, smem):
        return Reject(
            f"persistent buffers need {bytes_per_row} B {what}; {target.name} has "
            f"{regs} B of registers and {smem} B of shared memory per block"
        )
    return None


def inner_persistent_params(
    ext: ReductionExtents,
    buf: BufferSizes,
    itemsize: int,
    target: GpuTarget,
    chained: bool = True,
    ops: int = 0,
    alignable: bool = False,
) -> ReductionParams:
    """Threads on a row and vectors per thread so that a row is held on chip.

    ``itemsize`` is the element size of the tensors the kernel loads and stores (the
    fusion's inputs and outputs: 2 for bfloat16, even when the buffers are float32
    casts), so that a vector is 16 bytes of what actually moves: ``TARGET_BATCH``
    vectors a thread (as many elements in narrower vectors), at most ``MAX_THREADS_PREFERRED`` threads on a row (more vectors a
    thread beyond that; ``MAX_THREADS_ONE_PASS`` when no reduction is ``chained`` after
    another; up to a whole block when there are fewer rows than SMs and a thread
    would hold more than ``FEW_ROWS_MAX_BATCH`` vectors), and enough
    threads that the buffers fit the per-thread register budget. A fusion of more
    than ``LARGE_FUSION_OPS`` ``ops`` targets one vector a thread.

    Few long rows on sm_90 are split over the blocks of a thread-block cluster
    (``row_cluster``: ``grid.y`` blocks a row, ``cross_grid``, one row a block, about
    ``CLUSTER_ELEMENTS_PER_THREAD`` elements a thread).

    Under ``ALIGNED_ROWS`` (``FUSER_ALIGNED_ROWS=1``; off by default), rows whose width
    the full vector does not divide, of elements of at most ``ALIGNED_MAX_ITEMSIZE``
    bytes, in a fusion whose rows can be shifted (``alignable``, ``aligned_rows``),
    are walked in aligned groups of full vectors
    (``aligned_vectors``: one group more than the width needs, to cover the shift),
    over a cluster's blocks too."""
    vec = vector_width(itemsize, [ext.inner, ext.reduction], target)
    cluster = row_cluster(ext, buf, target)
    full = max(1, target.max_access_bytes // itemsize)
    aligned = alignable and ALIGNED_ROWS and vec < full and itemsize <= ALIGNED_MAX_ITEMSIZE
    if aligned:
        vec = full
    width = ext.reduction + (vec - 1 if aligned else 0)  # an aligned row's places
    vecs = ceil_div(ceil_div(width, vec), cluster)  # a block's part of a row
    use_smem = ceil_div(buf.bytes_per_row, cluster) > register_budget(target)  # never with a cluster
    warp = target.warp_size
    if cluster > 1:
        # A block's part of the row: CLUSTER_ELEMENTS_PER_THREAD elements a thread
        # (vocab softmax 32x50257: 512 threads a block at 17.5 us against 21.6 with 256
        # in bf16; 8 rows of 32000, bf16: 256 threads at 9.6 against 11.0 with 128).
        # A fusion of more than LARGE_FUSION_OPS ops: one vector a thread, as below.
        # Aligned groups: CLUSTER_ALIGNED_ELEMENTS_PER_THREAD (32x50257 bf16: 256
        # threads x 4 groups at 13.2 us against 17.6 at 512 x 2; f32 256 x 7 at 13.5
        # against 17.9 at 512 x 4).
        per_elements = CLUSTER_ALIGNED_ELEMENTS_PER_THREAD if aligned else CLUSTER_ELEMENTS_PER_THREAD
        per_thread = max(1, per_elements // vec) if ops <= LARGE_FUSION_OPS else 1
        threads = max(warp, next_pow2(ceil_div(vecs, per_thread)))
    else:
        cap = MAX_THREADS_PREFERRED if chained else MAX_THREADS_ONE_PASS
        if ext.iteration < target.sm_count and ceil_div(vecs, cap) > FEW_ROWS_MAX_BATCH:
            # Fewer rows than SMs and a long batch a thread: a block an SM, so only its
            # own threads keep loads in flight (vocab softmax 32x50257, no vectors: 1024
            # threads x 50 at 22.4/24.5 us f32/bf16 against 512 x 99 at 26.5/30.0, and
            # half the unrolled batch to compile; 8 rows of 32000 bf16, 8 vectors a
            # thread at 512, is 7% slower at 1024).
            cap = target.max_threads_per_block
        # Narrower vectors than 16 bytes (a width that 16 bytes do not divide) keep the
        # elements a thread of full vectors would hold, on a power-of-two number of
        # threads: softmax 4096x3001 (no vectors), bf16 128 x 24 at 36.7 us against
        # 512 x 6 at 54.2; f32 256 x 12 at 42.7 against 53.2 (benchmarks/TUNING.md).
        target_batch = TARGET_BATCH * full // vec if ops <= LARGE_FUSION_OPS else 1
        threads = min(cap, round_up(ceil_div(vecs, target_batch), warp))
        if vec < full or aligned:
            threads = min(cap, next_pow2(threads))
    if not use_smem:
        # Registers per thread for buffers must stay under the per-thread budget.
        per_thread_regs = target.max_regs_per_thread - REGISTER_OVERHEAD
        min_threads = round_up(ceil_div(ceil_div(buf.bytes_per_row, cluster), per_thread_regs * 4), warp)
        if threads < min_threads:
            threads = min(target.max_threads_per_block, min_threads)
    threads = min(threads, target.max_threads_per_block)
    threads = spill_threads(threads, ceil_div(buf.words_per_row, cluster), target)
    if cluster > 1:
        # The schedule splits the row's batch of vectors over the cluster's blocks.
        batch = ceil_div(ceil_div(ceil_div(width, vec), threads), cluster)
        return row_params(vec, threads, 1, batch, (ext.iteration, cluster, 1), buf, target, True, aligned=aligned)
    rows = max(1, min(128 // threads, 1 << max(0, ext.iteration.bit_length() - 1)))
    grid = (ceil_div(ext.iteration, rows), 1, 1)
    return row_params(vec, threads, rows, ceil_div(vecs, threads), grid, buf, target, False, use_smem, aligned)


def thread_registers(threads: int, target: GpuTarget) -> int:
    """32-bit registers a thread of a block of ``threads`` threads has for buffers
    (a block of 512 has 128 a thread, less ``REGISTER_OVERHEAD``)."""
    return min(target.max_regs_per_thread, target.regs_per_sm // threads) - REGISTER_OVERHEAD


def spill_threads(threads: int, words: int, target: GpuTarget) -> int:
    """``threads``, or a whole block of threads when a thread of ``threads`` would
    hold more buffer values (``words`` registers a row) than it has registers: then
    the values spill to local memory whatever the count, and more threads spill fewer
    each. GPT-2's loss forward (4096 rows of 50257, bf16, the row's float values
    held), H200: 512 threads (99 values against 88 registers) 919 us, 1024 threads
    799, 256 threads (197 values, none spilled, one block an SM) 1849, the fusion in
    three reduction kernels 1080."""
    if ceil_div(words, threads) <= thread_registers(threads, target):
        return threads
    return target.max_threads_per_block


def row_params(
    vec: int,
    threads: int,
    rows: int,
    batch: int,
    grid: tuple[int, int, int],
    buf: BufferSizes,
    target: GpuTarget,
    cross_grid: bool,
    use_smem: bool = False,
    aligned: bool = False,
) -> ReductionParams:
    """An inner persistent row schedule: ``rows`` rows of ``threads`` threads a block
    (``block``), each thread ``batch`` vectors of ``vec`` elements, on ``grid``."""
    return ReductionParams(
        fastest_dim=True,
        vectorization=vec,
        threads_per_row=threads,
        rows_per_block=rows,
        persistent_batch=batch,
        cross_block=threads > target.warp_size,
        cross_grid=cross_grid,
        block=(threads, rows, 1),
        grid=grid,
        project_to_inputs=buf.project_to_inputs,
        use_shared_memory=use_smem,
        buffer_bytes_per_row=buf.bytes_per_row,
        aligned_vectors=aligned,
    )


def row_cluster(ext: ReductionExtents, buf: BufferSizes, target: GpuTarget) -> int:
    """Blocks each row is split over, a thread-block cluster (1: a block a row).

    Few long rows (a vocabulary softmax, 32 rows of 50257) leave most SMs idle with a
    block a row, and each block's threads have a long serial batch of loads. On sm_90
    and later, a row of fewer rows than half the SMs is split over 2, 4 or 8 blocks of
    one cluster (they combine the row's reductions through distributed shared memory)
    until the rows' blocks cover the SMs, while a block keeps at least
    ``CLUSTER_MIN_ELEMENTS`` of its row and its part of the buffers fits in registers."""
    if target.compute_capability < (9, 0) or ext.iteration * 2 > target.sm_count:
        return 1
    k = 1
    if ext.reduction // 2 >= CLUSTER_MIN_ELEMENTS and buf.bytes_per_row > register_budget(target):
        k = 2  # a row that a block holds only in shared memory
    while (
        k < MAX_ROW_CLUSTER
        and ext.iteration * k < target.sm_count
        and ext.reduction // (2 * k) >= CLUSTER_MIN_ELEMENTS
    ):
        k *= 2
    while 1 < k < MAX_ROW_CLUSTER and ceil_div(buf.bytes_per_row, k) > register_budget(target):
        k *= 2  # more blocks, until each part fits in registers
    return k if ceil_div(buf.bytes_per_row, k) <= register_budget(target) else 1


def first_extents(
    fusion: FusionOp, sizes: ConcreteSizes, pick: bool | None = None
) -> ReductionExtents:
    """Extents of the first reduction (the first inner one when ``pick`` is True,
    the first outer one when False)."""
    reds: list[Operation] = reductions(fusion)
    for r in reds:
        ext = reduction_extents(r, sizes)
        if pick is None or ext.fastest_dim == pick:
            return ext
    return reduction_extents(reds[0], sizes)


def recomputes_exponentials(fusion: FusionOp) -> bool:
    """Whether a persistent buffer computed in ``fusion`` (not an input) is computed
    from an ``EXPENSIVE_OPS`` op since the last reduction: projected to the inputs,
    each element's exponential would be evaluated again after its reduction."""
    info = find_persistent_buffers(fusion)
    stop = {r for red in reductions(fusion) for r in red.results}
    computed = [b.value for b in info.buffers if isinstance(b.value.owner, Operation)]
    return any(isinstance(v.owner, EXPENSIVE_OPS) for v in ancestors(computed, stop))


def holds_to_avoid_recompute(fusion: FusionOp, buf: BufferSizes, params: ReductionParams, ops: int) -> bool:
    """Whether an inner persistent schedule ``params`` holds the buffers it computes
    (``AVOID_RECOMPUTE_MAX_BYTES``): a row of a block in registers (no cluster, no
    shared memory), no larger than that bound, and buffers computed from an
    exponential (``recomputes_exponentials``)."""
    return (
        not params.cross_grid
        and not params.use_shared_memory
        and buf.unprojected <= AVOID_RECOMPUTE_MAX_BYTES
        and ops <= LARGE_FUSION_OPS
        and recomputes_exponentials(fusion)
    )


def buffer_itemsize(fusion: FusionOp) -> int:
    return max_itemsize([reduction_input(r) for r in reductions(fusion)])


def chained_reductions(fusion: FusionOp) -> bool:
    """Whether a reduction's input depends on another reduction's result."""
    reds = reductions(fusion)
    after = descendant_ops(r for red in reds for r in red.results)
    return any(red in after for red in reds)


def io_itemsize(fusion: FusionOp) -> int:
    """Widest element the kernel loads or stores (the fusion's tensor inputs and
    outputs): what one 16-byte vector access holds."""
    return max_itemsize(tensor_io(fusion))
