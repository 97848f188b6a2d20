"""Outer reductions and outer normalizations (column sums, ``var_mean`` over dim 0,
batch-norm style ``x - mean(x, 0)``) scheduled as the driver schedules a segment
(``fuser.runtime.schedule_segment``: select-schedulers, schedule-fusions) and lowered
from their loop nest: the kernels, run by the CPU kernel interpreter, equal the
reference interpreter, and every kernel compiles with NVRTC for sm_90 (through the
kernel cache, in ``run_segment_on_cpu``).

Small shapes keep the interpreter fast; ``splits`` forces the row splits over
``grid.y`` that large shapes get on the GPU (``cross_grid`` with ``grid.y`` =
splits on the heuristic's ``ReductionParams``, the outer persistent kind's
``stats``): a partials kernel, then a finishing kernel (then the apply kernel of an
outer normalization).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest

from benchmarks.workloads import build, workloads
from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweredFusion, LoweringError, TensorLayout
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.schedule_segment import ScheduleSegmentError, schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.params import (
    SCHEDULE_ATTR,
    InnerOuterParams,
    OuterPersistentParams,
    PointwiseParams,
    ReductionParams,
    read_schedule,
)
from fuser.schedulers.reduction import ReductionExtents, reduction_params
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100
from tests.kernel_check import assert_close, kernels_and_reference

NP = {
    DataType.Float: np.float32,
    DataType.BFloat16: ml_dtypes.bfloat16,
    DataType.Double: np.float64,
    DataType.Int32: np.int32,
    DataType.Int: np.int64,
    DataType.Bool: np.bool_,
}
WORKLOADS = {w.torch_key: w for w in workloads()}


def define(body: Callable[[FusionDefinition], None]) -> F.FusionOp:
    with FusionDefinition() as fd:
        body(fd)
    return fd.fusion()


def with_splits(params: object, splits: int) -> object:
    """``params`` with the rows split over ``splits`` blocks along ``grid.y``."""
    if isinstance(params, OuterPersistentParams):
        return replace(params, stats=with_splits(params.stats, splits))
    assert isinstance(params, ReductionParams) and not params.fastest_dim
    return replace(params, cross_grid=True, grid=(params.grid[0], splits, 1))


def scheduled(
    fusion: F.FusionOp, inputs: list, splits: int | None = None, chosen: tuple[str, object] | None = None
) -> F.FusionOp:
    """A copy of ``fusion`` with its loop nest written for ``inputs`` on the H100: the
    heuristic's schedule, with ``splits`` row splits forced onto it, or ``chosen``."""
    if splits is not None:
        sel = select(fusion, bind_sizes(fusion, [np.shape(x) for x in inputs]), H100)
        assert sel.kind is not None, sel.explain()
        chosen = (sel.kind, with_splits(sel.params, splits))
    return schedule_segment(fusion, Signature.of(fusion, inputs), H100, chosen)


def check(
    fusion: F.FusionOp,
    inputs: list,
    kind: str,
    splits: int | None = None,
    rtol: float = 2e-6,
    atol: float = 2e-6,
    chosen: tuple[str, object] | None = None,
) -> LoweredFusion:
    """The kernels of ``fusion`` scheduled as ``kind`` (NVRTC compiles each) equal the
    reference interpreter."""
    sched = scheduled(fusion, inputs, splits, chosen)
    assert read_schedule(sched.attributes[SCHEDULE_ATTR])[0] == kind
    ours, ref, lowered = kernels_and_reference(fusion, inputs, kind, sched)
    assert_close(ours, ref, rtol, atol)
    return lowered


def rand(shape, dt, seed: int = 0):
    rng = np.random.default_rng(seed)
    npdt = NP[dt]
    if npdt is np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(np.dtype(npdt), np.integer):
        return rng.integers(-20, 20, size=shape).astype(npdt)
    return rng.uniform(-3.0, 3.0, size=shape).astype(npdt)


