"""The pointwise scheduler: elementwise ops, broadcasts and views, no reduction.

The iteration space is the reference tensor's (``analysis.domain_map``). Views in
the middle of the chain (a reshape between two pointwise ops, seed 002's A/B/C
table) break the domain map's axis mapping but not the kernel, which maps every
index through the views: then the reference is the first output, and the run-time
check asks that all outputs have one shape. With
broadcast inputs the space is split at a *break point* into a 2-D schedule
(``grid.y`` over the outer axes, ``x`` over the inner ones), so an input broadcast
along one side is loaded once per block row or column.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from fuser.ir.dialects.fuser import FusionOp, TensorType

from .analysis.domain_map import build_domain_map
from .analysis.graph import reductions
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
from .params import PointwiseParams
from .target import GpuTarget

BLOCK_THREADS = 128
"""Threads per block: 4 warps, 16 blocks per SM at full occupancy."""
MAX_UNROLL = 2
"""Most 16-byte vectors per thread (2 x 16 bytes of each input in flight). Measured on
the H100 (``benchmarks/TUNING.md``, gaps run): GELU 8192x3072 f32 runs 73.6 us at
unroll 4, 72.6 at 2 and 72.4 at 1 (bf16 41.0-41.9 at 4, 41.1 at 2: within noise)."""
MAX_SCALAR_UNROLL = 16
"""Most elements per thread when the accesses are narrower than 16 bytes (an odd
innermost extent: no vectors): unrolled until a thread has as many bytes in flight
as ``MAX_UNROLL`` vectors would give it (a bf16 element at a time: 16 of them; at 2
a thread had 4 bytes in flight, and GPT-2's 412 MB logits copy ran at 1.7 TB/s)."""
MAX_GRID_Y = 65535


def reference(fusion: FusionOp) -> SSAValue | None:
    """The domain map's reference, else (views in the chain) the first tensor output."""
    ref = build_domain_map(fusion).reference()
    if ref is not None:
        return ref
    return next((v for v in fusion.output_op.values if isinstance(v.type, TensorType)), None)


def choose_break_point(ref_shape: tuple[int, ...], input_shapes: list[tuple[int, ...]]) -> int:
    """The axis at which to split a 2-D schedule: the one that saves the most loads
    of inputs broadcast along one whole side (0: no input is; a flat 1-D schedule)."""
    rank = len(ref_shape)
    padded_shapes = []
    for shape in input_shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        # An input read through a view ([4096, 50264] sliced and split into the
        # reference's [8, 512, 50257]) is not in the reference's domain: broadcast
        # along no side of it.
        if len(padded) == rank and all(e in (1, r) for e, r in zip(padded, ref_shape, strict=True)):
            padded_shapes.append(padded)
    best, best_score = 0, 0
    for bp in range(1, rank):
        score = 0
        for padded in padded_shapes:
            lhs, rhs = padded[:bp], padded[bp:]
            # Loads saved: the extent of the side the input is broadcast along.
            if all(e == 1 for e in lhs) and prod(rhs) > 1:
                score += prod(ref_shape[:bp])
            elif all(e == 1 for e in rhs) and prod(lhs) > 1:
                score += prod(ref_shape[bp:])
        if score > best_score:
            best, best_score = bp, score
    return best


def unroll_factor(blocks: int, target: GpuTarget, access_bytes: int | None = None) -> int:
    """Unroll while there are at least two full waves of blocks per unroll step, up to
    ``MAX_UNROLL`` accesses of ``access_bytes`` (16 by default) and up to
    ``MAX_SCALAR_UNROLL`` narrower ones, so that a thread has ``MAX_UNROLL`` x 16 bytes
    in flight."""
    access = access_bytes or target.max_access_bytes
    limit = min(MAX_SCALAR_UNROLL, max(MAX_UNROLL, MAX_UNROLL * target.max_access_bytes // access))
    wave = target.sm_count * (target.max_threads_per_sm // BLOCK_THREADS)
    unroll = 1
    while unroll < limit and blocks >= wave * unroll * 2:
        unroll *= 2
    return unroll


def output_shapes_reject(fusion: FusionOp, sizes: ConcreteSizes) -> Reject | None:
    """The pointwise lowering (also the transpose scheduler's, when the innermost axes
    coincide at the run-time layouts) writes outputs of one shape."""
    shapes = {sizes.shape(v) for v in fusion.output_op.values if isinstance(v.type, TensorType)}
    if len(shapes) > 1:
        return Reject(f"outputs of different shapes {sorted(shapes)}: one kernel writes one iteration space")
    return None


class PointwiseScheduler(Scheduler):
    kind = "pointwise"

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        reds = reductions(fusion)
        if reds:
            return Reject(
                f"the fusion has reductions ({', '.join(sorted({r.name for r in reds}))})"
            )
        if not any(isinstance(v.type, TensorType) for v in fusion.output_op.values):
            return Reject("the fusion has no tensor output")
        return None

    @classmethod
    def can_schedule_run_time(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> Reject | None:
        return output_shapes_reject(fusion, sizes)

    @classmethod
    def heuristic(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> PointwiseParams:
        ref = reference(fusion)
        assert ref is not None
        io = tensor_io(fusion)
        inputs = [sizes.shape(a) for a in fusion.inputs if isinstance(a.type, TensorType)]
        shape = sizes.shape(ref)
        # The tensors a thread streams: those of the iteration space's size (a row of
        # statistics broadcast along it is read from cache, not memory).
        whole = [v for v in io if prod(sizes.shape(v)) == prod(shape)]
        return pointwise_params(shape, max_itemsize(io), inputs, target, max_itemsize(whole or io))


def pointwise_params(
    shape: tuple[int, ...], itemsize: int, input_shapes: list[tuple[int, ...]], target: GpuTarget,
    streamed_itemsize: int | None = None,
) -> PointwiseParams:
    """The pointwise schedule of an iteration space of ``shape`` whose widest tensor
    has elements of ``itemsize`` bytes (vectors of 16 bytes of them, halved until
    they divide the innermost extent, except in a large space with one axis: there
    the last vector is partial), reading inputs of ``input_shapes`` (a 2-D
    schedule when some are broadcast along one side: ``choose_break_point``). The
    unroll counts bytes in flight in elements of ``streamed_itemsize`` (the widest
    tensor of the whole space's size; ``itemsize`` by default)."""
    total = prod(shape)
    inner = shape[-1] if shape else 1
    vec = vector_width(itemsize, [inner], target) if total else 1
    bp = choose_break_point(shape, input_shapes)
    full = max(1, target.max_access_bytes // itemsize)
    if total == inner and vec < full and inner >= full * BLOCK_THREADS:
        # One axis moves (a 1-D space of an extent the full vector does not divide):
        # full vectors, the last partial one predicated lane by lane
        # (``loop_nest.pointwise_kernel``).
        vec = full
    access = vec * (streamed_itemsize or itemsize)
    if bp == 0:
        blocks = max(1, ceil_div(total, BLOCK_THREADS * vec))
        unroll = unroll_factor(blocks, target, access)
        grid = (max(1, ceil_div(total, BLOCK_THREADS * vec * unroll)), 1, 1)
        return PointwiseParams(0, vec, unroll, (BLOCK_THREADS, 1, 1), grid)
    rhs, lhs = prod(shape[bp:]), prod(shape[:bp])
    bdimx = min(BLOCK_THREADS, next_pow2(ceil_div(rhs, vec)))
    bdimy = BLOCK_THREADS // bdimx
    gdimx = ceil_div(rhs, bdimx * vec)
    unroll = unroll_factor(gdimx * ceil_div(lhs, bdimy), target, access)
    gdimy = min(MAX_GRID_Y, max(1, ceil_div(lhs, bdimy * unroll)))
    return PointwiseParams(bp, vec, unroll, (bdimx, bdimy, 1), (gdimx, gdimy, 1))
