"""The reference interpreter: what every ``fuser`` op means, in numpy.

This module is the single source of truth for the semantics of the tensor dialect.
Every pass is checked against it (differential tests run a fusion before and after a
pass on random inputs) and so is every generated kernel.

Conventions, matching torch and nvFuser:

* half and bfloat16 (``ml_dtypes.bfloat16``) compute in float32 and round the result
  of each op to the op's dtype; reductions of half/bfloat16 accumulate in float32;
  ``var``/``var_mean``/``welford`` accumulate in float64.
* elementwise operands are promoted to the op's result dtype (``fuser.ir.dtypes``);
  comparisons compare in the promoted dtype of their operands.
* ``div`` truncates toward zero on integers, ``remainder`` takes the sign of the
  divisor (Python), ``fmod`` the sign of the dividend (C).
* view-like ops (``broadcast``, ``expand``, ``reshape`` when possible, ``permute``,
  ``squeeze``, ``slice``) return numpy views, never copies; ``set`` copies.

``run_fusion(fusion, inputs)`` validates the inputs, evaluates the body, writes
aliased outputs (``alias_inputs``) into their input arrays in place and returns the
other outputs. Errors (bad inputs, run-time shape mismatches between symbolic
extents) are ``ValueError``s that name the input or the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.ir import Operation, SSAValue

from fuser.ir import fp8
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType, compute_dtype
from fuser.ir.shapes import DYN, fmt_shape, run_time_extent_mismatch

Value = Any  # np.ndarray for tensors, a numpy scalar for scalars


class InterpreterError(ValueError):
    """A run-time error while evaluating a fusion; the message names the op."""


# =====================================================================================
# Helpers
# =====================================================================================


def _np(dtype: DType) -> np.dtype:
    return dtype.to_numpy()


def _as(value: Value, dtype: DType) -> np.ndarray:
    """``value`` as an array of ``dtype`` (no copy when it already is); float8 rounds as
    torch does (``fuser.ir.fp8``)."""
    return fp8.astype(value, dtype)


def _result_dtype(op: Operation) -> DType:
    return F.dtype_of(op.results[0].type)


def _finish(op: Operation, out: np.ndarray | np.generic) -> Value:
    """Round to the op's result dtype; scalars come back as numpy scalars."""
    dt = _result_dtype(op)
    with _errstate():  # rounding a large value to a narrow float gives inf, as in torch
        arr = fp8.astype(out, dt)
    if not isinstance(op.results[0].type, F.TensorType):
        return arr.reshape(()).item() if dt is DType.bool else _np(dt).type(arr.reshape(()))
    return arr


def _errstate() -> Any:
    return np.errstate(all="ignore")


