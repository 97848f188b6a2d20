"""Segmentation, plans and streams from the Python frontend (seed 000, seed 001,
issue 4 item 5) on the CPU: ``fd.segment`` maps and printed segments, the argument
manager (``fd.execute`` on a segmented definition) and its deletions, the registry
deciding between the reference path and the host program, ``fd.plan``, and
stream-parallel execution."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend.segmentation import Segmentation

ROWS_HUGE = 1 << 21  # 8 MiB of float32 per row: no persistent kernel holds it


def seed000(fd: FusionDefinition, cut: bool) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)
    T3 = fd.ops.broadcast(T2, is_broadcast_dim=[False, True])
    if cut:
        T3 = fd.ops.segment_set(T3)
    T4 = fd.ops.add(T1, T3)
    fd.add_output(T4)


def softmax(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.ops.max(T0, dims=[1], keepdim=False)
    T2 = fd.ops.broadcast(T1, is_broadcast_dim=[False, True])
    T3 = fd.ops.exp(fd.ops.sub(T0, T2))
    T4 = fd.ops.sum(T3, dims=[1])
    T5 = fd.ops.broadcast(T4, is_broadcast_dim=[False, True])
    fd.add_output(fd.ops.div(T3, T5))


def define(fn, *args) -> FusionDefinition:  # noqa: ANN001
    with FusionDefinition() as fd:
        fn(fd, *args)
    return fd


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rerun_printed(seg: FusionDefinition, args: list) -> list:
    """Execute the printed text of ``seg`` as a new definition."""
    text = repr(seg).strip()
    ns: dict = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, ns)  # noqa: S102 - the printed definition is the thing under test
    name = text.split("(")[0].removeprefix("def ")
    with FusionDefinition() as fd:
        ns[name](fd)
    return fd.execute(args)


# ---- seed 000 ---------------------------------------------------------------------------


def test_segmentation_reduction_pointwise_epilogue() -> None:
    """Seed 000's test: the reduction + broadcast segment, then the pointwise epilogue,
    with the cut marked by segment_set (fuser runs the plain seed as one kernel)."""
    fd = define(seed000, True)
    x, y = randn(16, 32), randn(16, 32, seed=1)
    (expected,) = fd.execute([x, y])
    np.testing.assert_allclose(expected, y + x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    segments = fd.segment([x, y])
    assert len(segments) == 2
    assert len(fd.segment_index_space_maps) == 2
    first, second = segments
    # nvFuser maps a segment's inputs and outputs: its T0 (input) is the original T0,
    # its T2 (the broadcast, its output) the original T3
    assert fd.segment_index_space_maps[first] == {0: 0, 2: 3}
    # inputs T1 and T3 of the original, output T5 (the segment_set is internal)
    assert fd.segment_index_space_maps[second] == {0: 1, 1: 3, 3: 5}
    assert [s.scheduler for s in fd.segmentation.steps] == ["reduction", "pointwise"]
    body0 = repr(first).strip("\n").split("\n", 1)[1] + "\n"
    assert body0 == (
        "    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)\n"
        "    T1 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)\n"
        "    T2 = fd.ops.broadcast(T1, is_broadcast_dim=[False, True])\n"
        "    fd.add_output(T2)\n"
    )
    assert "T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None]" in repr(second)
    assert "T3 = fd.ops.add(T0, T2)" in repr(second)
    (got,) = fd.execute([x, y])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_plain_seed000_is_one_inner_persistent_segment() -> None:
    fd = define(seed000, False)
    x, y = randn(8, 64), randn(8, 64, seed=1)
    (seg,) = fd.segment([x, y])
    assert fd.segmentation.steps[0].scheduler == "inner_persistent"
    assert fd.segment_index_space_maps[seg] == {0: 0, 1: 1, 4: 4}  # inputs and output
    assert repr(seg).strip().split("\n", 1)[1] == repr(fd).strip().split("\n", 1)[1]
    np.testing.assert_allclose(fd.execute([x, y])[0], y + x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_printed_segments_re_execute() -> None:
    fd = define(seed000, True)
    x, y = randn(4, 8), randn(4, 8, seed=1)
    first, second = fd.segment([x, y])
    (t3,) = first.execute([x])
    assert t3.shape == (4, 1)
    np.testing.assert_allclose(rerun_printed(first, [x])[0], t3, rtol=1e-6)
    (t5,) = second.execute([y, t3])
    np.testing.assert_allclose(rerun_printed(second, [y, t3])[0], t5, rtol=1e-6)
    np.testing.assert_allclose(t5, fd.execute([x, y])[0], rtol=1e-6)


def test_argument_manager_deletes_intermediates_after_last_use() -> None:
    """Seed 000's step table: after segment 0 only T1 and the broadcast (T3) are
    alive (T0 is dropped), after segment 1 only the output."""
    fd = define(seed000, True)
    x, y = randn(4, 8), randn(4, 8, seed=1)
    fd.segment([x, y])
    seg = fd.segmentation
    assert isinstance(seg, Segmentation)
    assert seg.input_indices == (0, 1) and seg.output_indices == (5,)
    fd.execute([x, y])
    assert seg.live_after == [(1, 3), (5,)]


def test_segmented_softmax_runs_three_segments_in_order() -> None:
    fd = define(softmax)
    x = randn(2, ROWS_HUGE)
    segments = fd.segment([x])
    steps = fd.segmentation.steps
    assert [s.scheduler for s in steps] == ["reduction", "reduction", "pointwise"]
    assert len(segments) == 3
    # max -> (exp, sum) -> div; exp (T3 of the original... after sub) is handed over
    assert steps[0].input_map == (0,)
    assert steps[1].input_map == (0, steps[0].output_map[0])
    assert set(steps[2].input_map) == set(steps[1].output_map)
    (out,) = fd.execute([x])
    np.testing.assert_allclose(out, softmax_ref(x), rtol=1e-5, atol=1e-9)
    # nothing but the output survives the last segment
    assert fd.segmentation.live_after[-1] == fd.segmentation.output_indices


def test_output_views_and_inplace_updates_in_a_segmented_fusion() -> None:
    with FusionDefinition() as fd:
        T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.ops.segment_set(fd.ops.broadcast(fd.ops.sum(T0, dims=[1]), [False, True]))
        fd.add_output(fd.ops.add(T1, b))
        fd.add_output(fd.ops.permute(T0, [1, 0]))
        fd.add_output(fd.ops.mul(T1, 2.0), alias_input=T1)
    x, y0 = randn(4, 8), randn(4, 8, seed=1)
    fd.segment([x, y0.copy()])
    steps = fd.segmentation.steps
    # T1 * 2 goes into T1 by a copy segment after the add that also reads T1
    assert [s.scheduler for s in steps] == ["reduction", "pointwise", "pointwise", "host"]
    assert "fd.ops.segment_set(T0)" in repr(steps[2].definition)
    assert not steps[3].launches_kernel
    assert "fd.ops.permute(T0, dims=[1, 0])" in repr(steps[3].definition)
    y = y0.copy()
    added, permuted = fd.execute([x, y])
    np.testing.assert_allclose(added, y0 + x.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    assert np.shares_memory(permuted, x) and permuted.shape == (8, 4)
    np.testing.assert_array_equal(y, 2 * y0)  # written in place


def test_clear_segmentation_returns_to_the_plain_path() -> None:
    fd = define(seed000, True)
    x, y = randn(4, 8), randn(4, 8, seed=1)
    fd.segment([x, y])
    fd.clear_segmentation()
    assert fd.segments == [] and fd.segment_index_space_maps == {}
    np.testing.assert_allclose(fd.execute([x, y])[0], y + x.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_segment_validates_inputs() -> None:
    fd = define(seed000, True)
    with pytest.raises(ValueError, match="input"):
        fd.segment([randn(4, 8)])
    with pytest.raises(ValueError, match="dtype"):
        fd.segment([randn(4, 8), np.zeros((4, 8), np.float64)])


# ---- the registry decides on the CPU ---------------------------------------------------------


def _runtime(fd: FusionDefinition, inputs: list):  # noqa: ANN202
    from fuser.frontend.execution import runtime_for

    return runtime_for(fd._entry, inputs)


def _executable(rt, *shapes):  # noqa: ANN001, ANN202 - the Executable compiled for these shapes
    (exe,) = [e for (sig, _, _), e in rt.executables.items() if sig.inputs == shapes]
    return exe


def test_execute_runs_the_host_program_when_no_scheduler_accepts() -> None:
    fd = define(softmax)
    small, huge = randn(4, 1024), randn(2, ROWS_HUGE, seed=3)
    np.testing.assert_allclose(fd.execute([small])[0], softmax_ref(small), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(fd.execute([huge])[0], softmax_ref(huge), rtol=1e-5, atol=1e-9)
    rt = _runtime(fd, [huge])
    assert _runtime(fd, [small]) is rt  # one runtime for both sizes
    one = _executable(rt, (4, 1024))
    assert [f.attributes["fuser.schedule"].data["kind"].data for f in one.fusions.values()] == ["inner_persistent"]
    program = _executable(rt, (2, ROWS_HUGE))
    text = str(program.program)
    assert text.count("hir.launch") == 3 and "hir.deallocate" in text
    fd.execute([huge])
    assert _executable(rt, (2, ROWS_HUGE)) is program  # compiled once per size
    assert len(rt.executables) == 2


def test_execute_with_segment_set_runs_two_launches() -> None:
    fd = define(seed000, True)
    x, y = randn(4, 8), randn(4, 8, seed=1)
    np.testing.assert_allclose(fd.execute([x, y])[0], y + x.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    program = _executable(_runtime(fd, [x, y]), (4, 8), (4, 8)).program
    assert str(program).count("hir.launch") == 2


def test_custom_executor_sees_the_whole_fusion() -> None:
    fd = define(softmax)
    seen = []

    def spy(fusion, inputs):  # noqa: ANN001, ANN202
        seen.append(fusion.sym_name.data)
        from fuser.ir.reference import run_fusion

        return run_fusion(fusion, inputs)

    x = randn(1, ROWS_HUGE)
    fd.execute([x], executor=spy)
    assert seen == [f"nvfuser_fusion_id{fd.id()}"]
    compiled = [sig.inputs for rt in fd._entry.runtimes.values() for sig, _, _ in rt.executables]
    assert ((1, ROWS_HUGE),) not in compiled  # nothing compiled for this run


# ---- fd.plan ------------------------------------------------------------------------------


def test_plan_softmax_small_rows_is_one_persistent_kernel() -> None:
    plan = define(softmax).plan([randn(4, 1024)])
    assert [s.scheduler for s in plan.segments] == ["inner_persistent"]
    assert plan.num_kernels == 1 and not plan.segmented
    assert plan.segments[0].params.vectorization == 4
    assert "segment 0: inner_persistent" in str(plan)


def test_plan_softmax_huge_rows_is_segmented() -> None:
    plan = define(softmax).plan([np.empty((4, ROWS_HUGE), np.float32)])
    assert plan.segmented and plan.is_complete
    assert [s.scheduler for s in plan.segments] == ["reduction", "reduction", "pointwise"]
    # Each row is split across grid.y blocks (cross_grid): the written schedule's grid
    # reductions are a partials kernel and a finishing kernel (the second segment also
    # applies exp(x - max) to its output in a third).
    assert [s.kernels for s in plan.segments] == [2, 3, 1]
    assert all(s.params is not None for s in plan.segments)
    text = str(plan)
    assert text.startswith("plan for @nvfuser_fusion_id")
    assert "3 segment(s), 6 kernel(s)" in text
    assert "no single scheduler accepts" in text
    assert "persistent buffers need 8388608 B per row" in text
    assert "segment 2: pointwise  PointwiseParams(" in text


def test_plan_with_segment_set_names_the_cut() -> None:
    plan = define(seed000, True).plan([randn(4, 8), randn(4, 8)])
    assert [s.scheduler for s in plan.segments] == ["reduction", "pointwise"]
    assert "segment_set boundary" in str(plan)


def test_plan_of_a_view_only_fusion_launches_nothing() -> None:
    with FusionDefinition() as fd:
        T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.permute(fd.ops.reshape(T0, [8, 6]), [1, 0]))
    x = randn(8, 1, 6)
    plan = fd.plan([x])
    assert [s.scheduler for s in plan.segments] == ["no_op"]
    assert plan.num_kernels == 0
    (view,) = plan.host_views
    assert (view.input, view.output, view.ops) == (0, 0, ("hir.reshape", "hir.permute"))
    assert "host view: output #0 = hir.reshape -> hir.permute of input #0" in str(plan)
    (out,) = fd.execute([x])
    assert np.shares_memory(out, x)


def test_plan_lists_the_host_views_of_a_segmented_program() -> None:
    with FusionDefinition() as fd:
        T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.ops.segment_set(fd.ops.broadcast(fd.ops.sum(T0, dims=[1]), [False, True]))
        fd.add_output(fd.ops.add(T1, b))
        fd.add_output(fd.ops.permute(T0, [1, 0]))
    plan = fd.plan([randn(4, 8), randn(4, 8)])
    assert plan.num_kernels == 2
    assert [(v.input, v.output, v.ops) for v in plan.host_views] == [(0, 1, ("hir.permute",))]


# ---- streams ------------------------------------------------------------------------------


def stream_chain() -> tuple[FusionDefinition, list]:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.set(t0)
        t2 = fd.ops.mul(t1, 2.0)
        t3 = fd.ops.sum(t2, dims=[1])
        fd.add_output(t2)
        fd.add_output(t3)
    return fd, [t1, t2, t3]


@pytest.mark.parametrize("num_streams", [1, 2, 4])
def test_stream_parallel_execution_on_the_cpu(num_streams: int) -> None:
    fd, tensors = stream_chain()
    for t in tensors:
        fd.parallelize_stream(t, 0)
    x = randn(5, 7)
    doubled, sums = fd.execute([x], num_streams=num_streams)
    np.testing.assert_allclose(doubled, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(sums, (2 * x).sum(1), rtol=1e-5, atol=1e-5)
    program = str(fd.stream_program(num_streams))
    assert program.count("hir.for") == 1  # the three expressions share one loop
    assert f"num_streams = {num_streams} : i64" in program
    log = fd.last_stream_evaluator.stream_log
    workers = {s for event, s in log if event.startswith("launch")}
    assert workers == {1 + i % num_streams for i in range(5)}


def test_stream_parallel_default_uses_four_streams_and_a_disjoint_loop() -> None:
    fd, (t1, t2, t3) = stream_chain()
    fd.parallelize_stream(t1, 0)
    fd.parallelize_stream(t3, 0)  # t2 is not stream-parallel: two loops
    x = randn(3, 4)
    doubled, sums = fd.execute([x])
    np.testing.assert_allclose(doubled, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(sums, (2 * x).sum(1), rtol=1e-5, atol=1e-5)
    assert str(fd.stream_program(4)).count("hir.for") == 2


def test_stream_errors() -> None:
    fd, (t1, _, t3) = stream_chain()
    with pytest.raises(ValueError, match="stream axis"):
        fd.parallelize_stream(t1, 5)
    fd.parallelize_stream(t3, 0)
    with pytest.raises(ValueError, match="num_streams"):
        fd.execute([randn(3, 4)], num_streams=0)
    _, (other_t1, _, _) = stream_chain()
    with pytest.raises(ValueError, match="does not belong"):
        fd.parallelize_stream(other_t1, 0)


# ---- issue 10: segmentation failures found by random fusions ------------------------------


def test_segment_maps_an_output_whose_view_was_moved_through_its_producer() -> None:
    """``reshape(neg(slice(x)))``: the segmenter moves the reshape through ``neg``; the
    output is then a new value, and ``fd.segment`` must still find its segment."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.strided_slice(x, [4, 0], [12, 8], [1, 3])
        fd.add_output(fd.ops.reshape(fd.ops.neg(s), [8, 1, 3]))
        fd.add_output(fd.ops.sin(s))
    x = randn(16, 8)
    segments = fd.segment([x])
    assert len(segments) > 1
    a, b = fd.execute([x])
    np.testing.assert_array_equal(a, -x[4:12, ::3].reshape(8, 1, 3))
    np.testing.assert_allclose(b, np.sin(x[4:12, ::3]), rtol=1e-6)


