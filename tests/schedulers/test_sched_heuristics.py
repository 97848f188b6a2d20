"""Scheduler checks and heuristics: parameters follow the target."""

from __future__ import annotations

import fusions as F
import pytest
from fusions import Builder

from fuser.ir.dialects.fuser import TensorType
from fuser.ir.shapes import DYN
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.base import vector_width
from fuser.schedulers.inner_outer_persistent import InnerOuterPersistentScheduler
from fuser.schedulers.inner_persistent import InnerPersistentScheduler
from fuser.schedulers.no_op import ExprEvalScheduler, NoOpScheduler
from fuser.schedulers.outer_persistent import OuterPersistentScheduler
from fuser.schedulers.params import (
    InnerOuterParams,
    OuterPersistentParams,
    PointwiseParams,
    ReductionParams,
    TransposeParams,
    params_entries,
    params_from_entries,
)
from fuser.schedulers.persistent import register_budget, smem_budget
from fuser.schedulers.pointwise import PointwiseScheduler, choose_break_point
from fuser.schedulers.reduction import ReductionScheduler
from fuser.schedulers.target import H100, H200, from_device, get_target
from fuser.schedulers.transpose import TransposeScheduler


def test_targets() -> None:
    assert H100.sm_count == H200.sm_count == 132
    assert H100.l2_bytes == 50 << 20 and H200.l2_bytes == 60 << 20
    assert H200.memory_bandwidth_gbs > H100.memory_bandwidth_gbs
    assert H100.smem_per_block_optin == 232448
    assert get_target("H200") is H200
    with pytest.raises(ValueError, match="unknown GPU target 'a100'"):
        get_target("a100")
    assert isinstance(from_device().sm_count, int)


def test_budgets() -> None:
    assert register_budget(H100) == 256 * (255 - 40) * 4
    assert smem_budget(H100) == 232448 - 4096
    assert register_budget(H100.with_(regs_per_sm=32768)) < register_budget(H100)


def test_vector_width_is_128_bits_when_extents_divide() -> None:
    assert vector_width(4, [1024], H100) == 4
    assert vector_width(2, [1024], H100) == 8
    assert vector_width(4, [1026], H100) == 2
    assert vector_width(4, [1023], H100) == 1


def _heur(sched, fusion, shapes, target=H100):
    sizes = bind_sizes(fusion, shapes)
    assert sched.can_schedule(fusion, sizes, target) is None
    return sched.heuristic(fusion, sizes, target)


def test_pointwise_1d_full_waves_and_unroll() -> None:
    b = Builder()
    x = b.input([DYN])
    f = b.finish(b.unary("exp", x))
    p = _heur(PointwiseScheduler, f, [(1 << 26,)])
    assert isinstance(p, PointwiseParams)
    assert p.break_point == 0 and p.vectorization == 4 and p.block == (128, 1, 1)
    assert p.unroll == 2
    assert p.grid[0] * 128 * 4 * 2 == 1 << 26
    small = _heur(PointwiseScheduler, f, [(1000,)])
    assert small.unroll == 1 and small.vectorization == 4 and small.grid == (2, 1, 1)


def test_pointwise_break_point_for_broadcasts() -> None:
    p = _heur(PointwiseScheduler, F.pointwise_broadcast(), [(64, 1024), (1024,), (64,)])
    assert p.break_point == 1
    assert p.block == (128, 1, 1) and p.grid == (2, 64, 1)
    assert choose_break_point((8, 16, 32), [(8, 16, 32), (32,)]) == 2
    assert choose_break_point((8, 16), [(8, 16), (8, 16)]) == 0
    # read through a view (sliced and split): in no side's domain, so no 2-D split
    assert choose_break_point((8, 512, 50257), [(4096, 50264)]) == 0
    assert choose_break_point((8, 512, 50257), [(4096, 50264), (512, 50257)]) == 1


