"""CUDA graphs of the cache-hit launcher (``hot_launch.Graphs``) on the GPU: a program of
two or more launches or library calls is captured the second time a call sees the same
pointers and replayed from then on. What a replay returns is bitwise what the full path
(``execution.execute``) returns; a replay reads its inputs when it runs, on the caller's
stream; zero-initialized scratch is zeroed by every replay; the temporaries of a padded
GEMM live in the graph's pool; the graphs replayed on one stream share one pool; a
call inside the caller's own CUDA graph capture launches plainly into it. The CPU side is tests/test_hot_launch.py."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.frontend import execution  # noqa: E402
from fuser.runtime import hot_launch  # noqa: E402
from tests.gpu.test_gpu_hot_launch import _two_segments  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("own_fusion_cache")]


def _two_segments_ref(x: Any, y: Any) -> Any:
    return y + x.sum(1, keepdim=True)


def _linear_gelu(fd: FusionDefinition, k: int = 128) -> list[Any]:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
    y = fd.ops.cast(fd.ops.linear(x, w, b), DataType.Float)
    fd.add_output(fd.ops.cast(fd.ops.mul(y, fd.ops.sigmoid(y)), DataType.BFloat16))
    dt = torch.bfloat16
    return [torch.randn(512, k, device="cuda", dtype=dt) / 8, torch.randn(1024, k, device="cuda", dtype=dt) / 8,
            torch.randn(1024, device="cuda", dtype=dt)]


def _warm(fd: FusionDefinition, inputs: list[Any], calls: int = 4) -> Any:
    """Run ``calls`` times, dropping each output (so the next call's buffers come back
    at the same addresses); the launcher of these inputs."""
    entry = fd._ensure_defined()  # noqa: SLF001
    for _ in range(calls):
        fd.execute(inputs)
    launcher = entry.hot[hot_launch.key_of(inputs)]
    assert launcher.graphs is not None, "a two-step program gets graphs"
    assert not launcher.graphs.off, launcher.graphs.why
    assert launcher.graphs.execs, "no graph was captured"
    return launcher


@pytest.mark.parametrize("case", ["two_segments", "linear_gelu"])
def test_replays_match_the_full_path(case: str) -> None:
    with FusionDefinition() as fd:
        inputs = _two_segments(fd) if case == "two_segments" else _linear_gelu(fd)
    launcher = _warm(fd, inputs)
    captured = len(launcher.graphs.execs)
    for _ in range(5):
        outs = fd.execute(inputs)
        full = execution.execute(fd._ensure_defined(), inputs)  # noqa: SLF001
        for a, b in zip(outs, full, strict=True):
            assert (a.shape, a.stride(), a.dtype) == (b.shape, b.stride(), b.dtype)
            assert torch.equal(a, b)
        del outs, full
    assert len(launcher.graphs.execs) <= captured + 2  # at most the full path's addresses added


def test_a_replay_reads_its_inputs_when_it_runs_on_the_callers_stream() -> None:
    with FusionDefinition() as fd:
        _two_segments(fd)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x, y = torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")
        launcher = _warm(fd, [x, y])
        torch.cuda._sleep(20_000_000)  # keeps the stream busy: a replay elsewhere would run first
        x.copy_(torch.full_like(x, 0.5))
        y.mul_(-1.0)
        (out,) = fd.execute([x, y])
        assert hot_launch.key_of([x, y]) in fd._ensure_defined().hot  # noqa: SLF001
    side.synchronize()
    assert launcher.graphs.execs
    torch.testing.assert_close(out, _two_segments_ref(x, y))


def test_zeroed_scratch_is_zeroed_by_every_replay() -> None:
    """A grid reduction accumulates into scratch zeroed before it: were the zeroing
    captured once and not replayed, every replay would add to the last sum."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        s = fd.ops.sum(a, dims=[0], keepdim=True, dtype=DataType.Float)
        fd.add_output(fd.ops.add(fd.ops.segment_set(s), 1.0))
    x = torch.rand(1 << 22, device="cuda")
    launcher = _warm(fd, [x])
    ref = x.double().sum() + 1.0
    for _ in range(4):
        (out,) = fd.execute([x])
        torch.testing.assert_close(out.double().reshape(()), ref, rtol=1e-5, atol=1e-2)
    assert launcher.graphs.execs


