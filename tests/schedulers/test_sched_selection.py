"""Acceptance: which scheduler each fusion kind gets (issue 4)."""

from __future__ import annotations

import fusions as F
import pytest

from fuser.runtime.plan import make_plan
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.inner_persistent import InnerPersistentScheduler
from fuser.schedulers.persistent import (
    LARGE_FUSION_OPS,
    first_extents,
    fusion_buffer_sizes,
    inner_persistent_params,
)
from fuser.schedulers.registry import SCHEDULER_KINDS, get_scheduler, select
from fuser.schedulers.target import H100, H200

ROWS = [(4, 1024), (1024,), (1024,)]


@pytest.mark.parametrize(
    ("build", "shapes", "kind"),
    [
        (F.softmax, [(4, 1024)], "inner_persistent"),
        (F.layer_norm_manual, ROWS, "inner_persistent"),
        (lambda: F.layer_norm_manual(F.F16), ROWS, "inner_persistent"),
        (F.layer_norm_var_mean, ROWS[:2], "inner_persistent"),
        (F.rms_norm, ROWS[:2], "inner_persistent"),
        (F.sum_broadcast_add, [(4, 1024)], "inner_persistent"),
        (F.outer_norm, [(256, 1024)], "outer_persistent"),
        (
            F.layer_norm_backward,
            [(2048, 1024), (2048, 1024), (2048, 1), (2048, 1), (1024,)],
            "inner_outer_persistent",
        ),
        (F.row_sum, [(4, 1024)], "reduction"),
        (F.col_sum, [(1024, 64)], "reduction"),
        (F.pointwise_broadcast, [(64, 1024), (1024,), (64,)], "pointwise"),
        (F.permute_add, [(256, 512), (512, 256)], "transpose"),
        (F.views_only, [(8, 1, 6)], "no_op"),
    ],
)
@pytest.mark.parametrize("target", [H100, H200])
def test_selection(build, shapes, kind, target) -> None:
    fusion = build()
    sel = select(fusion, bind_sizes(fusion, shapes), target)
    assert sel.kind == kind, sel.explain()
    assert isinstance(
        sel.params,
        get_scheduler(kind).heuristic(fusion, bind_sizes(fusion, shapes), target).__class__,
    )
    # Every scheduler tried before the chosen one said why it declined.
    tried = [k for k, _ in sel.rejections]
    assert tried == list(SCHEDULER_KINDS[: SCHEDULER_KINDS.index(kind)])
    assert all(reason for _, reason in sel.rejections)


def test_softmax_same_definition_two_sizes() -> None:
    fusion = F.softmax()
    small = make_plan(fusion, [(4, 1024)], H100)
    assert [s.scheduler for s in small.segments] == ["inner_persistent"]
    assert small.num_kernels == 1
    big = make_plan(fusion, [(4, 1 << 21)], H100)
    assert big.segments[0].scheduler != "inner_persistent"
    assert not big.is_complete
    reasons = dict(big.segments[0].rejections)
    assert "8388608 B per row" in reasons["inner_persistent"]
    assert "it must be segmented" in str(big)


def test_seed_reduction_epilogue_is_one_persistent_kernel() -> None:
    """Seed 000: ``t1 + sum(t0)[:, None]`` is not a plain reduction (its result is
    broadcast back), and nvFuser segments it in two; fuser runs it as one
    inner-persistent kernel with an empty buffer (t1 is read after the reduction)."""
    fusion = F.seed_reduction_epilogue()
    sel = select(fusion, bind_sizes(fusion, [(4, 1024), (4, 1024)]), H100)
    assert sel.kind == "inner_persistent"
    assert "broadcast back" in dict(sel.rejections)["reduction"]


def test_plain_row_sum_is_not_persistent() -> None:
    fusion = F.row_sum()
    sel = select(fusion, bind_sizes(fusion, [(4, 1024)]), H100)
    assert sel.kind == "reduction"


def test_small_transpose_falls_back_to_pointwise() -> None:
    fusion = F.permute_add()
    sel = select(fusion, bind_sizes(fusion, [(4, 8), (8, 4)]), H100)
    assert sel.kind == "pointwise"
    assert "below 32" in dict(sel.rejections)["transpose"]


def test_layer_norm_backward_few_rows_rejected() -> None:
    fusion = F.layer_norm_backward()
    sizes = bind_sizes(fusion, [(4, 1024), (4, 1024), (4, 1), (4, 1), (1024,)])
    sel = select(fusion, sizes, H100)
    assert sel.kind is None
    assert "at least one row per SM" in dict(sel.rejections)["inner_outer_persistent"]


