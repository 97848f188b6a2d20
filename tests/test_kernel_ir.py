"""Kernel-level IR: every hand-built kernel shape runs in the CPU kernel interpreter
(against numpy) and its CUDA compiles with NVRTC for sm_90."""

from __future__ import annotations

import io

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, ModuleOp

from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.cuda_target import CudaTarget
from fuser.codegen.kernel_builders import (
    KernelBuilder,
    PointwiseKernelBuilder,
    TensorArg,
    global_memref,
    inner_persistent_softmax_kernel,
    inner_reduction_kernel,
    outer_reduction_kernel,
    transpose_kernel,
)
from fuser.codegen.kernel_interpreter import KernelError, run_kernel
from fuser.ir.context import make_context
from fuser.ir.dialects import kernel as k
from fuser.ir.dtypes import DType

RNG = np.random.default_rng(0)
TOL = {DType.float32: 1e-5, DType.float16: 2e-3, DType.bfloat16: 1.6e-2}


def _rand(shape: tuple[int, ...], dtype: DType) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype.to_numpy())


def _close(got: np.ndarray, want: np.ndarray, dtype: DType) -> None:
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=TOL[dtype], atol=TOL[dtype])


def _mul_exp(b: KernelBuilder, xs: list) -> list:
    return [b.mulf(xs[0], b.math("exp", xs[1]))]


def _pointwise(dtype: DType, strided_b: bool = False, index_bits: int = 32) -> ModuleOp:
    return PointwiseKernelBuilder(
        "mul_exp", [TensorArg("a", dtype), TensorArg("b", dtype, contiguous=not strided_b)],
        [TensorArg("y", dtype)], rank=2, body=_mul_exp, vector_width=4, unroll=2,
        block_size=64, index_bits=index_bits).build()


def _ref_mul_exp(a: np.ndarray, b: np.ndarray, dtype: DType) -> np.ndarray:
    r = a.astype(np.float32) * np.exp(b.astype(np.float32))
    return r.astype(dtype.to_numpy())


@pytest.mark.parametrize("dtype", [DType.float32, DType.bfloat16, DType.float16])
def test_pointwise_vectorized_with_tail(dtype: DType) -> None:
    rows, cols = 9, 124  # 1116 elements: two full tiles of 512, a tail of 92
    a, b = _rand((rows, cols), dtype), _rand((rows, cols), dtype)
    y = np.full(rows * cols, np.nan, dtype.to_numpy())
    run_kernel(_pointwise(dtype), "mul_exp", [a.reshape(-1), b.reshape(-1), y, rows * cols],
               grid=(2,))
    _close(y.reshape(rows, cols), _ref_mul_exp(a, b, dtype), dtype)


def test_pointwise_strided_broadcast_input() -> None:
    rows, cols = 5, 24
    a = _rand((rows, cols), DType.float32)
    bcol = _rand((rows,), DType.float32)  # b[r, c] = bcol[r]: strides (1, 0)
    y = np.zeros(rows * cols, np.float32)
    run_kernel(_pointwise(DType.float32, strided_b=True), None,
               [a.reshape(-1), bcol, y, rows * cols, rows, cols, 1, 0], grid=(3,))
    _close(y.reshape(rows, cols), a * np.exp(bcol)[:, None], DType.float32)


@pytest.mark.parametrize(("kind", "block", "dtype"), [
    ("add", (64, 1), DType.float32), ("max", (32, 2), DType.float32),
    ("min", (64, 2), DType.bfloat16), ("mul", (32, 1), DType.float32)])
