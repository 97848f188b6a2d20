"""Rows split over a thread-block cluster (issue 15, item 4), checked without a GPU.

The inner persistent scheduler splits few long rows over the blocks of a cluster
(``row_cluster``); each reduction is a block reduction and then a reduction across the
cluster (``kernel.cluster_reduce``, distributed shared memory on the GPU). Here the
kernels run in the CPU kernel interpreter (the blocks of a cluster in lockstep) and are
compiled by NVRTC, against the reference interpreter: the heuristic's schedule at
sizes that cluster, and forced cluster schedules (``chosen`` parameters) small enough
for the interpreter: sum, max, Welford (layer norm, var_mean) and integer sums, f32 and
bf16, rows that the cluster's blocks do not divide.
"""

from __future__ import annotations

import dataclasses

import ml_dtypes
import numpy as np
import pytest

import benchmarks.workloads as W
from fuser import DataType, FusionDefinition
from fuser.codegen.kernel_interpreter import KernelError, run_kernel
from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.runtime.cpu_runner import run_segment_on_cpu
from fuser.runtime.schedule_segment import schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100
from tests.kernel_check import assert_close, kernels_and_reference


def _define(body, dtype: DataType = DataType.Float) -> F.FusionOp:
    with FusionDefinition() as fd:
        body(fd, dtype)
    return fd.fusion()


