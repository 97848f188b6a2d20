"""fuser.uniform / fuser.normal on the GPU (``pytest -m gpu``): the generated kernel's
Philox values against the CPU reference (``fuser_ir/philox.py``). Uniform values are
bit-identical (the device functions never fuse a multiply-add); normal values use the
CUDA math library's log/sin/cos and agree to a few ulps. The stochastic seed/offset
sequence after ``torch.manual_seed`` is the same as on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.ir.dtypes import DType  # noqa: E402
from fuser.ir.philox import normal_values, uniform_values  # noqa: E402

pytestmark = pytest.mark.gpu

_DT = {
    DataType.Double: DType.float64,
    DataType.Float: DType.float32,
    DataType.Half: DType.float16,
    DataType.BFloat16: DType.bfloat16,
}


def _random_fusion(op: str, dtype: DataType) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.define_scalar(DataType.Int)
        o = fd.define_scalar(DataType.Int)
        r = getattr(fd.ops, op)(-1.5, 3.7, shape=t0.shape(), rng_seed=s, rng_offset=o, dtype=dtype)
        fd.add_output(r)
        fd.add_output(fd.ops.mul(t0, r))
    return fd


@pytest.mark.parametrize("dtype", list(_DT))
@pytest.mark.parametrize("op", ["uniform", "normal"])
def test_gpu_values_match_the_reference(op: str, dtype: DataType) -> None:
    fd = _random_fusion(op, dtype)
    x = torch.randn(333, 517, device="cuda")
    seed, offset = 2**40 + 9, 5
    r, _ = fd.execute([x, seed, offset])
    assert r.is_cuda
    fn = uniform_values if op == "uniform" else normal_values
    want = fn(_DT[dtype], seed, offset, x.numel(), -1.5, 3.7).astype(np.float64)
    got = r.cpu().double().numpy().ravel()
    if op == "uniform":
        np.testing.assert_array_equal(got, want)
    else:
        finite = np.isfinite(want)
        tol = {DataType.Double: 1e-13, DataType.Float: 2e-6}.get(dtype, 1e-2)
        np.testing.assert_allclose(got[finite], want[finite], rtol=tol, atol=tol)
        # values differ by an ulp where CUDA's logf/sinf/cosf and numpy's do (on an
        # H100: 87% of float32 values bit-identical, the rest within 2e-6)
        assert np.mean(got[finite] == want[finite]) > 0.5


def test_gpu_stochastic_sequence_follows_torchs_seed() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(t0, fd.ops.uniform(0.0, 1.0, shape=t0.shape())))
    x = torch.ones(1000, device="cuda")
    torch.manual_seed(11)
    runs = [fd.execute([x])[0].cpu().numpy() for _ in range(3)]
    for k, r in enumerate(runs):
        np.testing.assert_array_equal(r, uniform_values(DType.float32, 11, k, 1000, 0.0, 1.0))


def test_fusion_without_tensor_inputs_runs_on_the_default_gpu() -> None:
    """``set_default_device("cuda")``: nvFuser's behaviour for a fusion of random ops
    only (test_uniform_range, test_random_distinct_values): CUDA tensors out."""
    from fuser.frontend.execute_options import set_default_device

    with FusionDefinition() as fd:
        s = fd.define_scalar(DataType.Int)
        o = fd.define_scalar(DataType.Int)
        fd.add_output(
            fd.ops.uniform(0.0, 1.0, shape=[2**20], rng_seed=s, rng_offset=o, dtype=DataType.Half)
        )
    set_default_device("cuda")
    try:
        (out,) = fd.execute([3, 4])
        assert out.is_cuda and out.dtype == torch.float16
        np.testing.assert_array_equal(
            out.cpu().numpy(), uniform_values(DType.float16, 3, 4, 2**20, 0.0, 1.0)
        )
    finally:
        set_default_device(None)
    (cpu_out,) = fd.execute([3, 4])
    assert not cpu_out.is_cuda


def test_segmented_fusion_without_tensor_inputs_on_the_default_gpu() -> None:
    """Two segments (a segment_set cut), no tensor input: the segmented GPU plan's
    outputs come back as torch CUDA tensors, equal to the CPU reference."""
    from fuser.frontend.execute_options import set_default_device

    with FusionDefinition() as fd:
        s = fd.define_scalar(DataType.Int)
        o = fd.define_scalar(DataType.Int)
        u = fd.ops.uniform(0.0, 1.0, shape=[64, 1000], rng_seed=s, rng_offset=o)
        r = fd.ops.segment_set(fd.ops.sum(u, dims=[1]))
        fd.add_output(fd.ops.add(u, fd.ops.broadcast(r, [False, True])))
    (cpu_out,) = fd.execute([1, 2])
    set_default_device("cuda")
    try:
        (out,) = fd.execute([1, 2])
    finally:
        set_default_device(None)
    assert out.is_cuda
    torch.testing.assert_close(out.cpu(), cpu_out, rtol=1e-5, atol=1e-4)


def test_iota_of_a_runtime_length_on_the_default_gpu() -> None:
    """An iota whose length is a scalar input, nothing else, on the default GPU: the
    scalar's value reaches the lowering (launch_fusion dropped it for fuser.iota, whose
    length is not a ``sizes`` operand: 'extent 0 depends on an unknown scalar')."""
    from fuser.frontend.execute_options import set_default_device
    from fuser.schedulers.analysis.sizes import has_size_operands

    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, dtype=DataType.Float))
    assert has_size_operands(fd._ensure_defined().fusion)
    set_default_device("cuda")
    try:
        for length in (5, 7):
            (out,) = fd.execute([length])
            assert out.is_cuda
            assert out.cpu().tolist() == [float(i) for i in range(length)]
    finally:
        set_default_device(None)
