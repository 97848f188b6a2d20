"""Conversions to the 8-bit floats, bit-exact with torch.

torch converts any value to ``float8_e4m3fn``/``float8_e5m2`` through float32 (a
float64 is rounded to float32 first), then rounds to nearest, ties to even. Values
beyond the largest finite number differ by format, as torch does it:

* ``float8_e4m3fn`` (4 exponent bits, bias 7, 3 mantissa bits, no infinity): a value
  whose magnitude rounds above 448, and infinity, *saturates* to ±448 (torch 2.13, and
  nvFuser's ``cvt.rn.satfinite``; torch 2.11 gives NaN there, measured on CPU and CUDA:
  470, 480, 1000 and inf all became ``0x7f``); NaN is ``0x7f`` with the input's sign;
* ``float8_e5m2`` (5 exponent bits, bias 15, 2 mantissa bits): magnitudes that round
  above 57344 become ±infinity; NaN is ``0x7f`` with the input's sign.

Subnormals round through the float32 addition of a power of two whose ulp is the
format's smallest subnormal (``2**-9``, ``2**-16``), the same trick as torch's c10
code. The reverse conversion (float8 to float32) is exact; ``ml_dtypes`` does it.
``ml_dtypes``' own float32 -> float8 rounding differs from torch's for overflow (it
gives NaN for e4m3fn), so the reference and the kernel interpreter use ``to_fp8``.

The CUDA kernels use the same algorithm (``FP8_CUDA`` below, in the preamble of
``fuser.codegen.cuda_printer``): fuser's own ``fuser_e4m3``/``fuser_e5m2`` byte types, so the
result does not depend on ``cuda_fp8.h`` or the GPU's ``cvt.satfinite`` (which
saturates e5m2 where torch gives infinity).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from fuser.ir.dtypes import DType


@dataclass(frozen=True)
class Fp8Format:
    """The parameters of one float8 format."""

    mantissa_bits: int
    bias: int
    max_code: int  # the largest finite magnitude's code (0x7e: 448, 0x7b: 57344)
    overflow_code: int  # what a value beyond it becomes (saturation or infinity)
    numpy: Any


FORMATS: dict[DType, Fp8Format] = {
    DType.float8_e4m3fn: Fp8Format(3, 7, 0x7E, 0x7E, ml_dtypes.float8_e4m3fn),
    DType.float8_e5m2: Fp8Format(2, 15, 0x7B, 0x7C, ml_dtypes.float8_e5m2),
}


def _format(dtype: DType) -> Fp8Format:
    try:
        return FORMATS[dtype]
    except KeyError:
        raise ValueError(f"{dtype} is not a float8 type") from None


def fp8_codes(values: Any, dtype: DType) -> np.ndarray:
    """The float8 bit patterns (uint8) of ``values`` (any real numbers) as torch's
    ``.to(dtype)`` gives them; see the module docstring."""
    fmt = _format(dtype)
    f32 = np.asarray(values)
    if f32.dtype.kind == "c":
        f32 = f32.real
    with np.errstate(all="ignore"):
        f32 = f32.astype(np.float32)
    bits = f32.view(np.uint32).astype(np.int64)
    sign = (bits >> 24) & 0x80
    mag = bits & 0x7FFFFFFF
    shift = 23 - fmt.mantissa_bits
    # Normal range: add the exponent rebias and round to nearest even at ``shift``.
    odd = (mag >> shift) & 1
    normal = (mag + ((fmt.bias - 127) << 23) + (1 << (shift - 1)) - 1 + odd) >> shift
    # Subnormal range (below 2**(1 - bias)): float32 addition does the rounding.
    denorm = np.int64(127 + (1 - fmt.bias - fmt.mantissa_bits) + 23) << 23
    tiny = mag < (np.int64(127 + 1 - fmt.bias) << 23)
    with np.errstate(all="ignore"):
        added = (
            mag.astype(np.uint32).view(np.float32) + np.uint32(denorm).view(np.float32)
        ).astype(np.float32)
    sub = added.view(np.uint32).astype(np.int64) - denorm
    code = np.where(tiny, sub, normal)
    code = np.where(code > fmt.max_code, fmt.overflow_code, code)
    code = np.where(mag > 0x7F800000, 0x7F, code)  # NaN
    return (code | sign).astype(np.uint8)


def to_fp8(values: Any, dtype: DType) -> np.ndarray:
    """``values`` rounded to ``dtype`` (an ``ml_dtypes`` array), as torch rounds."""
    codes = fp8_codes(values, dtype)
    return codes.view(_format(dtype).numpy)


def astype(values: Any, dtype: DType) -> np.ndarray:
    """``np.asarray(values).astype(dtype)`` with torch's float8 rounding when ``dtype``
    is a float8 type (numpy's cast otherwise)."""
    if dtype.is_fp8:
        arr = np.asarray(values)
        if arr.dtype == dtype.to_numpy():
            return arr
        return to_fp8(arr, dtype)
    return np.asarray(values).astype(dtype.to_numpy(), copy=False)


def as_strided(x: np.ndarray, shape: Any, strides: Any, writeable: bool = True) -> np.ndarray:
    """``np.lib.stride_tricks.as_strided`` that also takes float8 arrays (numpy cannot
    rebuild an ``ml_dtypes`` float8 dtype from its array interface, ``'<f1'``): those
    go through a uint8 view of the same bytes."""
    if x.dtype in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2):
        raw = np.lib.stride_tricks.as_strided(x.view(np.uint8), shape, strides, writeable=writeable)
        return raw.view(x.dtype)
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=writeable)


