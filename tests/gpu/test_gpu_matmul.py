"""``fd.ops.matmul``/``fd.ops.linear`` on the GPU (``pytest -m gpu``): the library
segments run cuBLAS through torch on the launch's stream, between generated kernels,
on torch CUDA tensors and on fuser's own ``DeviceArray``s, against torch."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.runtime import gpu_arrays as ga  # noqa: E402

pytestmark = pytest.mark.gpu

TORCH = {DataType.BFloat16: torch.bfloat16, DataType.Half: torch.float16, DataType.Float: torch.float32}


def _mlp(dt: DataType) -> FusionDefinition:
    """linear + bias, tanh gelu in float32, linear, residual add: two library segments
    and two generated kernels."""
    with FusionDefinition() as fd:
        x = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=dt)
        w1 = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=dt)
        b1 = fd.define_tensor([-1], contiguity=[True], dtype=dt)
        w2 = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=dt)
        h = fd.ops.cast(fd.ops.linear(x, w1, b1), DataType.Float)
        inner = fd.ops.mul(fd.ops.add(h, fd.ops.mul(fd.ops.mul(fd.ops.mul(h, h), h), 0.044715)), 0.7978845608)
        g = fd.ops.mul(fd.ops.mul(h, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))
        y = fd.ops.linear(fd.ops.cast(g, dt), w2)
        fd.add_output(fd.ops.cast(fd.ops.add(fd.ops.cast(y, DataType.Float), fd.ops.cast(x, DataType.Float)), dt))
    return fd


def _mlp_torch(x, w1, b1, w2):
    h = torch.nn.functional.linear(x, w1, b1).float()
    g = torch.nn.functional.gelu(h, approximate="tanh").to(x.dtype)
    return (torch.nn.functional.linear(g, w2).float() + x.float()).to(x.dtype)


@pytest.mark.parametrize("dt", [DataType.BFloat16, DataType.Half, DataType.Float])
def test_mlp_matches_torch(dt: DataType) -> None:
    torch.manual_seed(0)
    td = TORCH[dt]
    x = torch.randn(256, 512, device="cuda", dtype=td)
    w1 = torch.randn(1024, 512, device="cuda", dtype=td) / 512**0.5
    b1 = torch.randn(1024, device="cuda", dtype=td)
    w2 = torch.randn(512, 1024, device="cuda", dtype=td) / 1024**0.5
    fd = _mlp(dt)
    for _ in range(3):  # the first run compiles; later ones walk the program again
        (out,) = fd.execute([x, w1, b1, w2])
        ref = _mlp_torch(x, w1, b1, w2)
        tol = 1e-2 if td != torch.float32 else 1e-4
        torch.testing.assert_close(out, ref, rtol=tol, atol=tol * 4)


@pytest.mark.parametrize(("sa", "sb"), [((64, 96), (96, 48)), ((3, 64, 96), (96, 48)), ((2, 1, 8, 16), (4, 16, 8)), ((96,), (96,))])
def test_matmul_shapes_match_torch(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a = torch.randn(*sa, device="cuda")
    b = torch.randn(*sb, device="cuda")
    with FusionDefinition() as fd:
        ta = fd.define_tensor([-1] * len(sa), dtype=DataType.Float)
        tb = fd.define_tensor([-1] * len(sb), dtype=DataType.Float)
        fd.add_output(fd.ops.matmul(ta, tb))
    (out,) = fd.execute([a, b])
    torch.testing.assert_close(out, torch.matmul(a, b), rtol=1e-4, atol=1e-4)


def test_fuser_device_arrays_in_bfloat16() -> None:
    """fuser's own arrays: the library call sees them through ``torch_view`` (bfloat16
    through an int16 view) and writes fuser's output buffer."""
    rng = np.random.default_rng(0)
    import ml_dtypes

    x = (rng.standard_normal((128, 64)) * 0.5).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((32, 64)) * 0.5).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal(32).astype(ml_dtypes.bfloat16)
    with FusionDefinition() as fd:
        tx = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        tw = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        tb = fd.define_tensor([-1], contiguity=[True], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.relu(fd.ops.linear(tx, tw, tb)))
    (out,) = fd.execute([ga.DeviceArray.from_numpy(a) for a in (x, w, b)])
    assert isinstance(out, ga.DeviceArray)
    got = out.to_numpy().astype(np.float32)
    ref = np.maximum(x.astype(np.float32) @ w.astype(np.float32).T + b.astype(np.float32), 0)
    np.testing.assert_allclose(got, ref, rtol=2e-2, atol=5e-2)


def test_a_vocabulary_wide_linear_runs_on_aligned_copies() -> None:
    """GPT-2's LM head shape (50257 outputs: rows of 50257 bf16 are not 16-byte
    aligned): the library call pads, and the result equals torch's."""
    torch.manual_seed(0)
    x = torch.randn(1024, 768, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(50257, 768, device="cuda", dtype=torch.bfloat16) / 768**0.5
    with FusionDefinition() as fd:
        tx = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        tw = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.linear(tx, tw))
    (out,) = fd.execute([x, w])
    torch.testing.assert_close(out, torch.nn.functional.linear(x, w), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("orientation", ["row-major", "column-major"])
def test_padded_copies_through_the_driver_match_torch(orientation: str) -> None:
    """``padded`` copies a CUDA matrix into its 16-byte aligned buffer with one pitched
    driver copy (``cuMemcpy2DAsync``, rows of 1001 bf16: no alignment) in the matrix's
    own orientation, on torch's current stream: the values, and zeros after them."""
    from fuser.runtime.library_ops import is_aligned, padded

    gen = torch.Generator(device="cuda").manual_seed(0)
    src = torch.randn(37, 1001, device="cuda", dtype=torch.bfloat16, generator=gen)
    if orientation == "column-major":
        src = torch.randn(1001, 37, device="cuda", dtype=torch.bfloat16, generator=gen).t()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        out = padded(torch, src, 40, 1008)
    side.synchronize()
    assert is_aligned(out) and out.shape == (40, 1008)
    assert (out.stride(1) == 1) == (orientation == "row-major")
    assert torch.equal(out[:37, :1001], src)
    assert not out[37:].any() and not out[:, 1001:].any()
