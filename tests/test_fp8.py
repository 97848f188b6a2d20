"""float8 dtypes (``float8_e4m3fn``, ``float8_e5m2``): torch-exact rounding in
``fuser.ir.fp8``, the reference's casts, the frontend (torch tensors in and out), the
GPU lowering (NVRTC compile, and the kernel interpreter run on the CPU) and the rule
that float8 values only take part in casts."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.ir.dtypes import DType
from fuser.ir.fp8 import FP8_CUDA, fp8_codes, to_fp8
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu

torch = pytest.importorskip("torch")

FP8 = {
    DType.float8_e4m3fn: (torch.float8_e4m3fn, DataType.Float8_e4m3fn, ml_dtypes.float8_e4m3fn),
    DType.float8_e5m2: (torch.float8_e5m2, DataType.Float8_e5m2, ml_dtypes.float8_e5m2),
}
WIDE = {
    DataType.Double: (np.float64, torch.float64),
    DataType.Float: (np.float32, torch.float32),
    DataType.Half: (np.float16, torch.float16),
    DataType.BFloat16: (ml_dtypes.bfloat16, torch.bfloat16),
}


def _torch_codes(x: np.ndarray, td: object) -> np.ndarray:
    src = (
        torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
        if x.dtype == ml_dtypes.bfloat16
        else torch.from_numpy(x)
    )
    return src.to(td).view(torch.uint8).numpy()


# torch 2.11 turns an e4m3fn overflow into NaN (0x7f) where torch 2.13 (and nvFuser's
# satfinite conversion) saturate to +-448, as fuser does (fuser_ir/fp8.py).
_TORCH_E4M3_OVERFLOW_IS_NAN = bool(
    torch.tensor([1000.0]).to(torch.float8_e4m3fn).view(torch.uint8).item() == 0x7F
)


def _assert_torch_codes(x: np.ndarray, dt: DType) -> None:
    ours, theirs = fp8_codes(x, dt), _torch_codes(x, FP8[dt][0])
    if dt is DType.float8_e4m3fn and _TORCH_E4M3_OVERFLOW_IS_NAN:
        over = ((theirs & 0x7F) == 0x7F) & ~np.isnan(x.astype(np.float32))
        assert ((ours[over] & 0x7F) == 0x7E).all()  # saturated, with the input's sign
        theirs = np.where(over, ours, theirs)
    np.testing.assert_array_equal(ours, theirs)


def _interesting_f32() -> np.ndarray:
    """Every 2**12-th float32 bit pattern, random ones, and the rounding boundaries."""
    rng = np.random.default_rng(1)
    bits = np.concatenate(
        [
            np.arange(0, 2**32, 1 << 12, dtype=np.uint64).astype(np.uint32),
            rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32),
        ]
    )
    edges = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 463.99997, 480, 57344, 61439.996, 61440, 65536,
         2.0**-9, 2.0**-10, 2.0**-10 * 1.0001, 2.0**-16, 2.0**-17, 2.0**-17 * 1.0001, 2.0**-6, 2.0**-14],
        dtype=np.float32,
    )  # fmt: skip
    return np.concatenate([bits.view(np.float32), edges, -edges])


@pytest.mark.parametrize("dt", list(FP8))
def test_fp8_codes_match_torch_for_float32(dt: DType) -> None:
    x = _interesting_f32()
    _assert_torch_codes(x, dt)


@pytest.mark.parametrize("dt", list(FP8))
@pytest.mark.parametrize("src", [np.float16, ml_dtypes.bfloat16])
def test_fp8_codes_match_torch_for_every_half_and_bfloat16(dt: DType, src: type) -> None:
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(src)
    _assert_torch_codes(x, dt)


@pytest.mark.parametrize("dt", list(FP8))
def test_fp8_codes_match_torch_for_float64_double_rounding(dt: DType) -> None:
    """torch rounds a double to float32 first; values just past a float8 tie show it."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal(100_000) * np.exp(rng.uniform(-25, 12, 100_000))
    ties = np.arange(256, dtype=np.uint8).view(FP8[dt][2]).astype(np.float64)
    ties = np.unique(ties[np.isfinite(ties)])
    mid = ties[:-1] + np.diff(ties) / 2  # exact ties, and just above them
    x = np.concatenate([x, mid, ties[:-1] + np.diff(ties) / 2 * (1 + 2.0**-40)])
    _assert_torch_codes(x, dt)