#: CUDA device code for the float8 types: byte structs and conversions from and to
#: float, the same algorithm as ``fp8_codes`` (bit-exact with torch).
FP8_CUDA = r"""
// float8 storage types and torch's conversions (fuser_ir/fp8.py): round to nearest
// even through float32; e4m3fn saturates to +-448, e5m2 overflows to +-inf.
struct __align__(1) fuser_e4m3 { unsigned char x; };
struct __align__(1) fuser_e5m2 { unsigned char x; };
__device__ __forceinline__ unsigned char fuser_float_to_fp8(float f, int mbits, int bias,
                                                             unsigned max_code, unsigned overflow_code) {
  unsigned bits = __float_as_uint(f);
  unsigned sign = (bits >> 24) & 0x80u;
  unsigned mag = bits & 0x7fffffffu;
  unsigned code;
  if (mag > 0x7f800000u) {
    code = 0x7fu;
  } else if (mag < ((unsigned)(127 + 1 - bias) << 23)) {
    unsigned denorm = (unsigned)(127 + (1 - bias - mbits) + 23) << 23;
    code = __float_as_uint(__fadd_rn(__uint_as_float(mag), __uint_as_float(denorm))) - denorm;
  } else {
    int shift = 23 - mbits;
    unsigned odd = (mag >> shift) & 1u;
    long long m = (long long)mag + ((long long)(bias - 127) << 23) + (1ll << (shift - 1)) - 1 + odd;
    code = (unsigned)(m >> shift);
    if (code > max_code) code = overflow_code;
  }
  return (unsigned char)(code | sign);
}
__device__ __forceinline__ float fuser_fp8_to_float(unsigned char v, int mbits, int bias, bool has_inf) {
  unsigned sign = ((unsigned)v & 0x80u) << 24;
  unsigned e = ((unsigned)v & 0x7fu) >> mbits;
  unsigned m = (unsigned)v & ((1u << mbits) - 1u);
  unsigned emax = (1u << (7 - mbits)) - 1u;
  float out;
  if (has_inf && e == emax) {
    out = m == 0 ? __uint_as_float(0x7f800000u) : __uint_as_float(0x7fc00000u);
  } else if (!has_inf && e == emax && m == (1u << mbits) - 1u) {
    out = __uint_as_float(0x7fc00000u);
  } else if (e == 0) {
    out = (float)m * __uint_as_float((unsigned)(127 + 1 - bias - mbits) << 23);
  } else {
    out = __uint_as_float(((e - bias + 127) << 23) | (m << (23 - mbits)));
  }
  return __uint_as_float(__float_as_uint(out) | sign);
}
__device__ __forceinline__ fuser_e4m3 fuser_float2e4m3(float f) {
  return fuser_e4m3{fuser_float_to_fp8(f, 3, 7, 0x7eu, 0x7eu)};
}
__device__ __forceinline__ fuser_e5m2 fuser_float2e5m2(float f) {
  return fuser_e5m2{fuser_float_to_fp8(f, 2, 15, 0x7bu, 0x7cu)};
}
__device__ __forceinline__ float fuser_e4m32float(fuser_e4m3 v) { return fuser_fp8_to_float(v.x, 3, 7, false); }
__device__ __forceinline__ float fuser_e5m22float(fuser_e5m2 v) { return fuser_fp8_to_float(v.x, 2, 15, true); }
"""


__all__ = ["FORMATS", "FP8_CUDA", "Fp8Format", "as_strided", "astype", "fp8_codes", "to_fp8"]