def test_pointwise_unroll_fills_32_bytes_a_thread() -> None:
    """Two 16-byte vectors a thread; without vectors (an odd innermost extent) as many
    elements as make 32 bytes, at most 16."""
    from fuser.schedulers.pointwise import pointwise_params

    big = (8, 512, 50257)
    assert (pointwise_params(big, 2, [big], H100).vectorization, pointwise_params(big, 2, [big], H100).unroll) == (1, 16)
    assert pointwise_params(big, 4, [big], H100).unroll == 8
    assert pointwise_params(big, 1, [big], H100).unroll == 16
    even = (8, 512, 50264)
    assert (pointwise_params(even, 2, [even], H100).vectorization, pointwise_params(even, 2, [even], H100).unroll) == (8, 2)
    # an int64 row of statistics broadcast along the space is read from cache: the
    # bytes in flight are counted in the streamed bf16 elements
    assert pointwise_params(big, 8, [big], H100).unroll == 4
    assert pointwise_params(big, 8, [big], H100, streamed_itemsize=2).unroll == 16
    # few blocks: no unroll at all (two full waves per unroll step)
    assert pointwise_params((256, 1001), 2, [(256, 1001)], H100).unroll == 1


def test_pointwise_vectorizes_one_long_axis_of_any_extent() -> None:
    """A 1-D space (every other extent 1) of at least a block of full vectors gets
    full vectors whatever its extent: the last one is partial (predicated lane by
    lane). Rows (two moving axes) and small spaces keep a width that divides."""
    from fuser.schedulers.pointwise import pointwise_params

    def vec(shape: tuple[int, ...], itemsize: int = 4) -> int:
        return pointwise_params(shape, itemsize, [shape], H100).vectorization

    assert vec((29 * 4096 + 3,)) == 4 and vec((1, 1003)) == 4 and vec((2051,), 2) == 8
    assert vec((4096 + 2,)) == 4  # rather than the 2 that divides
    assert vec((511,)) == 1 and vec((1023,), 2) == 1  # less than 128 full vectors
    assert vec((3, 1001)) == 1 and vec((8, 512, 50257)) == 1  # rows


def test_pointwise_rejects_reductions() -> None:
    reject = PointwiseScheduler.can_schedule_compile_time(F.row_sum())
    assert reject is not None and "reductions (fuser.sum)" in reject.reason


def test_reduction_inner_and_outer_params() -> None:
    p = _heur(ReductionScheduler, F.row_sum(), [(8192, 1024)])
    assert isinstance(p, ReductionParams)
    # 256 vectors of 4 floats, INNER_BATCH (2) a thread: 128 threads on a row.
    assert p.fastest_dim and p.vectorization == 4 and p.threads_per_row == 128
    assert not p.cross_grid and p.grid == (8192, 1, 1)
    # Few long rows: the reduction is split across blocks to use the SMs.
    few = _heur(ReductionScheduler, F.row_sum(), [(2, 1 << 20)])
    assert few.cross_grid and few.grid[1] == H100.sm_count // 2
    col = _heur(ReductionScheduler, F.col_sum(), [(4096, 8192)])
    assert not col.fastest_dim and col.vectorization == 4
    assert col.block == (32, 8, 1) and col.rows_per_block == 128
    assert col.grid[0] == 64 and col.cross_grid  # 64 column tiles: the rows split over grid.y
    # Column tiles for every SM (0.9 a SM): one kernel, 1024 threads a block, each
    # folding 4096 / 32 = 128 rows; no split, no finishing kernel.
    wide = _heur(ReductionScheduler, F.col_sum(), [(4096, 16384)])
    assert wide.block == (32, 32, 1) and wide.grid == (128, 1, 1) and not wide.cross_grid
    # ... with at least OUTER_MIN_ROWS rows a thread: 64 rows are 8 rows of threads.
    short = _heur(ReductionScheduler, F.col_sum(), [(64, 16384)])
    assert short.block == (32, 8, 1) and not short.cross_grid
    # Just below 0.9 tiles a SM (118 < 118.8): the split.
    assert _heur(ReductionScheduler, F.col_sum(), [(4096, 118 * 128)]).cross_grid