def column_sum() -> F.FusionOp:
    return define(
        lambda fd: fd.add_output(
            fd.ops.sum(fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float), [0])
        )
    )


# ---- anchor workloads ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("splits", [None, 3])
def test_col_sum(dtype: str, splits: int | None) -> None:
    fusion = build(WORKLOADS["col_sum"], dtype).fusion()
    x = rand([37, 40], DataType.Float).astype(
        NP[DataType.Float if dtype == "float32" else DataType.BFloat16]
    )
    low = check(fusion, [x], "reduction", splits, rtol=1e-5, atol=1e-5)
    # One kernel when a block holds all rows; else partials (a row of partial sums
    # per split) + finish.
    assert len(low.kernels) == (1 if splits is None else 2)
    if splits is not None:
        assert low.kernels[0].grid[1] == 3 and low.scratch[0].numel == 3 * 40


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("splits", [None, 3])
def test_outer_norm(dtype: str, splits: int | None) -> None:
    """Two passes: the statistics (partials + finish when split), then the apply kernel."""
    fusion = build(WORKLOADS["outer_norm"], dtype).fusion()
    x = rand([37, 40], DataType.Float).astype(
        NP[DataType.Float if dtype == "float32" else DataType.BFloat16]
    )
    low = check(fusion, [x], "outer_persistent", splits, rtol=1e-5, atol=1e-5)
    name = fusion.sym_name.data
    assert [k.name for k in low.kernels] == (
        [name, f"{name}_finish", f"{name}_apply"] if splits else [name, f"{name}_apply"]
    )


@pytest.mark.parametrize("rows", [37, 64, 300])
def test_col_sum_interleaved_splits(rows: int) -> None:
    """Three splits take interleaved groups of rows (block y takes the groups y, y + 3,
    ...): any number of groups per split, none when there are fewer groups than
    splits, and a last group cut short by the rows' end."""
    fusion = build(WORKLOADS["col_sum"], "float32").fusion()
    x = rand([rows, 40], DataType.Float, seed=rows)
    low = check(fusion, [x], "reduction", 3, rtol=1e-5, atol=1e-5)
    assert [k.grid[1] for k in low.kernels] == [3, 1]


def test_col_sum_is_vectorized() -> None:
    """The columns are loaded as vectors of the scheduled width; the threads along the
    rows (``TIDy``) combine their sums through one shared tile."""
    fusion = build(WORKLOADS["col_sum"], "bfloat16").fusion()
    x = rand([37, 64], DataType.BFloat16)
    _, params = read_schedule(scheduled(fusion, [x]).attributes[SCHEDULE_ATTR])
    assert isinstance(params, ReductionParams) and params.vectorization > 1
    low = check(fusion, [x], "reduction")
    src = print_cuda(low.kernels[0].module)
    assert f"Vec<__nv_bfloat16, {params.vectorization}> in0_v = " in src
    assert f"__shared__ __align__(16) float slots_tile[{params.block[1]}]" in src


# ---- reductions over dim 0 -------------------------------------------------------------


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reduce_dim0(op: str, keepdim: bool) -> None:
    splits = 2 if keepdim else None

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        x = fd.ops.mul(t0, 0.5) if op == "prod" else t0  # a fused prologue; keeps prod finite
        fd.add_output(getattr(fd.ops, op)(x, [0], keepdim=keepdim))

    x = rand([21, 40], DataType.Float)
    if op in ("max", "min"):
        x[5, 3] = np.nan  # NaN propagates
    check(define(body), [x], "reduction", splits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", [DataType.Int32, DataType.Bool])
def test_integer_sum_and_max(dt) -> None:
    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        fd.add_output(fd.ops.sum(t0, [0]))
        fd.add_output(fd.ops.max(t0, [0]))

    check(define(body), [rand([19, 12], dt)], "reduction", 2)


@pytest.mark.parametrize("splits", [None, 3, 12])
def test_var_mean_dim0(splits: int | None) -> None:
    """Welford over the rows (mean, M2 and count merged across threads and splits);
    12 splits: the finish kernel's threads along y each combine a chunk of them."""

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, [0], correction=1)
        fd.add_output(var)
        fd.add_output(mean)

    low = check(
        define(body),
        [rand([37, 40], DataType.Float) + 100.0],
        "reduction",
        splits,
        rtol=1e-5,
        atol=1e-5,
    )
    if splits == 12:
        assert low.kernels[1].block[1] > 1


