"""The reference interpreter against torch (CPU) and numpy, op by op.

Each test builds a one-op fusion with the dialect's typed constructors, verifies it,
runs it through ``fuser.ir.reference`` and compares with torch's result (dtype and
values). bfloat16 and float16 are included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import SSAValue

from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.reference import InterpreterError, evaluate_op, run_fusion

torch = pytest.importorskip("torch")

TORCH_DT = {
    DType.bool: torch.bool,
    DType.int32: torch.int32,
    DType.int64: torch.int64,
    DType.float16: torch.float16,
    DType.bfloat16: torch.bfloat16,
    DType.float32: torch.float32,
    DType.float64: torch.float64,
    DType.complex64: torch.complex64,
    DType.complex128: torch.complex128,
}


def build(
    inputs: Sequence[F.TensorType | DType], body: Callable[..., Sequence[SSAValue] | SSAValue]
) -> F.FusionOp:
    """A verified fusion whose block arguments are ``inputs`` and whose outputs are
    what ``body`` returns (it receives the block arguments and appends ops)."""
    in_types = [t.to_xdsl() if isinstance(t, DType) else t for t in inputs]
    fusion = F.FusionOp("f", in_types, [])
    block = fusion.body.block
    ops: list = []

    class Emit:
        def __call__(self, op):
            ops.append(op)
            return op.results[0] if len(op.results) == 1 else op.results

    outs = body(Emit(), *block.args)
    outs = [outs] if isinstance(outs, SSAValue) else list(outs)
    for op in ops:
        block.add_op(op)
    block.add_op(F.OutputOp(outs))
    fusion.properties["function_type"] = FunctionType.from_lists(in_types, [o.type for o in outs])
    fusion.verify()
    return fusion


def to_torch(a: np.ndarray) -> torch.Tensor:
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


def to_numpy(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def rand(
    shape: Sequence[int], dtype: DType, rng: np.random.Generator, low: float = -3, high: float = 3
) -> np.ndarray:
    if dtype.is_bool:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        return rng.integers(int(low) * 3, int(high) * 3 + 1, size=shape).astype(dtype.to_numpy())
    return rng.uniform(low, high, size=shape).astype(dtype.to_numpy())


def assert_matches(
    ours: np.ndarray, ref: torch.Tensor, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    ref_np = to_numpy(ref)
    assert ours.dtype == ref_np.dtype, (ours.dtype, ref_np.dtype)
    assert ours.shape == ref_np.shape
    if ours.dtype.kind in "biu":
        np.testing.assert_array_equal(ours, ref_np)
    else:
        tol = {np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2}.get(
            ours.dtype, rtol
        )
        np.testing.assert_allclose(
            ours.astype(np.float64),
            ref_np.astype(np.float64),
            rtol=tol,
            atol=max(atol, tol * 1e-3),
            equal_nan=True,
        )


UNARY_TORCH = {
    "abs": torch.abs,
    "real": torch.real,
    "imag": torch.imag,
    "neg": torch.neg,
    "exp": torch.exp,
    "exp2": torch.exp2,
    "expm1": torch.expm1,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "log1p": torch.log1p,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tanh": torch.tanh,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "sigmoid": torch.sigmoid,
    "erf": torch.erf,
    "erfc": torch.erfc,
    "erfinv": torch.erfinv,
    "lgamma": torch.lgamma,
    "silu": torch.nn.functional.silu,
    "relu": torch.relu,
    "ceil": torch.ceil,
    "floor": torch.floor,
    "round": torch.round,
    "trunc": torch.trunc,
    "frac": torch.frac,
    "sign": torch.sign,
    "signbit": torch.signbit,
    "isnan": torch.isnan,
    "isinf": torch.isinf,
    "isfinite": torch.isfinite,
    "logical_not": torch.logical_not,
    "bitwise_not": torch.bitwise_not,
    "set": torch.clone,
    "segment_set": torch.clone,
}
DOMAIN = {
    "log": (0.1, 5),
    "log2": (0.1, 5),
    "log10": (0.1, 5),
    "log1p": (-0.9, 5),
    "sqrt": (0, 5),
    "rsqrt": (0.1, 5),
    "asin": (-0.99, 0.99),
    "acos": (-0.99, 0.99),
    "atanh": (-0.99, 0.99),
    "acosh": (1.01, 5),
    "erfinv": (-0.99, 0.99),
    "lgamma": (0.1, 5),
}
INT_OK = {
    "abs",
    "real",
    "neg",
    "relu",
    "sign",
    "signbit",
    "isnan",
    "isinf",
    "isfinite",
    "logical_not",
    "bitwise_not",
    "set",
    "segment_set",
    "exp",
    "sqrt",
    "sin",
    "sigmoid",
    "ceil",
    "floor",
    "trunc",
}


def test_every_unary_op_has_a_torch_reference() -> None:
    assert set(UNARY_TORCH) == set(F.UNARY_OPS)


@pytest.mark.parametrize("name", sorted(F.UNARY_OPS))
@pytest.mark.parametrize(
    "dtype", [DType.float32, DType.float16, DType.bfloat16, DType.float64, DType.int32]
)
def test_unary(name: str, dtype: DType) -> None:
    if dtype.is_integer and name not in INT_OK:
        pytest.skip("float-only in torch")
    if name == "bitwise_not" and dtype.is_float:
        with pytest.raises(Exception, match="integer or bool"):
            build([F.TensorType([4], dtype)], lambda e, x: e(F.UNARY_OP_CLASSES[name](x)))
        return
    if name == "imag":  # complex operands only (tests/test_complex.py)
        with pytest.raises(Exception, match="needs a complex operand"):
            build([F.TensorType([4], dtype)], lambda e, x: e(F.UNARY_OP_CLASSES[name](x)))
        return
    rng = np.random.default_rng(0)
    lo, hi = DOMAIN.get(name, (-3, 3))
    x = rand([3, 17], dtype, rng, lo, hi)
    fusion = build([F.TensorType([3, 17], dtype)], lambda e, a: e(F.UNARY_OP_CLASSES[name](a)))
    (ours,) = run_fusion(fusion, [x])
    ref = UNARY_TORCH[name](to_torch(x))
    assert_matches(ours, ref, rtol=3e-5 if name in ("erfinv", "lgamma") else 1e-5)


BINARY_TORCH = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": lambda a, b: (
        torch.div(a, b, rounding_mode="trunc")
        if not (a.is_floating_point() or b.is_floating_point())
        else torch.div(a, b)
    ),
    "truediv": torch.true_divide,
    "fmod": torch.fmod,
    "remainder": torch.remainder,
    "pow": torch.pow,
    "atan2": torch.atan2,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
    "bitwise_left_shift": torch.bitwise_left_shift,
    "bitwise_right_shift": torch.bitwise_right_shift,
    "logical_right_shift": lambda a, b: _torch_logical_right_shift(a, b),
    "gcd": torch.gcd,
    "nextafter": torch.nextafter,
}
INT_ONLY = {
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
    "logical_right_shift", "gcd",
}  # fmt: skip
SHIFTS = ("bitwise_left_shift", "bitwise_right_shift", "logical_right_shift")


def _torch_logical_right_shift(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """jax.lax.shift_right_logical: the sign-extended bits of ``a >> b`` masked off."""
    dt = torch.promote_types(a.dtype, b.dtype)
    a, b = a.to(dt), b.to(dt)
    bits = torch.iinfo(dt).bits
    mask = torch.where(b == 0, -1, (1 << (bits - b).clamp(max=bits - 1)) - 1).to(dt)
    return torch.where((b < 0) | (b >= bits), 0, (a >> b.clamp(0, bits - 1)) & mask).to(dt)


def test_every_binary_op_has_a_torch_reference() -> None:
    assert set(BINARY_TORCH) == set(F.BINARY_OPS)


WIDE = (DType.float32, DType.float64)


@pytest.mark.parametrize("name", sorted(F.BINARY_OPS))
@pytest.mark.parametrize(
    "dtypes",
    [
        (DType.float32, DType.float32),
        (DType.float16, DType.bfloat16),
        (DType.int32, DType.int64),
        (DType.int32, DType.float16),
        (DType.bfloat16, DType.bfloat16),
        (DType.bool, DType.int32),
    ],
    ids=lambda d: f"{d[0]}-{d[1]}",
)
def test_binary_tensor_tensor(name: str, dtypes: tuple[DType, DType]) -> None:
    a_dt, b_dt = dtypes
    is_float = a_dt.is_float or b_dt.is_float
    if name in INT_ONLY and is_float:
        pytest.skip("integer-only op")
    if name in (*SHIFTS, "sub", "gcd") and DType.bool in dtypes:
        pytest.skip("torch has no shifts, subtraction or gcd of bool")
    if name == "nextafter" and not (a_dt in WIDE and b_dt in WIDE):
        pytest.skip("nextafter needs float32/float64 results (torch: float32/float64 operands)")
    rng = np.random.default_rng(1)
    x = rand([4, 1, 6], a_dt, rng)
    y = rand([5, 6], b_dt, rng)
    if name in ("div", "fmod", "remainder") and not is_float:
        y = np.where(y == 0, 3, y).astype(y.dtype)
    if name == "pow" and DType.bool in dtypes:
        pytest.skip("pow of bool is not meaningful")
    if name == "pow":
        x = (np.abs(x) + 1).astype(x.dtype)
        y = np.abs(y).astype(y.dtype)
        if not is_float:
            y = np.minimum(y, 3).astype(y.dtype)
    if name in SHIFTS:
        y = np.abs(y) % 8
        y = y.astype(b_dt.to_numpy())
    fusion = build(
        [F.TensorType([4, 1, 6], a_dt), F.TensorType([5, 6], b_dt)],
        lambda e, a, b: e(F.BINARY_OP_CLASSES[name](a, b)),
    )
    (ours,) = run_fusion(fusion, [x, y])
    ref = BINARY_TORCH[name](to_torch(x), to_torch(y))
    assert_matches(ours, ref)


@pytest.mark.parametrize(
    "tensor_dt,scalar,scalar_dt",
    [
        (DType.int32, 2.5, DType.float64),
        (DType.float16, 3.0, DType.float64),
        (DType.bfloat16, 2, DType.int64),
        (DType.bool, 3, DType.int64),
        (DType.int64, True, DType.bool),
        (DType.float32, 0.5, DType.float64),
    ],
)
@pytest.mark.parametrize("name", ["add", "mul", "sub", "truediv", "maximum", "lt"])
def test_binary_tensor_scalar_promotion(
    tensor_dt: DType, scalar: float, scalar_dt: DType, name: str
) -> None:
    """Python scalars are weak: the tensor's dtype wins within a category."""
    if name == "sub" and DType.bool in (tensor_dt, scalar_dt):
        pytest.skip("torch forbids subtracting bools")
    rng = np.random.default_rng(2)
    x = rand([7], tensor_dt, rng)

    def body(e, a):
        c = e(F.ConstantOp(scalar, scalar_dt))
        return e(F.BINARY_OP_CLASSES[name](a, c))

    fusion = build([F.TensorType([7], tensor_dt)], body)
    (ours,) = run_fusion(fusion, [x])
    # torch.maximum takes no Python number; a 0-dim tensor is weak in the same way.
    other = torch.tensor(scalar) if name == "maximum" else scalar
    ref = BINARY_TORCH[name](to_torch(x), other)
    assert_matches(ours, ref)