def _vectorize(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    vec = np.vectorize(fn, otypes=[np.float64])

    def apply(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return vec(x) if x.size else x.copy()

    return apply


def _safe(fn: Callable[[float], float]) -> Callable[[float], float]:
    def wrapped(x: float) -> float:
        try:
            return fn(x)
        except (ValueError, OverflowError):
            if math.isnan(x):
                return math.nan
            if fn is math.lgamma:
                return math.inf
            return math.nan

    return wrapped


_erf = _vectorize(_safe(math.erf))
_erfc = _vectorize(_safe(math.erfc))
_lgamma = _vectorize(_safe(math.lgamma))


def _erfinv(x: np.ndarray) -> np.ndarray:
    """Inverse error function: Giles' approximation refined by Newton steps on erf."""
    x = np.asarray(x, dtype=np.float64)
    with _errstate():
        w = -np.log((1.0 - x) * (1.0 + x))
        small = w < 5.0
        ws = w - 2.5
        p1 = 2.81022636e-08
        for c in (
            3.43273939e-07,
            -3.5233877e-06,
            -4.39150654e-06,
            0.00021858087,
            -0.00125372503,
            -0.00417768164,
            0.246640727,
            1.50140941,
        ):
            p1 = c + p1 * ws
        wb = np.sqrt(np.maximum(w, 0)) - 3.0
        p2 = -0.000200214257
        for c in (
            0.000100950558,
            0.00134934322,
            -0.00367342844,
            0.00573950773,
            -0.0076224613,
            0.00943887047,
            1.00167406,
            2.83297682,
        ):
            p2 = c + p2 * wb
        y = np.where(small, p1, p2) * x
        for _ in range(3):
            err = _erf(y) - x
            y = y - err / (2.0 / math.sqrt(math.pi) * np.exp(-y * y))
        y = np.where(x == 1.0, np.inf, np.where(x == -1.0, -np.inf, y))
        y = np.where(np.abs(x) > 1.0, np.nan, y)
    return y


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        with _errstate():
            safe_b = np.where(b == 0, 1, b)
            q = np.abs(a) // np.abs(safe_b)
            q = np.where((a < 0) != (safe_b < 0), -q, q)
            return np.where(b == 0, 0, q).astype(a.dtype)
    return a / b


def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        with _errstate():
            neg = b < 0
            safe = np.power(a, np.where(neg, 0, b))
            # torch: integer ** negative is 1 for |a| == 1 patterns, 0 otherwise.
            inv = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
            return np.where(neg, inv, safe).astype(a.dtype)
    return np.power(a, b)


def _bool_aware(int_fn: Callable[..., np.ndarray], bool_fn: Callable[..., np.ndarray]):
    def apply(*xs: np.ndarray) -> np.ndarray:
        if xs[0].dtype == np.bool_:
            return bool_fn(*xs)
        return int_fn(*xs)

    return apply


# Unary: applied to the operand converted to its compute dtype.
_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": np.abs,
    "real": np.real,
    "imag": np.imag,
    "neg": np.negative,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "reciprocal": lambda x: 1.0 / x,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    "erfc": _erfc,
    "erfinv": _erfinv,
    "lgamma": _lgamma,
    "silu": lambda x: x * _sigmoid(x),
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "ceil": lambda x: np.ceil(x) if x.dtype.kind == "f" else x.copy(),
    "floor": lambda x: np.floor(x) if x.dtype.kind == "f" else x.copy(),
    "round": lambda x: np.round(x) if x.dtype.kind == "f" else x.copy(),
    "trunc": lambda x: np.trunc(x) if x.dtype.kind == "f" else x.copy(),
    "frac": lambda x: x - np.trunc(x) if x.dtype.kind == "f" else np.zeros_like(x),
    "sign": np.sign,
    "signbit": np.signbit,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
    "logical_not": lambda x: np.logical_not(x.astype(np.bool_)),
    "bitwise_not": _bool_aware(np.invert, np.logical_not),
    "set": lambda x: np.array(x, copy=True, order="C"),
    "segment_set": lambda x: np.array(x, copy=True, order="C"),
}

_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _trunc_div,
    "truediv": np.true_divide,
    "fmod": np.fmod,
    "remainder": np.remainder,
    "pow": _int_pow,
    "atan2": np.arctan2,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_and": lambda a, b: np.logical_and(a.astype(np.bool_), b.astype(np.bool_)),
    "logical_or": lambda a, b: np.logical_or(a.astype(np.bool_), b.astype(np.bool_)),
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "bitwise_left_shift": np.left_shift,
    "bitwise_right_shift": np.right_shift,
    "logical_right_shift": lambda a, b: _logical_right_shift(a, b),
    "gcd": np.gcd,
    "nextafter": np.nextafter,
}


def _logical_right_shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x >> y`` on x's bits read as unsigned; 0 where ``y`` is outside [0, width)."""
    if x.dtype.kind == "b":
        return np.where(y == 0, x, False)
    bits = x.dtype.itemsize * 8
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    shifted = np.right_shift(x.view(unsigned), np.clip(y, 0, bits - 1).astype(unsigned))
    return np.where((y < 0) | (y >= bits), 0, shifted.view(x.dtype)).astype(x.dtype)

_PREDICATES = {"eq", "ne", "lt", "le", "gt", "ge", "signbit", "isnan", "isinf", "isfinite"}


def _operand_dtypes(op: Operation) -> list[DType]:
    return [F.dtype_of(v.type) for v in op.operands]


def _promoted_operands(op: Operation) -> DType:
    return F.promoted([v.type for v in op.operands])


# =====================================================================================
# Op evaluation
# =====================================================================================