def test_inner_reduction(kind: str, block: tuple[int, int], dtype: DType) -> None:
    rows, cols = 5, 70
    x = _rand((rows, cols), dtype)
    if kind == "mul":
        x = (1 + 0.01 * x.astype(np.float32)).astype(dtype.to_numpy())
    y = np.zeros(rows, np.float32)
    m = inner_reduction_kernel("red", dtype, DType.float32, kind, block, index_bits=32)
    run_kernel(m, "red", [x.reshape(-1), y, rows, cols, cols, 1], grid=(-(-rows // block[1]),))
    fn = {"add": np.sum, "max": np.max, "min": np.min, "mul": np.prod}[kind]
    _close(y, fn(x.astype(np.float32), axis=1), DType.float32)


def test_inner_reduction_of_a_transposed_view() -> None:
    x = _rand((70, 3), DType.float32)  # reduce x.T's rows: strides (1, 3)
    y = np.zeros(3, np.float32)
    run_kernel(inner_reduction_kernel("red", DType.float32, DType.float32, "add", (64, 1)),
               None, [x.reshape(-1), y, 3, 70, 1, 3], grid=(3,))
    _close(y, x.sum(0), DType.float32)


@pytest.mark.parametrize("block", [(32, 2), (64, 1)])
def test_inner_welford_var_mean(block: tuple[int, int]) -> None:
    rows, cols = 3, 150
    x = (RNG.standard_normal((rows, cols)) * 3 + 1000).astype(np.float32)  # large mean
    var, mean = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
    m = inner_reduction_kernel("var_mean", DType.float32, DType.float32, "welford", block)
    run_kernel(m, None, [x.reshape(-1), var, mean, rows, cols, cols, 1],
               grid=(-(-rows // block[1]),))
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(mean, x64.mean(1), rtol=1e-6)
    np.testing.assert_allclose(var, x64.var(1, ddof=1), rtol=1e-3)


@pytest.mark.parametrize(("kind", "dtype"), [("add", DType.float32), ("max", DType.float16)])
def test_outer_reduction(kind: str, dtype: DType) -> None:
    rows, cols = 37, 40  # 2 blocks of 32 columns, 4 threads striding over rows
    x = _rand((rows, cols), dtype)
    y = np.zeros(cols, np.float32)
    m = outer_reduction_kernel("colred", dtype, DType.float32, kind, (32, 4))
    run_kernel(m, None, [x.reshape(-1), y, rows, cols, cols, 1], grid=(2,))
    fn = np.sum if kind == "add" else np.max
    _close(y, fn(x.astype(np.float32), axis=0), DType.float32)


@pytest.mark.parametrize("dtype", [DType.float32, DType.float16])
def test_inner_persistent_softmax(dtype: DType) -> None:
    rows, cols = 3, 200  # 64 threads x 4 registers hold up to 256 columns
    x = (_rand((rows, cols), dtype).astype(np.float32) * 4).astype(dtype.to_numpy())
    y = np.zeros(rows * cols, dtype.to_numpy())
    m = inner_persistent_softmax_kernel("softmax", dtype, block_size=64, elems_per_thread=4)
    run_kernel(m, None, [x.reshape(-1), y, cols, cols, cols], grid=(rows,))
    x32 = x.astype(np.float64)
    e = np.exp(x32 - x32.max(1, keepdims=True))
    _close(y.reshape(rows, cols), e / e.sum(1, keepdims=True), dtype)


@pytest.mark.parametrize("dtype", [DType.float32, DType.bfloat16])
def test_transpose_through_padded_shared_tile(dtype: DType) -> None:
    rows, cols = 40, 20  # grid 2 x 3 of 16x16 tiles, blocks of 16 x 4 threads
    x = _rand((rows, cols), dtype)
    y = np.zeros(rows * cols, dtype.to_numpy())
    m = transpose_kernel("transpose", dtype, tile=16, block_rows=4, padding=1)
    run_kernel(m, None, [x.reshape(-1), y, rows, cols, cols, 1, rows, 1], grid=(2, 3))
    np.testing.assert_array_equal(y.reshape(cols, rows), x.T)


# ---- errors ------------------------------------------------------------------------------


def test_out_of_bounds_access_names_kernel_op_and_index() -> None:
    a, b = np.zeros(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(KernelError, match=r"kernel 'mul_exp', memref.load, block \(0, 0, 0\), "
                                          r"thread \(\d+, 0, 0\): index \[100\] out of bounds"):
        run_kernel(_pointwise(DType.float32), None, [a, b, np.zeros(100, np.float32), 101],
                   grid=(1,))


def test_misaligned_vector_access() -> None:
    buf = np.zeros(1030, np.float32)
    a = buf[1:1025]  # 4 bytes past a 16-byte boundary
    with pytest.raises(KernelError, match="vector.load.*misaligned 128-bit access"):
        run_kernel(_pointwise(DType.float32), None,
                   [a, np.zeros(1024, np.float32), np.zeros(1024, np.float32), 1024], grid=(1,))


def test_divergent_barrier_is_an_error() -> None:
    b = KernelBuilder("diverge", [("x", global_memref(DType.float32))], (64, 1, 1))
    tid = b.thread_id("x")
    b.if_(b.cmp("slt", tid, 32), lambda: (b.barrier(), [])[1])
    m = b.finish()
    with pytest.raises(KernelError, match="kernel 'diverge', kernel.barrier.*divergent"):
        run_kernel(m, None, [np.zeros(1, np.float32)], grid=(1,))


def test_static_shared_memory_over_the_limit_is_a_lowering_error() -> None:
    """A kernel's shared tiles plus its block-reduction workspace (one f32 partial a
    thread) count against the 48 KB of static shared memory: one byte-precise sum,
    the same that the printer declares; over it (one float more, padded to 16 bytes),
    ``finish`` names the parts."""
    from fuser.codegen.lower.common import LoweringError

    def kernel(tile_floats: int) -> KernelBuilder:
        b = KernelBuilder("big", [("x", global_memref(DType.float32))], (64, 8, 1))
        tid = b.thread_id("x")
        b.shared([tile_floats], DType.float32.to_xdsl(), name="tile")
        b.block_reduce([b.load(b.arg("x"), [tid])], "add")
        return b

    fits = kernel((k.STATIC_SHARED_LIMIT - 512 * 4) // 4).finish()
    func = next(op for op in fits.walk() if isinstance(op, k.FuncOp))
    assert func.static_shared_bytes() == {"%tile": k.STATIC_SHARED_LIMIT - 2048, "block_reduce workspace": 2048}
    assert "fuser_red_smem[2048]" in print_cuda(fits)
    with pytest.raises(LoweringError, match=r"kernel big: .* 49168 bytes \(%tile 47120, block_reduce workspace "
                                            r"2048\), more than the 49152 bytes of static shared memory"):
        kernel((k.STATIC_SHARED_LIMIT - 512 * 4) // 4 + 1).finish()


def test_index_overflow_in_32_bit_kernel() -> None:
    m = _pointwise(DType.float32, index_bits=32)
    with pytest.raises(KernelError, match="overflows 32-bit index math"):
        run_kernel(m, None, [np.zeros(4, np.float32)] * 3 + [2**31 - 1], grid=(1,))


def test_shuffle_and_warp_reduce_exchange_lanes() -> None:
    b = KernelBuilder("lanes", [("x", global_memref(DType.float32)),
                                ("y", global_memref(DType.float32)),
                                ("z", global_memref(DType.float32))], (64, 1, 1))
    tid = b.thread_id("x")
    v = b.load(b.arg("x"), [tid])
    down = b.val(k.ShuffleOp(v, b.const(1, IntegerType(32)), "down"))
    b.store(down, b.arg("y"), [tid])
    (s,) = b.warp_reduce([v], "add")
    b.store(s, b.arg("z"), [tid])
    m = b.finish()
    x = np.arange(64, dtype=np.float32)
    y, z = np.zeros(64, np.float32), np.zeros(64, np.float32)
    run_kernel(m, None, [x, y, z], grid=(1,))
    want_down = np.concatenate([np.r_[x[1:32], x[31]], np.r_[x[33:64], x[63]]])
    np.testing.assert_array_equal(y, want_down)
    np.testing.assert_array_equal(z, np.repeat([x[:32].sum(), x[32:].sum()], 32))


# ---- CUDA ----------------------------------------------------------------------------------


def _all_kernels() -> dict[str, ModuleOp]:
    out = {}
    for dt in (DType.float32, DType.float16, DType.bfloat16):
        n = dt.name
        out[f"pointwise_{n}"] = _pointwise(dt)
        out[f"pointwise_strided_{n}"] = _pointwise(dt, strided_b=True, index_bits=64)
        out[f"inner_sum_{n}"] = inner_reduction_kernel("red", dt, DType.float32, "add")
        out[f"inner_welford_{n}"] = inner_reduction_kernel("wf", dt, dt, "welford", (32, 4))
        out[f"outer_max_{n}"] = outer_reduction_kernel("col", dt, dt, "max")
        out[f"softmax_{n}"] = inner_persistent_softmax_kernel("softmax", dt)
        out[f"transpose_{n}"] = transpose_kernel("transpose", dt)
    return out


KERNELS = _all_kernels()


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_compiles_with_nvrtc(name: str) -> None:
    from fuser.codegen.nvrtc import CompileOptions, compile_cuda

    src = print_cuda(KERNELS[name])
    compiled = compile_cuda(src, name=name, options=CompileOptions(arch="sm_90"))
    assert compiled.kind == "cubin" and compiled.image


def test_cuda_target_prints_the_module() -> None:
    module = KERNELS["softmax_float16"]
    out = io.StringIO()
    CudaTarget().emit(make_context(), module, out)
    text = out.getvalue()
    assert text == print_cuda(module)
    assert 'extern "C" __global__ void __launch_bounds__(128) softmax(' in text
    assert "#pragma unroll" in text and "__float2half_rn(" in text