def test_inner_persistent_params_fit_registers() -> None:
    p = _heur(InnerPersistentScheduler, F.softmax(), [(1024, 4096)])
    assert p.project_to_inputs and p.buffer_bytes_per_row == 16384 and not p.hold_buffers
    p = _heur(InnerPersistentScheduler, F.softmax(), [(1024, 1024)])
    assert p.vectorization == 4
    assert p.threads_per_row * p.persistent_batch * p.vectorization >= 1024
    assert not p.use_shared_memory
    big = _heur(InnerPersistentScheduler, F.softmax(), [(1024, 32768)])
    assert big.threads_per_row <= 512 and big.persistent_batch == 16
    regs = big.persistent_batch * big.vectorization  # floats per thread (projected)
    assert regs <= H100.max_regs_per_thread - 40


@pytest.mark.parametrize(("width", "held"), [(96, True), (1024, True), (3072, True), (3073, False), (4096, False), (50257, False)])
def test_softmax_holds_its_exponentials_while_the_row_is_small(width: int, held: bool) -> None:
    """``exp(x - max)`` is held across the sum (not recomputed from ``x`` after it)
    while the row's two float buffers take at most ``AVOID_RECOMPUTE_MAX_BYTES``
    (24 KB: 3072 columns); the schedule then says it keeps the unprojected buffers."""
    p = _heur(InnerPersistentScheduler, F.softmax(), [(4096, width)])
    assert p.hold_buffers is held
    assert p.project_to_inputs is not held
    assert p.buffer_bytes_per_row == (8 * width if held else 4 * width)


def test_norms_without_exponentials_keep_recomputing() -> None:
    """A layer norm's and an RMS norm's buffers are computed by a subtraction or a
    cast, which is cheaper to redo than to hold: their schedules hold nothing more."""
    for fusion, shapes in ((F.layer_norm_manual(), [(4096, 1024), (1024,), (1024,)]), (F.rms_norm(), [(4096, 1024), (1024,)])):
        assert not _heur(InnerPersistentScheduler, fusion, shapes).hold_buffers


def test_inner_persistent_rows_that_spill_take_a_whole_block() -> None:
    """A row whose values a thread of the usual count cannot hold in registers (50257
    floats: 99 a thread at 512 threads, which have 88 registers each for buffers)
    spills whatever the count; a whole block of threads spills the fewest each
    (GPT-2's loss forward on the H200: 799 us at 1024 threads, 919 at 512, 1849 at
    256 without spills but one block an SM)."""
    p = _heur(InnerPersistentScheduler, F.softmax(), [(4096, 50257)])
    assert p.threads_per_row == 1024 and p.block == (1024, 1, 1)
    assert p.threads_per_row * p.persistent_batch * p.vectorization >= 50257
    fits = _heur(InnerPersistentScheduler, F.softmax(), [(4096, 40000)])  # 79 a thread at 512
    assert fits.threads_per_row == 512


def test_inner_persistent_uses_shared_memory_past_registers() -> None:
    # 56000 floats: 224000 B per row, over the 220160 B register budget, under smem.
    p = _heur(InnerPersistentScheduler, F.sum_broadcast_add(), [(1024, 56000)])
    assert p.use_shared_memory
    f = F.sum_broadcast_add()
    reject = InnerPersistentScheduler.can_schedule_run_time(
        f, bind_sizes(f, [(1024, 60 * 1024)]), H100
    )
    assert reject is not None and "245760 B per row" in reject.reason