@pytest.mark.parametrize(("shape", "lanes"), [((37, 40), 4), ((300, 40), 4), ((37, 42), 2), ((37, 41), 1)])
def test_vector_lanes_share_the_welford_count(shape: tuple[int, int], lanes: int) -> None:
    """A vector's lanes are columns folded together, row after row, so their Welford
    counts are equal: every lane's Chan merge reads the first lane's count (one
    division a row for the vector; ``fold_slots(together=True)``): vectors of 4 for 40
    columns, of 2 for 42; 41 columns take no vectors, each column its own count."""

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, [0], correction=0)
        fd.add_output(var)
        fd.add_output(mean)

    x = rand(list(shape), DataType.Float, seed=shape[0]) + 100.0
    low = check(define(body), [x], "reduction", 3, rtol=1e-5, atol=1e-5)
    src = print_cuda(low.kernels[0].module)
    counts = re.findall(r"= (t\d+) \+ 1\.0f;", src)  # each lane's count + 1 in a row's step
    assert counts
    assert len(counts) == lanes * len(set(counts))  # ``lanes`` lanes a count


@pytest.mark.parametrize(
    ("dtype", "cols", "pieces"),
    [(DataType.Float, 40, 1), (DataType.BFloat16, 64, 2), (DataType.Float, 41, 0)],
)
def test_the_apply_kernel_reads_statistics_as_vectors(dtype: DataType, cols: int, pieces: int) -> None:
    """The apply kernel of an outer normalization reads the mean and variance the way
    it reads an input: a vector of columns loads its statistics (float32) as 16-byte
    vectors, two of them for a bfloat16 vector of 8 lanes; 41 columns take no vectors
    and load each column's statistics alone. The outputs equal the reference."""

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        x = fd.ops.cast(t0, DataType.Float) if dtype != DataType.Float else t0
        var, mean = fd.ops.var_mean(x, [0], correction=0, keepdim=True)
        y = fd.ops.mul(fd.ops.sub(x, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5)))
        fd.add_output(fd.ops.cast(y, dtype) if dtype != DataType.Float else y)

    tol = 1e-2 if dtype == DataType.BFloat16 else 1e-5
    low = check(define(body), [rand([37, cols], dtype, seed=cols)], "outer_persistent", 3, rtol=tol, atol=tol)
    apply = print_cuda(low.kernels[-1].module)
    assert low.kernels[-1].name.endswith("_apply")
    vectors = re.findall(r"Vec<float, 4> partial\d+_v", apply)
    assert len(vectors) == 2 * pieces  # the mean's and the variance's
    if not pieces:
        assert re.findall(r"= partial\d+\[", apply)


@pytest.mark.parametrize("splits", [None, 2])
def test_3d_reduces_two_leading_axes(splits: int | None) -> None:
    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.mul(t0, t0), [0, 1]))

    check(
        define(body), [rand([3, 7, 24], DataType.Float)], "reduction", splits, rtol=1e-5, atol=1e-5
    )


