"""Segmented fusions and stream loops on the GPU (``pytest -m gpu``): ``fd.execute``
on torch CUDA tensors runs the compiled program (``fuser.runtime.gpu_program.GpuProgram``)
with one launch per segment when no single kernel takes the fusion (or a
``segment_set`` marks a cut), the argument
manager of ``fd.segment`` runs segment definitions on the GPU, and stream-parallel
fusions run on a real stream pool; results against torch in float64."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.passes.select_schedulers import SCHEDULE_ATTR  # noqa: E402

pytestmark = pytest.mark.gpu


def seed000_cut(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T2 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)
    T3 = fd.ops.segment_set(fd.ops.broadcast(T2, is_broadcast_dim=[False, True]))
    fd.add_output(fd.ops.add(T1, T3))


def softmax(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T2 = fd.ops.broadcast(fd.ops.max(T0, dims=[1]), [False, True])
    T3 = fd.ops.exp(fd.ops.sub(T0, T2))
    T5 = fd.ops.broadcast(fd.ops.sum(T3, dims=[1]), [False, True])
    fd.add_output(fd.ops.div(T3, T5))


def define(fn) -> FusionDefinition:  # noqa: ANN001
    with FusionDefinition() as fd:
        fn(fd)
    return fd


def rel_err(out, ref) -> float:  # noqa: ANN001
    out, ref = out.double(), ref.double()
    return float((out - ref).norm() / ref.norm().clamp_min(1e-30))


def gpu_plans(fd: FusionDefinition) -> list:
    return [p for p, _ in fd._entry.gpu_plans.values()]


def test_seed000_with_segment_set_runs_two_kernels() -> None:
    fd = define(seed000_cut)
    x = torch.randn(1024, 3072, device="cuda")
    y = torch.randn(1024, 3072, device="cuda")
    ref = y.double() + x.double().sum(1, keepdim=True)
    for _ in range(2):  # the second call takes the cached plan
        (out,) = fd.execute([x, y])
        assert out.is_cuda and out.shape == (1024, 3072) and out.dtype == torch.float32
        assert rel_err(out, ref) < 1e-6
    (plan,) = gpu_plans(fd)
    kinds = [plan.exe.callee(op).attributes[SCHEDULE_ATTR].data["kind"].data for op in plan.exe.launches]
    assert kinds == ["reduction", "pointwise"]
    assert len(plan.cuda_sources()) == 2


def test_softmax_with_rows_of_2_pow_21_floats_is_segmented() -> None:
    fd = define(softmax)
    x = torch.randn(4, 1 << 21, device="cuda")
    ref = torch.softmax(x.double(), dim=1)
    for _ in range(2):
        (out,) = fd.execute([x])
        assert rel_err(out, ref) < 1e-5
    (plan,) = gpu_plans(fd)
    assert plan.num_kernels == 3
    # the same definition still runs as one kernel for short rows
    small = torch.randn(64, 1024, device="cuda")
    (out,) = fd.execute([small])
    assert rel_err(out, torch.softmax(small.double(), dim=1)) < 1e-5
    assert sorted(p.num_kernels for p in gpu_plans(fd)) == [1, 3]


def test_fd_segment_argument_manager_on_the_gpu() -> None:
    fd = define(seed000_cut)
    x = torch.randn(256, 512, device="cuda")
    y = torch.randn(256, 512, device="cuda")
    first, second = fd.segment([x, y])
    assert fd.segment_index_space_maps[first] == {0: 0, 2: 3}
    (out,) = fd.execute([x, y])
    assert out.is_cuda
    assert rel_err(out, y.double() + x.double().sum(1, keepdim=True)) < 1e-6
    assert fd.segmentation.live_after == [(1, 3), (5,)]


@pytest.mark.parametrize("num_streams", [1, 2, 4, 8])
def test_stream_parallel_fusion_on_the_gpu(num_streams: int) -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.set(t0)
        t2 = fd.ops.mul(t1, 2.0)
        fd.add_output(t2)
    fd.parallelize_stream(t1, 0)
    fd.parallelize_stream(t2, 0)
    for run in range(3):  # the first call walks the stream loops; the later ones replay them
        x = torch.randn(16, 4096, device="cuda")
        (out,) = fd.execute([x], num_streams=num_streams)
        torch.cuda.synchronize()
        assert out.is_cuda and out.shape == x.shape
        torch.testing.assert_close(out, 2 * x)
        assert fd._entry.last_run.replay is not None, f"call {run}"  # built by the first call


def test_segment_run_with_a_list_input_on_the_gpu() -> None:
    """A ``define_vector`` input given as one list next to a CUDA tensor (nvFuser's
    test_tensor_ndim): the segmented run spreads the list into its scalars (it zipped
    the inputs with the spread list and raised 'zip() argument 2 is longer')."""
    x = torch.randn([2] * 12, device="cuda")
    new_shape = [2] * 9 + [8]
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        t1 = fd.ops.reshape(t0, fd.define_vector(10))
        fd.add_output(fd.ops.sum(t1, dims=[3]))
    expected = torch.sum(x.reshape(new_shape), dim=3)
    torch.testing.assert_close(fd.execute([x, new_shape])[0], expected)
    fd.segment([x, new_shape])
    try:
        torch.testing.assert_close(fd.execute([x, new_shape])[0], expected)
    finally:
        fd.clear_segmentation()


def seed000_cut_bf16(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    T2 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)
    T3 = fd.ops.segment_set(fd.ops.broadcast(T2, is_broadcast_dim=[False, True]))
    fd.add_output(fd.ops.cast(fd.ops.add(T1, T3), DataType.BFloat16))


@pytest.mark.parametrize("case", ["seed000", "seed000-bf16", "softmax-segmented"])
def test_the_first_run_compiles_every_segment_ahead(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``GpuProgram.compile_ahead``: before the first run, every segment is compiled
    (NVRTC in parallel) at the layouts the run then asks for: the run itself compiles
    nothing more (a wrong prediction would compile its segment again), and the
    results are right."""
    from fuser.runtime.compile_fusion import FusionCompiler

    ahead: list[int] = []
    prepare = FusionCompiler.prepare

    def spy(self: FusionCompiler, launches, threads=None) -> int:  # noqa: ANN001
        ahead.append(prepare(self, launches, threads))
        return ahead[-1]

    monkeypatch.setattr(FusionCompiler, "prepare", spy)
    if case == "softmax-segmented":
        fd = define(softmax)
        x = torch.randn(3, 1 << 21, device="cuda")
        ref = torch.softmax(x.double(), dim=1)
        args = [x]
    else:
        bf16 = case.endswith("bf16")
        fd = define(seed000_cut_bf16 if bf16 else seed000_cut)
        dt = torch.bfloat16 if bf16 else torch.float32
        x, y = (torch.randn(1000, 3000, device="cuda").to(dt) for _ in range(2))
        ref = y.double() + x.double().sum(1, keepdim=True)
        args = [x, y]
    before = {id(p) for p in gpu_plans(fd)}  # the fusion cache is shared with the tests above
    (out,) = fd.execute(args)
    assert rel_err(out, ref) < (1e-2 if case.endswith("bf16") else 1e-5)
    (plan,) = [p for p in gpu_plans(fd) if id(p) not in before]
    assert plan.num_kernels >= 2
    assert ahead == [plan.num_kernels]
    assert plan.compiler.compiles == plan.num_kernels == len(plan.compiled_segments())