def test_segment_maps_an_in_place_output_whose_view_was_moved_through_its_producer() -> None:
    """GPU fuzz seed 3179: ``permute(sigmoid(x))`` written back into ``x``; the
    segmenter moves the permute through ``sigmoid``, so the value written into ``x``
    is a new one (``hir.alias``'s source), which ``fd.segment`` must map."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t = fd.ops.permute(fd.ops.sigmoid(x), [0, 1])
        fd.add_output(fd.ops.sum(t, dims=[0]))
        fd.add_output(t, alias_input=x)
    x = randn(8, 4)
    want = 1 / (1 + np.exp(-x))
    fd.segment([x.copy()])
    assert [s.scheduler for s in fd.segmentation.steps] == ["reduction", "pointwise"]
    (total,) = fd.execute([x])
    np.testing.assert_allclose(x, want, rtol=1e-6)
    np.testing.assert_allclose(total, want.sum(0), rtol=1e-5)


def broadcast_then_pointwise(fd: FusionDefinition, unused: bool) -> None:
    x = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Half)
    y = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Half)
    if unused:
        fd.ops.cast(x, DataType.BFloat16)
    b = fd.ops.broadcast_in_dim(y, shape=[8, 8, 8], broadcast_dims=[0, 1, 2])
    b2 = fd.ops.broadcast_in_dim(b, shape=[8, 8, 3, 8], broadcast_dims=[0, 1, 3])
    fd.add_output(fd.ops.silu(b))
    fd.add_output(b2)


@pytest.mark.parametrize("unused", [False, True])
def test_segment_receives_the_layout_it_declares(unused: bool) -> None:
    """The first segment returns broadcast views (stride 0); the ``silu`` segment
    declares a contiguous input and must get a dense copy, not a validation error.
    An unused op (the cast) is no segment: every segment has outputs."""
    fd = define(broadcast_then_pointwise, unused)
    x = np.random.default_rng(0).standard_normal((8, 8, 1)).astype(np.float16)
    y = np.random.default_rng(1).standard_normal((8, 8, 1)).astype(np.float16)
    segments = fd.segment([x, y])
    assert all(len(s.outputs()) > 0 for s in segments)
    assert "BFloat16" not in "".join(repr(s) for s in segments)
    a, b = fd.execute([x, y])
    full = np.broadcast_to(y, (8, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(a, full / (1 + np.exp(-full)), rtol=2e-3, atol=2e-3)
    np.testing.assert_array_equal(b, np.broadcast_to(y.reshape(8, 8, 1, 1), (8, 8, 3, 8)))