def test_scalar_only_arithmetic_is_double() -> None:
    def body(e, s):
        c = e(F.ConstantOp(2, DType.int64))
        return e(F.BINARY_OP_CLASSES["mul"](s, c))

    fusion = build([DType.float64], body)
    (out,) = run_fusion(fusion, [1.5])
    assert out == 3.0 and isinstance(out, np.float64)


def test_integer_division_truncates_and_remainder_follows_divisor() -> None:
    a = np.array([7, -7, 7, -7, 0], np.int32)
    b = np.array([2, 2, -2, -2, 5], np.int32)
    f = build(
        [F.TensorType([5], DType.int32)] * 2,
        lambda e, x, y: [
            e(F.BINARY_OP_CLASSES["div"](x, y)),
            e(F.BINARY_OP_CLASSES["remainder"](x, y)),
            e(F.BINARY_OP_CLASSES["fmod"](x, y)),
        ],
    )
    div, rem, fmod = run_fusion(f, [a, b])
    np.testing.assert_array_equal(div, [3, -3, -3, 3, 0])
    np.testing.assert_array_equal(rem, [1, 1, -1, -1, 0])
    np.testing.assert_array_equal(fmod, [1, -1, 1, -1, 0])


@pytest.mark.parametrize("dtype", [DType.float32, DType.bfloat16, DType.int32])
def test_ternary_ops(dtype: DType) -> None:
    rng = np.random.default_rng(3)
    t = F.TensorType([4, 5], dtype)
    x, y, z = (rand([4, 5], dtype, rng) for _ in range(3))
    cond = rng.random([4, 5]) < 0.5

    def body(e, c, a, b, w):
        lo = e(F.ConstantOp(-1, DType.int64))
        hi = e(F.ConstantOp(2, DType.int64))
        thr = e(F.ConstantOp(0.5, DType.float64))
        val = e(F.ConstantOp(7, DType.int64))
        outs = [
            e(F.WhereOp(c, a, b)),
            e(F.ClampOp(a, lo, hi)),
            e(F.ThresholdOp(a, thr, val)),
            e(F.AddcmulOp(a, b, w, thr)),
        ]
        if dtype.is_float:
            outs.append(e(F.LerpOp(a, b, w)))
        return outs

    f = build([F.TensorType([4, 5], DType.bool), t, t, t], body)
    outs = run_fusion(f, [cond, x, y, z])
    tx, ty, tz = to_torch(x), to_torch(y), to_torch(z)
    assert_matches(outs[0], torch.where(to_torch(cond), tx, ty))
    assert_matches(outs[1], torch.clamp(tx, -1, 2))
    assert_matches(outs[2], torch.nn.functional.threshold(tx, 0.5, 7))
    if dtype.is_float:
        assert_matches(outs[3], torch.addcmul(tx, ty, tz, value=0.5))
        assert_matches(outs[4], torch.lerp(tx, ty, tz))
    else:
        # torch refuses a float value for integer addcmul; the result promotes to float32.
        np.testing.assert_allclose(outs[3], x + 0.5 * y * z, rtol=1e-6)


