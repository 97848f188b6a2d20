"""``fuser_block_reduce`` (the generated kernels' block reduction, in the CUDA
preamble of ``codegen/cuda_printer.py``).

Over ``y`` alone: a tree of log2(blockDim.y) steps. Every thread of a (x, z) column
gets the sum of its column's rows, for any number of rows (a power of two or not), and
a Welford state merges to the column's mean and M2.

Over ``x`` alone (a row of whole warps): warp shuffles, then the warps' partials merged
by a butterfly over log2(warps) lanes when the warps are a power of two, else in a
chain. Every thread of a (y, z) row gets the row's sum, its NaN-propagating max
(``fuser_max``: ``max.NaN`` on sm_80 and later) and its Welford state.

NVRTC compiles the kernels here; a GPU runs them when one is present."""

from __future__ import annotations

import numpy as np
import pytest

from fuser.codegen.cuda_printer import PREAMBLE
from fuser.codegen.nvrtc import CompileOptions, compile_cuda

SOURCE = PREAMBLE + r"""
extern "C" __global__ void column_sums(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float smem[1024];
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[tid] = fuser_block_reduce<false, true, false>(x[tid], FuserAdd(), smem);
}

extern "C" __global__ void column_welford(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ FuserWelford<float> smem[1024];
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  FuserWelford<float> w = fuser_block_reduce<false, true, false>(
      FuserWelford<float>{x[tid], 0.0f, 1.0f}, FuserWelfordOp(), smem);
  out[3 * tid] = w.mean;
  out[3 * tid + 1] = w.m2;
  out[3 * tid + 2] = w.n;
}
"""

ROW_SOURCE = PREAMBLE + r"""
extern "C" __global__ void row_reduce(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ FuserWelford<float> smem[1024];
  const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned n = blockDim.x * blockDim.y * blockDim.z;
  out[tid] = fuser_block_reduce<true, false, false>(x[tid], FuserAdd(), smem);
  out[n + tid] = fuser_block_reduce<true, false, false>(x[tid], FuserMax(), smem);
  out[2 * n + tid] = fuser_block_reduce<true, false, false>(x[tid], FuserMin(), smem);
  FuserWelford<float> w = fuser_block_reduce<true, false, false>(
      FuserWelford<float>{x[tid], 0.0f, 1.0f}, FuserWelfordOp(), smem);
  out[3 * n + tid] = w.mean;
  out[4 * n + tid] = w.m2;
  out[5 * n + tid] = w.n;
}
"""

ROW_BLOCKS = [(64, 1, 1), (96, 2, 1), (128, 4, 2), (256, 2, 1), (512, 1, 1), (1024, 1, 1), (160, 3, 1)]
"""Rows of 2, 3, 4, 8, 16, 32 and 5 warps (powers of two take the butterfly)."""

BLOCKS = [(3, 6, 2), (8, 32, 1), (4, 5, 1), (1, 7, 3), (2, 1, 1), (32, 16, 2)]


def test_the_tree_over_y_compiles() -> None:
    for name in ("column_sums", "column_welford"):
        k = compile_cuda(SOURCE, name=name, options=CompileOptions(arch="sm_90"))
        assert k.image


def _expected(x: np.ndarray) -> np.ndarray:
    """x as [z][y][x]: each thread's expected value is its (x, z) column's sum over y."""
    return np.broadcast_to(x.sum(axis=1, keepdims=True), x.shape)


def _launch(source: str, name: str, x: np.ndarray, block: tuple[int, int, int], out_shape: tuple[int, ...]) -> np.ndarray:
    """Kernel ``name`` of ``source`` run on one block of ``block`` threads over the
    float32 input ``x``; its float32 output, of ``out_shape``."""
    from fuser.runtime import cuda_driver as cd

    module = cd.Module(compile_cuda(source, name=name).image)
    out = np.empty(out_shape, np.float32)
    dx, dout = cd.mem_alloc(x.nbytes), cd.mem_alloc(out.nbytes)
    try:
        cd.memcpy_htod(dx, x)
        module.kernel(name, "pp").launch(1, block, [dx, dout])
        cd.synchronize()
        cd.memcpy_dtoh(out, dout)
    finally:
        cd.mem_free(dx)
        cd.mem_free(dout)
    return out