def test_outer_persistent_two_passes() -> None:
    """Accepted where nvFuser's single-pass kernel would keep its buffers on chip, run
    as two loop nests: the statistics shaped as the reduction kind shapes an outer
    reduction, the normalized output as a 2-D pointwise nest of its own."""
    p = _heur(OuterPersistentScheduler, F.outer_norm(), [(256, 1024)])
    assert isinstance(p, OuterPersistentParams)
    f = F.outer_norm()
    assert p.stats == ReductionScheduler.heuristic(f, bind_sizes(f, [(256, 1024)]), H100)
    assert not p.stats.fastest_dim and p.stats.block == (32, 8, 1) and p.stats.grid == (8, 4, 1)
    # The statistics are read as an input broadcast along the rows: a 2-D schedule,
    # 128 columns of threads over 256 rows.
    assert p.apply == PointwiseParams(1, 4, 1, (128, 1, 1), (2, 256, 1))
    tall = _heur(OuterPersistentScheduler, F.outer_norm(), [(16384, 1024)])
    assert tall.stats.cross_grid and tall.stats.grid == (8, 132, 1)
    assert tall.apply.break_point == 1 and tall.apply.unroll > 1
    # Past what the single-pass kernel could hold on chip the fusion is segmented.
    reject = OuterPersistentScheduler.can_schedule_run_time(
        f, bind_sizes(f, [(1 << 20, 1024)]), H100
    )
    assert reject is not None and "more than half" in reject.reason


def test_inner_outer_params() -> None:
    shapes = [(4096, 1024), (4096, 1024), (4096, 1), (4096, 1), (1024,)]
    p = _heur(InnerOuterPersistentScheduler, F.layer_norm_backward(), shapes)
    assert isinstance(p, InnerOuterParams)
    # One kernel: 2 blocks an SM of 4 rows of 64 threads, each 4 vectors of 4 floats.
    assert p.single_kernel and p.inner.cross_grid
    assert p.inner.grid == (264, 1, 1) and p.inner.block == (64, 4, 1)
    assert (p.inner.vectorization, p.inner.persistent_batch) == (4, 4)
    assert p.partial_buffer_bytes == 2 * 1024 * 4
    # f32 rows hold xhat and dy * w (no wider than the inputs; bf16: test_inner_outer_kernels).
    assert p.inner.hold_buffers
    # Fewer row groups than 2 blocks an SM: a block each.
    few = _heur(InnerOuterPersistentScheduler, F.layer_norm_backward(), [(600, 1024), (600, 1024), (600, 1), (600, 1), (1024,)])
    assert few.inner.grid == (150, 1, 1)
    # The halves (single_kernel false): the row half's and the column half's own heuristics.
    assert p.rows_kind == "inner_persistent" and p.rows.fastest_dim and not p.rows.cross_grid
    assert p.cols_kind in ("reduction", "outer_persistent") and not p.cols.fastest_dim
    assert InnerOuterPersistentScheduler.can_schedule_compile_time(F.softmax()) is not None


def test_transpose_params() -> None:
    p = _heur(TransposeScheduler, F.permute_add(), [(1024, 2048), (2048, 1024)])
    assert isinstance(p, TransposeParams)
    assert (p.tile1, p.tile2) == (32, 32)
    assert p.vectorization1 == p.vectorization2 == 4
    assert p.grid == (64 * 32, 1, 1)


def test_no_op_and_expr_eval() -> None:
    assert NoOpScheduler.can_schedule_compile_time(F.views_only()) is None
    assert not NoOpScheduler.launches_kernel
    b = Builder()
    x = b.input([DYN, 4])
    from fuser.ir.dialects.fuser import SizeOp

    f = b.finish(b.binary("mul", b.op(SizeOp(x, 0)), b.op(SizeOp(x, 1))))
    assert ExprEvalScheduler.can_schedule_compile_time(f) is None
    assert NoOpScheduler.can_schedule_compile_time(f) is not None
    assert ExprEvalScheduler.can_schedule_compile_time(F.softmax()) is not None
    assert not isinstance(f.output_op.values[0].type, TensorType)


@pytest.mark.parametrize(
    "params",
    [
        PointwiseParams(1, 4, 2, (128, 1, 1), (8, 4, 1)),
        ReductionParams(True, 4, 256, 1, 2, True, False, (256, 1, 1), (4, 1, 1), True, False, 4096),
        TransposeParams(32, 32, 4, 2, (128, 1, 1), (64, 1, 1)),
        InnerOuterParams(
            ReductionParams(True, 4, 256, 1, 1, True, True, (256, 1, 1), (132, 1, 1)), 4, 1, 8192,
            "inner_persistent", ReductionParams(True, 4, 256, 1, 1, True, False, (256, 1, 1), (2048, 1, 1)),
            "reduction", ReductionParams(False, 4, 8, 1, 1, False, True, (32, 8, 1), (8, 132, 1)),
        ),
    ],
)
def test_params_attribute_round_trip(params) -> None:
    assert params_from_entries(type(params), params_entries(params)) == params