@pytest.mark.parametrize(
    "src,dst",
    [
        (DType.float32, DType.bfloat16),
        (DType.bfloat16, DType.float16),
        (DType.float32, DType.int32),
        (DType.float16, DType.bool),
        (DType.int64, DType.float16),
        (DType.bool, DType.float32),
    ],
)
def test_cast(src: DType, dst: DType) -> None:
    x = rand([9], src, np.random.default_rng(4)) * (7 if not src.is_bool else 1)
    x = x.astype(src.to_numpy())
    (out,) = run_fusion(build([F.TensorType([9], src)], lambda e, a: e(F.CastOp(a, dst))), [x])
    assert_matches(out, to_torch(x).to(TORCH_DT[dst]))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize(
    "dtype", [DType.float32, DType.float16, DType.bfloat16, DType.int32, DType.bool]
)
@pytest.mark.parametrize("dims,keepdim", [([1], False), ([0, 2], True), ([-1], False)])
def test_reductions(name: str, dtype: DType, dims: list[int], keepdim: bool) -> None:
    if dtype.is_bool and name in ("max", "min"):
        pytest.skip("torch.amax of bool is unsupported")
    rng = np.random.default_rng(5)
    x = rand([3, 4, 5], dtype, rng, -1.5, 1.5)
    op_cls = F.REDUCTION_OP_CLASSES[name]
    (out,) = run_fusion(
        build([F.TensorType([3, 4, 5], dtype)], lambda e, a: e(op_cls(a, dims, keepdim))), [x]
    )
    tx = to_torch(x)
    ref = {
        "sum": lambda: torch.sum(tx, dims, keepdim),
        "prod": lambda: _prod(tx, dims, keepdim),
        "max": lambda: torch.amax(tx, dims, keepdim),
        "min": lambda: torch.amin(tx, dims, keepdim),
    }[name]()
    assert_matches(out, ref, rtol=1e-4)


