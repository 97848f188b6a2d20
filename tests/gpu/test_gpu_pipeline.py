"""The GPU path runs the compiler driver's pipeline (issue 13, ``pytest -m gpu``):
dropping ``strip-bookend-views`` from ``fd.pipeline`` changes what ``fd.execute``
launches, in ``fd.plan`` and in the CUDA ``fd.last_cuda_code`` shows; the outputs
stay the same. Every kernel is the loop nest ``schedule-fusions`` wrote: without that
pass there is no kernel to run."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.runtime.driver import PASSES  # noqa: E402

pytestmark = pytest.mark.gpu

def test_dropping_a_pass_changes_what_execute_launches() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.reshape(t0, [64, 128, 3072])
        t9 = fd.ops.mul(fd.ops.mul(t1, 0.5), fd.ops.add(fd.ops.erf(fd.ops.mul(t1, 0.707107)), 1.0))
        fd.add_output(fd.ops.reshape(t9, [8192, 3072]))
    x = torch.randn(8192, 3072, device="cuda")
    (want,) = fd.execute([x])
    code, plan = fd.last_cuda_code(), fd.plan([x])
    assert len(plan.host_views) == 2
    program = fd._entry.last_run
    assert program.exe.pipeline.endswith(",".join(PASSES))
    try:
        fd.pipeline = [p for p in PASSES if p != "strip-bookend-views"]
        (got,) = fd.execute([x])
        assert "strip-bookend-views" not in fd._entry.last_run.exe.pipeline
        assert fd.plan([x]).host_views == ()
        assert fd.last_cuda_code() != code
        torch.testing.assert_close(got, want)
    finally:
        fd.pipeline = PASSES
    ref = 0.5 * x.double() * (1 + torch.erf(x.double() * 0.707107))
    torch.testing.assert_close(want.double(), ref, rtol=1e-5, atol=1e-5)


def _views_and_in_place(fd: FusionDefinition) -> None:
    a = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    t = fd.ops.set(fd.ops.permute(fd.ops.reshape(a, [4, 6, 8, 16]), [0, 2, 1, 3]))
    fd.add_output(fd.ops.reshape(t, [32, 96]))  # a view of a whole kernel output
    fd.add_output(fd.ops.permute(a, [2, 0, 1]))  # a view of the input
    fd.add_output(fd.ops.exp(fd.ops.slice(a, [1, 0, 2], [20, 8, 16])))  # a host slice feeding a kernel
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.add(b, 1.0), alias_input=b)  # written in place


def _segments(fd: FusionDefinition) -> None:  # seed 000 cut: two kernels, an intermediate
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    s = fd.ops.segment_set(fd.ops.broadcast(fd.ops.sum(t0, [1]), [False, True]))
    fd.add_output(fd.ops.sub(t1, s))  # not test_gpu_segmented's seed000_cut: no shared cache entry


@pytest.mark.parametrize(
    "define,shapes",
    [(_views_and_in_place, [(24, 8, 16), (100,)]), (_segments, [(64, 4096), (64, 4096)])],
)
def test_the_replay_computes_what_the_walk_computes(define, shapes) -> None:  # noqa: ANN001
    """Later calls replay the program (``fuser.runtime.gpu_replay``): on new data
    each time they give what the reference interpreter gives, in place too."""
    with FusionDefinition() as fd:
        define(fd)
    for _ in range(3):
        xs = [torch.randn(*s, device="cuda") for s in shapes]
        host = [x.cpu().numpy() for x in xs]
        want = fd.execute(host)
        got = fd.execute(xs)
        assert fd._entry.last_run._replay is not None  # built by the first call
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g.cpu(), torch.from_numpy(w), rtol=1e-5, atol=1e-4)
        if define is _views_and_in_place:
            assert got[1].data_ptr() == xs[0].data_ptr()
            torch.testing.assert_close(xs[1].cpu(), torch.from_numpy(host[1]))  # in place on both
        else:
            assert fd._entry.last_run.num_kernels == 2


def test_the_written_loop_nest_runs_and_nothing_else() -> None:
    """The GPU runs the kernel the loop nest gives (``codegen/lower/loop_nest.py``): the
    rows of this 2-D pointwise schedule on blockIdx.y; a pipeline without
    ``schedule-fusions`` has no kernel to run (an error naming the pass)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(fd.ops.mul(x, 2.0), fd.ops.broadcast(w, [True, False])))
    xs = [torch.randn(300, 1000, device="cuda"), torch.randn(1000, device="cuda")]
    (got,) = fd.execute(xs)
    code = fd.last_cuda_code()
    (got2,) = fd.execute(xs)  # the replay
    assert "blockIdx.y" in code
    want = xs[0] * 2 + xs[1][None, :]
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got2, want)
    try:
        fd.pipeline = [p for p in PASSES if not p.startswith("schedule-fusions")]
        with pytest.raises(ValueError, match="has no loop nest .*run schedule-fusions"):
            fd.execute(xs)
    finally:
        fd.pipeline = PASSES


