"""Inner reductions and inner persistent normalizations through the loop-nest lowering:
each fusion is scheduled as the driver schedules a segment (``select-schedulers`` and
``schedule-fusions``, or forced parameters through ``schedule_segment(chosen=...)``),
its kernels run in the CPU kernel interpreter equal the reference interpreter, and
every kernel compiles with NVRTC for sm_90.

Shapes are small and chosen to exercise the tails: ``cols`` not a multiple of the
threads' tile (a partial last batch of vectors, masked lanes), ``rows`` not a
multiple of the rows a block holds (rows past the end join the cross-thread
reductions but do not store), and full tiles; both cross-thread paths (warp shuffles
for 32 threads a row, ``fuser_block_reduce`` for more) and both kernel shapes (the
persistent kind's unrolled batch held in registers, and the reduction kind's serial
loop streaming over column chunks).
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
from fuser.codegen.lower.common import LoweredFusion, LoweredKernel
from fuser.frontend.execution import execute_kernels_on_cpu
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu
from fuser.runtime.schedule_segment import ScheduleSegmentError, schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.params import ReductionParams

NP = {
    DataType.Float: np.float32,
    DataType.BFloat16: ml_dtypes.bfloat16,
    DataType.Int32: np.int32,
    DataType.Double: np.float64,
}
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(ml_dtypes.bfloat16): 1e-2, np.dtype(np.float64): 1e-12}


def define(body: Callable[[FusionDefinition], None]) -> F.FusionOp:
    with FusionDefinition() as fd:
        body(fd)
    return fd.fusion()


def rand(
    shape: list[int], dt: object, seed: int = 0, lo: float = -3.0, hi: float = 3.0
) -> np.ndarray:
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
            np.testing.assert_allclose(
                o.astype(np.float64),
                r64,
                rtol=rtol,
                atol=atol if atol is not None else rtol * scale,
                equal_nan=True,
            )


def check(
    fusion: F.FusionOp,
    inputs: list,
    kind: str | None = None,
    compile_: bool = True,
    atol: float | None = None,
    chosen: tuple[str, ReductionParams] | None = None,
) -> LoweredFusion:
    """Schedule ``fusion`` at the inputs' sizes (by the heuristic, or with ``chosen``:
    a scheduler kind and its parameters), lower its loop nest, run the kernels in the
    interpreter and compare with the reference; ``compile_``: also compile every kernel
    with NVRTC (once per distinct source: the kernel cache)."""
    scheduled = fusion
    if chosen is not None:
        scheduled = schedule_segment(fusion, Signature.of(fusion, inputs), chosen=chosen)
    ours, lowered = run_segment_on_cpu(scheduled, inputs, nvrtc=compile_)
    if kind is not None:
        assert lowered.scheduler == kind
    compare(
        ours,
        run_fusion(fusion, [x.copy() if isinstance(x, np.ndarray) else x for x in inputs]),
        atol,
    )
    return lowered


def body_of(kern: LoweredKernel) -> str:
    """The kernel's own code (after the shared helpers' prelude)."""
    return print_cuda(kern.module).split('extern "C"', 1)[1]


def params(tpr: int, rpb: int, vec: int, batch: int = 1) -> ReductionParams:
    return ReductionParams(True, vec, tpr, rpb, batch, tpr > 32, False, (tpr, rpb, 1), (1, 1, 1))


def workload(name: str, dt: object) -> F.FusionOp:
    with FusionDefinition() as fd:
        getattr(W, name)(fd, dt)
    return fd.fusion()


def workload_inputs(fusion: F.FusionOp, shape: tuple[int, int], dt: object) -> list[np.ndarray]:
    return [
        rand(list(shape) if a.type.rank == 2 else [shape[1]], dt, seed=i)
        for i, a in enumerate(fusion.inputs)
    ]


# ---- the anchor workloads ----------------------------------------------------------------

ANCHOR_KIND = {
    "softmax": "inner_persistent",
    "layernorm": "inner_persistent",
    "rmsnorm": "inner_persistent",
    "row_sum": "reduction",
}


ANCHOR_CASES = [
    pytest.param(shape, dt, id=f"{sid}-{did}")
    for shape, sid in [((5, 70), "tails"), ((4, 256), "full-tile"), ((6, 96), "idle-lanes")]
    for dt, did in [(DataType.Float, "f32"), (DataType.BFloat16, "bf16")]
    if not (sid == "full-tile" and did == "bf16")  # the same code as f32's full tile
]


@pytest.mark.parametrize(("shape", "dt"), ANCHOR_CASES)
@pytest.mark.parametrize("name", sorted(ANCHOR_KIND))
def test_anchor_workloads(name: str, shape: tuple[int, int], dt: object) -> None:
    """5x70: 35 vectors of 2 on 32 threads a row (a partial second batch), 5 rows in
    blocks of 4 (a partial block); 4x256: whole vectors on every thread, one full
    block; 6x96: fewer vectors than threads a row (idle lanes)."""
    fusion = workload(name, dt)
    # NVRTC takes ~0.2 s a kernel: compile the masked variants; the full tile is the
    # same code without the masks.
    lowered = check(
        fusion, workload_inputs(fusion, shape, dt), ANCHOR_KIND[name], compile_=shape != (4, 256)
    )
    (kern,) = lowered.kernels
    body = body_of(kern)
    if kern.block[0] == 32:  # a row is one warp: shuffles only, no shared memory
        assert "fuser_warp_reduce(" in body and "fuser_block_reduce<" not in body
        assert "__shared__" not in body
    else:  # a row over several warps: a block reduction along x, rows on y apart
        assert f"fuser_block_reduce<true, false, false, {kern.block[0]}, {kern.block[1]}>" in body
    # Loads of the row are vectors of the widest width (at most 16 bytes) that
    # divides the row (aligned groups of full vectors are opt-in:
    # tests/test_aligned_rows.py).
    elem = "__nv_bfloat16" if dt == DataType.BFloat16 else "float"
    itemsize = np.dtype(NP[dt]).itemsize  # type: ignore[index]
    width = max(w for w in (1, 2, 4, 8) if w * itemsize <= 16 and shape[1] % w == 0)
    assert f"reinterpret_cast<const Vec<{elem}, {width}>*>(&in0[" in body


@pytest.mark.parametrize("dt", [DataType.Float, DataType.BFloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("shape", [(5, 70), (4, 256)], ids=["tails", "full-tile"])
def test_sum_bcast_add(shape: tuple[int, int], dt: object) -> None:
    """Sum + broadcast + add (no persistent buffer; the heuristic takes it as inner
    persistent with one warp a row): here with forced inner persistent parameters,
    64 threads a row (a block reduction) and 2 rows a block."""
    fusion = workload("sum_bcast_add", dt)
    vec = 2 if shape[1] % 4 else 4
    lowered = check(
        fusion,
        workload_inputs(fusion, shape, dt),
        "inner_persistent",
        compile_=shape == (5, 70),
        chosen=("inner_persistent", params(64, 2, vec)),
    )
    assert [k.block for k in lowered.kernels] == [(64, 2, 1)]


def test_softmax_is_one_pass_over_global_memory() -> None:
    fusion = workload("softmax", DataType.Float)
    lowered = check(
        fusion,
        workload_inputs(fusion, (4, 1024), DataType.Float),
        "inner_persistent",
        compile_=False,
    )
    # 64 threads x 4 vectors of 4 floats (the scheduler's TARGET_BATCH): every vector of
    # the row is loaded once, kept in registers through both reductions and stored.
    assert lowered.kernels[0].block[0] == 64
    src = body_of(lowered.kernels[0])
    assert src.count("reinterpret_cast<const Vec<float, 4>*>(&in0") == 4
    assert src.count("fuser_block_reduce<") == 2  # max, then sum


def test_layernorm_var_mean_is_one_welford_reduction() -> None:
    fusion = workload("layernorm", DataType.Float)
    lowered = check(
        fusion, workload_inputs(fusion, (5, 70), DataType.Float), "inner_persistent", compile_=False
    )
    src = body_of(lowered.kernels[0])
    # 35 vectors of 2 floats: one warp a row (warp_reduce), one Welford combine.
    assert lowered.kernels[0].block[0] == 32
    assert src.count("fuser_warp_reduce(") == 1 and "FuserWelfordOp()" in src
    lowered = check(
        fusion,
        workload_inputs(fusion, (3, 1000), DataType.Float),
        "inner_persistent",
        compile_=False,
    )
    src = body_of(lowered.kernels[0])
    assert lowered.kernels[0].block[0] == 64  # 250 vectors of 4: a block reduction
    assert src.count("fuser_block_reduce<") == 1 and "FuserWelfordOp()" in src


def test_layernorm_large_offset_mean() -> None:
    """var_mean stays accurate on data with a large mean: within f32 rounding of the
    shifted inputs (E[x^2] - mean^2 in f32 would be off by ~1e-2 here)."""
    fusion = workload("layernorm", DataType.Float)
    x, w, b = workload_inputs(fusion, (3, 200), DataType.Float)
    check(
        fusion,
        [(x + 1000.0).astype(np.float32), w, b],
        "inner_persistent",
        compile_=False,
        atol=5e-4,
    )


# ---- streaming (non-persistent) kernels ---------------------------------------------------

STREAM_PASSES = {"softmax": 3, "layernorm": 2, "row_sum": 1}


@pytest.mark.parametrize("name", sorted(STREAM_PASSES))
def test_streaming_multi_pass(name: str) -> None:
    """Rows streamed in chunks by the reduction kind (its batch a serial loop over 9
    full chunks of 32x2 columns and a partial one, nothing held across loops): one
    pass over the row per reduction level, then a pass storing the full outputs."""
    fusion = workload(name, DataType.Float)
    lowered = check(
        fusion,
        workload_inputs(fusion, (3, 600), DataType.Float),
        "reduction",
        compile_=name == "layernorm",
        chosen=("reduction", params(32, 2, 2)),
    )
    src = body_of(lowered.kernels[0])
    assert src.count("for (") == STREAM_PASSES[name]
    assert src.count("reinterpret_cast<const Vec<float, 2>*>(&in0") == STREAM_PASSES[name]


def test_streaming_bf16_row_sum_with_loop() -> None:
    """64 threads x 4 bf16 a chunk: 4 full chunks of the 1100 columns and a partial one."""
    fusion = workload("row_sum", DataType.BFloat16)
    inputs = workload_inputs(fusion, (3, 1100), DataType.BFloat16)
    lowered = check(fusion, inputs, "reduction", chosen=("reduction", params(64, 1, 4)))
    assert "for (" in body_of(lowered.kernels[0])
    # A vector width that does not divide the row is refused when the schedule is
    # written (the vectorized loop-nest id must divide its extent).
    with pytest.raises(
        ScheduleSegmentError, match="vectorization = 8 does not divide the innermost extent 1100"
    ):
        schedule_segment(
            fusion, Signature.of(fusion, inputs), chosen=("reduction", params(64, 1, 8))
        )


def test_cross_grid_params_split_each_row_over_blocks() -> None:
    """``cross_grid`` with ``grid.y = 4``: four blocks share each row, their partial
    sums go through a scratch buffer and a second kernel finishes the rows."""
    fusion = workload("row_sum", DataType.Float)
    p = replace(params(64, 1, 4), cross_grid=True, grid=(2, 4, 1))
    lowered = check(
        fusion,
        workload_inputs(fusion, (2, 2000), DataType.Float),
        "reduction",
        chosen=("reduction", p),
    )
    assert len(lowered.kernels) == 2 and lowered.kernels[0].grid == (2, 4, 1)
    assert lowered.scratch


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
    src = "".join(body_of(k) for k in lowered.kernels)
    assert "long long" in src or "int64_t" in src


@pytest.mark.parametrize("dt", [DataType.Float, DataType.BFloat16], ids=["f32", "bf16"])
def test_float_sum_max_min_prod_with_nan(dt: object) -> None:
    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        for op in ("sum", "max", "min", "prod"):
            fd.add_output(getattr(fd.ops, op)(t, [1], keepdim=op == "max"))

    x = rand([5, 70], dt, lo=0.9, hi=1.1)
    x[1, 3] = np.nan
    x[3, 69] = np.nan  # in the last vector of the row
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
    assert lowered.kernels[0].block[1] > 1  # several rows a block, each its own Welford


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
        y = fd.ops.mul(
            fd.ops.sub(xf, fd.ops.broadcast(mean, [False, True])),
            fd.ops.broadcast(r, [False, True]),
        )
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))
        fd.add_output(mean)
        fd.add_output(r)
        fd.add_output(fd.ops.max(xf, [1], keepdim=True))

    check(define(body), [rand([5, 70], DataType.BFloat16)], "inner_persistent")


def test_non_contiguous_input() -> None:
    fusion = workload("softmax", DataType.Float)
    x = rand([70, 5], DataType.Float).T  # column-major: scalar loads through strides
    check(fusion, [x], "inner_persistent", compile_=False)


def test_non_trailing_reduction_axes() -> None:
    """Reducing axes 0 and 2 of [3, 4, 5] (the row template rejected it): one
    reduction kernel, the reduced ids across the block's threads."""

    def body(fd):
        t = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t, [0, 2]))

    lowered = check(define(body), [rand([3, 4, 5], DataType.Float)], "reduction")
    assert len(lowered.kernels) == 1