def test_padded_gemm_temporaries_live_in_the_graph() -> None:
    """K = 1001 bf16 rows are not 16-byte aligned: the GEMM runs on padded copies made
    inside the capture (the graphs' pool), and the replays stay right."""
    with FusionDefinition() as fd:
        inputs = _linear_gelu(fd, k=1001)
    launcher = _warm(fd, inputs)
    x, w, b = inputs
    y = torch.nn.functional.linear(x, w, b).float()
    ref = (y * torch.sigmoid(y)).to(torch.bfloat16)
    for _ in range(3):
        torch.empty(1 << 20, device="cuda").fill_(7.0)  # reuse of freed memory shows up
        (out,) = fd.execute(inputs)
        torch.testing.assert_close(out, ref, rtol=2e-2, atol=2e-2)
    assert launcher.graphs.execs


def _exp_then(fd: FusionDefinition, op: str) -> None:
    """Two kernels with a full-size intermediate between them: ``op(exp(a)) + 1``."""
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t = fd.ops.segment_set(fd.ops.exp(a))
    fd.add_output(fd.ops.add(getattr(fd.ops, op)(t), 1.0))


@pytest.mark.skipif(not hot_launch.shared_pools(), reason="FUSER_GRAPH_POOL=private")
def test_graphs_on_one_stream_share_one_pool() -> None:
    """Eight graphs of a program with a 64 MiB intermediate (eight sets of inputs)
    reserve about one intermediate, not eight; two programs' graphs replayed in turn,
    each writing over the memory of the other's intermediate, stay right."""
    mib64 = 64 << 20
    with FusionDefinition() as fa:
        _exp_then(fa, "neg")
    with FusionDefinition() as fb:
        _exp_then(fb, "tanh")
    xs = [torch.rand(4096, 4096, device="cuda") for _ in range(8)]
    fa.execute([xs[0]])
    fb.execute([xs[0]])
    torch.cuda.synchronize()
    before = torch.cuda.memory_reserved()
    for x in xs:
        for _ in range(3):
            fa.execute([x])
            fb.execute([x])
    torch.cuda.synchronize()
    grown = torch.cuda.memory_reserved() - before
    assert grown < 3 * mib64, f"16 graphs reserved {grown / 2**20:.0f} MiB"
    graphs = [fd._ensure_defined().hot[hot_launch.key_of([xs[0]])].graphs for fd in (fa, fb)]  # noqa: SLF001
    assert all(len(g.execs) == 8 for g in graphs), [len(g.execs) for g in graphs]
    for x in [*xs, *reversed(xs)]:
        (a,) = fa.execute([x])
        (b,) = fb.execute([x])
        torch.testing.assert_close(a, 1.0 - torch.exp(x))
        torch.testing.assert_close(b, torch.tanh(torch.exp(x)) + 1.0)


def test_inside_the_callers_own_graph_capture() -> None:
    with FusionDefinition() as fd:
        inputs = _two_segments(fd)
    _warm(fd, inputs)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graph.capture_begin()
        (out,) = fd.execute(inputs)
        graph.capture_end()
    torch.cuda.current_stream().wait_stream(side)
    inputs[0].copy_(torch.randn_like(inputs[0]))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, _two_segments_ref(*inputs))


def test_a_cache_reset_frees_the_graphs_of_a_definition_still_held() -> None:
    """``FusionCache.reset()`` drops the launchers, programs and CUDA graphs of the
    old entries even while their definitions live on (as AOTAutograd keeps the torch
    backend's partitions): the graphs' pools go back to torch's allocator, and the
    definition compiles again, with the same result, when it runs again."""
    from fuser import FusionCache

    with FusionDefinition() as fd:
        inputs = _two_segments(fd)
    _warm(fd, inputs)
    (before,) = fd.execute(inputs)
    entry = fd._ensure_defined()  # noqa: SLF001
    torch.cuda.synchronize()
    held = torch.cuda.memory_reserved()
    FusionCache.reset()
    assert not entry.hot and not entry.gpu_plans
    import gc

    gc.collect()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() < held, "the graphs' pools were not freed"
    (after,) = fd.execute(inputs)
    assert torch.equal(after, before)