@pytest.mark.parametrize("dtype", [DataType.Float, DataType.BFloat16])
@pytest.mark.parametrize("shape", [(4096, 1024), (300, 1000), (37, 4096)])
def test_written_normalization_schedules_run_on_the_gpu(dtype: DataType, shape: tuple[int, int]) -> None:
    """Softmax: its input computed at the row loop in registers, both reductions at the
    row loop (``loop_nest_compute_at.py``): one kernel, the input read from global
    memory once, the result torch's."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        xf = fd.ops.cast(x, DataType.Float)
        m = fd.ops.max(xf, [1], keepdim=True)
        e = fd.ops.exp(fd.ops.sub(xf, m))
        y = fd.ops.div(e, fd.ops.sum(e, [1], keepdim=True))
        fd.add_output(fd.ops.cast(y, dtype))
    tdt = torch.float32 if dtype == DataType.Float else torch.bfloat16
    xs = [torch.randn(*shape, device="cuda", dtype=tdt)]
    (got,) = fd.execute(xs)
    assert fd._entry.last_run.num_kernels == 1
    want = torch.softmax(xs[0].float(), dim=1).to(tdt)
    torch.testing.assert_close(got, want, atol=1e-2 if tdt == torch.bfloat16 else 1e-6, rtol=1e-2 if tdt == torch.bfloat16 else 1e-5)


@pytest.mark.parametrize("shape", [(4096, 1024), (300, 1000)])
def test_written_layer_norm_schedule_runs_on_the_gpu(shape: tuple[int, int]) -> None:
    """Layer norm: var_mean is a Welford stage at the row loop; the result is torch's
    layer norm."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
        xf = fd.ops.cast(x, DataType.Float)
        var, mean = fd.ops.var_mean(xf, [1], correction=0, keepdim=True)
        y = fd.ops.mul(fd.ops.sub(xf, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
        y = fd.ops.mul(y, fd.ops.broadcast(fd.ops.cast(w, DataType.Float), [True, False]))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    xs = [torch.randn(*shape, device="cuda", dtype=torch.bfloat16), torch.randn(shape[1], device="cuda", dtype=torch.bfloat16)]
    (got,) = fd.execute(xs)
    assert fd._entry.last_run.num_kernels == 1
    want = torch.nn.functional.layer_norm(xs[0].float(), (shape[1],), xs[1].float(), eps=1e-5).bfloat16()
    torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", [DataType.Float, DataType.BFloat16])
@pytest.mark.parametrize("shape", [(16384, 1024), (3000, 768), (2048, 4096)])
def test_written_layer_norm_backward_schedule_runs_on_the_gpu(dtype: DataType, shape: tuple[int, int]) -> None:
    """Layer-norm backward (inner-outer persistent) as one kernel over the inputs on a
    persistent grid: dx stored per row, dw and db folded across each block's rows
    into partial sums that a finishing kernel adds up; the results are torch's, in
    float64 from the same (rounded) inputs."""
    from benchmarks.workloads import layernorm_backward

    tdt = torch.float32 if dtype == DataType.Float else torch.bfloat16
    with FusionDefinition() as fd:
        layernorm_backward(fd, dtype)
    rows, cols = shape
    xt = torch.randn(rows, cols, device="cuda", dtype=tdt)
    mean_t = xt.float().mean(1, keepdim=True).to(tdt)
    rstd_t = torch.rsqrt(xt.float().var(1, unbiased=False, keepdim=True) + 1e-5).to(tdt)
    xs = [torch.randn(rows, cols, device="cuda", dtype=tdt), xt, mean_t, rstd_t, torch.randn(cols, device="cuda", dtype=tdt)]
    got = fd.execute(xs)
    code = fd.last_cuda_code()
    assert "_finish(" in code and "_nest0" not in code
    # Several rows of threads a block combine their column sums through a shared
    # tile; rows of 4096 take a block a row (the tile would pass 32 KB).
    assert ("across_tile" in code) == (cols <= 1024)
    dy, x, mean, rstd, w = (t.double() for t in xs)
    xhat = (x - mean) * rstd
    g = dy * w[None, :]
    dx = rstd / cols * (g * cols - g.sum(1, keepdim=True) - xhat * (g * xhat).sum(1, keepdim=True))
    want = [dx.to(tdt), (dy * xhat).sum(0), dy.sum(0)]
    tol = {"atol": 2e-2, "rtol": 2e-2} if tdt == torch.bfloat16 else {"atol": 1e-3, "rtol": 1e-4}
    for g_, w_ in zip(got, want, strict=True):
        torch.testing.assert_close(g_.double(), w_.double(), **tol)