def _eval_unary(op: F.UnaryOp, x: Value) -> Value:
    name = op.name.split(".", 1)[1]
    out_dt = _result_dtype(op)
    in_dt = F.dtype_of(op.input.type)
    if in_dt.is_complex:
        work = in_dt  # abs, real, imag and the predicates of a complex value are real
    elif name in _PREDICATES:
        work = compute_dtype(in_dt)
    elif name in ("logical_not",):
        work = in_dt
    else:
        work = compute_dtype(out_dt)
    arr = _as(x, work)
    if name in ("isnan", "isinf", "signbit") and arr.dtype.kind in "biu":
        res = np.zeros(arr.shape, np.bool_) if name != "signbit" else arr < 0
    elif name == "isfinite" and arr.dtype.kind in "biu":
        res = np.ones(arr.shape, np.bool_)
    else:
        with _errstate():
            res = _UNARY[name](arr)
    return _finish(op, res)


def _eval_binary(op: F.BinaryOp, a: Value, b: Value) -> Value:
    name = op.name.split(".", 1)[1]
    if name in _PREDICATES or name in ("logical_and", "logical_or"):
        work = compute_dtype(_promoted_operands(op))
    else:
        work = compute_dtype(_result_dtype(op))
    x, y = _as(a, work), _as(b, work)
    if name in ("bitwise_left_shift", "bitwise_right_shift") and x.dtype.kind in "iu":
        bits = x.dtype.itemsize * 8
        # C++/torch: shifting by >= the width gives 0 (or -1 for negative >>).
        y_clamped = np.clip(y, 0, bits - 1)
        with _errstate():
            res = _BINARY[name](x, y_clamped)
        big = y >= bits
        if name == "bitwise_left_shift":
            res = np.where(big, 0, res)
        else:
            res = np.where(big, np.where(x < 0, -1, 0), res)
    else:
        with _errstate():
            res = _BINARY[name](x, y)
    return _finish(op, res)


def _reduce_dims(op: Operation, x: np.ndarray) -> tuple[int, ...]:
    dims = [d % x.ndim for d in F._ints(op.dims)] if x.ndim else []
    return tuple(sorted(set(dims)))


def _eval_reduction(op: F.ReductionOp, x: np.ndarray) -> Value:
    name = op.name.split(".", 1)[1]
    out_dt = _result_dtype(op)
    axes = _reduce_dims(op, x)
    keep = op.is_keepdim
    if name in ("sum", "prod"):
        acc = compute_dtype(out_dt)
        arr = _as(x, acc)
        fn = np.sum if name == "sum" else np.prod
        with _errstate():
            res = fn(arr, axis=axes, keepdims=keep)
    else:
        arr = _as(x, compute_dtype(F.dtype_of(op.input.type)))
        if any(x.shape[a] == 0 for a in axes):
            raise InterpreterError(f"{op.name}: {name} over an empty axis of shape {list(x.shape)}")
        fn = np.max if name == "max" else np.min
        res = fn(arr, axis=axes, keepdims=keep) if axes else arr.copy()
    return _finish(op, res)


def _moments(
    x: np.ndarray, axes: tuple[int, ...], keep: bool
) -> tuple[np.ndarray, np.ndarray, int]:
    """Mean and sum of squared deviations over ``axes`` in float64."""
    arr = _as(x, DType.float64)
    n = math.prod(x.shape[a] for a in axes)
    with _errstate():
        mean = np.sum(arr, axis=axes, keepdims=True) / n
        m2 = np.sum((arr - mean) ** 2, axis=axes, keepdims=True)
    if not keep:
        mean = np.squeeze(mean, axis=axes)
        m2 = np.squeeze(m2, axis=axes)
    return mean, m2, n


def _eval_var(op: F.VarOp | F.VarMeanOp, x: np.ndarray) -> list[Value]:
    axes = _reduce_dims(op, x)
    mean, m2, n = _moments(x, axes, F._bool(op.keepdim))
    # torch: sum((x - mean)^2) / max(0, N - correction)
    denom = max(n - float(op.correction.value.data), 0.0)
    with _errstate():
        var = m2 / denom
    dt = F.dtype_of(op.results[0].type)
    outs = [_as(var, dt)]
    if isinstance(op, F.VarMeanOp):
        outs.append(_as(mean, dt))
    return outs


def _eval_welford(op: F.WelfordOp, x: np.ndarray) -> list[Value]:
    axes = _reduce_dims(op, x)
    mean, m2, n = _moments(x, axes, False)
    dt = F.dtype_of(op.avg.type)
    count = np.full(np.shape(mean), n, dtype=np.int64)
    return [_as(mean, dt), _as(m2, dt), count]


