"""Pointwise kernels (the pointwise kind's loop nest, written by ``schedule-fusions``
and lowered by ``codegen/lower/loop_nest.py``): generated kernels, run by the CPU
kernel interpreter, equal the reference interpreter; every kernel compiles with NVRTC
for sm_90.

Fusions are written with the frontend, as users write them.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.nvrtc import compile_cuda
from fuser.ir.dialects import fuser as F
from fuser.runtime.cpu_runner import run_segment_on_cpu
from tests.kernel_check import assert_close, kernels_and_reference

NP = {DataType.Float: np.float32, DataType.Half: np.float16, DataType.BFloat16: ml_dtypes.bfloat16,
      DataType.Double: np.float64, DataType.Int32: np.int32, DataType.Int: np.int64, DataType.Bool: np.bool_}


def define(body: Callable[[FusionDefinition], None]) -> F.FusionOp:
    with FusionDefinition() as fd:
        body(fd)
    return fd.fusion()


def check(fusion: F.FusionOp, inputs: list, kind: str = "pointwise", compile_: bool = True) -> str:
    """Kernel outputs == reference outputs (bitwise for ints, 1 ulp-ish for floats)."""
    ours, ref, lowered = kernels_and_reference(fusion, inputs, kind)
    assert_close(ours, ref, rtol=2e-6, atol=1e-6)
    src = print_cuda(lowered.kernels[0].module)
    if compile_:
        compile_cuda(src, name=lowered.kernels[0].name, fusion=fusion.sym_name.data)
    return src


def rand(shape, dt, rng=None, lo=-3.0, hi=3.0):
    rng = rng or np.random.default_rng(0)
    npdt = NP[dt]
    if npdt is np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(np.dtype(npdt), np.integer):
        return rng.integers(-20, 20, size=shape).astype(npdt)
    return rng.uniform(lo, hi, size=shape).astype(npdt)


def test_gelu_is_vectorized_and_exact() -> None:
    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t3 = fd.ops.mul(t0, 0.5)
        t6 = fd.ops.erf(fd.ops.mul(t0, 0.707107))
        fd.add_output(fd.ops.mul(t3, fd.ops.add(t6, 1.0)))

    src = check(define(body), [rand([8, 600], DataType.Float)])
    assert "Vec<float, 4>" in src and "erff(" in src


@pytest.mark.parametrize(("dt", "n"), [(DataType.Float, 1003), (DataType.Float, 29 * 4096 + 3), (DataType.BFloat16, 2051),
                                       (DataType.Half, 4097), (DataType.Float, 515)])
@pytest.mark.parametrize("offset", [0, 1])
def test_a_long_1d_space_of_any_extent_is_vectorized_with_a_partial_last_vector(dt, n: int, offset: int) -> None:
    """A 1-D space whose extent the full vector does not divide (an odd number of
    parameters) gets full vectors (``pointwise_params``), the last one partial and
    stored lane by lane (``Parallelize.partial``, the lowering's predicated edge).
    Offset by one element the inputs are not aligned: the same kernel loads them
    lane by lane."""
    def body(fd):
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dt)
        y = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dt)
        fd.add_output(fd.ops.cast(fd.ops.add(fd.ops.mul(x, 2.0), y), dt))
        fd.add_output(fd.ops.exp(x))

    rng = np.random.default_rng(n)
    x, y = (rand([n + offset], dt, rng)[offset:] for _ in range(2))
    src = check(define(body), [x, y], compile_=offset == 0)
    width = 16 // np.dtype(NP[dt]).itemsize
    kernel = src[src.index('extern "C"') :]
    if n < width * 128:  # a small space: scalar, as before
        assert "Vec<" not in kernel and "} else {" not in kernel
        return
    assert "} else {" in kernel  # the partial vector
    loads = "*reinterpret_cast<const Vec<"
    assert (loads in kernel) == (offset == 0)  # vector loads where the inputs are aligned


UNARY = sorted(F.UNARY_OPS)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", [DataType.Float, DataType.BFloat16, DataType.Int32])
def test_every_unary_op(name: str, dt) -> None:
    if dt == DataType.Int32 and name in ("erfinv", "lgamma", "acosh", "atanh", "asin", "acos", "log", "log2",
                                         "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "tan"):
        pytest.skip("domain")
    if name == "bitwise_not" and dt != DataType.Int32:
        pytest.skip("integer op")
    if name == "imag":
        pytest.skip("complex operands only (tests/test_complex.py)")
    lo, hi = {"acosh": (1.1, 4), "atanh": (-0.9, 0.9), "erfinv": (-0.9, 0.9), "asin": (-0.9, 0.9),
              "acos": (-0.9, 0.9)}.get(name, (0.1, 3) if name.startswith(("log", "sqrt", "rsqrt", "lgamma")) else (-3, 3))

    def body(fd):
        t = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dt)
        fd.add_output(getattr(fd.ops, name)(t))

    x = rand([70], dt, lo=lo, hi=hi)
    check(define(body), [x], compile_=(name in ("erfinv", "sign", "lgamma", "signbit", "bitwise_not", "abs")))


BINARY = sorted(F.BINARY_OPS)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dts", [(DataType.Float, DataType.Half), (DataType.Int32, DataType.Int), (DataType.Bool, DataType.Bool)],
                         ids=["f32-f16", "i32-i64", "bool"])
def test_every_binary_op_with_broadcast(name: str, dts) -> None:
    a_dt, b_dt = dts
    is_int = a_dt in (DataType.Int32, DataType.Int)
    is_bool = a_dt == DataType.Bool
    if name.startswith("bitwise") and not (is_int or (is_bool and "shift" not in name)):
        pytest.skip("integer op")
    if is_bool and name in ("sub", "div", "truediv", "fmod", "remainder", "pow", "atan2"):
        pytest.skip("not defined on bool")
    if name in ("gcd", "logical_right_shift") and not is_int or name == "nextafter" and (is_int or is_bool):
        pytest.skip("integer op (gcd, logical_right_shift) / float32-float64 op (nextafter)")

    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=a_dt)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=b_dt)
        fd.add_output(getattr(fd.ops, name)(a, b))

    x, y = rand([5, 12], a_dt), rand([12], b_dt)
    if name in ("div", "fmod", "remainder") and is_int:
        y[y == 0] = 3
    if name == "pow":
        x = np.abs(x).astype(x.dtype) + (1 if not is_int else 0)
        y = (np.abs(y) % 4).astype(y.dtype)
    if "shift" in name:
        y = (np.abs(y) % 70).astype(y.dtype)
    check(define(body), [x, y], compile_=name in ("remainder", "pow", "bitwise_left_shift", "div"))


def test_scalar_input_and_python_scalar_promotion() -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.add(fd.ops.mul(t, s), 2))

    check(define(body), [rand([4, 16], DataType.BFloat16), 0.37])


def test_ternary_and_cast() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        c = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        fd.add_output(fd.ops.where(fd.ops.gt(a, 0.0), a, b))
        fd.add_output(fd.ops.clamp(a, -1.0, 1.0))
        fd.add_output(fd.ops.lerp(a, fd.ops.cast(b, DataType.Float), c))
        fd.add_output(fd.ops.addcmul(a, b, c, 0.5))
        fd.add_output(fd.ops.cast(fd.ops.threshold(a, 0.5, 7.0), DataType.Int32))

    check(define(body), [rand([6, 8], DataType.Float), rand([6, 8], DataType.Half), rand([6, 1], DataType.Float, lo=0, hi=1)])


@pytest.mark.parametrize("placement", range(8))
def test_seed_002_view_placements_are_one_kernel(placement: int) -> None:
    """Seed 002's A/B/C chain: views before, between and after add and mul."""
    a, b_, c = (placement >> 2) & 1, (placement >> 1) & 1, placement & 1
    shapes = [[8, 12], [2, 4, 12]]

    def body(fd):
        cur = 0
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)

        def view(x):
            nonlocal cur
            cur = 1 - cur
            return fd.ops.reshape(x, shapes[cur])

        if a:
            t = view(t)
        t = fd.ops.add(t, t)
        if b_:
            t = view(t)
        t = fd.ops.mul(t, t)
        if c:
            t = view(t)
        fd.add_output(t)

    check(define(body), [rand([8, 12], DataType.Float)], compile_=placement in (0, 7))