def _ptx(source: str, name: str, arch: str) -> str:
    image = compile_cuda(source, name=name, options=CompileOptions(arch=arch), ptx=True).image
    return image.decode() if isinstance(image, bytes) else image


@pytest.mark.gpu
@pytest.mark.parametrize("block", BLOCKS)
def test_every_thread_gets_its_columns_sum_and_welford(block: tuple[int, int, int]) -> None:
    bx, by, bz = block
    n = bx * by * bz
    rng = np.random.default_rng(n)
    x = rng.integers(-8, 8, size=(bz, by, bx)).astype(np.float32)  # exact sums
    sums = _launch(SOURCE, "column_sums", x, block, (bz, by, bx))
    np.testing.assert_array_equal(sums, _expected(x))
    w = _launch(SOURCE, "column_welford", x, block, (bz, by, bx, 3))
    mean = x.mean(axis=1, keepdims=True)
    m2 = ((x - mean) ** 2).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(w[..., 0], np.broadcast_to(mean, x.shape), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(w[..., 1], np.broadcast_to(m2, x.shape), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(w[..., 2], np.full(x.shape, by, np.float32))


def test_the_row_reduction_compiles_to_max_nan() -> None:
    """On sm_90, ``fuser_max``/``fuser_min`` are one ``max.NaN``/``min.NaN`` each; before
    sm_80 they are the compare-and-select."""
    text = _ptx(ROW_SOURCE, "row_reduce", "sm_90")
    assert "max.NaN.f32" in text and "min.NaN.f32" in text
    old_text = _ptx(ROW_SOURCE, "row_reduce", "sm_75")
    assert "max.NaN" not in old_text and "setp.nan.f32" in old_text


@pytest.mark.gpu
@pytest.mark.parametrize("block", ROW_BLOCKS)
@pytest.mark.parametrize("nan_row", [False, True])
def test_every_thread_gets_its_rows_reductions(block: tuple[int, int, int], nan_row: bool) -> None:
    bx, by, bz = block
    rng = np.random.default_rng(bx * by * bz)
    x = rng.integers(-64, 64, size=(bz, by, bx)).astype(np.float32)  # exact sums
    x[0, 0, bx // 3] = np.inf
    if nan_row:
        x[-1, -1, bx - 1] = np.nan
    out = _launch(ROW_SOURCE, "row_reduce", x, block, (6, bz, by, bx))

    def each(v: np.ndarray) -> np.ndarray:
        return np.broadcast_to(v, x.shape)

    np.testing.assert_array_equal(out[0], each(x.sum(axis=2, keepdims=True)))
    np.testing.assert_array_equal(out[1], each(x.max(axis=2, keepdims=True)))  # NaN, inf propagate
    np.testing.assert_array_equal(out[2], each(x.min(axis=2, keepdims=True)))
    finite = np.isfinite(x).all(axis=2, keepdims=True)
    mean = x.mean(axis=2, keepdims=True)
    m2 = ((x - mean) ** 2).sum(axis=2, keepdims=True)
    rows = np.broadcast_to(finite, x.shape)
    np.testing.assert_allclose(out[3][rows], each(mean)[rows], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out[4][rows], each(m2)[rows], rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(out[5], np.full(x.shape, bx, np.float32))


def test_welford_counts_are_guarded_by_a_foldable_max() -> None:
    """A Welford fold divides by its count guarded by max(count, 1). Counts are never
    NaN, so the guard is ``fmax``: NVRTC folds it when the counts are constants (the
    unrolled chunks of a layer norm), where ``fuser_max`` (an asm ``max.NaN``) would
    keep a real division per chunk (the bf16 16384x771 layer norm's kernel grew from
    12.5 to 18.9 KB of machine code and ran 5% slower that way)."""
    import re

    import ml_dtypes

    from benchmarks.workloads import build, workloads

    w = next(w for w in workloads() if w.name == "layernorm_unaligned_16384x771")
    src = build(w, "bfloat16").generate_cuda_code([np.zeros(s, ml_dtypes.bfloat16) for s in w.shapes])
    body = src[src.index("__global__"):]
    assert "fmaxf(" in body and "fuser_max(" not in body
    name = re.search(r"void (?:__launch_bounds__\(\d+\) )?(\w+)\(", src).group(1)  # type: ignore[union-attr]
    assert "max.NaN" not in _ptx(src, name, "sm_90")