def _mixed_shape(op: Operation, static: Sequence[int], sizes: Sequence[Value]) -> list[int]:
    it = iter(int(s) for s in sizes)
    out = [next(it) if d == DYN else d for d in static]
    if any(d < 0 for d in out):
        raise InterpreterError(f"{op.name}: negative size in {out}")
    return out


def _eval_random(op: F._RandomOp, args: Sequence[Value]) -> np.ndarray:
    """``fuser.uniform``/``fuser.normal``: Philox4x32-10 values (``fuser_ir/philox.py``)."""
    from fuser.ir.philox import random_values

    shape = _mixed_shape(op, F._ints(op.shape), args[4:])
    n = math.prod(shape)
    flat = random_values(op.DISTRIBUTION, _result_dtype(op), int(args[2]), int(args[3]), n, args[0], args[1])
    return flat.reshape(shape)


def _check_result_shape(op: Operation, value: Value, index: int = 0) -> None:
    t = op.results[index].type
    if isinstance(t, F.TensorType):
        got = np.shape(value)
        want = t.get_shape()
        if len(got) != len(want) or any(w not in (DYN, g) for w, g in zip(want, got, strict=True)):
            raise InterpreterError(
                f"{op.name}: result #{index} has run-time shape {list(got)}, but its type "
                f"says {fmt_shape(want)}"
            )