@pytest.mark.parametrize("dt", list(FP8))
def test_every_fp8_value_round_trips(dt: DType) -> None:
    codes = np.arange(256, dtype=np.uint8)
    values = codes.view(FP8[dt][2]).astype(np.float32)
    want = torch.from_numpy(codes).view(FP8[dt][0]).float().numpy()
    np.testing.assert_array_equal(values, want)  # decode is exact (NaN == NaN here)
    back = fp8_codes(values, dt)
    nan = np.isnan(values)
    np.testing.assert_array_equal(back[~nan], codes[~nan])
    assert set(back[nan] & 0x7F) == {0x7F}


def _cast_fusion(src: DataType, dst: DataType) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=src)
        fd.add_output(fd.ops.cast(t0, dtype=dst))
    return fd


def _wide_values(dt: DataType, rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((7, 9)) * 100
    x[0, :4] = [1e6, -1e6, 470.0, 2.0**-12]
    x[1, :3] = [np.inf, -np.inf, np.nan]
    return x.astype(WIDE[dt][0])


@pytest.mark.parametrize("fp8", [DataType.Float8_e4m3fn, DataType.Float8_e5m2])
@pytest.mark.parametrize("wide", list(WIDE))
def test_cast_to_and_from_fp8_matches_torch(fp8: DataType, wide: DataType) -> None:
    """The conformance test's casts (test_cast_fp8) with overflow, inf and NaN."""
    rng = np.random.default_rng(3)
    td = FP8[fp8.to_dtype()][0]
    values = _wide_values(wide, rng)
    x = (
        torch.from_numpy(values.view(np.int16)).view(torch.bfloat16)
        if wide == DataType.BFloat16
        else torch.from_numpy(values)
    )
    (out,) = _cast_fusion(wide, fp8).execute([x])
    assert out.dtype == td
    _assert_torch_codes(values, fp8.to_dtype())  # fp8_codes is torch's cast ...
    np.testing.assert_array_equal(out.view(torch.uint8).numpy(), fp8_codes(values, fp8.to_dtype()))  # ... and ours
    (back,) = _cast_fusion(fp8, wide).execute([out])
    want = out.to(WIDE[wide][1])
    assert back.dtype == want.dtype
    torch.testing.assert_close(back, want, rtol=0, atol=0, equal_nan=True)


def test_fp8_to_fp8_and_integer_casts() -> None:
    x = torch.tensor([[1.0, -3.75, 300.0, 0.001], [-0.0, 17.5, -448.0, 2.5]]).to(
        torch.float8_e4m3fn
    )
    for dst, td in [
        (DataType.Float8_e5m2, torch.float8_e5m2),
        (DataType.Int, torch.int64),
        (DataType.Bool, torch.bool),
    ]:
        (out,) = _cast_fusion(DataType.Float8_e4m3fn, dst).execute([x])
        want = x.float().to(td)
        assert out.dtype == td
        assert torch.equal(
            out.view(torch.uint8) if td == torch.float8_e5m2 else out,
            want.view(torch.uint8) if td == torch.float8_e5m2 else want,
        )


def test_fp8_only_takes_part_in_casts() -> None:
    with pytest.raises(ValueError, match="float8_e4m3fn: float8 values only take part in casts"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float8_e4m3fn)
            fd.add_output(fd.ops.add(t0, t0))
    with pytest.raises(ValueError, match="float8 values only take part in casts"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float8_e5m2)
            fd.add_output(fd.ops.sum(t0, dims=[0]))


def test_fp8_prints_and_parses_in_the_ir() -> None:
    fd = _cast_fusion(DataType.Float, DataType.Float8_e4m3fn)
    assert "xf8E4M3FN>" in fd.fusion_ir()
    assert "dtype=DataType.Float8_e4m3fn" in repr(fd)


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (DataType.Float, DataType.Float8_e4m3fn),
        (DataType.Double, DataType.Float8_e5m2),
        (DataType.Half, DataType.Float8_e4m3fn),
        (DataType.BFloat16, DataType.Float8_e5m2),
        (DataType.Float8_e4m3fn, DataType.Float),
        (DataType.Float8_e5m2, DataType.Half),
        (DataType.Float8_e4m3fn, DataType.BFloat16),
        (DataType.Float8_e5m2, DataType.Double),
    ],
)
def test_fp8_cast_kernel_on_the_cpu_and_nvrtc(src: DataType, dst: DataType) -> None:
    """The pointwise kernel's casts: the kernel interpreter bit-exact with the
    reference, and the printed CUDA (fuser's own fp8 helpers) compiled by NVRTC."""
    rng = np.random.default_rng(4)
    if src.to_dtype().is_fp8:
        x = np.arange(256, dtype=np.uint8).repeat(2).reshape(16, 32).view(FP8[src.to_dtype()][2])
    else:
        x = _wide_values(src, rng)
    fusion = _cast_fusion(src, dst).fusion()
    (ours,), lowered = run_segment_on_cpu(fusion, [x])
    (ref,) = run_fusion(fusion, [x.copy()])
    assert ours.dtype == ref.dtype
    if dst.to_dtype().is_fp8:
        np.testing.assert_array_equal(ours.view(np.uint8), ref.view(np.uint8))
    else:
        np.testing.assert_array_equal(ours.astype(np.float64), np.asarray(ref, np.float64))
    src_text = print_cuda(lowered.kernels[0].module)
    assert "fuser_float2e" in src_text or "2float(" in src_text
    nvrtc = pytest.importorskip("fuser.codegen.nvrtc")
    nvrtc.compile_cuda(src_text, name=lowered.kernels[0].name, fusion=fusion.sym_name.data)


