"""The row lowering (inner reductions and inner persistent normalizations): kernels run
by the CPU kernel interpreter equal the reference interpreter, and every kernel
compiles with NVRTC for sm_90.

Shapes are small and chosen to exercise the tails: ``cols`` not a multiple of the
vector/thread tile (masked, clamped vectors), ``rows`` not a multiple of
``rows_per_block`` (rows past the end join the block reductions but do not store),
and full tiles; both cross-thread paths (``warp_reduce`` for 32 threads per row,
``block_reduce`` otherwise) and both kernel shapes (persistent straight-line code and
the streaming loop over column chunks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest

import benchmarks.workloads as W
from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower import concrete_shapes, default_out_layouts
from fuser.codegen.lower.common import LoweredFusion, LoweringError
from fuser.codegen.lower.rows import analyze, lower_rows
from fuser.codegen.nvrtc import compile_cuda
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import layout_of, run_segment_on_cpu
from fuser.schedulers.params import ReductionParams

NP = {DataType.Float: np.float32, DataType.BFloat16: ml_dtypes.bfloat16, DataType.Int32: np.int32,
      DataType.Double: np.float64}
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(ml_dtypes.bfloat16): 1e-2, np.dtype(np.float64): 1e-12}


def define(body: Callable[[FusionDefinition], None]) -> F.FusionOp:
    with FusionDefinition() as fd:
        body(fd)
    return fd.fusion()


def rand(shape: list[int], dt: object, seed: int = 0, lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    npdt = NP[dt]  # type: ignore[index]
    if np.issubdtype(np.dtype(npdt), np.integer):
        return rng.integers(-20, 20, size=shape).astype(npdt)
    return rng.uniform(lo, hi, size=shape).astype(npdt)


def compare(ours: list[np.ndarray], ref: list[np.ndarray], atol: float | None = None) -> None:
    """Integers exactly; floats to the dtype's precision relative to the output's
    magnitude (a sum of n terms cancels to small values with absolute errors)."""
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref, strict=True):
        r = np.asarray(r)
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, r.shape, o.dtype, r.dtype)
        if o.dtype.kind in "biu":
            np.testing.assert_array_equal(o, r)
        else:
            rtol = RTOL[o.dtype]
            r64 = r.astype(np.float64)
            finite = np.abs(r64[np.isfinite(r64)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            np.testing.assert_allclose(o.astype(np.float64), r64, rtol=rtol,
                                       atol=atol if atol is not None else rtol * scale, equal_nan=True)


def compile_all(fusion: F.FusionOp, lowered: LoweredFusion) -> list[str]:
    srcs = []
    for k in lowered.kernels:
        src = print_cuda(k.module)
        compile_cuda(src, name=k.name, fusion=fusion.sym_name.data)
        srcs.append(src)
    return srcs


def check(fusion: F.FusionOp, inputs: list, kind: str | None = None, compile_: bool = True,
          atol: float | None = None) -> LoweredFusion:
    ours, lowered = run_segment_on_cpu(fusion, inputs)
    if kind is not None:
        assert lowered.scheduler == kind
    compare(ours, run_fusion(fusion, [x.copy() if isinstance(x, np.ndarray) else x for x in inputs]), atol)
    if compile_:
        compile_all(fusion, lowered)
    return lowered


def check_forced(fusion: F.FusionOp, inputs: list[np.ndarray], params: ReductionParams, kind: str,
                 compile_: bool = True) -> LoweredFusion:
    """Lower with given parameters (bypassing the scheduler's choice) and check."""
    in_layouts = [layout_of(x) for x in inputs]
    shapes = concrete_shapes(fusion, [x.shape for x in inputs])
    lowered = lower_rows(fusion, shapes, in_layouts, default_out_layouts(fusion, shapes, in_layouts),
                         params, fusion.sym_name.data, kind)
    ours, _ = run_segment_on_cpu(fusion, inputs, lowered)
    compare(ours, run_fusion(fusion, [x.copy() for x in inputs]))
    if compile_:
        compile_all(fusion, lowered)
    return lowered


def params(tpr: int, rpb: int, vec: int, batch: int = 1, smem: bool = False) -> ReductionParams:
    return ReductionParams(True, vec, tpr, rpb, batch, tpr > 32, False, (tpr, rpb, 1), (1, 1, 1),
                           use_shared_memory=smem)


def workload(name: str, dt: object) -> F.FusionOp:
    with FusionDefinition() as fd:
        getattr(W, name)(fd, dt)
    return fd.fusion()


def workload_inputs(fusion: F.FusionOp, shape: tuple[int, int], dt: object) -> list[np.ndarray]:
    return [rand(list(shape) if a.type.rank == 2 else [shape[1]], dt, seed=i)
            for i, a in enumerate(fusion.inputs)]


# ---- the anchor workloads ----------------------------------------------------------------

ANCHOR_KIND = {"softmax": "inner_persistent", "layernorm": "inner_persistent",
               "rmsnorm": "inner_persistent", "row_sum": "reduction"}


ANCHOR_CASES = [
    pytest.param(shape, dt, id=f"{sid}-{did}")
    for shape, sid in [((5, 70), "tails"), ((4, 256), "full-tile"), ((6, 96), "warp")]
    for dt, did in [(DataType.Float, "f32"), (DataType.BFloat16, "bf16")]
    if not (sid == "full-tile" and did == "bf16")  # the same code as f32's full tile
]


@pytest.mark.parametrize(("shape", "dt"), ANCHOR_CASES)
@pytest.mark.parametrize("name", sorted(ANCHOR_KIND))
def test_anchor_workloads(name: str, shape: tuple[int, int], dt: object) -> None:
    """5x70: 35 (f32) vectors on 64 threads per row, 5 rows in blocks of 2; 4x256: one
    full vector per thread and full blocks; 6x96: 32 threads per row (warp shuffles)."""
    fusion = workload(name, dt)
    # NVRTC takes ~0.3 s a kernel: compile the masked (tails) and warp-shuffle variants;
    # the full tile is the same code without the masks.
    lowered = check(fusion, workload_inputs(fusion, shape, dt), ANCHOR_KIND[name],
                    compile_=shape != (4, 256))
    (kern,) = lowered.kernels
    tpr = kern.block[0]
    src = print_cuda(kern.module)
    if tpr == 32:
        assert "fuser_warp_reduce(" in src and "fuser_block_reduce<" not in src.split("extern")[1]
    else:
        assert "fuser_block_reduce<true, false, false>" in src
    width = 8 if dt == DataType.BFloat16 else 4
    if shape[1] % width == 0:
        assert f"Vec<{'__nv_bfloat16' if width == 8 else 'float'}, {width}>" in src


@pytest.mark.parametrize("dt", [DataType.Float, DataType.BFloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("shape", [(5, 70), (4, 256)], ids=["tails", "full-tile"])
def test_sum_bcast_add(shape: tuple[int, int], dt: object) -> None:
    """No scheduler takes sum + broadcast + add (no persistent buffer, and the reduction
    scheduler rejects the broadcast back): lowered here with inner persistent params."""
    fusion = workload("sum_bcast_add", dt)
    vec = 2 if shape[1] % 4 else 4
    check_forced(fusion, workload_inputs(fusion, shape, dt), params(64, 2, vec), "inner_persistent",
                 compile_=shape == (5, 70))


def test_softmax_is_one_pass_over_global_memory() -> None:
    fusion = workload("softmax", DataType.Float)
    lowered = check(fusion, workload_inputs(fusion, (4, 1024), DataType.Float), "inner_persistent",
                    compile_=False)
    # 64 threads x 4 vectors of 4 floats (the scheduler's TARGET_BATCH): every vector of
    # the row is loaded once, kept in registers through both reductions and stored.
    assert lowered.kernels[0].block[0] == 64
    src = print_cuda(lowered.kernels[0].module).split("extern")[1]
    assert src.count("reinterpret_cast<const Vec<float, 4>*>(&in0") == 4
    assert src.count("fuser_block_reduce<") == 2  # max, then sum


def test_layernorm_var_mean_is_one_welford_reduction() -> None:
    fusion = workload("layernorm", DataType.Float)
    lowered = check(fusion, workload_inputs(fusion, (5, 70), DataType.Float), "inner_persistent",
                    compile_=False)
    src = print_cuda(lowered.kernels[0].module).split("extern")[1]
    # 35 vectors of 2 floats: one warp a row (warp_reduce), one Welford combine.
    assert lowered.kernels[0].block[0] == 32
    assert src.count("fuser_warp_reduce(") == 1 and "FuserWelfordOp()" in src
    lowered = check(fusion, workload_inputs(fusion, (3, 1000), DataType.Float), "inner_persistent",
                    compile_=False)
    src = print_cuda(lowered.kernels[0].module).split("extern")[1]
    assert lowered.kernels[0].block[0] == 64  # 250 vectors of 4: a block reduction
    assert src.count("fuser_block_reduce<") == 1 and "FuserWelfordOp()" in src


def test_layernorm_large_offset_mean() -> None:
    """var_mean stays accurate on data with a large mean: within f32 rounding of the
    shifted inputs (E[x^2] - mean^2 in f32 would be off by ~1e-2 here)."""
    fusion = workload("layernorm", DataType.Float)
    x, w, b = workload_inputs(fusion, (3, 200), DataType.Float)
    check(fusion, [(x + 1000.0).astype(np.float32), w, b], "inner_persistent", compile_=False, atol=5e-4)


# ---- streaming (non-persistent) kernels ---------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "layernorm", "row_sum"])
def test_streaming_multi_pass(name: str) -> None:
    """Rows streamed in chunks (an scf.for over 2 full chunks of 32x2x4 columns and a
    partial one): one pass per reduction level, then a pass storing the full outputs."""
    fusion = workload(name, DataType.Float)
    lowered = check_forced(fusion, workload_inputs(fusion, (3, 600), DataType.Float),
                           params(32, 2, 2, smem=True), "inner_persistent", compile_=name == "layernorm")
    src = print_cuda(lowered.kernels[0].module)
    assert "for (" in src


def test_streaming_bf16_row_sum_with_loop() -> None:
    fusion = workload("row_sum", DataType.BFloat16)
    check_forced(fusion, workload_inputs(fusion, (3, 1100), DataType.BFloat16), params(64, 1, 8),
                 "reduction")


def test_cross_grid_params_run_one_block_per_row() -> None:
    fusion = workload("row_sum", DataType.Float)
    p = replace(params(64, 1, 4), cross_grid=True, grid=(2, 4, 1))
    lowered = check_forced(fusion, workload_inputs(fusion, (2, 2000), DataType.Float), p, "reduction",
                           compile_=False)
    assert lowered.kernels[0].grid == (2, 1, 1)


# ---- reduction kinds and dtypes -----------------------------------------------------------


@pytest.mark.parametrize("keepdim", [False, True])
def test_int32_sum_max_min_prod(keepdim: bool) -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int32)
        for op in ("sum", "max", "min", "prod"):
            fd.add_output(getattr(fd.ops, op)(t, [1], keepdim=keepdim))

    x = rand([5, 70], DataType.Int32)
    x[x == 0] = 3
    x[2] = np.int32(2**31 - 1)  # int64 accumulation, no int32 overflow
    lowered = check(define(body), [x], "reduction", compile_=keepdim)
    src = print_cuda(lowered.kernels[0].module)
    assert "long long" in src or "int64_t" in src


@pytest.mark.parametrize("dt", [DataType.Float, DataType.BFloat16], ids=["f32", "bf16"])
def test_float_sum_max_min_prod_with_nan(dt: object) -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        for op in ("sum", "max", "min", "prod"):
            fd.add_output(getattr(fd.ops, op)(t, [1], keepdim=op == "max"))

    x = rand([5, 70], dt, lo=0.9, hi=1.1)
    x[1, 3] = np.nan
    x[3, 69] = np.nan  # in the masked last vector
    check(define(body), [x], "reduction", compile_=dt == DataType.BFloat16)


@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_correction(correction: int) -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.var(t, [1], correction=correction, keepdim=correction == 1))

    check(define(body), [rand([5, 70], DataType.Float)], "reduction", compile_=correction == 1)


def test_var_of_short_rows_is_inf_or_nan_like_the_reference() -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.var(t, [1], correction=2))

    check(define(body), [rand([3, 2], DataType.Float)], "reduction", compile_=False)