def _pad(x: np.ndarray, widths: Sequence[int], value: Value, dtype: DType) -> np.ndarray:
    pads = F.PadOp.per_axis(x.ndim, widths)
    crop = tuple(slice(max(-a, 0), x.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(pads))
    x = x[crop]
    grow = [(max(a, 0), max(b, 0)) for a, b in pads]
    return np.pad(_as(x, dtype), grow, mode="constant", constant_values=_as(value, dtype))


def _check_elementwise_extents(op: F.ElementwiseOp, args: Sequence[Value]) -> None:
    """Operands of an elementwise op agree on every run-time extent, except on axes
    their type says broadcast (``shapes.run_time_extent_mismatch``): numpy's
    broadcasting would otherwise compute something no kernel does."""
    declared = [v.type.get_shape() if isinstance(v.type, F.TensorType) else None for v in op.operands]
    actual = [np.shape(a) if d is not None else None for d, a in zip(declared, args, strict=True)]
    problem = run_time_extent_mismatch(op.name, declared, actual)
    if problem is not None:
        raise InterpreterError(problem)


def evaluate_op(op: Operation, args: list[Value]) -> list[Value]:
    """Evaluate one ``fuser`` op on concrete arguments (arrays and numpy scalars)."""
    if isinstance(op, F.ElementwiseOp):
        _check_elementwise_extents(op, args)
    try:
        results = _evaluate(op, args)
    except InterpreterError:
        raise
    except (ValueError, IndexError, TypeError) as e:
        raise InterpreterError(f"{op.name}: {e}") from e
    for i, r in enumerate(results):
        _check_result_shape(op, r, i)
    return results


def _evaluate(op: Operation, args: list[Value]) -> list[Value]:
    if isinstance(op, F.ConstantOp):
        return [_finish(op, np.asarray(op.python_value))]
    if isinstance(op, F.ReshardOp):
        if op.is_local:
            raise InterpreterError(
                f"fuser.reshard: a local {op.kind} moves data between devices; only a host "
                "program with a communicator runs it (lower-communications)"
            )
        return [np.array(args[0], copy=True)]  # one device: every sharding holds it all
    if isinstance(op, F.UnaryOp):
        return [_eval_unary(op, args[0])]
    if isinstance(op, F.BinaryOp):
        return [_eval_binary(op, args[0], args[1])]
    if isinstance(op, F.CastOp):
        src = np.asarray(args[0])
        dt = _result_dtype(op)
        if dt.is_bool:
            return [_finish(op, src != 0)]
        if src.dtype.kind == "c" and not dt.is_complex:
            src = src.real  # torch: a cast to a real type drops the imaginary part
        if dt.is_integer and src.dtype.kind == "f":
            with _errstate():
                src = np.trunc(src.astype(np.float64))
        with _errstate():
            return [_finish(op, fp8.astype(src, dt))]
    if isinstance(op, F.WhereOp):
        work = compute_dtype(_result_dtype(op))
        cond = np.asarray(args[0]).astype(np.bool_)
        return [_finish(op, np.where(cond, _as(args[1], work), _as(args[2], work)))]
    if isinstance(op, F.ClampOp):
        work = compute_dtype(_result_dtype(op))
        x, lo, hi = (_as(a, work) for a in args)
        with _errstate():
            return [_finish(op, np.minimum(np.maximum(x, lo), hi))]
    if isinstance(op, F.LerpOp):
        work = compute_dtype(_result_dtype(op))
        s, e, w = (_as(a, work) for a in args)
        with _errstate():
            d = e - s
            return [_finish(op, np.where(np.abs(w) < 0.5, s + w * d, e - d * (1 - w)))]
    if isinstance(op, F.ThresholdOp):
        work = compute_dtype(_result_dtype(op))
        x = _as(args[0], work)
        t = _as(args[1], compute_dtype(F.promoted([op.input.type, op.threshold.type])))
        with _errstate():
            return [_finish(op, np.where(x > t, x, _as(args[2], work)))]
    if isinstance(op, F.AddcmulOp):
        work = compute_dtype(_result_dtype(op))
        x, t1, t2, v = (_as(a, work) for a in args)
        with _errstate():
            return [_finish(op, x + v * t1 * t2)]
    if isinstance(op, F.ReductionOp):
        return [_eval_reduction(op, np.asarray(args[0]))]
    if isinstance(op, F.VarOp | F.VarMeanOp):
        return _eval_var(op, np.asarray(args[0]))
    if isinstance(op, F.WelfordOp):
        return _eval_welford(op, np.asarray(args[0]))
    if isinstance(op, F.FullOp):
        shape = _mixed_shape(op, F._ints(op.shape), args[1:])
        return [np.full(shape, _as(args[0], _result_dtype(op)), dtype=_np(_result_dtype(op)))]
    if isinstance(op, F.UniformOp | F.NormalOp):
        return [_eval_random(op, args)]
    if isinstance(op, F.IotaOp):
        n, start, step = args
        dt = _result_dtype(op)
        if int(n) < 0:
            raise InterpreterError(f"{op.name}: negative length {int(n)}")
        work = np.float64 if dt.is_float else np.int64
        return [
            (
                np.asarray(start, work) + np.asarray(step, work) * np.arange(int(n), dtype=work)
            ).astype(_np(dt))
        ]
    if isinstance(op, F.SizeOp):
        x = np.asarray(args[0])
        return [np.int64(x.shape[op.dim.value.data % max(x.ndim, 1)])]
    if isinstance(op, F.BroadcastOp):
        x = np.asarray(args[0])
        return [
            x.reshape(
                [
                    1 if f else s
                    for f, s in zip(
                        op.get_flags(), _iter_with(x.shape, op.get_flags()), strict=True
                    )
                ]
            )
        ]
    if isinstance(op, F.BroadcastInDimOp):
        x = np.asarray(args[0])
        shape = _mixed_shape(op, F._ints(op.shape), args[1:])
        bdims = F._ints(op.broadcast_dims)
        staged = [1] * len(shape)
        for i, d in enumerate(bdims):
            staged[d] = x.shape[i]
        return [np.broadcast_to(x.reshape(staged), shape)]
    if isinstance(op, F.ExpandOp):
        x = np.asarray(args[0])
        shape = _mixed_shape(op, F._ints(op.shape), args[1:])
        return [np.broadcast_to(x, shape)]
    if isinstance(op, F.ReshapeOp):
        x = np.asarray(args[0])
        shape = _mixed_shape(op, F._ints(op.new_shape), args[1:])
        if math.prod(shape) != x.size:
            raise InterpreterError(
                f"{op.name}: cannot reshape {list(x.shape)} ({x.size} elements) to {shape}"
            )
        return [x.reshape(shape)]
    if isinstance(op, F.PermuteOp):
        return [np.transpose(np.asarray(args[0]), op.get_dims())]
    if isinstance(op, F.SqueezeOp):
        x = np.asarray(args[0])
        dims = op.get_dims()
        for d in dims:
            if x.shape[d] != 1:
                raise InterpreterError(
                    f"{op.name}: axis {d} has extent {x.shape[d]}, cannot squeeze"
                )
        return [x.reshape([s for i, s in enumerate(x.shape) if i not in dims])]
    if isinstance(op, F.SliceOp):
        x = np.asarray(args[0])
        idx = tuple(
            slice(a, b, s)
            for a, b, s in zip(
                F._ints(op.starts), F._ints(op.ends), F._ints(op.strides), strict=True
            )
        )
        return [x[idx]]
    if isinstance(op, F.PadOp):
        dt = _result_dtype(op)
        return [_pad(np.asarray(args[0]), F._ints(op.widths), args[1], dt)]
    if isinstance(op, F.DynamicSliceOp):
        x = np.asarray(args[0])
        n = len(op.starts)
        bounds = [
            F.DynamicSliceOp.normalize(x.shape[i], int(args[1 + i]), int(args[1 + n + i]))
            for i in range(x.ndim)
        ]
        return [x[tuple(slice(lo, hi) for lo, hi in bounds)]]
    if isinstance(op, F.DynamicPadOp):
        x = np.asarray(args[0])
        widths = [int(w) for w in args[2:]]
        for i, (a, b) in enumerate(F.PadOp.per_axis(x.ndim, widths)):
            if x.shape[i] + a + b < 0:
                raise InterpreterError(
                    f"{op.name}: pad of axis {i} (extent {x.shape[i]}) by ({a}, {b}) is negative"
                )
        return [_pad(x, widths, args[1], _result_dtype(op))]
    if isinstance(op, F.CatOp):
        dt = _result_dtype(op)
        d = op.dim.value.data
        arrs = [_as(a, dt) for a in args]
        return [np.concatenate(arrs, axis=d % arrs[0].ndim)]
    if isinstance(op, F.IndexSelectOp | F.SelectOp | F.GatherOp | F.TakeAlongAxisOp):
        return [_eval_indexing(op, np.asarray(args[0]), args[1])]
    if isinstance(op, F.ScatterOp):
        return [_finish(op, _eval_scatter(op, np.asarray(args[0]), args[1], args[2]))]
    if isinstance(op, F.CumsumOp):
        work = _as(np.asarray(args[0]), compute_dtype(_result_dtype(op)))
        with _errstate():  # sequential sums in the compute type; integers wrap
            return [_finish(op, np.cumsum(work, axis=op.get_dim(), dtype=work.dtype))]
    if isinstance(op, F.MatmulOp | F.LinearOp):
        return [_finish(op, _eval_matmul(op, args))]
    raise InterpreterError(f"{op.name}: the reference interpreter has no semantics for this op")


def _iter_with(shape: Sequence[int], flags: Sequence[bool]) -> list[int]:
    it = iter(shape)
    return [1 if f else next(it) for f in flags]


def _check_indices(op: Operation, idx: np.ndarray, extent: int) -> np.ndarray:
    """The indices of ``op``'s index operand as offsets in ``[0, extent)``. As in torch,
    ``select`` and ``take_along_axis`` count negative indices from the end;
    ``index_select`` and ``gather`` raise for them."""
    wraps = isinstance(op, F.SelectOp | F.TakeAlongAxisOp)
    low = -extent if wraps else 0
    if idx.size and (idx.min() < low or idx.max() >= extent):
        bad = int(idx.min()) if idx.min() < low else int(idx.max())
        raise InterpreterError(
            f"{op.name}: the index operand holds {bad}, out of range [{low}, {extent}) for "
            f"axis {op.get_dim()} of the input (extent {extent})"
        )
    return np.where(idx < 0, idx + extent, idx)


def _eval_indexing(op: F._IndexingOp, x: np.ndarray, index: Value) -> np.ndarray:
    d = op.get_dim()
    idx = _check_indices(op, np.asarray(index).astype(np.int64), x.shape[d])
    if isinstance(op, F.IndexSelectOp):
        return np.take(x, idx.reshape(-1), axis=d)  # a 0-D index keeps the axis
    if isinstance(op, F.SelectOp):
        return np.take(x, int(idx), axis=d)
    if isinstance(op, F.GatherOp):
        for a in range(x.ndim):
            if a != d and idx.shape[a] > x.shape[a]:
                raise InterpreterError(
                    f"{op.name}: index extent {idx.shape[a]} exceeds input extent {x.shape[a]} on axis {a}"
                )
        sub = x[tuple(slice(0, idx.shape[a]) if a != d else slice(None) for a in range(x.ndim))]
        return np.take_along_axis(sub, idx, axis=d)
    return np.take_along_axis(x, idx, axis=d)


def _eval_scatter(op: F.ScatterOp, x: np.ndarray, index: Value, src: Value) -> np.ndarray:
    """torch.scatter: a copy of ``x`` with ``out[p with axis dim = index[p]] = src[p]``
    for every position ``p`` of ``index``; positions later along ``dim`` win where
    several name the same entry (the GPU kernel's order)."""
    d = op.get_dim()
    dt = _result_dtype(op)
    idx = np.asarray(index).astype(np.int64)
    for a in range(x.ndim):
        if a != d and idx.shape[a] > x.shape[a]:
            raise InterpreterError(
                f"{op.name}: index extent {idx.shape[a]} exceeds input extent {x.shape[a]} on axis {a}"
            )
    if isinstance(op.src.type, F.TensorType):
        s = np.asarray(src)
        for a in range(x.ndim):
            if idx.shape[a] > s.shape[a]:
                raise InterpreterError(
                    f"{op.name}: index extent {idx.shape[a]} exceeds src extent {s.shape[a]} on axis {a}"
                )
        vals = _as(s[tuple(slice(0, n) for n in idx.shape)], dt)
    else:
        vals = np.broadcast_to(_as(src, dt), idx.shape)
    ext = x.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= ext):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise InterpreterError(
            f"{op.name}: the index operand holds {bad}, out of range [0, {ext}) for axis {d} "
            f"of the input (extent {ext})"
        )
    out = np.array(_as(x, dt), copy=True)
    rest = [n for a, n in enumerate(idx.shape) if a != d]
    grids = list(np.indices(rest, sparse=True)) if rest else []
    for k in range(idx.shape[d]):  # in order along dim: a later position overwrites
        at = (slice(None),) * d + (k,)
        target = grids[:d] + [idx[at]] + grids[d:]
        out[tuple(target)] = vals[at]
    return out