def test_fp8_device_helpers_are_in_the_preamble() -> None:
    fusion = _cast_fusion(DataType.Float, DataType.Float8_e5m2).fusion()
    _, lowered = run_segment_on_cpu(fusion, [np.ones((2, 3), np.float32)])
    assert FP8_CUDA.strip() in print_cuda(lowered.kernels[0].module)


def test_to_fp8_returns_ml_dtypes_arrays() -> None:
    out = to_fp8(np.array([1.0, 500.0, -1e9]), DType.float8_e4m3fn)
    assert out.dtype == ml_dtypes.float8_e4m3fn
    assert out.astype(np.float32).tolist() == [1.0, 448.0, -448.0]
    with pytest.raises(ValueError, match="float32 is not a float8 type"):
        fp8_codes(np.ones(2), DType.float32)


_HOST_SHIM = r"""
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __align__(n) alignas(n)
static inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline float __fadd_rn(float a, float b) { return a + b; }
"""

_HOST_MAIN = r"""
int main() {
  unsigned bits;
  while (std::fread(&bits, 4, 1, stdin) == 1) {
    float f = __uint_as_float(bits);
    unsigned char out[2] = {fuser_float2e4m3(f).x, fuser_float2e5m2(f).x};
    std::fwrite(out, 1, 2, stdout);
  }
  for (int c = 0; c < 256; ++c) {
    float out[2] = {fuser_e4m32float(fuser_e4m3{(unsigned char)c}),
                    fuser_e5m22float(fuser_e5m2{(unsigned char)c})};
    std::fwrite(out, 4, 2, stdout);
  }
  return 0;
}
"""


def test_fp8_cuda_helpers_match_torch_compiled_for_the_host(tmp_path) -> None:  # noqa: ANN001
    """The device functions of ``FP8_CUDA`` are plain C++: built for the host with shims
    for the CUDA bit-cast intrinsics, they give torch's bits for every sampled float32
    and decode all 256 codes of both formats exactly."""
    import shutil
    import subprocess

    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler")
    src = tmp_path / "fp8.cpp"
    src.write_text(_HOST_SHIM + FP8_CUDA + _HOST_MAIN)
    exe = tmp_path / "fp8"
    subprocess.run(
        [cxx, "-O1", "-std=c++17", "-ffp-contract=off", str(src), "-o", str(exe)], check=True
    )
    x = _interesting_f32()
    out = subprocess.run([str(exe)], input=x.tobytes(), capture_output=True, check=True).stdout
    codes = np.frombuffer(out[: 2 * x.size], np.uint8).reshape(-1, 2)
    np.testing.assert_array_equal(codes[:, 0], _torch_codes(x, torch.float8_e4m3fn))
    np.testing.assert_array_equal(codes[:, 1], _torch_codes(x, torch.float8_e5m2))
    decoded = np.frombuffer(out[2 * x.size :], np.float32).reshape(256, 2)
    all_codes = torch.arange(256, dtype=torch.uint8)
    for col, td in enumerate([torch.float8_e4m3fn, torch.float8_e5m2]):
        want = all_codes.view(td).float().numpy()
        np.testing.assert_array_equal(decoded[:, col], want)
        np.testing.assert_array_equal(np.signbit(decoded[:, col]), np.signbit(want))