def test_welford_outputs() -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        avg, var_sum, n = fd.ops.welford(t, [1])
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)

    lowered = check(define(body), [rand([5, 70], DataType.Float, lo=10, hi=12)], "reduction")
    assert lowered.kernels[0].block[1] > 1


def test_multi_axis_rows_and_columns() -> None:
    """R = [2, 3] rows, C = [4, 10] columns (V = 2 divides the innermost extent)."""

    def body(fd):
        t = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True] * 4, dtype=DataType.Float)
        m = fd.ops.max(t, [2, 3], keepdim=True)
        e = fd.ops.exp(fd.ops.sub(t, m))
        fd.add_output(fd.ops.div(e, fd.ops.sum(e, [2, 3], keepdim=True)))

    check(define(body), [rand([2, 3, 4, 10], DataType.Float)], "inner_persistent")


def test_multiple_outputs_per_row_and_full() -> None:
    """Layer norm returning the normalized rows, the mean and the reciprocal std."""

    def body(fd):
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        xf = fd.ops.cast(x, DataType.Float)
        var, mean = fd.ops.var_mean(xf, [1], correction=0, keepdim=False)
        r = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
        y = fd.ops.mul(fd.ops.sub(xf, fd.ops.broadcast(mean, [False, True])), fd.ops.broadcast(r, [False, True]))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
        fd.add_output(mean)
        fd.add_output(r)
        fd.add_output(fd.ops.max(xf, [1], keepdim=True))

    check(define(body), [rand([5, 70], DataType.BFloat16)], "inner_persistent")