def _layer_norm_with_mean(fd: FusionDefinition, dtype: DataType) -> None:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    x = fd.ops.cast(t0, DataType.Float) if dtype != DataType.Float else t0
    var, mean = fd.ops.var_mean(x, [1], correction=0, keepdim=True)
    y = fd.ops.mul(fd.ops.sub(x, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
    fd.add_output(fd.ops.cast(y, dtype) if dtype != DataType.Float else y)
    fd.add_output(fd.ops.squeeze(mean, [1]))


def _int_centered(fd: FusionDefinition, dtype: DataType) -> None:
    del dtype
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32)
    s = fd.ops.sum(t0, [1], keepdim=True)
    fd.add_output(fd.ops.sub(fd.ops.sub(t0, s), fd.ops.max(t0, [1], keepdim=True)))


def _rand(shape: tuple[int, int], dtype=np.float32, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 3 + 1).astype(dtype)


def _cluster_of(lowered) -> tuple[int, int, int] | None:
    (kern,) = lowered.kernels
    func = kern.module.body.block.first_op
    return func.get_cluster_size()


@pytest.mark.parametrize(
    ("shape", "dtype", "blocks"),
    [((2, 5000), np.float32, 2), ((3, 9001), ml_dtypes.bfloat16, 4), ((2, 8200), np.float32, 4)],
)
def test_softmax_of_few_long_rows_is_one_clustered_kernel(shape, dtype, blocks: int) -> None:
    """The heuristic's schedule: the row over ``blocks`` blocks of a cluster; odd widths
    (9001: no vectors; the last block's part is short) included."""
    fdt = DataType.BFloat16 if dtype == ml_dtypes.bfloat16 else DataType.Float
    fusion = _define(W.softmax, fdt)
    ours, ref, lowered = kernels_and_reference(fusion, [_rand(shape, dtype)], "inner_persistent")
    assert _cluster_of(lowered) == (1, blocks, 1)
    assert lowered.kernels[0].grid == (shape[0], blocks, 1)
    tol = 1e-5 if dtype == np.float32 else 1e-2
    assert_close(ours, ref, tol, tol * 1e-1)


def _forced(fusion: F.FusionOp, shape: tuple[int, int], threads: int, blocks: int, vec: int = 1) -> F.FusionOp:
    """``fusion`` scheduled as inner persistent with a row over ``blocks`` blocks of a
    cluster and ``threads`` threads a block (small enough for the interpreter)."""
    sel = select(fusion, bind_sizes(fusion, [shape]), H100)
    assert sel.kind == "inner_persistent", sel.kind
    params = dataclasses.replace(
        sel.params, vectorization=vec, threads_per_row=threads, rows_per_block=1, cross_block=True,  # type: ignore[type-var]
        block=(threads, 1, 1), cross_grid=True, grid=(shape[0], blocks, 1), use_shared_memory=False,
    )
    return schedule_segment(fusion, Signature((shape,)), H100, chosen=("inner_persistent", params))


@pytest.mark.parametrize("blocks", [2, 3, 8])
def test_welford_across_a_cluster_matches_the_reference(blocks: int) -> None:
    """Layer norm (var_mean: a Welford state merged across the cluster by Chan's
    formula) with its mean as a second output, stored by every block of the row; 3
    blocks: a cluster that is not a power of two; 8: more blocks than the batch needs
    (the last blocks hold nothing of the row)."""
    shape = (3, 700)
    fusion = _define(_layer_norm_with_mean)
    scheduled = _forced(fusion, shape, 64, blocks)
    ours, ref, lowered = kernels_and_reference(fusion, [_rand(shape)], "inner_persistent", scheduled)
    assert _cluster_of(lowered) == (1, blocks, 1)
    assert_close(ours, ref, 1e-5, 1e-5)


def test_bf16_layer_norm_with_vectors_across_a_cluster() -> None:
    shape = (2, 1024)
    fusion = _define(_layer_norm_with_mean, DataType.BFloat16)
    scheduled = _forced(fusion, shape, 32, 4, vec=8)
    ours, ref, lowered = kernels_and_reference(fusion, [_rand(shape, ml_dtypes.bfloat16)], "inner_persistent", scheduled)
    assert _cluster_of(lowered) == (1, 4, 1)
    assert_close(ours, ref, 1e-2, 1e-2)


def test_integer_sums_across_a_cluster_are_exact() -> None:
    """An int32 row sum accumulates in int64 (the cluster's values are 64-bit); the
    row max in int32 (the lanes past the cluster's partials start from INT_MIN)."""
    shape = (2, 300)
    fusion = _define(_int_centered)
    x = np.random.default_rng(1).integers(-(2**30), 2**30, shape).astype(np.int32)
    scheduled = _forced(fusion, shape, 32, 4)
    ours, ref, lowered = kernels_and_reference(fusion, [x], "inner_persistent", scheduled)
    assert _cluster_of(lowered) == (1, 4, 1)
    assert_close(ours, ref, 0, 0)


_KERNEL = """
builtin.module {
  kernel.func @k(%x : memref<?xf32>, %y : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, cluster_size = array<i32: 4, 1, 1>} {
    %t = kernel.thread_id x
    %b = kernel.block_id x
    %c32 = arith.constant 32 : index
    %o = arith.muli %b, %c32 : index
    %i = arith.addi %o, %t : index
    %v = memref.load %x[%i] : memref<?xf32>
    %s = kernel.cluster_reduce %v {kind = "add"} : (f32) -> f32
    memref.store %s, %y[%i] : memref<?xf32>
    kernel.cluster_barrier
    kernel.return
  }
}
"""


def test_the_interpreter_runs_a_cluster_in_lockstep() -> None:
    """Every thread of a cluster gets the sum of its 4 blocks' values (exact here:
    small integers); the next cluster is separate."""
    module = parse_module(_KERNEL)
    x = np.arange(256, dtype=np.float32)
    y = np.zeros(256, np.float32)
    run_kernel(module, "k", [x, y], (8, 1, 1))
    np.testing.assert_array_equal(y[:128], np.full(128, x[:128].sum(), np.float32))
    np.testing.assert_array_equal(y[128:], np.full(128, x[128:].sum(), np.float32))
    with pytest.raises(KernelError, match=r"grid \[6, 1, 1\] is not a multiple of the cluster size \[4, 1, 1\]"):
        run_kernel(module, "k", [x, y], (6, 1, 1))


def test_a_block_that_skips_the_cluster_reduction_is_an_error() -> None:
    """Block 3 returns before the cluster reduction: undefined on a GPU (the others
    wait at the cluster barrier forever), an error in the interpreter."""
    text = _KERNEL.replace(
        "    %v = memref.load %x[%i] : memref<?xf32>\n",
        "    %v = memref.load %x[%i] : memref<?xf32>\n"
        "    %c3 = arith.constant 3 : index\n"
        "    %last = arith.cmpi eq, %b, %c3 : index\n"
        "    scf.if %last {\n      kernel.barrier\n    }\n",
    )
    module = parse_module(text)
    x = np.arange(128, dtype=np.float32)
    with pytest.raises(KernelError, match="cluster stopped at different synchronization points"):
        run_kernel(module, "k", [x, np.zeros(128, np.float32)], (4, 1, 1))


def test_a_serial_row_loop_around_cluster_reductions_matches_the_reference() -> None:
    """The hand-written schedule of ``lower-to-kernels-cluster.mlir`` (two rows a
    block, one after the other, each reduced across a cluster of 2) on the CPU."""
    from pathlib import Path

    text = (Path(__file__).parent / "filecheck/passes/lower-to-kernels-cluster.mlir").read_text()
    fusion = next(op for op in parse_module(text).ops if isinstance(op, F.FusionOp))
    x = _rand((4, 64))
    ours, lowered = run_segment_on_cpu(fusion, [x])
    assert _cluster_of(lowered) == (1, 2, 1)
    np.testing.assert_allclose(ours[0], x.astype(np.float64).sum(1), rtol=1e-5)