# =====================================================================================
# Fusions
# =====================================================================================


def _is_semantic(op: Operation) -> bool:
    """Iter-domain schedule ops and other annotations do not compute values."""
    return op.name.startswith("fuser.") and not isinstance(op, F.OutputOp)


def check_inputs(fusion: F.FusionOp, inputs: Sequence[Value]) -> list[Value]:
    """Validate ``inputs`` against the fusion's input types; return them normalized.

    Raises ValueError naming the input on a wrong count, rank, dtype or static size.
    """
    types = fusion.function_type.inputs.data
    if len(inputs) != len(types):
        raise ValueError(
            f"fusion @{fusion.sym_name.data} takes {len(types)} inputs, got {len(inputs)}"
        )
    out: list[Value] = []
    for i, (v, t) in enumerate(zip(inputs, types, strict=True)):
        where = f"input #{i} of @{fusion.sym_name.data}"
        if isinstance(t, F.TensorType):
            if not isinstance(v, np.ndarray):
                raise ValueError(f"{where}: expected a numpy array, got {type(v).__name__}")
            want = t.dtype.to_numpy()
            if v.dtype != want:
                raise ValueError(f"{where}: expected dtype {t.dtype}, got {v.dtype}")
            if v.ndim != t.rank:
                raise ValueError(f"{where}: expected rank {t.rank}, got shape {list(v.shape)}")
            for a, (e, g) in enumerate(zip(t.get_shape(), v.shape, strict=True)):
                if e != DYN and e != g:
                    raise ValueError(
                        f"{where}: axis {a} must have extent {e}, got shape {list(v.shape)}"
                    )
            out.append(v)
        else:
            dt = DType.from_xdsl(t)
            if isinstance(v, np.ndarray) and v.ndim != 0:
                raise ValueError(f"{where}: expected a scalar of type {dt}, got an array")
            if not isinstance(v, int | float | bool | np.generic | np.ndarray) and not (
                dt.is_complex and isinstance(v, complex)
            ):
                raise ValueError(f"{where}: expected a scalar of type {dt}, got {type(v).__name__}")
            if isinstance(v, complex | np.complexfloating) and not dt.is_complex:
                raise ValueError(f"{where}: expected a scalar of type {dt}, got complex {v!r}")
            if dt.is_integer and isinstance(v, float) and not float(v).is_integer():
                raise ValueError(f"{where}: expected an integer scalar, got {v}")
            out.append(dt.to_numpy().type(v) if not dt.is_bool else bool(v))
    return out


