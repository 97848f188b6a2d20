"""The CUDA side of complex64/complex128: ``fuser_complex<T>`` and its functions.

NVRTC has no ``<complex>``; as nvFuser does with its own ``std::complex`` (runtime
``complex_number.cu``), a kernel that holds complex values gets a small struct in its
preamble (``COMPLEX_CUDA``, printed only when a kernel uses a ``complex<...>`` type:
``uses_complex``). Layout and semantics:

* ``fuser_complex<T>`` is ``{T re; T im;}`` aligned to ``2 * sizeof(T)``, the layout of
  torch's complex tensors, and trivially constructible (so that ``Vec<...>`` and the
  reductions' shared workspace hold it);
* ``+ - *`` are the textbook formulas, ``/`` is Smith's scaled division (numpy's and
  c10's algorithm: no overflow for large operands), ``==``/``!=`` compare both parts;
* ``fuser_cabs`` is ``hypot``, ``fuser_cexp``/``fuser_clog``/``fuser_csqrt`` the
  principal branches (as numpy and torch), ``fuser_crsqrt`` is ``1 / sqrt(z)``,
  ``fuser_csin``/``fuser_ccos`` expand into real sin/cos/sinh/cosh, ``fuser_ctanh``
  uses Kahan's ``(beta rho s + i t) / (1 + beta s^2)`` (``t = tan y``,
  ``beta = 1 + t^2``, ``s = sinh x``, ``rho = sqrt(1 + s^2)``: accurate near the poles,
  where ``cosh 2x + cos 2y`` cancels) with the limit ``±1`` for ``|x| > 20``, and ``fuser_ctan(z) = -i tanh(i z)``;
* ``fuser_shfl_xor`` shuffles both parts (the warp and block reductions' combine is
  ``FuserAdd``/``FuserMul``, i.e. complex ``+``/``*``).

The kernel IR uses xDSL's ``complex`` dialect; ``CUDA_COMPLEX_FUNCS`` maps its unary
ops to these functions.
"""

from __future__ import annotations

from xdsl.dialects import complex as cx
from xdsl.dialects.builtin import ComplexType, MemRefType, VectorType
from xdsl.ir import Attribute, Operation

