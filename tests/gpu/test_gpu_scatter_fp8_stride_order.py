"""scatter, float8 casts and output stride orders on the GPU (``pytest -m gpu``): torch
CUDA tensors through fuser's GPU path, against torch (bit-exact for scatter and the
float8 casts; the requested strides for stride orders)."""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu

FP8 = [(DataType.Float8_e4m3fn, torch.float8_e4m3fn), (DataType.Float8_e5m2, torch.float8_e5m2)]
WIDE = [
    (DataType.Double, torch.float64),
    (DataType.Float, torch.float32),
    (DataType.Half, torch.float16),
    (DataType.BFloat16, torch.bfloat16),
]


def _cast(src: DataType, dst: DataType) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=src)
        fd.add_output(fd.ops.cast(t0, dtype=dst))
    return fd


@pytest.mark.parametrize(("fp8", "t8"), FP8)
@pytest.mark.parametrize(("wide", "tw"), WIDE)
def test_fp8_casts_match_torch_bitwise(
    fp8: DataType, t8: object, wide: DataType, tw: object
) -> None:
    x = torch.randn(64, 129, device="cuda", dtype=torch.float64) * 300
    x[0, :6] = torch.tensor([float("inf"), -float("inf"), float("nan"), 1e6, 2.0**-12, -0.0])
    x = x.to(tw)
    (out,) = _cast(wide, fp8).execute([x])
    assert out.is_cuda and out.dtype == t8
    # Bit-exact with the reference (fuser.ir.fp8: e4m3fn saturates to +-448, as torch
    # >= 2.12 and nvFuser's satfinite conversion do) everywhere ...
    from fuser.ir.dtypes import DType
    from fuser.ir.fp8 import fp8_codes

    host = (x.float() if tw == torch.bfloat16 else x).cpu().numpy()
    ref = fp8_codes(host, DType(str(t8).removeprefix("torch.")))
    mism = (out.view(torch.uint8).cpu().numpy() != ref).sum()
    assert mism == 0
    # ... and with the device's torch wherever the value is in range (older torch gives
    # NaN for an e4m3fn overflow, e.g. 2.11's CUDA cast)
    want = x.to(t8)
    inside = x.double().abs() <= float(torch.finfo(t8).max)
    mism = ((out.view(torch.uint8) != want.view(torch.uint8)) & inside).sum().item()
    assert mism == 0
    every = torch.arange(256, device="cuda", dtype=torch.uint8).repeat(4).reshape(32, 32).view(t8)
    (back,) = _cast(fp8, wide).execute([every])
    torch.testing.assert_close(back, every.to(tw), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("scalar_src", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_matches_torch(scalar_src: bool, dim: int) -> None:
    x = torch.randn(128, 1024, device="cuda")
    _, ind = torch.topk(x, k=64, dim=dim)
    src = 1.5 if scalar_src else torch.randn(ind.shape, device="cuda")
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        if scalar_src:
            s = fd.define_scalar(None, dtype=DataType.Double)
        else:
            s = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sigmoid(fd.ops.scatter(t0, t1, s, dim)))
    (out,) = fd.execute([x, ind, src])
    want = torch.sigmoid(torch.scatter(x, dim, ind, src))
    torch.testing.assert_close(out, want)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_output_stride_order(perm: tuple[int, ...]) -> None:
    x = torch.randn(2, 3, 4, 5, device="cuda")

    def ranks(strides: tuple[int, ...]) -> list[int]:
        order = sorted(range(len(strides)), key=lambda a: strides[a])
        out = [0] * len(strides)
        for r, a in enumerate(order):
            out[a] = r
        return out

    for use_op in (False, True):
        with FusionDefinition() as fd:
            t0 = fd.from_pytorch(x)
            t1 = fd.ops.sum(t0, dims=[2])
            if use_op:
                fd.add_output(fd.ops.stride_order(t1, perm))
            else:
                fd.add_output(t1, perm)
        (out,) = fd.execute([x])
        torch.testing.assert_close(out, x.sum(2))
        assert ranks(out.stride()) == list(perm)