def test_transpose_with_bookend_views() -> None:
    """Seed 002: view -> permute -> set -> view -> view, one kernel with vector loads."""

    def body(fd):
        t0 = fd.define_tensor(shape=[6, 8, 4], contiguity=[True, True, True], dtype=DataType.Float)
        t1 = fd.ops.reshape(t0, [2, 3, 8, 4])
        t2 = fd.ops.permute(t1, [0, 2, 1, 3])
        t3 = fd.ops.set(t2)
        t4 = fd.ops.reshape(t3, [2, 8, 12])
        fd.add_output(fd.ops.reshape(t4, [16, 12]))

    src = check(define(body), [rand([6, 8, 4], DataType.Float)])
    assert "Vec<float, 4>" in src


def test_slice_pad_cat() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.strided_slice(a, [1, 2], [5, 10], [1, 2])
        p = fd.ops.pad(s, [1, 1, 0, 2], 0.5)
        fd.add_output(fd.ops.cat([p, fd.ops.neg(p)], 1))

    check(define(body), [rand([6, 10], DataType.Float)])


def test_index_select_and_gather() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        idx = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        g = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        fd.add_output(fd.ops.add(fd.ops.index_select(a, idx, 0), fd.ops.take_along_axis(a, g, 1)))

    rng = np.random.default_rng(3)
    check(define(body), [rand([6, 10], DataType.Float), np.array([5, 0, 4, 2, 2, 3], np.int64),
                         rng.integers(-10, 10, size=[6, 10]).astype(np.int64)])


