"""Complex elementwise ops as scalar kernel IR (xDSL's ``complex`` dialect).

A complex64/complex128 value lives in one register of type ``complex<f32>`` /
``complex<f64>`` (its storage type: no widening as for half). The ops the dialect
accepts on complex operands (``fuser.COMPLEX_UNARY_OPS``/``COMPLEX_BINARY_OPS``,
``where``, ``cast``) become ``complex.*`` ops; the CUDA printer prints them with the
``fuser_complex<T>`` struct of its complex preamble (``fuser.codegen.cuda_printer``) and the
kernel interpreter runs them with numpy's complex scalars. Semantics follow the
reference interpreter (numpy, as torch): a cast to a real type drops the imaginary
part, a cast to bool tests both parts, ``abs``/``real``/``imag`` are real, ``eq``/``ne``
compare both parts. For example ``fuser.rsqrt`` of a ``complex<f32>`` tensor element::

    %v = memref.load %x[%i] : memref<?xcomplex<f32>>
    %r = complex.rsqrt %v : complex<f32>
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.dialects import complex as cx
from xdsl.dialects.builtin import ArrayAttr, ComplexType, FloatAttr
from xdsl.ir import Operation, SSAValue

from fuser.codegen.lower.common import LoweringError
from fuser.ir.dtypes import DType

if TYPE_CHECKING:
    from fuser.codegen.kernel_builders import KernelBuilder
    from fuser.codegen.lower.scalar import ScalarEmitter

_UNARY: dict[str, type[Operation]] = {
    "neg": cx.NegOp, "exp": cx.ExpOp, "log": cx.LogOp, "sqrt": cx.SqrtOp, "rsqrt": cx.RsqrtOp,
    "sin": cx.SinOp, "cos": cx.CosOp, "tan": cx.TanOp, "tanh": cx.TanhOp,
}  # fmt: skip
_BINARY: dict[str, type[Operation]] = {
    "add": cx.AddOp, "sub": cx.SubOp, "mul": cx.MulOp, "div": cx.DivOp, "truediv": cx.DivOp,
}  # fmt: skip


def _error(msg: str) -> Exception:
    return LoweringError(msg)


def complex_type(dt: DType) -> ComplexType:
    """The register type of a complex dtype: ``complex<f32>`` or ``complex<f64>``."""
    return ComplexType(dt.real_dtype.to_xdsl())  # type: ignore[arg-type]


def const(em: ScalarEmitter, value: complex | float | int | bool, dt: DType) -> SSAValue:
    """A complex constant of dtype ``dt``."""
    c = complex(value)
    part = dt.real_dtype.to_xdsl()
    attr = ArrayAttr([FloatAttr(c.real, part), FloatAttr(c.imag, part)])  # type: ignore[arg-type]
    return em.v(cx.ConstantOp(attr, complex_type(dt)))


def parts(em: ScalarEmitter, v: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The real and imaginary parts of a complex register."""
    return em.v(cx.ReOp(v)), em.v(cx.ImOp(v))


def convert(em: ScalarEmitter, v: SSAValue, src: DType, dst: DType) -> SSAValue:
    """torch ``.to(dst)`` where ``src`` or ``dst`` is complex (``v`` in ``src``'s compute
    type)."""
    if src == dst:
        return v
    if src.is_complex:
        re, im = parts(em, v)
        part = src.real_dtype
        if dst.is_complex:
            dp = dst.real_dtype
            return em.v(
                cx.CreateOp(em.convert(re, part, dp), em.convert(im, part, dp), complex_type(dst))
            )
        if dst.is_bool:
            zero = em.const(0.0, part)
            nz_re = em.v(arith.CmpfOp(re, zero, "une"))
            nz_im = em.v(arith.CmpfOp(im, zero, "une"))
            return em.v(arith.OrIOp(nz_re, nz_im))
        return em.convert(re, part, dst)  # the imaginary part is dropped, as in torch
    part = dst.real_dtype
    re = em.convert(v, src, part)
    return em.v(cx.CreateOp(re, em.const(0.0, part), complex_type(dst)))


def unary(em: ScalarEmitter, name: str, x: SSAValue, in_dt: DType, out_dt: DType) -> SSAValue:
    """Unary op ``name`` of a complex ``x`` (``real`` of a real ``x`` is ``x``)."""
    if not in_dt.is_complex:
        if name == "real":
            return x
        raise _error(f"fuser.{name}: needs a complex operand, got {in_dt}")
    if name in ("set", "segment_set"):
        return x
    if name == "real":
        return em.v(cx.ReOp(x))
    if name == "imag":
        return em.v(cx.ImOp(x))
    if name == "abs":
        return em.v(cx.AbsOp(x))
    if name in ("isnan", "isinf", "isfinite"):
        re, im = parts(em, x)
        a, b = em.intrinsic(name, re), em.intrinsic(name, im)
        # isfinite needs both parts finite; isnan/isinf hold when either part is.
        return em.v((arith.AndIOp if name == "isfinite" else arith.OrIOp)(a, b))
    if name == "reciprocal":
        return em.v(cx.DivOp(const(em, 1.0, in_dt), x))
    if name in _UNARY:
        return em.v(_UNARY[name](x))  # type: ignore[call-arg]
    raise _error(f"fuser.{name}: no lowering for complex operands ({in_dt})")


def combine(b: KernelBuilder, kind: str, acc: SSAValue, x: SSAValue) -> SSAValue:
    """A reduction's combine of two complex registers: ``sum``/``add`` or ``prod``/``mul``
    (complex values have no max/min; the dialect rejects those reductions)."""
    cls = {"sum": cx.AddOp, "add": cx.AddOp, "prod": cx.MulOp, "mul": cx.MulOp}.get(kind)
    if cls is None:
        raise _error(f"a complex {kind} reduction has no lowering (complex values have no order)")
    return b.val(cls(acc, x))


def binary(em: ScalarEmitter, name: str, a: SSAValue, b: SSAValue, work: DType) -> SSAValue:
    """Binary op ``name`` of two values already converted to the complex ``work`` type."""
    if name == "eq":
        return em.v(cx.EqualOp(a, b))
    if name == "ne":
        return em.v(cx.NotEqualOp(a, b))
    if name in _BINARY:
        return em.v(_BINARY[name](a, b))  # type: ignore[call-arg]
    raise _error(f"fuser.{name}: no lowering for complex operands ({work})")