def _materialize_output(value: Value, t: Any, inputs: Sequence[Value]) -> Value:
    """A fusion output is a fresh tensor, as a kernel writes it: row-major, or in the
    ``stride_order`` its declared type asks for; never a view of an input (the host
    makes those views, outside the fusion)."""
    if not isinstance(t, F.TensorType) or not isinstance(value, np.ndarray):
        return value
    if t.has_default_layout:
        shared = any(isinstance(x, np.ndarray) and np.may_share_memory(value, x) for x in inputs)
        if shared or not value.flags.c_contiguous:
            return np.array(value, order="C", copy=True)
        return value
    order = t.get_stride_order()
    # Allocate with axes sorted from outermost (highest stride rank) to innermost.
    perm = sorted(range(t.rank), key=lambda a: -order[a])
    buf = np.empty([value.shape[a] for a in perm], dtype=value.dtype)
    view = np.transpose(buf, np.argsort(perm))
    view[...] = value
    return view


def run_fusion(fusion: F.FusionOp, inputs: Sequence[Value]) -> list[Value]:
    """Evaluate ``fusion`` on ``inputs``; see the module docstring."""
    args = check_inputs(fusion, inputs)
    env: dict[SSAValue, Value] = dict(zip(fusion.body.block.args, args, strict=True))
    for op in fusion.body.block.ops:
        if not _is_semantic(op):
            continue
        try:
            operands = [env[v] for v in op.operands]
        except KeyError as e:  # pragma: no cover - the verifier rules this out
            raise InterpreterError(f"{op.name}: operand defined outside the fusion") from e
        for r, v in zip(op.results, evaluate_op(op, operands), strict=True):
            env[r] = v
    term = fusion.output_op
    values = [env[v] for v in term.values]
    returned: list[Value] = []
    pending: list[tuple[int, Value]] = []
    for value, alias in zip(values, term.get_alias_inputs(), strict=True):
        if alias >= 0:
            pending.append((alias, np.array(value, copy=True)))
        else:
            returned.append(value)
    for alias, value in pending:
        target = inputs[alias]
        if not isinstance(target, np.ndarray) or not target.flags.writeable:
            raise ValueError(f"input #{alias} is updated in place but is not a writeable array")
        np.copyto(target, value)
    out_types = fusion.function_type.outputs.data
    return [_materialize_output(v, t, inputs) for v, t in zip(returned, out_types, strict=True)]


