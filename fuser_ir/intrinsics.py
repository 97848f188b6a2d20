"""Scalar functions that upstream ``arith``/``math`` lack, with one definition each.

``kernel.intrinsic "name"(%a, ...)`` calls one of these. Each entry gives its arity,
whether the result is a predicate (``i1``) or of the first operand's type, the CUDA
expression the printer emits, and the numpy function the CPU kernel interpreter
runs. Semantics are those of ``fuser_ir/reference.py`` (torch's), so a kernel and the
reference agree bit for bit where the math library does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Intrinsic:
    arity: int
    predicate: bool
    cuda: Callable[[list[str], str, bool, Callable[[str], str]], str]
    """(argument expressions, C type of the first operand, is it a float, the printer's
    math-function namer — ``erf`` → ``erff`` for float) -> C expression."""
    numpy: Callable[..., object]
    floats_only: bool = False
    ints_only: bool = False


def _fn(name: str) -> Callable[[list[str], str, bool, Callable[[str], str]], str]:
    return lambda a, t, f, fname: f"{fname(name)}({', '.join(a)})"


def _np_unary(fn: Callable[[float], float]) -> Callable[[object], object]:
    def apply(x: object) -> object:
        try:
            return type(x)(fn(float(x)))  # type: ignore[call-arg, arg-type]
        except (ValueError, OverflowError):
            return type(x)(math.nan)  # type: ignore[call-arg]

    return apply


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except ValueError:
        return math.inf


def _erfinv(x: float) -> float:
    from fuser.ir.reference import _erfinv as ref

    return float(ref(np.array([x]))[0])


def _remainder(a: object, b: object) -> object:
    if isinstance(a, np.integer):
        return type(a)(0) if b == 0 else np.remainder(a, b)
    return np.remainder(a, b)


def _fmod(a: object, b: object) -> object:
    if isinstance(a, np.integer):
        return type(a)(0) if b == 0 else np.fmod(a, b)
    with np.errstate(all="ignore"):
        return np.fmod(a, b)


def _trunc_div(a: object, b: object) -> object:
    if b == 0:
        return type(a)(0)  # type: ignore[call-arg]
    q = abs(int(a)) // abs(int(b))  # type: ignore[call-overload]
    return type(a)(-q if (int(a) < 0) != (int(b) < 0) else q)  # type: ignore[call-arg, call-overload]


def _ipow(a: object, b: object) -> object:
    a_, b_ = int(a), int(b)  # type: ignore[call-overload]
    if b_ < 0:
        r = 1 if a_ == 1 else ((1 if b_ % 2 == 0 else -1) if a_ == -1 else 0)
    else:
        r = pow(a_, b_)
    bits = np.dtype(type(a)).itemsize * 8
    r = (r + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
    return type(a)(r)  # type: ignore[call-arg]


def _lshr(a: object, b: object) -> object:
    """Logical right shift of a numpy integer scalar (0 for shifts outside [0, width))."""
    size = np.dtype(type(a)).itemsize
    n = int(b)  # type: ignore[call-overload]
    if n < 0 or n >= size * 8:
        return type(a)(0)  # type: ignore[call-arg]
    u = np.array(a).view(f"u{size}") >> np.array(n).astype(f"u{size}")
    return u.view(np.dtype(type(a)))[()]


def _shift(left: bool) -> Callable[[object, object], object]:
    def apply(a: object, b: object) -> object:
        bits = np.dtype(type(a)).itemsize * 8
        n = int(b)  # type: ignore[call-overload]
        if n >= bits or n < 0:
            return type(a)(0 if left or int(a) >= 0 else -1)  # type: ignore[call-arg, call-overload]
        with np.errstate(all="ignore"):
            return np.left_shift(a, type(a)(n)) if left else np.right_shift(a, type(a)(n))  # type: ignore

    return apply


def _sign(x: object) -> object:
    return np.sign(x)


INTRINSICS: dict[str, Intrinsic] = {
    "erfc": Intrinsic(1, False, _fn("erfc"), _np_unary(math.erfc), floats_only=True),
    "erfinv": Intrinsic(1, False, _fn("erfinv"), _np_unary(_erfinv), floats_only=True),
    "lgamma": Intrinsic(1, False, _fn("lgamma"), _np_unary(_lgamma), floats_only=True),
    "asinh": Intrinsic(1, False, _fn("asinh"), _np_unary(math.asinh), floats_only=True),
    "acosh": Intrinsic(1, False, _fn("acosh"), _np_unary(math.acosh), floats_only=True),
    "atanh": Intrinsic(1, False, _fn("atanh"), _np_unary(math.atanh), floats_only=True),
    "sign": Intrinsic(
        1,
        False,
        lambda a, t, f, fname: (
            f"(isnan({a[0]}) ? {a[0]} : ({t})(({a[0]} > ({t})0) - ({a[0]} < ({t})0)))"
            if f
            else f"({t})(({a[0]} > 0) - ({a[0]} < 0))"
        ),
        _sign,
    ),
    "signbit": Intrinsic(
        1, True, lambda a, t, f, fname: f"signbit({a[0]})" if f else f"({a[0]} < 0)", lambda x: bool(np.signbit(x))
    ),
    "isnan": Intrinsic(1, True, lambda a, t, f, fname: f"isnan({a[0]})" if f else "false", lambda x: bool(np.isnan(x))),
    "isinf": Intrinsic(1, True, lambda a, t, f, fname: f"isinf({a[0]})" if f else "false", lambda x: bool(np.isinf(x))),
    "isfinite": Intrinsic(
        1, True, lambda a, t, f, fname: f"isfinite({a[0]})" if f else "true", lambda x: bool(np.isfinite(x))
    ),
    "iabs": Intrinsic(1, False, lambda a, t, f, fname: f"({a[0]} < 0 ? -{a[0]} : {a[0]})", lambda x: abs(x), ints_only=True),
    "fmod": Intrinsic(
        2,
        False,
        lambda a, t, f, fname: f"{fname('fmod')}({a[0]}, {a[1]})" if f else f"({a[1]} == 0 ? ({t})0 : {a[0]} % {a[1]})",
        _fmod,
    ),
    "remainder": Intrinsic(
        2,
        False,
        lambda a, t, f, fname: (
            f"fuser_remainder({a[0]}, {a[1]})" if f else f"({a[1]} == 0 ? ({t})0 : fuser_iremainder({a[0]}, {a[1]}))"
        ),
        _remainder,
    ),
    # C's truncating `/`, as nvFuser and torch's CUDA kernels divide integers: a division
    # by zero gives what the GPU's division gives (torch.div(rounding_mode="trunc") on
    # CUDA tensors, e.g. 4294967295 for 5 // 0 in int64), not the 0 that the reference
    # interpreter and this intrinsic's Python evaluation give on the CPU.
    "trunc_div": Intrinsic(2, False, lambda a, t, f, fname: f"({a[0]} / {a[1]})", _trunc_div, ints_only=True),
    "ipow": Intrinsic(2, False, lambda a, t, f, fname: f"fuser_ipow({a[0]}, {a[1]})", _ipow, ints_only=True),
    "shl": Intrinsic(2, False, lambda a, t, f, fname: f"fuser_shl({a[0]}, {a[1]})", _shift(True), ints_only=True),
    "shr": Intrinsic(2, False, lambda a, t, f, fname: f"fuser_shr({a[0]}, {a[1]})", _shift(False), ints_only=True),
    "lshr": Intrinsic(2, False, lambda a, t, f, fname: f"fuser_lshr({a[0]}, {a[1]})", _lshr, ints_only=True),
    "gcd": Intrinsic(2, False, lambda a, t, f, fname: f"fuser_gcd({a[0]}, {a[1]})", np.gcd, ints_only=True),
    "nextafter": Intrinsic(2, False, _fn("nextafter"), np.nextafter, floats_only=True),
}

CUDA_HELPERS = """
// Helpers for kernel.intrinsic (fuser_ir/intrinsics.py).
template <typename T> __device__ __forceinline__ T fuser_remainder(T a, T b) {
  T r = fmod(a, b);
  return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
}
template <typename T> __device__ __forceinline__ T fuser_iremainder(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
template <typename T> __device__ __forceinline__ T fuser_ipow(T a, T b) {
  if (b < 0) return a == 1 ? T(1) : (a == -1 ? ((b % 2 == 0) ? T(1) : T(-1)) : T(0));
  T r = 1;
  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
  return r;
}
template <typename T> __device__ __forceinline__ T fuser_shl(T a, T b) {
  return (b < 0 || b >= T(sizeof(T) * 8)) ? T(0) : T(a << b);
}
template <typename T> __device__ __forceinline__ T fuser_lshr(T a, T b) {
  if (b < 0 || b >= T(sizeof(T) * 8)) return T(0);
  if (sizeof(T) == 8) return T((unsigned long long)(long long)a >> (unsigned long long)b);
  if (sizeof(T) == 4) return T((unsigned int)(int)a >> (unsigned int)b);
  if (sizeof(T) == 2) return T((unsigned short)(short)a >> (unsigned int)b);
  return T((unsigned char)(signed char)a >> (unsigned int)b);
}
template <typename T> __device__ __forceinline__ T fuser_gcd(T a, T b) {
  a = a < 0 ? T(-a) : a;
  b = b < 0 ? T(-b) : b;
  while (b != 0) { T r = T(a % b); a = b; b = r; }
  return a;
}
template <typename T> __device__ __forceinline__ T fuser_shr(T a, T b) {
  return (b < 0 || b >= T(sizeof(T) * 8)) ? (a < 0 ? T(-1) : T(0)) : T(a >> b);
}
"""