def test_iota_and_broadcast_in_dim() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        row = fd.ops.iota(10, 0, 1, DataType.Float)
        fd.add_output(fd.ops.add(a, fd.ops.broadcast_in_dim(row, [6, 10], [1])))

    check(define(body), [rand([6, 10], DataType.Float)])


def test_non_contiguous_input_reads_through_strides() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[False, False], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(a))

    base = rand([10, 16], DataType.Float)
    check(define(body), [base[::2, 1::3]])


def test_output_stride_order() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(a), stride_order=[0, 1])

    check(define(body), [rand([4, 8], DataType.Float)])


def test_unaligned_input_falls_back_to_scalar_loads() -> None:
    def body(fd):
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.abs(a))

    base = rand([33], DataType.Float)
    src = check(define(body), [base[1:]])
    assert "in0_v" not in src


def test_a_pointwise_schedule_forced_on_a_reduction_still_reduces() -> None:
    """Any written schedule lowers to a kernel that computes the fusion: the pointwise
    kind's parameters on a column sum put the reduced axis on BIDx x TIDx (a block
    reduction over 128 threads, 4 of them in range) and the kept axis on a serial
    loop."""
    from fuser.runtime.schedule_segment import schedule_segment
    from fuser.runtime.signature import Signature
    from fuser.schedulers.params import PointwiseParams

    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(a, [0]))

    fusion = define(body)
    x = np.random.default_rng(3).uniform(-3, 3, (4, 5)).astype(np.float32)
    forced = schedule_segment(
        fusion, Signature.of(fusion, [x]), chosen=("pointwise", PointwiseParams(0, 1, 1, (128, 1, 1), (1, 1, 1)))
    )
    (out,), lowered = run_segment_on_cpu(forced, [x])
    np.testing.assert_allclose(out, x.sum(0), rtol=1e-6)
    assert lowered.kernels[0].block == (128, 1, 1)
    assert "fuser_block_reduce<" in print_cuda(lowered.kernels[0].module)