# ---- fusions no single row kernel computes: segmented by the frontend ----------------------


def run_segmented(body: Callable[[FusionDefinition], None], x: np.ndarray) -> None:
    """``fd``'s segmented program with every kernel in the interpreter equals the
    reference interpreter."""
    with FusionDefinition() as fd:
        body(fd)
    ours = execute_kernels_on_cpu(fd._ensure_defined(), [x], nvrtc=False)
    compare(ours, run_fusion(fd.fusion(), [x.copy()]))


def test_reduction_result_broadcast_along_columns() -> None:
    """``x + sum(x, 1)`` with a square x broadcasts the row sums along the columns: no
    scheduler takes it as one segment; the frontend runs a reduction and a pointwise
    segment."""

    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t, fd.ops.sum(t, [1])))

    x = rand([6, 6], DataType.Float)
    with pytest.raises(
        ScheduleSegmentError,
        match=r"inner_persistent: .*fuser.add .*broadcast against trailing axes",
    ):
        run_segment_on_cpu(define(body), [x], nvrtc=False)
    run_segmented(body, x)


def test_permuted_reduction_result() -> None:
    """A permute of a row sum: no row kernel stores it; the frontend runs the
    reduction and permutes its result on the host (a view)."""

    def body(fd):
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.sum(t, [1], keepdim=True)
        fd.add_output(fd.ops.permute(s, [1, 0]))

    x = rand([4, 6], DataType.Float)
    with pytest.raises(ScheduleSegmentError, match=r"fuser.permute .*neither per-row nor full"):
        run_segment_on_cpu(define(body), [x], nvrtc=False)
    run_segmented(body, x)


def test_layernorm_weight_and_bias_are_loaded_after_the_reduction() -> None:
    """Inputs that only the output stage reads (the weight and the bias) are inlined
    into it, so they are not live across the reduction: loaded after it, the row
    before it; in big blocks (256 threads x 2 vectors of 4 floats a row) and small ones alike."""
    fusion = workload("layernorm", DataType.Float)
    for shape, p in [((3, 2048), params(256, 1, 4)), ((3, 64), params(32, 1, 2))]:
        lowered = check(
            fusion,
            workload_inputs(fusion, shape, DataType.Float),
            "inner_persistent",
            compile_=False,
            chosen=("inner_persistent", p),
        )
        src = body_of(lowered.kernels[0])
        reduce_at = src.index(
            "fuser_block_reduce<" if p.threads_per_row > 32 else "fuser_warp_reduce("
        )
        assert src.index("&in0[") < reduce_at
        assert src.index("&in1[") > reduce_at and src.index("&in2[") > reduce_at
