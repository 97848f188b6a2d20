"""Complex64/complex128 fusions on torch CUDA tensors: the generated kernels (the
``fuser_complex<T>`` preamble, complex sums in warp and block reductions) against torch.
The CPU side of every case is in tests/test_complex.py (kernel interpreter and NVRTC)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu

DT = {torch.complex64: DataType.ComplexFloat, torch.complex128: DataType.ComplexDouble}
# float32 transcendental functions near their singularities (tan, reciprocal of small
# values) differ from torch's CUDA ones by a few ulp of a large result.
TOL = {
    torch.complex64: {"rtol": 1e-4, "atol": 1e-5},
    torch.complex128: {"rtol": 1e-12, "atol": 1e-12},
}


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_pointwise_complex_ops_match_torch(dtype: torch.dtype) -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(1000, dtype=dtype, device="cuda", generator=gen)
    y = torch.randn(1000, dtype=dtype, device="cuda", generator=gen)
    # near tanh's poles (i pi/2) and tan's (pi/2): where cosh 2x + cos 2y cancels
    half_pi = torch.pi / 2
    x[:4] = torch.tensor([1e-3 + 1j * (half_pi + 1e-3), -2e-3 + 1j * (half_pi - 1e-3),
                          half_pi + 1e-3 + 1e-3j, -half_pi + 2e-3 - 1e-3j])  # fmt: skip
    unary = ["rsqrt", "sqrt", "exp", "log", "reciprocal", "sin", "cos", "tan", "tanh", "neg"]
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DT[dtype])
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DT[dtype])
        for name in unary:
            fd.add_output(getattr(fd.ops, name)(a))
        for name in ("abs", "real", "imag"):
            fd.add_output(getattr(fd.ops, name)(a))
        fd.add_output(fd.ops.div(a, b))
        fd.add_output(fd.ops.mul(a, fd.define_scalar(complex(3.0, 0.5))))
        fd.add_output(fd.ops.eq(a, a))
        fd.add_output(fd.ops.cast(a, DataType.Float))
    outs = fd.execute([x, y])
    refs = [torch.rsqrt(x), torch.sqrt(x), torch.exp(x), torch.log(x), torch.reciprocal(x),
            torch.sin(x), torch.cos(x), torch.tan(x), torch.tanh(x), -x,
            torch.abs(x), x.real, x.imag, x / y, x * (3.0 + 0.5j), x == x,
            x.real.to(torch.float32)]  # fmt: skip
    names = [*unary, "abs", "real", "imag", "div", "mul", "eq", "cast"]
    for name, out, ref in zip(names, outs, refs, strict=True):
        assert out.is_cuda and out.dtype == ref.dtype, name
        tol = TOL[dtype] if ref.dtype in (torch.complex64, torch.complex128) else {}
        torch.testing.assert_close(out, ref, **tol, msg=lambda m, n=name: f"{n}: {m}")
    assert "fuser_complex<" in fd.last_cuda_code()


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize(
    "shape,dim", [((2, 32), -1), ((64, 4096), 1), ((4096, 64), 0), ((3, 70000), 1)]
)
def test_complex_sums_match_torch(shape: tuple[int, int], dim: int, dtype: torch.dtype) -> None:
    x = torch.randn(*shape, dtype=dtype, device="cuda")
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DT[dtype])
        fd.add_output(fd.ops.sum(t, [dim], False, DT[dtype]))
    (out,) = fd.execute([x])
    # torch's CUDA complex<double> sum trips racecheck (tools/sanitize.sh): the
    # expected value is computed on the CPU
    ref = x.cpu().sum(dim).cuda()
    scale = (
        {"rtol": 1e-4, "atol": 1e-3} if dtype is torch.complex64 else {"rtol": 1e-10, "atol": 1e-10}
    )
    torch.testing.assert_close(out, ref, **scale)


def test_complex_normalization_and_transpose_match_torch() -> None:
    x = torch.randn(512, 1000, dtype=torch.complex64, device="cuda")
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.ComplexFloat)
        fd.add_output(fd.ops.sub(t, fd.ops.sum(t, [1], True)))
        fd.add_output(fd.ops.permute(fd.ops.exp(t), [1, 0]))
    centered, transposed = fd.execute([x])
    expected = (x.cpu() - x.cpu().sum(1, keepdim=True)).cuda()
    torch.testing.assert_close(centered, expected, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(transposed, torch.exp(x).permute(1, 0), rtol=1e-5, atol=1e-5)


def test_complex_scalar_inputs_match_torch() -> None:
    x = torch.randn(1000, dtype=torch.complex64, device="cuda")
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.ComplexFloat)
        s = fd.define_scalar(dtype=DataType.ComplexDouble)
        f = fd.define_scalar(dtype=DataType.ComplexFloat)
        fd.add_output(fd.ops.add(fd.ops.mul(t, s), f))
    (out,) = fd.execute([x, 1 + 2j, 0.5 - 1j])
    torch.testing.assert_close(out, x * (1 + 2j) + (0.5 - 1j), rtol=1e-5, atol=1e-5)