def _prod(t: torch.Tensor, dims: list[int], keepdim: bool) -> torch.Tensor:
    for d in sorted((d % t.ndim for d in dims), reverse=True):
        t = torch.prod(t, d, keepdim=keepdim)
    return t


def test_sum_with_explicit_dtype_and_half_accumulates_in_float() -> None:
    x = np.full([4096], 0.1, np.float16)
    f = build(
        [F.TensorType([4096], DType.float16)],
        lambda e, a: [e(F.SumOp(a, [0])), e(F.SumOp(a, [0], dtype=DType.float32))],
    )
    half, single = run_fusion(f, [x])
    assert half.dtype == np.float16 and single.dtype == np.float32
    np.testing.assert_allclose(single, 4096 * np.float32(np.float16(0.1)), rtol=1e-5)
    assert abs(float(half) - 409.5) < 0.5  # float accumulation, one rounding at the end


@pytest.mark.parametrize("correction", [0, 1, 2])
@pytest.mark.parametrize("dtype", [DType.float32, DType.bfloat16])
def test_var_var_mean_welford(correction: int, dtype: DType) -> None:
    rng = np.random.default_rng(6)
    x = rand([6, 10], dtype, rng)
    f = build(
        [F.TensorType([6, 10], dtype)],
        lambda e, a: [
            e(F.VarOp(a, [1], correction)),
            *e(F.VarMeanOp(a, [1], correction, keepdim=True)),
            *e(F.WelfordOp(a, [1])),
        ],
    )
    var, v2, mean, avg, m2, n = run_fusion(f, [x])
    tx = to_torch(x)
    assert_matches(var, torch.var(tx, 1, correction=correction))
    tv, tm = torch.var_mean(tx, 1, correction=correction, keepdim=True)
    assert_matches(v2, tv)
    assert_matches(mean, tm)
    assert_matches(avg, torch.mean(tx, 1))
    np.testing.assert_allclose(
        m2.astype(np.float64), (torch.var(tx.double(), 1, correction=0) * 10).numpy(), rtol=1e-2
    )
    assert n.dtype == np.int64 and (n == 10).all()


