"""Ported behaviours of nvFuser's python frontend tests: elementwise ops, casts,
promotion, broadcasts, reductions and normalizations, compared with numpy."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from frontend_helpers import check, randn

from fuser import DataType

pytest.importorskip("fuser.ir.reference")


def test_basic_add_mul_sum() -> None:
    a, b = randn(2, 4, 8), randn(2, 4, 8) + 1

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        t2 = fd.ops.add(t0, t1)
        c0 = fd.define_scalar(3.0)
        t3 = fd.ops.mul(t2, c0)
        fd.add_output(fd.ops.sum(t3, [-1], False, DataType.Float))

    check(fn, [a, b], [((a + b) * 3.0).sum(-1)], [np.float32], rtol=1e-5)


@pytest.mark.parametrize("dt,npdt", [(DataType.Half, np.float16), (DataType.BFloat16, ml_dtypes.bfloat16)])
def test_half_and_bfloat16_add_cast(dt, npdt) -> None:
    a, b = randn(4, 6).astype(npdt), randn(4, 6).astype(npdt)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        t2 = fd.ops.add(t0, t1)
        fd.add_output(t2)
        fd.add_output(fd.ops.cast(t2, DataType.Float))

    want = (a.astype(np.float32) + b.astype(np.float32)).astype(npdt)
    check(fn, [a, b], [want, want.astype(np.float32)], [npdt, np.float32], rtol=1e-2)


def test_cast_double_to_half() -> None:
    a = randn(3, 5, dtype=np.float64)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Double)
        fd.add_output(fd.ops.cast(fd.ops.relu(t0), dtype=DataType.Half))

    check(fn, [a], [np.maximum(a, 0).astype(np.float16)], [np.float16], rtol=1e-3)


def test_type_promotion_with_python_scalars() -> None:
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    h = randn(2, 3).astype(np.float16)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        fd.add_output(t0 + 2)  # int32 stays int32
        fd.add_output(t0 * 1.5)  # int + float scalar -> float32
        fd.add_output(t1 + 1.0)  # half + double scalar -> half
        fd.add_output(t0 + t1)  # int32 + half -> half
        fd.add_output(fd.ops.truediv(t0, 2))  # true division -> float32

    fd = check(
        fn,
        [i, h],
        [i + 2, i * 1.5, h + np.float16(1), i.astype(np.float16) + h, i / 2],
        [np.int32, np.float32, np.float16, np.float16, np.float32],
        rtol=1e-3,
    )
    assert "fd.define_scalar(2, dtype=DataType.Int)" in repr(fd)


def test_implicit_broadcast_of_different_ranks() -> None:
    a, b = randn(3), randn(2, 3)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t0, t1))

    check(fn, [a, b], [a + b])


def test_explicit_broadcast_and_broadcast_in_dim() -> None:
    a, b = randn(3), randn(2, 3)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.broadcast(t0, is_broadcast_dim=[True, False])
        fd.add_output(fd.ops.mul(t2, t1))
        t3 = fd.ops.broadcast_in_dim(t0, shape=t1.shape(), broadcast_dims=[1])
        fd.add_output(fd.ops.sub(t1, t3))

    check(fn, [a, b], [a * b, b - a])


def test_broadcast_in_dim_static_shape_and_expand() -> None:
    a = randn(3, 1)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        fd.add_output(fd.ops.broadcast_in_dim(t0, shape=[2, 3, 4], broadcast_dims=[1, 2]))
        fd.add_output(fd.ops.expand(t0, [-1, 5]))

    check(fn, [a], [np.broadcast_to(a, (2, 3, 4)), np.broadcast_to(a, (3, 5))])


def _layer_norm(x, w, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def test_layer_norm_by_hand() -> None:
    x, w, b = randn(4, 16), randn(16), randn(16)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        w0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        b0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        n = fd.ops.size(t0, 1)
        mean = fd.ops.sum(t0, [1]) / n
        xm = t0 - fd.ops.broadcast(mean, [False, True])
        var = fd.ops.sum(xm * xm, [1]) / n
        rstd = fd.ops.rsqrt(var + 1e-5)
        y = xm * fd.ops.broadcast(rstd, [False, True])
        fd.add_output(y * w0 + b0)

    check(fn, [x, w, b], [_layer_norm(x, w, b)], rtol=1e-4, atol=1e-5)


def test_layer_norm_with_var_mean() -> None:
    x, w, b = randn(4, 16), randn(16), randn(16)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        w0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        b0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, dims=[1], correction=0, keepdim=True)
        y = (t0 - mean) * fd.ops.rsqrt(var + 1e-5)
        fd.add_output(y * w0 + b0)
        fd.add_output(mean)

    check(fn, [x, w, b], [_layer_norm(x, w, b), x.mean(1, keepdims=True)], rtol=1e-4, atol=1e-5)


def test_rms_norm_half() -> None:
    x, w = randn(4, 32).astype(np.float16), randn(32).astype(np.float16)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        w0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)
        x32 = fd.ops.cast(t0, DataType.Float)
        ms = fd.ops.sum(x32 * x32, dims=[1], keepdim=True) / 32.0
        y = x32 * fd.ops.rsqrt(ms + 1e-6) * fd.ops.cast(w0, DataType.Float)
        fd.add_output(fd.ops.cast(y, DataType.Half))

    x32 = x.astype(np.float32)
    want = x32 / np.sqrt((x32 * x32).mean(1, keepdims=True) + 1e-6) * w.astype(np.float32)
    check(fn, [x, w], [want.astype(np.float16)], [np.float16], rtol=1e-2, atol=1e-2)


def test_softmax_with_causal_mask() -> None:
    x = randn(2, 5, 5)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        row = fd.ops.broadcast(fd.ops.iota(5, 0, 1, DataType.Int), [False, True])
        col = fd.ops.broadcast(fd.ops.iota(5, 0, 1, DataType.Int), [True, False])
        masked = fd.ops.where(col > row, float("-inf"), t0)
        m = fd.ops.max(masked, dims=[2], keepdim=True)
        e = fd.ops.exp(masked - m)
        fd.add_output(e / fd.ops.sum(e, dims=[2], keepdim=True))

    mask = np.triu(np.ones((5, 5), bool), 1)
    xm = np.where(mask, -np.inf, x)
    e = np.exp(xm - xm.max(2, keepdims=True))
    check(fn, [x], [e / e.sum(2, keepdims=True)], rtol=1e-5)


@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_with_corrections(correction) -> None:
    x = randn(3, 7, dtype=np.float64)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Double)
        fd.add_output(fd.ops.var(t0, dims=[1], correction=correction, keepdim=False))

    check(fn, [x], [x.var(1, ddof=correction)], rtol=1e-10)


def test_welford() -> None:
    x = randn(3, 9)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        avg, var_sum, n = fd.ops.welford(t0, dims=[1])
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)

    m = x.mean(1)
    check(fn, [x], [m, ((x - m[:, None]) ** 2).sum(1), np.full(3, 9)], rtol=1e-5, atol=1e-5)


def test_prod_max_min_and_sum_dtype() -> None:
    x = randn(3, 4)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32)
        fd.add_output(fd.ops.prod(t0, [1]))
        fd.add_output(fd.ops.max(t0, [0]))
        fd.add_output(fd.ops.min(t0, [0, 1]))
        fd.add_output(fd.ops.sum(t1, DataType.Int))  # sum(t, dtype): all axes
        fd.add_output(fd.ops.sum(t1, [1]))  # ints sum to int64, like torch

    check(
        fn,
        [x, i],
        [x.prod(1), x.max(0), x.min(), i.sum(), i.sum(1)],
        [np.float32, np.float32, np.float32, np.int64, np.int64],
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    "dt,npdt", [(DataType.Float, np.float32), (DataType.Int, np.int64), (DataType.Bool, np.bool_), (DataType.Half, np.float16)]
)
def test_where_over_dtypes(dt, npdt) -> None:
    c = np.array([[True, False, True], [False, False, True]])
    a = (randn(2, 3) * 4).astype(npdt)
    b = (randn(2, 3) * 4 + 1).astype(npdt)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        t2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        fd.add_output(fd.ops.where(t0, t1, t2))

    check(fn, [c, a, b], [np.where(c, a, b)], [npdt])


def test_integer_division_and_remainder_semantics() -> None:
    a = np.array([7, -7, 7, -7, 5], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 5], dtype=np.int64)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        fd.add_output(fd.ops.div(t0, t1))  # truncates toward zero (C)
        fd.add_output(fd.ops.remainder(t0, t1))  # sign of the divisor (Python)
        fd.add_output(fd.ops.fmod(t0, t1))  # sign of the dividend (C)
        fd.add_output(t0 % 3)
        fd.add_output(t0 / t1)  # true division

    trunc = np.trunc(a / b).astype(np.int64)
    check(fn, [a, b], [trunc, a % b, np.fmod(a, b), a % 3, a / b], [np.int64, np.int64, np.int64, np.int64, np.float32])


def test_clamp_lerp_addcmul_threshold() -> None:
    x, y, w = randn(4, 5), randn(4, 5), np.abs(randn(4, 5))

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.clamp(t0, -0.5, 0.5))
        fd.add_output(fd.ops.lerp(t0, t1, t2))
        fd.add_output(fd.ops.addcmul(t0, t1, t2, 0.5))
        fd.add_output(fd.ops.threshold(t0, 0.1, 7.0))

    check(fn, [x, y, w], [np.clip(x, -0.5, 0.5), x + w * (y - x), x + 0.5 * y * w, np.where(x > 0.1, x, 7.0)], rtol=1e-5)


def test_operator_overloads() -> None:
    x, y = randn(3, 4), randn(3, 4) + 3

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(-t0 + 2 * t1 - t0 / t1)
        fd.add_output(1.0 - t0)
        fd.add_output(2.0 / t1)
        fd.add_output(t0 ** 2)
        fd.add_output(abs(t0))
        fd.add_output(t0 < t1)
        fd.add_output((t0 >= 0.0) | (t1 == t1))
        fd.add_output(t0 != 0)

    check(
        fn,
        [x, y],
        [-x + 2 * y - x / y, 1 - x, 2 / y, x**2, np.abs(x), x < y, (x >= 0) | (y == y), x != 0],
        rtol=1e-5,
    )


def test_unary_math_ops() -> None:
    x = np.abs(randn(3, 4)) + 0.1

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "erf", "reciprocal", "neg", "floor"):
            fd.add_output(getattr(fd.ops, name)(t0))

    erf = np.vectorize(math.erf)
    want = [np.exp(x), np.log(x), np.sqrt(x), np.tanh(x), 1 / (1 + np.exp(-x)), erf(x), 1 / x, -x, np.floor(x)]
    check(fn, [x], want, rtol=1e-5)


def test_scalar_inputs_and_integer_tensor_promotion() -> None:
    x = np.arange(6, dtype=np.int64).reshape(2, 3)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        s0 = fd.define_scalar(dtype=DataType.Double)
        s1 = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(t0 * s0)
        fd.add_output(t0 + s1)

    check(fn, [x, 0.5, 3], [x * 0.5, x + 3], [np.float32, np.int64])


def test_symbolic_extent_one_at_run_time_does_not_broadcast() -> None:
    """``slice(x, [7, 6], [8, 7])`` of an 8x8 input is 1x1 at run time, but its axes
    are symbolic, not broadcasts: adding it to ``x`` is an error naming the op and the
    operands (it crashed in the host evaluator's output write before)."""
    from fuser import FusionDefinition

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.slice(x, [7, 6], [8, 7])
        fd.add_output(fd.ops.add(s, x))
        fd.add_output(s)
    x8 = randn(8, 8)
    with pytest.raises(
        ValueError, match=r"fuser.add: operand #0 has extent 1 and operand #1 extent 8 in axis 0"
    ):
        fd.execute([x8])


def test_zero_dim_tensor_promotes_like_torch() -> None:
    """``add(f16[4], sum(f32[4]))``: a zero-dim tensor does not raise the dtype of a
    tensor with dimensions of the same category (torch gives float16)."""
    from fuser import FusionDefinition

    with FusionDefinition() as fd:
        h = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)
        f = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(h, fd.ops.sum(f, dims=[0])))
    h16 = randn(4).astype(np.float16)
    f32 = randn(4)
    (out,) = fd.execute([h16, f32])
    assert out.dtype == np.float16
    want = (h16.astype(np.float32) + f32.sum(dtype=np.float32)).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=1e-3)