COMPLEX_CUDA = r"""// complex64/complex128 (codegen/complex_preamble.py): {re, im} as in torch's tensors.
template <typename T>
struct __align__(2 * sizeof(T)) fuser_complex {
  T re;
  T im;
  fuser_complex() = default;
  __device__ constexpr fuser_complex(T r, T i) : re(r), im(i) {}
};

template <typename T>
__device__ __forceinline__ fuser_complex<T> operator+(fuser_complex<T> a, fuser_complex<T> b) {
  return fuser_complex<T>(a.re + b.re, a.im + b.im);
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> operator-(fuser_complex<T> a, fuser_complex<T> b) {
  return fuser_complex<T>(a.re - b.re, a.im - b.im);
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> operator-(fuser_complex<T> a) {
  return fuser_complex<T>(-a.re, -a.im);
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> operator*(fuser_complex<T> a, fuser_complex<T> b) {
  return fuser_complex<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// Smith's algorithm (numpy's npy_cdiv, c10::complex's operator/=).
template <typename T>
__device__ __forceinline__ fuser_complex<T> operator/(fuser_complex<T> a, fuser_complex<T> b) {
  T abs_re = fabs(b.re), abs_im = fabs(b.im);
  if (abs_re >= abs_im) {
    if (abs_re == T(0) && abs_im == T(0)) {
      return fuser_complex<T>(a.re / abs_re, a.im / abs_im);
    }
    T rat = b.im / b.re;
    T scl = T(1) / (b.re + b.im * rat);
    return fuser_complex<T>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
  }
  T rat = b.re / b.im;
  T scl = T(1) / (b.im + b.re * rat);
  return fuser_complex<T>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
template <typename T>
__device__ __forceinline__ bool operator==(fuser_complex<T> a, fuser_complex<T> b) {
  return a.re == b.re && a.im == b.im;
}
template <typename T>
__device__ __forceinline__ bool operator!=(fuser_complex<T> a, fuser_complex<T> b) {
  return !(a == b);
}

template <typename T>
__device__ __forceinline__ T fuser_cabs(fuser_complex<T> z) { return hypot(z.re, z.im); }
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_cexp(fuser_complex<T> z) {
  T m = exp(z.re);
  return fuser_complex<T>(m * cos(z.im), m * sin(z.im));
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_clog(fuser_complex<T> z) {
  return fuser_complex<T>(log(hypot(z.re, z.im)), atan2(z.im, z.re));
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_csqrt(fuser_complex<T> z) {
  if (z.re == T(0) && z.im == T(0)) return fuser_complex<T>(T(0), z.im);
  if (isinf(z.im)) return fuser_complex<T>(T(INFINITY), z.im);
  T t = sqrt((fabs(z.re) + hypot(z.re, z.im)) * T(0.5));
  if (z.re >= T(0)) return fuser_complex<T>(t, z.im / (T(2) * t));
  return fuser_complex<T>(fabs(z.im) / (T(2) * t), copysign(t, z.im));
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_crsqrt(fuser_complex<T> z) {
  return fuser_complex<T>(T(1), T(0)) / fuser_csqrt(z);
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_csin(fuser_complex<T> z) {
  return fuser_complex<T>(sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im));
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_ccos(fuser_complex<T> z) {
  return fuser_complex<T>(cos(z.re) * cosh(z.im), -sin(z.re) * sinh(z.im));
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_ctanh(fuser_complex<T> z) {
  if (fabs(z.re) > T(20)) {
    return fuser_complex<T>(copysign(T(1), z.re), T(4) * sin(z.im) * cos(z.im) * exp(T(-2) * fabs(z.re)));
  }
  // Kahan's form (as C99 libraries): tan(y) directly, no cosh(2x) + cos(2y)
  // cancellation near the poles y = pi/2 + k pi
  T t = tan(z.im);
  T beta = T(1) + t * t;
  T s = sinh(z.re);
  T rho = sqrt(T(1) + s * s);
  T d = T(1) + beta * s * s;
  return fuser_complex<T>(beta * rho * s / d, t / d);
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_ctan(fuser_complex<T> z) {
  fuser_complex<T> t = fuser_ctanh(fuser_complex<T>(-z.im, z.re));
  return fuser_complex<T>(t.im, -t.re);
}
template <typename T>
__device__ __forceinline__ fuser_complex<T> fuser_shfl_xor(fuser_complex<T> v, int lane_mask) {
  return fuser_complex<T>(__shfl_xor_sync(0xffffffffu, v.re, lane_mask),
                          __shfl_xor_sync(0xffffffffu, v.im, lane_mask));
}
"""

CUDA_COMPLEX_FUNCS: dict[type[Operation], str] = {
    cx.AbsOp: "fuser_cabs", cx.ExpOp: "fuser_cexp", cx.LogOp: "fuser_clog",
    cx.SqrtOp: "fuser_csqrt", cx.RsqrtOp: "fuser_crsqrt", cx.SinOp: "fuser_csin",
    cx.CosOp: "fuser_ccos", cx.TanOp: "fuser_ctan", cx.TanhOp: "fuser_ctanh",
}  # fmt: skip
"""The ``complex`` dialect's unary functions as calls of the preamble's functions."""

CUDA_COMPLEX_BINARY: dict[type[Operation], str] = {
    cx.AddOp: "+", cx.SubOp: "-", cx.MulOp: "*", cx.DivOp: "/", cx.EqualOp: "==",
    cx.NotEqualOp: "!=",
}  # fmt: skip
"""The ``complex`` dialect's binary ops as the preamble's operators."""


def is_complex_type(t: Attribute) -> bool:
    """Whether ``t`` is, or holds elements of, a ``complex<...>`` type."""
    if isinstance(t, MemRefType | VectorType):
        t = t.element_type
    return isinstance(t, ComplexType)


def uses_complex(op: Operation) -> bool:
    """Whether anything under ``op`` (a kernel or module) has a complex value."""
    for o in op.walk():
        for v in (*o.results, *(a for r in o.regions for b in r.blocks for a in b.args)):
            if is_complex_type(v.type):
                return True
    return False
