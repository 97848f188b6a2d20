"""Programmatic dependent launch on the GPU: fuser's kernels are launched with
programmatic stream serialization on sm_90 and later, and chains of them (a
three-kernel outer normalization, its launcher's CUDA graph, back-to-back calls on one
stream) give exactly what the same kernels give launched one after the other."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu


def _outer_norm() -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        x = fd.ops.cast(t0, DataType.Float)
        var, mean = fd.ops.var_mean(x, [0], correction=0, keepdim=True)
        y = fd.ops.mul(fd.ops.sub(x, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
    return fd


def _kernels(fd: FusionDefinition) -> list:
    return [k for seg in fd._entry.last_run.compiled_segments() for k in seg.kernels]  # noqa: SLF001


def test_chained_kernels_are_dependent_launches_and_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("programmatic dependent launch needs sm_90")
    torch.manual_seed(0)
    xs = [torch.randn(8192, 1024, device="cuda", dtype=torch.bfloat16) * (k + 1) + k for k in range(4)]
    fd = _outer_norm()
    outs = [fd.execute([x])[0] for x in xs]
    kernels = _kernels(fd)
    # Statistics (one wave of blocks), finishing kernel, apply (under two waves).
    assert len(kernels) == 3 and all(k.dependent_launch for k in kernels)
    for x, out in zip(xs, outs, strict=True):
        xf = x.double()
        ref = (xf - xf.mean(0, keepdim=True)) * torch.rsqrt(xf.var(0, correction=0, keepdim=True) + 1e-5)
        assert (out.double() - ref).abs().max().item() < 0.05
    # Back to back on one stream (the hot launcher, then its CUDA graph): every call's
    # statistics come from its own input, none from the call before.
    for _ in range(5):
        again = [fd.execute([x])[0] for x in xs]
        for a, b in zip(again, outs, strict=True):
            assert torch.equal(a, b)
    # The same kernels through ``Kernel.launch`` (run_compiled), programmatic
    # dependent launches and then plain ones, on one stream.
    from fuser.runtime.compile_fusion import run_compiled

    (seg,) = fd._entry.last_run.compiled_segments()  # noqa: SLF001
    stream = torch.cuda.current_stream().cuda_stream
    for dependent in (True, False):
        for k in kernels:
            monkeypatch.setattr(k, "dependent_launch", dependent)
        direct = [torch.empty_like(x) for x in xs]
        for x, out in zip(xs, direct, strict=True):
            run_compiled(seg, [x.data_ptr()], [out.data_ptr()], stream)
        torch.cuda.synchronize()
        for a, b in zip(direct, outs, strict=True):
            assert torch.equal(a, b)


def test_a_buffer_rewritten_between_two_of_its_readers_is_read_fresh() -> None:
    """Random seed 12891: its small case is two kernels, an outer statistics kernel
    writing a scratch buffer and an apply kernel reading it; its large case's apply
    kernel reads the same pooled buffer. Alternating the two sizes (their launchers
    replaying CUDA graphs after the second call) made the small apply kernel read the
    large case's statistics when ``fuser_dependent_launch`` let the next kernel launch
    before waiting: three kernels were then in flight, and the third's read-only loads
    hit the first's stale copy of the buffer the second had rewritten (79 wrong calls
    of 80 on the H200). Waiting first keeps two in flight."""
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("programmatic dependent launch needs sm_90")
    from tests.fuzz.fusion_gen import random_case
    from tests.fuzz.triage import compare

    cases = [(c, [t.cuda() for t in c.inputs]) for c in (random_case(12891), random_case(12891, small=True))]
    for i in range(60):
        for case, ins in cases:
            msg = compare(case.fd.execute(ins), case)
            assert msg is None, f"call {i} of shape {tuple(ins[0].shape)}: {msg}"