def test_views_are_numpy_views() -> None:
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)

    def body(e, a):
        return [
            e(F.PermuteOp(a, [2, 0, 1])),
            e(F.ReshapeOp(a, [6, 4])),
            e(F.SliceOp(a, [0, 1, 0], [2, 3, 4], [1, 1, 2])),
            e(F.BroadcastOp(a, [False, True, False, False])),
            e(F.ExpandOp(e(F.BroadcastOp(a, [True, False, False, False])), [5, 2, 3, 4])),
        ]

    fusion = build([F.TensorType([2, 3, 4], DType.float32)], body)
    # Op by op, views are numpy views of their operand...
    ops = [op for op in fusion.body.block.ops if isinstance(op, F.ViewLikeOp) and op.operands[0] is fusion.inputs[0]]
    for op in ops:
        assert np.shares_memory(evaluate_op(op, [x])[0], x)
    # ...but a fusion's outputs are fresh row-major tensors, as a kernel writes them.
    outs = run_fusion(fusion, [x])
    for o in outs:
        assert not np.shares_memory(o, x) and o.flags.c_contiguous
    np.testing.assert_array_equal(outs[0], np.transpose(x, [2, 0, 1]))
    np.testing.assert_array_equal(outs[1], x.reshape(6, 4))
    np.testing.assert_array_equal(outs[2], x[0:2, 1:3, 0:4:2])
    assert outs[3].shape == (2, 1, 3, 4) and outs[4].shape == (5, 2, 3, 4)


def test_set_copies() -> None:
    x = np.ones([3], np.float32)
    (out,) = run_fusion(
        build([F.TensorType([3], DType.float32)], lambda e, a: e(F.UNARY_OP_CLASSES["set"](a))), [x]
    )
    assert not np.shares_memory(out, x)


def test_squeeze_broadcast_in_dim_pad_cat() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal([3, 1, 4]).astype(np.float32)
    y = rng.standard_normal([3, 2, 4]).astype(np.float32)

    def body(e, a, b):
        z = e(F.ConstantOp(0.0, DType.float64))
        return [
            e(F.SqueezeOp(a, [1])),
            e(F.BroadcastInDimOp(e(F.SqueezeOp(a, [1])), [2, 3, 4], [1, 2])),
            e(F.PadOp(a, [1, 2, 0, 0, 1, 0], z)),
            e(F.PadOp(b, [-1, 1], z)),
            e(F.CatOp([a, b], 1)),
        ]

    sq, bid, pad, crop, cat = run_fusion(
        build(
            [F.TensorType([3, 1, 4], DType.float32), F.TensorType([3, 2, 4], DType.float32)], body
        ),
        [x, y],
    )
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    assert_matches(sq, tx.squeeze(1))
    assert_matches(np.ascontiguousarray(bid), tx.squeeze(1).expand(2, 3, 4))
    assert_matches(pad, torch.nn.functional.pad(tx, [1, 2, 0, 0, 1, 0]))
    assert_matches(crop, torch.nn.functional.pad(ty, [-1, 1]))
    assert_matches(cat, torch.cat([tx, ty], 1))


