"""``fuser_block_reduce`` (the generated kernels' block reduction, in the CUDA
preamble of ``codegen/cuda_printer.py``) over ``y`` alone: a tree of log2(blockDim.y)
steps. Every thread of a (x, z) column gets the sum of its column's rows, for any
number of rows (a power of two or not), and a Welford state merges to the column's
mean and M2. NVRTC compiles it here; a GPU runs it when one is present."""

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

BLOCKS = [(3, 6, 2), (8, 32, 1), (4, 5, 1), (1, 7, 3), (2, 1, 1), (32, 16, 2)]


def test_the_tree_over_y_compiles() -> None:
    for name in ("column_sums", "column_welford"):
        k = compile_cuda(SOURCE, name=name, options=CompileOptions(arch="sm_90"))
        assert k.image


def _expected(x: np.ndarray) -> np.ndarray:
    """x as [z][y][x]: each thread's expected value is its (x, z) column's sum over y."""
    return np.broadcast_to(x.sum(axis=1, keepdims=True), x.shape)


@pytest.mark.gpu
@pytest.mark.parametrize("block", BLOCKS)
def test_every_thread_gets_its_columns_sum_and_welford(block: tuple[int, int, int]) -> None:
    from fuser.runtime import cuda_driver as cd

    bx, by, bz = block
    n = bx * by * bz
    rng = np.random.default_rng(n)
    x = rng.integers(-8, 8, size=(bz, by, bx)).astype(np.float32)  # exact sums
    image = compile_cuda(SOURCE, name="column_sums").image
    module = cd.Module(image)
    dx, dout = cd.mem_alloc(4 * n), cd.mem_alloc(4 * 3 * n)
    try:
        cd.memcpy_htod(dx, x)
        module.kernel("column_sums", "pp").launch(1, block, [dx, dout])
        sums = np.empty((bz, by, bx), np.float32)
        cd.synchronize()
        cd.memcpy_dtoh(sums, dout)
        np.testing.assert_array_equal(sums, _expected(x))
        module.kernel("column_welford", "pp").launch(1, block, [dx, dout])
        w = np.empty((bz, by, bx, 3), np.float32)
        cd.synchronize()
        cd.memcpy_dtoh(w, dout)
        mean = x.mean(axis=1, keepdims=True)
        m2 = ((x - mean) ** 2).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(w[..., 0], np.broadcast_to(mean, x.shape), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(w[..., 1], np.broadcast_to(m2, x.shape), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(w[..., 2], np.full(x.shape, by, np.float32))
    finally:
        cd.mem_free(dx)
        cd.mem_free(dout)
