"""Elementwise ``fuser`` ops as scalar kernel IR (``arith``, ``math``, ``kernel.intrinsic``).

Every lowering (pointwise, reductions, persistent, transpose) evaluates the
elementwise part of a fusion one element at a time; this module is the one place that
says how each ``fuser`` op becomes scalar kernel IR. It follows
``fuser_ir/reference.py`` exactly:

* a value of dtype ``d`` lives in a register of ``compute_dtype(d)``: f32 for half,
  bfloat16 and float32, f64, i32, i64, i1;
* an op first converts its operands to its *work* dtype (the compute dtype of its
  result dtype, or of the promoted operand dtype for predicates), computes, and — when
  its result dtype is half or bfloat16 — rounds the result (``truncf`` then ``extf``)
  so that intermediates have the precision the reference gives them;
* integer division truncates, ``remainder`` follows the divisor's sign, comparisons
  of floats are ordered (``une`` for ``ne``), max/min propagate NaN.

For example ``%y = fuser.mul %x, %c : (!fuser.tensor<...xbf16>, f64) -> ...xbf16``
with ``%x`` loaded as ``f32`` becomes::

    %c1 = arith.constant 5.000000e-01 : f32      // the f64 scalar, converted to f32
    %m = arith.mulf %x, %c1 : f32
    %r = arith.truncf %m : f32 to bf16            // round to the op's dtype...
    %y = arith.extf %r : bf16 to f32              // ...and keep computing in f32
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from fuser.codegen.kernel_builders import KernelBuilder, constant, same_type_op
from fuser.codegen.lower import complex_ops
from fuser.codegen.lower.common import LoweringError
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import kernel as k
from fuser.ir.dtypes import DType, compute_dtype

i1 = IntegerType(1)


def compute_type(dt: DType) -> Attribute:
    return compute_dtype(dt).to_xdsl()


_FLOAT_UNARY: dict[str, type[Operation]] = {
    "abs": mathd.AbsFOp, "exp": mathd.ExpOp, "exp2": mathd.Exp2Op, "expm1": mathd.ExpM1Op,
    "log": mathd.LogOp, "log2": mathd.Log2Op, "log10": mathd.Log10Op, "log1p": mathd.Log1pOp,
    "sqrt": mathd.SqrtOp, "rsqrt": mathd.RsqrtOp, "sin": mathd.SinOp, "cos": mathd.CosOp,
    "tan": mathd.TanOp, "asin": mathd.AsinOp, "acos": mathd.AcosOp, "atan": mathd.AtanOp,
    "sinh": mathd.SinhOp, "cosh": mathd.CoshOp, "tanh": mathd.TanhOp, "erf": mathd.ErfOp,
    "ceil": mathd.CeilOp, "floor": mathd.FloorOp, "round": mathd.RoundEvenOp, "trunc": mathd.TruncOp,
}  # fmt: skip
_FLOAT_INTRINSIC_UNARY = ("asinh", "acosh", "atanh", "erfc", "erfinv", "lgamma", "sign")
_PREDICATE_UNARY = ("signbit", "isnan", "isinf", "isfinite")
_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
_CMPI = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMPU = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


class ScalarEmitter:
    """Emits scalar IR for elementwise fuser ops through a ``KernelBuilder``."""

    def __init__(self, b: KernelBuilder) -> None:
        self.b = b
        self._dtypes: dict[Operation, tuple[DType, list[DType]]] = {}
        """Per fuser op emitted, its result's and operands' dtypes (a fusion op is
        emitted once per element a thread computes: read once)."""

    # ---- helpers --------------------------------------------------------------------
    def v(self, op: Operation) -> SSAValue:
        return self.b.val(op)

    def const(self, value: complex | float | int | bool, dt: DType) -> SSAValue:
        t = compute_type(dt)
        if dt.is_complex:
            return complex_ops.const(self, value, dt)
        if dt.is_float:
            return self.v(constant(FloatAttr(float(value), t)))  # type: ignore[arg-type]
        return self.v(constant(IntegerAttr(int(bool(value)) if dt.is_bool else int(value), t)))

    def constant(self, op: F.ConstantOp) -> SSAValue:
        """A ``fuser.constant`` in its compute type."""
        return self.const(op.python_value, F.dtype_of(op.result.type))

    def round(self, v: SSAValue, dt: DType) -> SSAValue:
        """Round an f32 value to half/bfloat16/float8 precision and back (no-op
        otherwise)."""
        if dt.is_float and compute_dtype(dt) is not dt:
            return self.v(arith.ExtFOp(self.v(arith.TruncFOp(v, dt.to_xdsl())), f32))
        return v

    def convert(self, v: SSAValue, src: DType, dst: DType) -> SSAValue:
        """torch ``.to(dst)`` of a value held in ``compute_type(src)``."""
        if src == dst:
            return v
        if src.is_complex or dst.is_complex:
            return complex_ops.convert(self, v, src, dst)
        st, dt = compute_type(src), compute_type(dst)
        if dst.is_bool:
            if src.is_float:
                return self.v(arith.CmpfOp(v, self.const(0.0, src), "une"))
            return self.v(arith.CmpiOp(v, self.const(0, src), "ne"))
        if src.is_bool:
            if dst.is_float:
                return self.v(arith.SelectOp(v, self.const(1.0, dst), self.const(0.0, dst)))
            return self.v(arith.ExtUIOp(v, dt))
        if src.is_float and dst.is_float:
            out = v
            if st != dt:
                cls = arith.ExtFOp if dt.bitwidth > st.bitwidth else arith.TruncFOp  # type: ignore[attr-defined]
                out = self.v(cls(v, dt))
            return self.round(out, dst)
        if src.is_float:
            return self.v(arith.FPToSIOp(v, dt))
        if dst.is_float:
            return self.round(self.v(arith.SIToFPOp(v, dt)), dst)
        if st == dt:
            return v
        cls = arith.ExtSIOp if dt.width.data > st.width.data else arith.TruncIOp  # type: ignore[attr-defined]
        return self.v(cls(v, dt))

    def work(self, v: SSAValue, src: DType, dst: DType) -> SSAValue:
        """An operand converted to the type an op of result dtype ``dst`` computes in
        (f32 for half and bfloat16: no rounding to ``dst`` before the op)."""
        return self.convert(v, src, compute_dtype(dst))

    def intrinsic(self, name: str, *args: SSAValue) -> SSAValue:
        return self.v(k.IntrinsicOp(name, list(args)))

    # ---- ops ------------------------------------------------------------------------
    def emit(self, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        """The value of elementwise ``op`` given its operands (in their compute types)."""
        dtypes = self._dtypes.get(op)
        if dtypes is None:
            dtypes = self._dtypes[op] = (F.dtype_of(op.results[0].type), [F.dtype_of(o.type) for o in op.operands])
        out_dt, in_dts = dtypes
        if isinstance(op, F.CastOp):
            return self.convert(args[0], in_dts[0], out_dt)
        if isinstance(op, F.UnaryOp):
            return self._unary(op.name.split(".", 1)[1], args[0], in_dts[0], out_dt)
        if isinstance(op, F.BinaryOp):
            return self._binary(op.name.split(".", 1)[1], args, in_dts, out_dt, op)
        if isinstance(op, F.WhereOp):
            cond = self.convert(args[0], in_dts[0], DType.bool)
            a, b = (self.work(x, d, out_dt) for x, d in zip(args[1:], in_dts[1:], strict=True))
            return self.v(arith.SelectOp(cond, a, b))
        if isinstance(op, F.ClampOp):
            x, lo, hi = (self.work(x, d, out_dt) for x, d in zip(args, in_dts, strict=True))
            mx, mn = self._maxmin(out_dt)
            return self.round(self.v(mn(self.v(mx(x, lo)), hi)), out_dt)
        if isinstance(op, F.LerpOp):
            if not out_dt.is_float:
                raise LoweringError(f"{op.name}: lerp needs floating-point operands, got {out_dt}")
            s, e, w = (self.work(x, d, out_dt) for x, d in zip(args, in_dts, strict=True))
            d = self.v(arith.SubfOp(e, s))
            small = self.v(arith.CmpfOp(self.v(mathd.AbsFOp(w)), self.const(0.5, out_dt), "olt"))
            lo = self.v(arith.AddfOp(s, self.v(arith.MulfOp(w, d))))
            one_minus = self.v(arith.SubfOp(self.const(1.0, out_dt), w))
            hi = self.v(arith.SubfOp(e, self.v(arith.MulfOp(d, one_minus))))
            return self.round(self.v(arith.SelectOp(small, lo, hi)), out_dt)
        if isinstance(op, F.ThresholdOp):
            cmp_dt = F.promoted([op.input.type, op.threshold.type])
            x_c = self.work(args[0], in_dts[0], cmp_dt)
            t_c = self.work(args[1], in_dts[1], cmp_dt)
            gt = self._compare("gt", x_c, t_c, compute_dtype(cmp_dt))
            x = self.work(args[0], in_dts[0], out_dt)
            val = self.work(args[2], in_dts[2], out_dt)
            return self.v(arith.SelectOp(gt, x, val))
        if isinstance(op, F.AddcmulOp):
            x, t1, t2, val = (self.work(x, d, out_dt) for x, d in zip(args, in_dts, strict=True))
            add, mul = (arith.AddfOp, arith.MulfOp) if out_dt.is_float else (arith.AddiOp, arith.MuliOp)
            prod = self.v(mul(self.v(mul(val, t1)), t2))
            return self.round(self.v(add(x, prod)), out_dt)
        raise LoweringError(f"{op.name}: not an elementwise op the kernel lowering knows")

    def _maxmin(self, dt: DType) -> tuple[type[Operation], type[Operation]]:
        if dt.is_float:
            return arith.MaximumfOp, arith.MinimumfOp
        if dt.is_bool:
            return arith.OrIOp, arith.AndIOp
        return arith.MaxSIOp, arith.MinSIOp

    def _compare(self, name: str, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        if dt.is_float:
            return self.v(arith.CmpfOp(a, b, _CMPF[name]))
        return self.v(arith.CmpiOp(a, b, (_CMPU if dt.is_bool else _CMPI)[name]))

    def _unary(self, name: str, x: SSAValue, in_dt: DType, out_dt: DType) -> SSAValue:
        if in_dt.is_complex or name in ("real", "imag"):
            return complex_ops.unary(self, name, x, in_dt, out_dt)
        if name in ("set", "segment_set"):
            return x
        if name in _PREDICATE_UNARY:
            if in_dt.is_bool:
                x = self.convert(x, in_dt, DType.int32)
            return self.intrinsic(name, x)
        if name == "logical_not":
            if in_dt.is_float:
                return self.v(arith.CmpfOp(x, self.const(0.0, in_dt), "oeq"))
            return self.v(arith.CmpiOp(x, self.const(0, in_dt), "eq"))
        x = self.work(x, in_dt, out_dt)
        if out_dt.is_float:
            return self.round(self._float_unary(name, x, out_dt), out_dt)
        return self._int_unary(name, x, out_dt)

    def _float_unary(self, name: str, x: SSAValue, dt: DType) -> SSAValue:
        if name in _FLOAT_UNARY:
            return self.v(same_type_op(_FLOAT_UNARY[name], x))
        if name in _FLOAT_INTRINSIC_UNARY:
            return self.intrinsic(name, x)
        one = self.const(1.0, dt)
        op = same_type_op
        if name == "neg":
            return self.v(op(arith.NegfOp, x))
        if name == "reciprocal":
            return self.v(op(arith.DivfOp, one, x))
        if name in ("sigmoid", "silu"):
            sig = self.v(op(arith.DivfOp, one, self.v(op(arith.AddfOp, one, self.v(op(mathd.ExpOp, self.v(op(arith.NegfOp, x))))))))
            return sig if name == "sigmoid" else self.v(op(arith.MulfOp, x, sig))
        if name == "relu":
            return self.v(op(arith.MaximumfOp, x, self.const(0.0, dt)))
        if name == "frac":
            return self.v(op(arith.SubfOp, x, self.v(op(mathd.TruncOp, x))))
        raise LoweringError(f"fuser.{name}: no float lowering")

    def _int_unary(self, name: str, x: SSAValue, dt: DType) -> SSAValue:
        if name in ("ceil", "floor", "round", "trunc"):
            return x
        if name == "frac":
            return self.const(0, dt)
        if dt.is_bool:
            if name in ("abs", "relu"):
                return x
            if name == "bitwise_not":
                return self.v(arith.XOrIOp(x, self.const(True, dt)))
            raise LoweringError(f"fuser.{name}: no lowering for bool operands")
        if name == "abs":
            return self.intrinsic("iabs", x)
        if name == "neg":
            return self.v(arith.SubiOp(self.const(0, dt), x))
        if name == "relu":
            return self.v(arith.MaxSIOp(x, self.const(0, dt)))
        if name == "sign":
            return self.intrinsic("sign", x)
        if name == "bitwise_not":
            return self.v(arith.XOrIOp(x, self.const(-1, dt)))
        raise LoweringError(f"fuser.{name}: no integer lowering")

    def _binary(self, name: str, args: Sequence[SSAValue], in_dts: list[DType], out_dt: DType, op: Operation) -> SSAValue:
        work_c = F.promoted([o.type for o in op.operands])
        if work_c.is_complex:
            a, b = (self.convert(x, d, work_c) for x, d in zip(args, in_dts, strict=True))
            return complex_ops.binary(self, name, a, b, work_c)
        if name in _CMPF:
            work = compute_dtype(F.promoted([o.type for o in op.operands]))
            a, b = (self.convert(x, d, work) for x, d in zip(args, in_dts, strict=True))
            return self._compare(name, a, b, work)
        if name in ("logical_and", "logical_or"):
            a, b = (self.convert(x, d, DType.bool) for x, d in zip(args, in_dts, strict=True))
            return self.v((arith.AndIOp if name == "logical_and" else arith.OrIOp)(a, b))
        a, b = (self.work(x, d, out_dt) for x, d in zip(args, in_dts, strict=True))
        if out_dt.is_float:
            res = self._float_binary(name, a, b, op)
            return self.round(res, out_dt)
        if out_dt.is_bool:
            table = {"add": arith.OrIOp, "mul": arith.AndIOp, "maximum": arith.OrIOp, "minimum": arith.AndIOp,
                     "bitwise_and": arith.AndIOp, "bitwise_or": arith.OrIOp, "bitwise_xor": arith.XOrIOp}  # fmt: skip
            if name not in table:
                raise LoweringError(f"{op.name}: no lowering for bool operands")
            return self.v(table[name](a, b))
        table_i = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "maximum": arith.MaxSIOp,
                   "minimum": arith.MinSIOp, "bitwise_and": arith.AndIOp, "bitwise_or": arith.OrIOp,
                   "bitwise_xor": arith.XOrIOp}  # fmt: skip
        if name in table_i:
            return self.v(same_type_op(table_i[name], a, b))
        intr = {"div": "trunc_div", "fmod": "fmod", "remainder": "remainder", "pow": "ipow",
                "bitwise_left_shift": "shl", "bitwise_right_shift": "shr", "logical_right_shift": "lshr",
                "gcd": "gcd"}  # fmt: skip
        if name in intr:
            return self.intrinsic(intr[name], a, b)
        raise LoweringError(f"{op.name}: no integer lowering")

    def _float_binary(self, name: str, a: SSAValue, b: SSAValue, op: Operation) -> SSAValue:
        table = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
                 "truediv": arith.DivfOp, "maximum": arith.MaximumfOp, "minimum": arith.MinimumfOp,
                 "pow": mathd.PowFOp, "atan2": mathd.Atan2Op}  # fmt: skip
        if name in table:
            return self.v(same_type_op(table[name], a, b))
        if name in ("fmod", "remainder", "nextafter"):
            return self.intrinsic(name, a, b)
        raise LoweringError(f"{op.name}: no floating-point lowering")