def test_indexing_ops() -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal([5, 6]).astype(np.float32)
    idx1 = np.array([4, 0, 2], np.int64)
    idx2 = rng.integers(0, 5, size=[3, 4]).astype(np.int64)
    idx3 = rng.integers(0, 6, size=[5, 2]).astype(np.int32)

    def body(e, a, i1, i2, i3):
        s = e(F.ConstantOp(-2, DType.int64))
        return [
            e(F.IndexSelectOp(a, i1, 0)),
            e(F.SelectOp(a, s, 1)),
            e(F.GatherOp(a, i2, 0)),
            e(F.TakeAlongAxisOp(a, i3, 1)),
        ]

    f = build(
        [
            F.TensorType([5, 6], DType.float32),
            F.TensorType([3], DType.int64),
            F.TensorType([3, 4], DType.int64),
            F.TensorType([5, 2], DType.int32),
        ],
        body,
    )
    isel, sel, gat, tak = run_fusion(f, [x, idx1, idx2, idx3])
    tx = torch.from_numpy(x)
    assert_matches(isel, torch.index_select(tx, 0, torch.from_numpy(idx1)))
    assert_matches(sel, tx.select(1, -2))
    assert_matches(gat, torch.gather(tx, 0, torch.from_numpy(idx2)))
    assert_matches(tak, torch.take_along_dim(tx, torch.from_numpy(idx3).long(), 1))


def test_index_out_of_range_is_a_value_error_naming_the_op() -> None:
    f = build(
        [F.TensorType([5], DType.float32), F.TensorType([2], DType.int64)],
        lambda e, a, i: e(F.IndexSelectOp(a, i, 0)),
    )
    with pytest.raises(InterpreterError, match="fuser.index_select: the index operand holds 5"):
        run_fusion(f, [np.zeros(5, np.float32), np.array([1, 5])])


@pytest.mark.parametrize("op", ["index_select", "gather"])
def test_negative_index_raises_like_torch(op: str) -> None:
    """torch raises for a negative index in index_select and gather (select and
    take_along_dim count it from the end): the reference must not wrap it."""
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    idx = np.array([-1, 0], np.int64) if op == "index_select" else np.array([[-1, 0]], np.int64)
    with pytest.raises((IndexError, RuntimeError)):
        tx, ti = torch.from_numpy(x), torch.from_numpy(idx)
        torch.index_select(tx, 0, ti) if op == "index_select" else torch.gather(tx, 0, ti)
    make = F.IndexSelectOp if op == "index_select" else F.GatherOp
    f = build(
        [F.TensorType([5, 2], DType.float32), F.TensorType(list(idx.shape), DType.int64)],
        lambda e, a, i: e(make(a, i, 0)),
    )
    with pytest.raises(InterpreterError, match=f"fuser.{op}: the index operand holds -1, out of"):
        run_fusion(f, [x, idx])


def test_factories_iota_full_size() -> None:
    def body(e, x, n):
        start = e(F.ConstantOp(2, DType.int64))
        step = e(F.ConstantOp(3, DType.int64))
        fill = e(F.ConstantOp(1.5, DType.float64))
        size = e(F.SizeOp(x, 1))
        return [
            e(F.IotaOp(n, start, step, DType.int64)),
            e(F.FullOp(fill, [2, -1], DType.bfloat16, [size])),
        ]

    f = build([F.TensorType([3, -1], DType.float32), DType.int64], body)
    iota, full = run_fusion(f, [np.zeros([3, 4], np.float32), 5])
    np.testing.assert_array_equal(iota, [2, 5, 8, 11, 14])
    assert full.shape == (2, 4) and full.dtype == ml_dtypes.bfloat16 and (full == 1.5).all()


def test_symbolic_reshape_with_size_operands() -> None:
    def body(e, x, n):
        return e(F.ReshapeOp(x, [-1, 4], [n]))

    f = build([F.TensorType([-1, -1], DType.float32), DType.int64], body)
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    (out,) = run_fusion(f, [x.reshape(2, 12), 6])
    np.testing.assert_array_equal(out, x)
    with pytest.raises(InterpreterError, match="cannot reshape"):
        run_fusion(f, [x.reshape(2, 12), 5])


