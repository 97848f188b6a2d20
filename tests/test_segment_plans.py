"""Every plan fuser accepts lowers (issue 10, items 2 and 3): a scheduler accepts only
what the loop-nest lowering can lower from the schedule it writes, a fusion that needs
segmentation gets kernels for every segment, and ``plan.num_kernels`` counts the
kernels the lowering launches."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweringError
from fuser.runtime.cpu_runner import layout_of
from fuser.runtime.schedule_segment import ScheduleSegmentError, schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.inner_persistent import InnerPersistentScheduler
from fuser.schedulers.params import ReductionParams
from fuser.schedulers.target import H100


def seed000() -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
        t3 = fd.ops.broadcast(t2, is_broadcast_dim=[False, True])
        fd.add_output(fd.ops.add(t1, t3))
    return fd


@pytest.mark.parametrize("cols", [32, 128])
def test_seed000_at_nvfuser_sizes_segments_and_runs_its_kernels(cols: int) -> None:
    rng = np.random.default_rng(0)
    t0 = rng.standard_normal((2, 32)).astype(np.float32)
    t1 = rng.standard_normal((2, cols)).astype(np.float32)
    fd = seed000()
    plan = fd.plan([t0, t1])
    code = fd.generate_cuda_code([t0, t1])
    assert code.count("__global__") == plan.num_kernels
    if cols == 32:  # one row kernel
        assert [s.scheduler for s in plan.segments] == ["inner_persistent"]
        return
    assert [s.scheduler for s in plan.segments] == ["reduction", "pointwise"]
    assert code.count("// segment ") == 2
    # The CPU analogue of the GPU run: the compiled program with each launch's
    # kernels in the interpreter.
    from fuser.frontend.execution import execute_kernels_on_cpu

    (out,) = execute_kernels_on_cpu(fd._ensure_defined(), [t0, t1])
    expected = t1 + t0.sum(1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_row_scheduler_rejects_what_its_loop_nest_cannot_lower() -> None:
    """At [2, 32] + [2, 128] the row sums are broadcast to a wider tensor than they
    reduce: the inner persistent scheduler rejects the fusion, so no single scheduler
    takes it (the frontend segments it, above); forced anyway, its schedule leaves the
    add without a loop nest, which the lowering refuses."""
    fd = seed000()
    fusion = fd.fusion()
    sizes = bind_sizes(fusion, [(2, 32), (2, 128)])
    reject = InnerPersistentScheduler.can_schedule(fusion, sizes, H100)
    assert reject is not None and "neither per-row nor full" in reject.reason
    signature = Signature.of(fusion, [(2, 32), (2, 128)])
    with pytest.raises(ScheduleSegmentError) as e:
        schedule_segment(fusion, signature)
    assert f"inner_persistent: {reject.reason}" in str(e.value)
    forced = schedule_segment(
        fusion,
        signature,
        chosen=(
            "inner_persistent",
            ReductionParams(True, 4, 32, 1, 1, False, False, (32, 1, 1), (2, 1, 1)),
        ),
    )
    layouts = [layout_of(np.zeros(shape, np.float32)) for shape in [(2, 32), (2, 128)]]
    with pytest.raises(LoweringError, match=r"fuser.add: the tensor has no iterdomain.loop"):
        lower_segment(forced, layouts)


def test_index_select_and_cat_of_a_reduction_lower() -> None:
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    idx = np.array([3, 0, 7, 1], dtype=np.int64)
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        i = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        s = fd.ops.sum(t, dims=[1], keepdim=True)
        fd.add_output(fd.ops.index_select(s, i, 0))
        fd.add_output(fd.ops.cat([s, s], 0))
    plan = fd.plan([x, idx])
    assert plan.is_complete
    assert fd.generate_cuda_code([x, idx]).count("__global__") == plan.num_kernels


def test_plan_of_a_reduction_of_a_reduction_does_not_crash() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.sum(fd.ops.sum(t, dims=[1]), dims=[0])
        fd.add_output(fd.ops.add(s, s))
    x = np.ones((4, 8), np.float32)
    plan = fd.plan([x])  # ValueError: zip() argument 2 is shorter before the fix
    assert plan.is_complete
    np.testing.assert_allclose(fd.execute([x])[0], 64.0)


def test_num_kernels_counts_launches() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sub(x, fd.ops.sum(x, dims=[0], keepdim=True)))
    ins = [np.zeros((2048, 256), np.float32)]
    plan = fd.plan(ins)
    assert plan.segments[0].scheduler == "outer_persistent"
    assert plan.num_kernels == 3 == fd.generate_cuda_code(ins).count("__global__")
    assert "1 segment(s), 3 kernel(s)" in str(plan)


def test_num_kernels_counts_launches_of_inner_outer() -> None:
    # Row sums and column sums of one input (the shape of layer-norm backward's dx
    # and db) at 4096x1024: inner-outer persistent, a row half and a column half.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sub(x, fd.ops.sum(x, dims=[1], keepdim=True)))
        fd.add_output(fd.ops.sum(x, dims=[0]))
    ins = [np.zeros((4096, 1024), np.float32)]
    plan = fd.plan(ins)
    assert [s.scheduler for s in plan.segments] == ["inner_outer_persistent"]
    kernels = fd.generate_cuda_code(ins).count("__global__")
    assert plan.num_kernels == kernels > 1
    assert f"1 segment(s), {kernels} kernel(s)" in str(plan)


@pytest.mark.parametrize(("shape", "dim"), [((0, 5), 1), ((5, 0), 0), ((0, 7), 0)])
def test_reduction_with_an_empty_iteration_axis_plans_and_runs(
    shape: tuple[int, int], dim: int
) -> None:
    # The reduction heuristic divided the SM count by a grid of 0 blocks
    # (ZeroDivisionError in fd.plan; nvFuser's test_issue1270 has such a fusion).
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(x, dims=[dim]))
    ins = [np.ones(shape, np.float32)]
    plan = fd.plan(ins)
    assert plan.is_complete
    fd.generate_cuda_code(ins)
    (out,) = fd.execute(ins)
    np.testing.assert_array_equal(out, ins[0].sum(dim))


@pytest.mark.parametrize(("cols", "launches"), [(32, 1), (128, 2)])
def test_execute_kernels_on_cpu_runs_the_plan_the_gpu_runs(
    cols: int, launches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fuzz stage 'kernels': one row kernel at [2, 32]; at [2, 128] the segmented
    # host program, each launch lowered and run in the kernel interpreter.
    import fuser.runtime.cpu_runner as cpu_runner
    from fuser.frontend.execution import execute_kernels_on_cpu

    ran: list[str] = []
    real = cpu_runner.run_kernel

    def counting(module: object, name: str | None, args: list[object], grid: object) -> None:
        ran.append(str(name))
        real(module, name, args, grid)  # type: ignore[arg-type]

    monkeypatch.setattr(cpu_runner, "run_kernel", counting)
    rng = np.random.default_rng(0)
    t0 = rng.standard_normal((2, 32)).astype(np.float32)
    t1 = rng.standard_normal((2, cols)).astype(np.float32)
    fd = seed000()
    (out,) = execute_kernels_on_cpu(fd._ensure_defined(), [t0, t1], nvrtc=False)
    assert len(ran) == fd.plan([t0, t1]).num_kernels == launches
    np.testing.assert_allclose(out, t1 + t0.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
