"""The cache-hit launcher of ``fd.execute`` on the GPU (``fuser.runtime.hot_launch``):
after the first run the calls go through it, and what it returns is bitwise what the
full path (``execution.execute``) returns for the same inputs, for pointwise, reduction,
bf16, view, two-segment and library-call (linear) fusions; another alignment class or other strides get
their own program; the caller's current stream is the one launched on. The CPU side
is tests/test_hot_launch.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.frontend import execution  # noqa: E402
from fuser.runtime import hot_launch  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("own_fusion_cache")]




def _counting(entry: Any) -> list[int]:
    """Wrap every launcher of ``entry`` to count its calls."""
    count = [0]
    for launcher in entry.hot.values():
        run = launcher.run

        def counted(inputs: Any, run: Callable[[Any], list[Any]] = run) -> list[Any]:
            count[0] += 1
            return run(inputs)

        launcher.run = counted
    return count


def _pointwise(fd: FusionDefinition) -> list[Any]:
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.mul(fd.ops.add(a, 1.0), 2.0))
    return [torch.randn(1, 4096, device="cuda")]


def _bf16_with_scalar(fd: FusionDefinition) -> list[Any]:
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    s = fd.define_scalar(dtype=DataType.Double)
    t = fd.ops.mul(fd.ops.cast(a, DataType.Float), s)
    fd.add_output(fd.ops.cast(fd.ops.tanh(t), DataType.BFloat16))
    return [torch.randn(96, 1000, device="cuda", dtype=torch.bfloat16), 0.75]


def _row_sum(fd: FusionDefinition) -> list[Any]:
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.sum(a, dims=[1], keepdim=False, dtype=DataType.Float))
    return [torch.randn(256, 1024, device="cuda")]


def _softmax_bf16(fd: FusionDefinition) -> list[Any]:
    a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    x = fd.ops.cast(a, DataType.Float)
    m = fd.ops.max(x, [1], keepdim=True)
    e = fd.ops.exp(fd.ops.sub(x, m))
    s = fd.ops.sum(e, [1], keepdim=True)
    fd.add_output(fd.ops.cast(fd.ops.div(e, s), DataType.BFloat16))
    return [torch.randn(64, 768, device="cuda", dtype=torch.bfloat16)]


def _full_sum(fd: FusionDefinition) -> list[Any]:
    a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.sum(a, dims=[0], keepdim=False, dtype=DataType.Float))
    return [torch.randn(1 << 22, device="cuda")]


def _transpose_bookend(fd: FusionDefinition) -> list[Any]:
    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
    t1 = fd.ops.reshape(t0, [4, 12, 8, 64])
    t3 = fd.ops.set(fd.ops.permute(t1, [0, 2, 1, 3]))
    fd.add_output(fd.ops.reshape(t3, [32, 768]))
    return [torch.randn(48, 8, 64, device="cuda")]


def _two_segments(fd: FusionDefinition) -> list[Any]:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
    t3 = fd.ops.segment_set(fd.ops.broadcast(t2, is_broadcast_dim=[False, True]))
    fd.add_output(fd.ops.add(t1, t3))
    return [torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")]


def _linear_relu_reshape(fd: FusionDefinition) -> list[Any]:
    """A library call (cuBLAS) between two views and a kernel: the launcher calls it."""
    x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.BFloat16)
    w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
    y = fd.ops.linear(fd.ops.reshape(x, [64, 128]), w, b)
    fd.add_output(fd.ops.reshape(fd.ops.relu(y), [4, 16, 96]))
    dt = torch.bfloat16
    return [
        torch.randn(4, 16, 128, device="cuda", dtype=dt), torch.randn(96, 128, device="cuda", dtype=dt),
        torch.randn(96, device="cuda", dtype=dt),
    ]


CASES = {
    "pointwise": _pointwise, "bf16_with_scalar": _bf16_with_scalar, "row_sum": _row_sum,
    "softmax_bf16": _softmax_bf16, "full_sum": _full_sum, "transpose_bookend": _transpose_bookend,
    "two_segments": _two_segments, "linear_relu_reshape": _linear_relu_reshape,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hot_launcher_matches_the_full_path(name: str) -> None:
    with FusionDefinition() as fd:
        inputs = CASES[name](fd)
    entry = fd._ensure_defined()  # noqa: SLF001
    first = fd.execute(inputs)  # compiles; builds the launcher
    assert entry.hot, "no hot launcher was built"
    count = _counting(entry)
    for _ in range(3):
        outs = fd.execute(inputs)
    assert count[0] == 3
    assert entry.last_run is entry.hot[hot_launch.key_of(inputs)].plan
    full = execution.execute(entry, inputs)  # the full path's cache hit
    assert count[0] == 3
    for a, b, c in zip(outs, full, first, strict=True):
        assert (a.shape, a.stride(), a.dtype, a.device) == (b.shape, b.stride(), b.dtype, b.device)
        assert torch.equal(a, b) and torch.equal(a, c)
    if name == "linear_relu_reshape":
        x, w, b = inputs
        ref = torch.relu(torch.nn.functional.linear(x.reshape(64, 128), w, b)).reshape(4, 16, 96)
        torch.testing.assert_close(outs[0], ref)
        assert "_lib0(" in entry.hot[hot_launch.key_of(inputs)].source
    if name == "bf16_with_scalar":  # the scalar is packed per call
        (other,) = fd.execute([inputs[0], -2.0])
        assert count[0] == 4
        ref = torch.tanh(inputs[0].float() * -2.0).to(torch.bfloat16)
        torch.testing.assert_close(other, ref)
    assert "hot(inputs)" in entry.hot[hot_launch.key_of(inputs)].source


def test_parameters_take_the_hot_path() -> None:
    """A model's weights reach a ``torch.compile`` partition as ``nn.Parameter``s: they
    take the hot launcher as plain tensors do (before, GPT-2's training step went
    through the replay's full path for 26 of its 27 partitions a step)."""
    with FusionDefinition() as fd:
        x, w, b = _linear_relu_reshape(fd)
    inputs = [x, torch.nn.Parameter(w, requires_grad=False), torch.nn.Parameter(b, requires_grad=False)]
    entry = fd._ensure_defined()  # noqa: SLF001
    first = fd.execute(inputs)
    assert entry.hot, "no hot launcher was built"
    count = _counting(entry)
    outs = fd.execute(inputs)
    assert count[0] == 1 and torch.equal(outs[0], first[0])
    ref = torch.relu(torch.nn.functional.linear(x.reshape(64, 128), w, b)).reshape(4, 16, 96)
    torch.testing.assert_close(outs[0], ref)


def test_alignment_and_strides_get_their_own_program() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[False], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(fd.ops.add(a, 1.0), 3.0))
    entry = fd._ensure_defined()  # noqa: SLF001
    base = torch.randn(8200, device="cuda")
    views = [base[:4096], base[1:4097], base[:8192].view(4096, 2)[:, 0], base[4:4100]]
    for x in views:
        for _ in range(3):
            (out,) = fd.execute([x])
            torch.testing.assert_close(out, (x + 1.0) * 3.0)
    # aligned, misaligned by 4 bytes, strided; 16 bytes on is the first's class
    assert len(entry.hot) == 3 and len(entry.gpu_plans) == 3


def test_launches_on_the_callers_stream() -> None:
    with FusionDefinition() as fd:
        _pointwise(fd)
    x = torch.randn(1, 4096, device="cuda")
    fd.execute([x])
    fd.execute([x])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # keeps the stream busy: a launch elsewhere would finish first
        y = x * 1.0
        (out,) = fd.execute([y])
    side.synchronize()
    torch.testing.assert_close(out, (x + 1.0) * 2.0)


def test_keywords_and_cpu_inputs_take_the_full_path() -> None:
    with FusionDefinition() as fd:
        _pointwise(fd)
    entry = fd._ensure_defined()  # noqa: SLF001
    x = torch.randn(1, 4096, device="cuda")
    fd.execute([x])
    count = _counting(entry)
    (out,) = fd.execute([x], profile=True)
    assert fd.profile() is not None
    fd.execute([x], capture_debug_output=True)
    (cpu,) = fd.execute([x.cpu()])
    assert count[0] == 0
    (hot,) = fd.execute([x])
    assert count[0] == 1
    with pytest.raises(ValueError):
        fd.profile()  # the hot call was not profiled
    assert torch.equal(out, hot)
    torch.testing.assert_close(cpu, hot.cpu())