def test_symbolic_extents_that_disagree_at_run_time() -> None:
    f = build(
        [F.TensorType([-1], DType.float32)] * 2, lambda e, a, b: e(F.BINARY_OP_CLASSES["add"](a, b))
    )
    with pytest.raises(InterpreterError, match="fuser.add"):
        run_fusion(f, [np.zeros(3, np.float32), np.zeros(4, np.float32)])


def test_input_validation_names_the_input() -> None:
    f = build(
        [F.TensorType([2, -1], DType.float32), DType.float64],
        lambda e, a, s: e(F.BINARY_OP_CLASSES["mul"](a, s)),
    )
    with pytest.raises(ValueError, match="takes 2 inputs, got 1"):
        run_fusion(f, [np.zeros([2, 3], np.float32)])
    with pytest.raises(ValueError, match="input #0 .* expected dtype float32, got float64"):
        run_fusion(f, [np.zeros([2, 3]), 1.0])
    with pytest.raises(ValueError, match="input #0 .* axis 0 must have extent 2"):
        run_fusion(f, [np.zeros([3, 3], np.float32), 1.0])
    with pytest.raises(ValueError, match="input #0 .* expected rank 2"):
        run_fusion(f, [np.zeros([2], np.float32), 1.0])
    with pytest.raises(ValueError, match="input #1 .* expected a scalar"):
        run_fusion(f, [np.zeros([2, 3], np.float32), np.zeros(3)])


def test_aliased_output_updates_the_input_in_place() -> None:
    t = F.TensorType([4], DType.float32)
    fusion = F.FusionOp("f", [t, t], [t])
    block = fusion.body.block
    a, b = block.args
    add = F.BINARY_OP_CLASSES["add"](a, b)
    mul = F.BINARY_OP_CLASSES["mul"](a, b)
    block.add_ops([add, mul, F.OutputOp([add.result, mul.result], alias_inputs=[0, -1])])
    fusion.verify()
    x = np.arange(4, dtype=np.float32)
    y = np.full(4, 2, np.float32)
    (prod,) = run_fusion(fusion, [x, y])
    np.testing.assert_array_equal(prod, np.arange(4) * 2)  # computed from the old x
    np.testing.assert_array_equal(x, np.arange(4) + 2)  # updated in place


def test_output_stride_order_is_materialized() -> None:
    src = F.TensorType([3, 4], DType.float32)
    fusion = F.FusionOp("f", [src], [F.TensorType([3, 4], DType.float32, stride_order=[0, 1])])
    block = fusion.body.block
    neg = F.UNARY_OP_CLASSES["neg"](block.args[0])
    block.add_ops([neg, F.OutputOp([neg.result])])
    fusion.verify()
    (out,) = run_fusion(fusion, [np.arange(12, dtype=np.float32).reshape(3, 4)])
    assert out.strides == (4, 12)  # column-major: axis 0 is innermost
    np.testing.assert_array_equal(out, -np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dt", [DType.float32, DType.float16, DType.bfloat16, DType.int32, DType.int64])
def test_cumsum_against_torch(dim: int, dt: DType) -> None:
    x = rand([3, 5, 7], dt, np.random.default_rng(2))
    fusion = build([F.TensorType([3, 5, 7], dt)], lambda e, a: e(F.CumsumOp(a, dim)))
    (ours,) = run_fusion(fusion, [x])
    t = to_torch(x)
    # torch accumulates half/bfloat16 in float32 and sums integers in int64; fuser's
    # cumsum keeps the input dtype (nvFuser's), with the same values where nothing wraps.
    acc = torch.float32 if dt in (DType.float16, DType.bfloat16) else None
    assert_matches(ours, torch.cumsum(t, dim, dtype=acc).to(t.dtype))


def test_cumsum_wraps_integers_in_their_dtype() -> None:
    x = np.array([2**30, 2**30, 2**30], dtype=np.int32)
    fusion = build([F.TensorType([3], DType.int32)], lambda e, a: e(F.CumsumOp(a, 0)))
    (ours,) = run_fusion(fusion, [x])
    assert ours.dtype == np.int32
    assert ours.tolist() == [2**30, 2**31 - 2**32, 3 * 2**30 - 2**32]
