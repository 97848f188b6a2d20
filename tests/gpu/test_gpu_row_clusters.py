"""Few long rows split over a thread-block cluster (issue 15, item 4), on the H100:
softmax, layer norm and a log-softmax (cross-entropy's) with 8 to 64 rows against torch
in float64; the kernel is clustered (``__cluster_dims__``, a DSMEM combine) and one
kernel, and rows longer than a block holds on chip run too."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu

DT = {"float32": (DataType.Float, torch.float32), "bfloat16": (DataType.BFloat16, torch.bfloat16)}


def _softmax(dtype: DataType, log: bool = False) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        x = fd.ops.cast(t0, DataType.Float)
        m = fd.ops.max(x, [1], keepdim=True)
        d = fd.ops.sub(x, m)
        e = fd.ops.exp(d)
        s = fd.ops.sum(e, [1], keepdim=True)
        y = fd.ops.sub(d, fd.ops.log(s)) if log else fd.ops.div(e, s)
        fd.add_output(fd.ops.cast(y, dtype))
    return fd


def _check(fd: FusionDefinition, x, ref, tol: float) -> None:
    (out,) = fd.execute([x])
    assert out.shape == ref.shape
    err = float((out.double() - ref).norm() / ref.norm())
    assert err < tol, err
    code = fd.last_cuda_code()
    assert "__cluster_dims__" in code and "fuser_cluster_reduce" in code
    assert code.count('extern "C"') == 1


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(32, 50257), (8, 32000), (64, 16384), (5, 12345), (4, 300007)])
def test_softmax_over_a_cluster_matches_torch(shape: tuple[int, int], dtype: str) -> None:
    fdt, tdt = DT[dtype]
    x = (torch.randn(*shape, device="cuda") * 4).to(tdt)
    ref = torch.softmax(x.double(), dim=1)
    _check(_softmax(fdt), x, ref, 1e-5 if dtype == "float32" else 1e-2)


def test_log_softmax_over_a_cluster_matches_torch() -> None:
    x = torch.randn(16, 50257, device="cuda") * 4
    _check(_softmax(DataType.Float, log=True), x, torch.log_softmax(x.double(), dim=1), 1e-6)


def test_layer_norm_over_a_cluster_matches_torch() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, [1], correction=0, keepdim=True)
        y = fd.ops.mul(fd.ops.sub(t0, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
        fd.add_output(y)
        fd.add_output(fd.ops.squeeze(mean, [1]))
    x = torch.randn(8, 65536, device="cuda") + 3.0
    out, mean = fd.execute([x])
    xd = x.double()
    ref = torch.nn.functional.layer_norm(xd, (65536,), eps=1e-5)
    assert float((out.double() - ref).norm() / ref.norm()) < 1e-5
    torch.testing.assert_close(mean.double(), xd.mean(1), rtol=1e-5, atol=1e-6)
    assert "__cluster_dims__" in fd.last_cuda_code()