def test_few_long_rows_are_one_persistent_kernel() -> None:
    """A row that fits on chip is one block's work however few rows there are (the
    segmented grid reductions were 2.8x slower for 8 bf16 rows of 32000)."""
    fusion = F.softmax()
    for rows in (1, 8):
        sel = select(fusion, bind_sizes(fusion, [(rows, 16384)]), H100)
        assert sel.kind == "inner_persistent"
    sel = select(fusion, bind_sizes(fusion, [(1, 1 << 20)]), H100)  # 4 MiB a row: too big
    assert sel.kind is None and "persistent buffers need" in dict(sel.rejections)["inner_persistent"]


def test_plan_summary_lists_rejections() -> None:
    plan = make_plan(F.row_sum(), [(4, 1024)], H200)
    text = str(plan)
    assert text.startswith("plan for @row_sum on h200: 1 segment(s), 1 kernel(s)")
    assert "segment 0: reduction" in text
    assert "rejected: no_op: not alias-only" in text


def test_no_op_plan_launches_nothing() -> None:
    plan = make_plan(F.views_only(), [(8, 1, 6)])
    assert plan.segments[0].scheduler == "no_op"
    assert plan.num_kernels == 0


def test_fewer_rows_than_sms_with_long_batches_get_a_whole_block() -> None:
    """Without thread-block clusters (sm_80): 32 rows of 50257 (an odd width: one
    element at a time) take 1024 threads x 50, not 512 x 99; 8 rows of 8192
    and many rows of 40000 keep 512 (many rows of 50257 spill at 512 and take 1024:
    ``spill_threads``)."""
    fusion = F.softmax()
    sm80 = H100.with_(compute_capability=(8, 0))

    def threads(shape: tuple[int, int]) -> tuple[int, int]:
        sel = select(fusion, bind_sizes(fusion, [shape]), sm80)
        assert sel.kind == "inner_persistent"
        assert sel.params.grid[1] == 1  # type: ignore[union-attr]
        return sel.params.threads_per_row, sel.params.persistent_batch  # type: ignore[union-attr]

    assert threads((32, 50257)) == (1024, 50)
    assert threads((8, 8192)) == (512, 4)
    assert threads((4096, 40000))[0] == 512
    reject = InnerPersistentScheduler.can_schedule_run_time(fusion, bind_sizes(fusion, [(4, 300007)]), sm80)
    assert reject is not None and "per row" in reject.reason


def test_few_long_rows_are_split_over_a_thread_block_cluster() -> None:
    """On sm_90, fewer rows than half the SMs are split over 2-8 blocks of a cluster
    until the blocks cover the SMs (each keeping >= 2048 elements, about 16 a thread,
    one row a block); a row longer than one block holds on chip is split until each
    part fits in registers."""
    fusion = F.softmax()

    def params(shape: tuple[int, int]) -> tuple[int, int, int, bool]:
        sel = select(fusion, bind_sizes(fusion, [shape]), H100)
        assert sel.kind == "inner_persistent"
        p = sel.params
        assert p.rows_per_block == 1 or p.grid[1] == 1  # type: ignore[union-attr]
        return p.grid[1], p.threads_per_row, p.persistent_batch, p.cross_grid  # type: ignore[union-attr]

    # An odd width: one element at a time, about 16 a thread: 8 x 512 x 13 >= 50257.
    assert params((32, 50257)) == (8, 512, 13, True)
    assert params((8, 8192)) == (4, 128, 4, True)  # vectors of 4: 128 x 4 x 4 x 4 = 8192
    assert params((64, 16384))[:2] == (4, 256)
    assert params((100, 4096))[0] == 1 and params((4096, 50257))[0] == 1
    assert params((8, 3000))[0] == 1  # 1500 elements a block would be too few
    assert params((4, 300007))[0] == 8  # 1.2 MB a row: 150 KB a block, in registers
    ext = first_extents(fusion, bind_sizes(fusion, [(32, 50257)]))
    buf = fusion_buffer_sizes(fusion, bind_sizes(fusion, [(32, 50257)]))
    large = inner_persistent_params(ext, buf, 4, H100, ops=LARGE_FUSION_OPS + 1)
    # A fusion of more than LARGE_FUSION_OPS ops: as few elements a thread as a block
    # allows (1024 threads x 7 a block, not 512 x 13: the kernel unrolls every op).
    assert (large.grid, large.threads_per_row, large.persistent_batch) == ((32, 8, 1), 1024, 7)