def run_module(module: Operation, inputs: Sequence[Value], name: str | None = None) -> list[Value]:
    """Run the fusion called ``name`` (or the only one) in ``module``."""
    fusions = [op for op in module.walk() if isinstance(op, F.FusionOp)]
    if name is not None:
        fusions = [f for f in fusions if f.sym_name.data == name]
    if len(fusions) != 1:
        what = f"named @{name}" if name else "in the module"
        raise ValueError(f"expected exactly one fusion {what}, found {len(fusions)}")
    return run_fusion(fusions[0], inputs)


def _eval_matmul(op: F.MatmulOp | F.LinearOp, args: Sequence[Value]) -> np.ndarray:
    """``matmul``/``linear`` in the compute type (float32 for half types, as cuBLAS
    accumulates), rounded once by the caller. Extents are checked as torch does."""
    work = compute_dtype(_result_dtype(op))
    x, w = _as(np.asarray(args[0]), work), _as(np.asarray(args[1]), work)
    if isinstance(op, F.LinearOp):
        a, b = x, w.T
    else:
        a, b = x, w
    ka, kb = a.shape[-1], b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        what = "input and weight" if isinstance(op, F.LinearOp) else "operands a and b"
        raise InterpreterError(f"{op.name}: the contracted extents of {what} differ: {ka} and {kb}")
    try:
        out = np.matmul(a, b)
    except ValueError as e:
        raise InterpreterError(f"{op.name}: {e}") from None
    if isinstance(op, F.LinearOp) and len(args) > 2:
        bias = _as(np.asarray(args[2]), work)
        if bias.ndim == 1 and out.ndim and bias.shape[0] != out.shape[-1]:
            raise InterpreterError(
                f"{op.name}: bias has {bias.shape[0]} elements for {out.shape[-1]} output features"
            )
        out = out + bias
    return _as(out, work)