def test_inner_persistent_vectors_are_16_bytes_of_the_loaded_dtype() -> None:
    # rms_norm reads and writes float16 (computes in float32): a vector is 8 halves,
    # and a thread holds TARGET_BATCH (4) of them: 128 threads on a 4096-wide row.
    p = _heur(InnerPersistentScheduler, F.rms_norm(), [(16384, 4096), (4096,)])
    assert p.vectorization == 8
    assert p.threads_per_row == 128 and p.persistent_batch == 4
    assert p.block == (128, 1, 1) and p.grid == (16384, 1, 1)
    # Short rows: one warp a row, several rows a block (128 threads).
    short = _heur(InnerPersistentScheduler, F.rms_norm(), [(16384, 512), (512,)])
    assert short.threads_per_row == 32 and short.rows_per_block == 4
    # Long rows: 2048 vectors; RMS norm has no chained reductions: 256 threads x 8,
    # softmax (max, then the sum of exp(x - max)) keeps 512 threads x 4.
    long = _heur(InnerPersistentScheduler, F.rms_norm(), [(4096, 16384), (16384,)])
    assert long.threads_per_row == 256 and long.persistent_batch == 8
    soft = _heur(InnerPersistentScheduler, F.softmax(), [(4096, 8192)])
    assert soft.vectorization == 4 and soft.threads_per_row == 512 and soft.persistent_batch == 4


def test_inner_persistent_narrow_vectors_keep_the_elements_a_thread() -> None:
    # A width no 16-byte vector divides, in a fusion that reads a weight by column
    # (RMS norm 4096x3001 f16: one element a vector), keeps the 32 elements a thread
    # of four full vectors, on a power of two of threads: 128 x 24 (softmax f32 at
    # 256 x 12 was 42.7 us against 53.2 at 512 x 6 on the H100, before aligned groups).
    p = _heur(InnerPersistentScheduler, F.rms_norm(), [(4096, 3001), (3001,)])
    assert p.vectorization == 1 and not p.aligned_vectors
    assert p.threads_per_row == 128 and p.persistent_batch == 24
    # An even width gets two-element vectors, 16 of them a thread: 128 x 12.
    even = _heur(InnerPersistentScheduler, F.rms_norm(), [(4096, 3002), (3002,)])
    assert even.vectorization == 2
    assert even.threads_per_row == 128 and even.persistent_batch == 12
    # Softmax reads only whole rows, and still takes one-element accesses: aligned
    # groups are opt-in (``FUSER_ALIGNED_ROWS=1``; tests/test_aligned_rows.py).
    # 16 floats a thread: 256 x 12 (H200: 31.4 us against 30.9 in aligned groups),
    # and 64 x 16 with two rows a block for 1023 (25.5 against 31.1).
    soft = _heur(InnerPersistentScheduler, F.softmax(), [(4096, 3001)])
    assert soft.vectorization == 1 and not soft.aligned_vectors
    assert soft.threads_per_row == 256 and soft.persistent_batch == 12
    narrow = _heur(InnerPersistentScheduler, F.softmax(), [(8192, 1023)])
    assert narrow.vectorization == 1 and not narrow.aligned_vectors
    assert (narrow.threads_per_row, narrow.persistent_batch, narrow.rows_per_block) == (64, 16, 2)
    # Full vectors are unchanged: 4 vectors of 4 floats on 192 threads.
    full = _heur(InnerPersistentScheduler, F.softmax(), [(4096, 3000)])
    assert full.vectorization == 4 and full.threads_per_row == 192 and full.persistent_batch == 4