def test_middle_axis_kept_and_outer_norm_3d() -> None:
    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, [0], correction=0, keepdim=True)
        fd.add_output(fd.ops.mul(fd.ops.sub(t0, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5))))

    check(
        define(body), [rand([9, 3, 8], DataType.Float)], "outer_persistent", 2, rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("shape", [[37, 39], [29, 6]])
def test_tails(shape: list[int]) -> None:
    """Columns not a multiple of the vector width (or of bx * V), rows not a multiple
    of the split."""
    check(column_sum(), [rand(shape, DataType.Float)], "reduction", None, rtol=1e-5, atol=1e-5)
    check(column_sum(), [rand(shape, DataType.Float)], "reduction", 4, rtol=1e-5, atol=1e-5)
    low = check(column_sum(), [rand(shape, DataType.Float)], "reduction", 13, rtol=1e-5, atol=1e-5)
    assert low.kernels[1].block[1] > 1  # finish: a block reduction over the splits


def dependent_reductions(fd: FusionDefinition) -> None:
    """``sum((x - mean)^2)``: the second reduction needs the first's result."""
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    mean = fd.ops.div(fd.ops.sum(t0, [0], keepdim=True), 17.0)
    d = fd.ops.sub(t0, mean)
    fd.add_output(fd.ops.sum(fd.ops.mul(d, d), [0]))


def test_dependent_reductions_run_as_two_segments() -> None:
    """No scheduler takes the chain (the outer persistent loop nests compute one level
    of statistics): the segmenter splits it, and each segment's kernels run to the
    reference."""
    from fuser.frontend.execution import execute_kernels_on_cpu

    with FusionDefinition() as fd:
        dependent_reductions(fd)
    fusion = fd.fusion()
    x = rand([17, 8], DataType.Float)
    with pytest.raises(ScheduleSegmentError, match="a reduction reads another reduction's result"):
        schedule_segment(fusion, Signature.of(fusion, [x]))
    assert len(fd.plan([x]).segments) == 2
    (ours,) = execute_kernels_on_cpu(fd._ensure_defined(), [x])
    np.testing.assert_allclose(ours, run_fusion(fusion, [x.copy()])[0], rtol=1e-5, atol=1e-5)


def test_dependent_reductions_in_one_loop_nest_are_a_clear_error() -> None:
    """Forced into one segment (the outer persistent kind's parameters), the chain is
    not one loop nest: the lowering names the two reductions."""
    fusion = define(dependent_reductions)
    stats = reduction_params(ReductionExtents(17, 8, 8, False, 8), 4, H100)
    apply = PointwiseParams(1, 4, 1, (2, 64, 1), (1, 1, 1))
    sched = scheduled(fusion, [(17, 8)], chosen=("outer_persistent", OuterPersistentParams(stats, apply)))
    with pytest.raises(LoweringError, match="the reductions fuser.sum and fuser.sum "):
        lower_segment(sched, [TensorLayout.contiguous((17, 8))])


def test_the_inner_outer_kind_on_a_column_sum_is_a_clear_error() -> None:
    """The inner-outer kind forced on a fusion with column reductions only:
    schedule-fusions says it needs both kinds."""
    fusion = build(WORKLOADS["col_sum"], "float32").fusion()
    cols = reduction_params(ReductionExtents(8, 8, 8, False, 8), 4, H100)
    rows = reduction_params(ReductionExtents(8, 8, 8, True, 8), 4, H100)
    params = InnerOuterParams(rows, 4, 8, 32, "inner_persistent", rows, "reduction", cols)
    with pytest.raises(ScheduleSegmentError, match="an inner_outer_persistent schedule needs inner and outer reductions"):
        scheduled(fusion, [(8, 8)], chosen=("inner_outer_persistent", params))


@pytest.mark.parametrize("src", [(32, 1, 1), (1, 5, 1), (1, 1, 1)])
def test_identity_view_of_a_keepdim_sum_over_size_one_axes(src: tuple[int, int, int]) -> None:
    # Fuzz seed 3201 (kernels stage): the kept column index of an extent-1 axis is
    # `col % 1` (or `col / n`) in the kernel, the identity broadcast_in_dim of the sum
    # asks for the constant 0 there; the hook table missed and fd.plan raised "a
    # fuser.sum result is needed at an index this kernel does not hold".
    from fuser.frontend.execution import execute_kernels_on_cpu

    out_shape = [*src, 16]
    with FusionDefinition() as fd:
        x = fd.define_tensor(
            shape=[1 if e == 1 else -1 for e in src],
            contiguity=[True if e != 1 else None for e in src],
            dtype=DataType.BFloat16,
        )
        b = fd.ops.broadcast_in_dim(x, shape=out_shape, broadcast_dims=[0, 1, 2])
        s = fd.ops.floor(fd.ops.sum(fd.ops.mul(b, b), dims=[2], keepdim=True))
        fd.add_output(fd.ops.broadcast_in_dim(s, shape=out_shape, broadcast_dims=[0, 1, 2, 3]))
        fd.add_output(fd.ops.minimum(b, b))
    xs = [(np.random.default_rng(0).standard_normal(src) * 2).astype(ml_dtypes.bfloat16)]
    assert [s.scheduler for s in fd.plan(xs).segments] == ["reduction"]
    ours = execute_kernels_on_cpu(fd._ensure_defined(), xs)
    for o, r in zip(ours, fd.execute(xs), strict=True):
        np.testing.assert_array_equal(o.astype(np.float32), r.astype(np.float32))


def test_the_split_follows_the_target_not_the_h100() -> None:
    """The target the segment is scheduled for sets the row splits: they fill its SMs
    (half the SMs, half the splits of the partials kernel along grid.y)."""
    fusion = column_sum()
    grids = {}
    for target in (H100, replace(H100, name="half", sm_count=66)):
        sched = schedule_segment(fusion, Signature.of(fusion, [(32768, 2048)]), target)
        low = lower_segment(sched, [TensorLayout.contiguous((32768, 2048))], None, None, target)
        assert low.scheduler == "reduction"
        grids[target.name] = [k.grid for k in low.kernels]
    assert grids["half"] != grids[H100.name]
    assert grids["half"][0][1] * 2 == grids[H100.name][0][1]


@pytest.mark.parametrize("shape", [(16, 4, 2, 256), (16, 4, 2, 11), (16, 5, 5, 2)])
def test_interleaved_reduced_axes_vectorize_the_innermost_kept_axis(shape: tuple[int, ...]) -> None:
    """A column kernel over axes 1 and 3 (kept: 0 and 2, merged into its columns):
    a vector's lanes are consecutive elements of the innermost kept axis, so its width
    divides that axis (2 of ``[16, 4, 2, 256]``, 5 of ``[16, 5, 5, 2]``) as well as the
    innermost one. Random seeds 22808 and 16951 were vectorized by the innermost axis
    alone (4 and 2 lanes) and the lowering refused their plans. The reshaped input is
    an output too (its apply kernel takes the same columns), and the kernels equal the
    reference."""

    def body(fd):
        t0 = fd.define_tensor(shape=[-1] * 4, contiguity=[True] * 4, dtype=DataType.Float)
        x = fd.ops.mul(t0, 2.0)
        fd.add_output(x)
        fd.add_output(fd.ops.var(x, [1, 3], correction=0, keepdim=False))

    fusion = define(body)
    x = rand(list(shape), DataType.Float)
    kept = shape[2]
    ext = ReductionExtents(shape[1] * shape[3], shape[0] * kept, shape[3], False, kept)
    params = reduction_params(ext, 4, H100)
    assert kept % params.vectorization == 0 and shape[3] % params.vectorization == 0
    _, chosen = read_schedule(scheduled(fusion, [x]).attributes[SCHEDULE_ATTR])
    assert isinstance(chosen, ReductionParams) and not chosen.fastest_dim
    assert kept % chosen.vectorization == 0
    check(fusion, [x], "reduction", rtol=1e-5, atol=1e-5)