def test_half_scalar_argument_is_used_in_its_compute_type() -> None:
    """A half scalar input of a float32 kernel: threshold compared an f32 value with the
    raw f16 argument (xDSL TypeError, found by the malformed corpus)."""
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.define_scalar(dtype=DataType.Half)
        fd.add_output(fd.ops.threshold(t0, s, s))
        fd.add_output(fd.ops.clamp(t0, s, s))
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    want = fd.execute([x, 0.3])
    got, _ = run_segment_on_cpu(fd.fusion(), [x, 0.3])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_odd_width_bf16_through_a_view_unrolls_sixteen_elements() -> None:
    """GPT-2's logits copy in miniature: a bf16 input with a row pitch (a padded
    product), sliced to an odd width, split into [batch, tokens, vocab] and negated
    in float32 (GPT-2's is a round trip through float32). The input
    is read through views, so it is broadcast along no side of the output (a flat
    schedule, not a 2-D one split at the batch axis); odd rows allow no vectors, so a
    thread takes 16 elements (32 bytes in flight, as two 16-byte vectors would). On a
    one-SM target the small shape already gets the full unroll; the kernels equal the
    reference."""
    from fuser.passes.select_schedulers import SCHEDULE_ATTR
    from fuser.runtime.schedule_segment import schedule_segment
    from fuser.runtime.signature import Signature
    from fuser.schedulers.params import read_schedule
    from fuser.schedulers.target import H100

    def body(fd):
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        s = fd.ops.reshape(fd.ops.slice(a, [0, 0], [256, 301]), [4, 64, 301])
        fd.add_output(fd.ops.cast(fd.ops.neg(fd.ops.cast(s, DataType.Float)), DataType.BFloat16))

    fusion = define(body)
    padded = rand([256, 308], DataType.BFloat16)
    one_sm = H100.with_(sm_count=1)
    sched = schedule_segment(fusion, Signature.of(fusion, [padded]), one_sm)
    kind, params = read_schedule(sched.attributes[SCHEDULE_ATTR])
    assert kind == "pointwise"
    assert (params.break_point, params.vectorization, params.unroll) == (0, 1, 16)
    ours, ref, _ = kernels_and_reference(fusion, [padded], "pointwise", sched)
    assert_close(ours, ref, rtol=0, atol=0)


def test_rows_of_int64_statistics_do_not_shrink_the_unroll() -> None:
    """GPT-2's loss backward in miniature: odd bf16 rows with a float32 and an int64
    value per row broadcast along them. The int64 rows are read from cache, so the
    unroll counts the streamed bf16 elements: 16 a thread (on a one-SM target); the
    kernels equal the reference."""
    from fuser.passes.select_schedulers import SCHEDULE_ATTR
    from fuser.runtime.schedule_segment import schedule_segment
    from fuser.runtime.signature import Signature
    from fuser.schedulers.params import read_schedule
    from fuser.schedulers.target import H100

    def body(fd):
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        m = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        t = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Int)
        col = fd.ops.broadcast(fd.ops.iota(301, 0, 1, DataType.Int), [True, False])
        hit = fd.ops.where(fd.ops.eq(col, t), 1.0, 0.0)
        y = fd.ops.sub(fd.ops.exp(fd.ops.sub(fd.ops.cast(x, DataType.Float), m)), hit)
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))

    fusion = define(body)
    rng = np.random.default_rng(1)
    inputs = [rand([256, 301], DataType.BFloat16), rand([256, 1], DataType.Float),
              rng.integers(0, 301, size=(256, 1)).astype(np.int64)]
    sched = schedule_segment(fusion, Signature.of(fusion, inputs), H100.with_(sm_count=1))
    kind, params = read_schedule(sched.attributes[SCHEDULE_ATTR])
    assert kind == "pointwise" and (params.vectorization, params.unroll) == (1, 16)
    ours, ref, _ = kernels_and_reference(fusion, inputs, "pointwise", sched)
    assert_close(ours, ref, rtol=1e-2, atol=1e-2)