def test_non_contiguous_input() -> None:
    fusion = workload("softmax", DataType.Float)
    x = rand([70, 5], DataType.Float).T  # column-major: scalar loads through strides
    check(fusion, [x], "inner_persistent", compile_=False)


# ---- errors --------------------------------------------------------------------------------


def test_reduction_result_broadcast_along_columns_is_rejected() -> None:
    """``x + sum(x, 1)`` with a square x broadcasts the row sums along the columns."""

    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t, fd.ops.sum(t, [1])))

    with pytest.raises(LoweringError, match=r"fuser.add .*trailing axes"):
        run_segment_on_cpu(define(body), [rand([6, 6], DataType.Float)])


def test_non_trailing_reduction_axes_are_rejected() -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t, [0, 2]))

    fusion = define(body)
    with pytest.raises(LoweringError, match=r"fuser.sum reduces axes \[0, 2\].*trailing"):
        analyze(fusion, concrete_shapes(fusion, [(3, 4, 5)]))


def test_permuted_reduction_result_is_rejected() -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.sum(t, [1], keepdim=True)
        fd.add_output(fd.ops.permute(s, [1, 0]))

    fusion = define(body)
    with pytest.raises(LoweringError, match="fuser.permute"):
        analyze(fusion, concrete_shapes(fusion, [(4, 6)]))


def test_layernorm_weight_and_bias_loads_follow_the_reduction_in_big_blocks() -> None:
    """With 256 threads x 8 floats a row, holding the weight and bias from the start
    would keep 2 x 8 x 256 values of the block live across the reduction: they are
    loaded after it (``_defer_epilogue``); with 32 threads x 2 floats they are loaded
    with the row. Both are right."""
    fusion = workload("layernorm", DataType.Float)
    inputs = workload_inputs(fusion, (3, 8192), DataType.Float)
    big = check_forced(fusion, inputs, params(256, 1, 4), "inner_persistent", compile_=False)
    src = print_cuda(big.kernels[0].module).split("extern")[1]
    reduce_at = src.index("fuser_block_reduce<")
    assert src.index("&in1[") > reduce_at and src.index("&in2[") > reduce_at
    assert src.index("&in0[") < reduce_at
    small = workload_inputs(fusion, (3, 64), DataType.Float)
    low = check_forced(fusion, small, params(32, 1, 2), "inner_persistent", compile_=False)
    src = print_cuda(low.kernels[0].module).split("extern")[1]
    assert src.index("&in1[") < src.index("fuser_warp_reduce(")
