"""The column lowering (outer reductions, outer normalizations): generated kernels,
run by the CPU kernel interpreter, equal the reference interpreter; every kernel
compiles with NVRTC for sm_90.

Small shapes keep the interpreter fast; ``splits`` forces the multi-kernel path
(partials, finish, apply) that large shapes take on the GPU.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest

from benchmarks.workloads import build, workloads
from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import kernels_of, print_cuda, print_kernel
from fuser.codegen.lower import concrete_shapes, default_out_layouts
from fuser.codegen.lower.columns import lower_columns
from fuser.codegen.lower.common import LoweredFusion, LoweringError, TensorLayout
from fuser.codegen.nvrtc import compile_cuda
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import layout_of, run_segment_on_cpu
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.reduction import ReductionExtents, reduction_params
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100

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


def lower_split(
    fusion: F.FusionOp, inputs: list, splits: int | None, chosen: tuple[str, object] | None = None, **options: object
) -> LoweredFusion:
    """The lowering with ``splits`` row splits (the multi-kernel path), of the
    scheduler the registry selects (or ``chosen``: a kind and its parameters)."""
    shapes_in = [x.shape if isinstance(x, np.ndarray) else x for x in inputs]
    in_layouts = [layout_of(x) if isinstance(x, np.ndarray) else None for x in inputs]
    if chosen is None:
        sel = select(fusion, bind_sizes(fusion, shapes_in), H100)
        chosen = (sel.kind, sel.params)  # type: ignore[assignment]
    kind, params = chosen  # type: ignore[misc]
    shapes = concrete_shapes(fusion, shapes_in)
    outs = default_out_layouts(fusion, shapes, in_layouts)
    return lower_columns(
        fusion, shapes, in_layouts, outs, params, "k", kind, splits=splits, **options
    )  # type: ignore[arg-type]


def check(
    fusion: F.FusionOp,
    inputs: list,
    kind: str,
    splits: int | None = None,
    rtol: float = 2e-6,
    atol: float = 2e-6,
    chosen: tuple[str, object] | None = None,
) -> LoweredFusion:
    lowered = lower_split(fusion, inputs, splits, chosen) if splits is not None or chosen else None
    ours, lowered = run_segment_on_cpu(fusion, inputs, lowered)
    assert lowered.scheduler == kind
    ref = run_fusion(fusion, [x.copy() if isinstance(x, np.ndarray) else x for x in inputs])
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref, strict=True):
        r = np.asarray(r)
        assert o.shape == r.shape and o.dtype == r.dtype
        if o.dtype.kind in "biu":
            np.testing.assert_array_equal(o, r)
        else:
            np.testing.assert_allclose(
                o.astype(np.float64), r.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True
            )
    # Every kernel of the segment, compiled as one translation unit (faster in CI).
    funcs = [f for k in lowered.kernels for f in kernels_of(k.module)]
    src = "\n\n".join(
        [print_cuda(lowered.kernels[0].module)] + [print_kernel(f) for f in funcs[1:]]
    )
    compile_cuda(src, name=lowered.kernels[0].name, fusion=fusion.sym_name.data)
    return lowered


def rand(shape, dt, seed: int = 0):
    rng = np.random.default_rng(seed)
    npdt = NP[dt]
    if npdt is np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(np.dtype(npdt), np.integer):
        return rng.integers(-20, 20, size=shape).astype(npdt)
    return rng.uniform(-3.0, 3.0, size=shape).astype(npdt)


# ---- anchor workloads ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("splits", [None, 3])
def test_col_sum(dtype: str, splits: int | None) -> None:
    fusion = build(WORKLOADS["col_sum"], dtype).fusion()
    x = rand([37, 40], DataType.Float).astype(
        NP[DataType.Float if dtype == "float32" else DataType.BFloat16]
    )
    low = check(fusion, [x], "reduction", splits, rtol=1e-5, atol=1e-5)
    # One kernel when a block holds all rows; else partials + finish.
    assert len(low.kernels) == (1 if splits is None else 2)
    if splits is not None:
        assert low.kernels[0].grid[1] == 3 and low.scratch[0].numel == 3 * 40


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("splits", [None, 3])
def test_outer_norm(dtype: str, splits: int | None) -> None:
    fusion = build(WORKLOADS["outer_norm"], dtype).fusion()
    x = rand([37, 40], DataType.Float).astype(
        NP[DataType.Float if dtype == "float32" else DataType.BFloat16]
    )
    low = check(fusion, [x], "outer_persistent", splits, rtol=1e-5, atol=1e-5)
    names = [k.name for k in low.kernels]
    assert names == (["k_partials1", "k_finish1", "k_apply"] if splits else [fusion.sym_name.data])


@pytest.mark.parametrize("rows", [37, 64, 300])
@pytest.mark.parametrize("unroll", [2, 4])
def test_col_sum_interleaved_splits(rows: int, unroll: int) -> None:
    """Splits that take interleaved groups of rows (``interleave``): whole groups and
    the rows past the last one, any number of groups per split, including none."""
    fusion = build(WORKLOADS["col_sum"], "float32").fusion()
    x = rand([rows, 40], DataType.Float, seed=rows)
    low = lower_split(fusion, [x], 3, interleave=True, unroll=unroll)
    src = print_cuda(low.kernels[0].module)
    by = low.kernels[0].block[1]
    # 37 rows: fewer than one group of by * unroll rows, only the strided tail loop.
    assert ("g += 3)" in src) == (rows >= by * unroll)
    assert (f"r += {3 * by})" in src) == (rows % (by * unroll) != 0)
    ours, _ = run_segment_on_cpu(fusion, [x], low)
    np.testing.assert_allclose(ours[0], x.astype(np.float64).sum(0), rtol=1e-5, atol=1e-5)
    funcs = [f for k in low.kernels for f in kernels_of(k.module)]
    compile_cuda(
        "\n\n".join([src] + [print_kernel(f) for f in funcs[1:]]),
        name=low.kernels[0].name,
        fusion=fusion.sym_name.data,
    )
    # Welford partials need each split's row count: the option is ignored there.
    on = lower_split(build(WORKLOADS["outer_norm"], "float32").fusion(), [x], 3, interleave=True)
    assert "for (int g = " not in print_cuda(on.kernels[0].module)


def test_col_sum_is_vectorized() -> None:
    fusion = build(WORKLOADS["col_sum"], "bfloat16").fusion()
    low = check(fusion, [rand([37, 64], DataType.BFloat16)], "reduction")
    src = print_cuda(low.kernels[0].module)
    assert "Vec<__nv_bfloat16, 8>" in src and "fuser_block_reduce<false, true, false>" in src


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
    """12 splits: the finish kernel's threads along y each combine a chunk of them."""

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, [0], correction=1)
        fd.add_output(var)
        fd.add_output(mean)

    check(
        define(body),
        [rand([37, 40], DataType.Float) + 100.0],
        "reduction",
        splits,
        rtol=1e-5,
        atol=1e-5,
    )


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

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t0, [0]))

    check(define(body), [rand(shape, DataType.Float)], "reduction", None, rtol=1e-5, atol=1e-5)
    check(define(body), [rand(shape, DataType.Float)], "reduction", 4, rtol=1e-5, atol=1e-5)
    low = check(define(body), [rand(shape, DataType.Float)], "reduction", 13, rtol=1e-5, atol=1e-5)
    assert low.kernels[1].block[1] > 1  # finish: a block reduction over the splits


@pytest.mark.parametrize("splits", [None, 2])
def test_dependent_reductions(splits: int | None) -> None:
    """``sum((x - mean)^2)`` needs ``mean`` first: two levels of partials/finish."""

    def body(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        mean = fd.ops.div(fd.ops.sum(t0, [0], keepdim=True), 17.0)
        d = fd.ops.sub(t0, mean)
        fd.add_output(fd.ops.sum(fd.ops.mul(d, d), [0]))

    fusion = define(body)
    # No scheduler takes the chain (the segmenter splits it; the outer persistent
    # loop nests compute one level of statistics); this lowering still runs it.
    assert select(fusion, bind_sizes(fusion, [[17, 8]]), H100).kind is None
    kind = "outer_persistent"
    params = reduction_params(ReductionExtents(17, 8, 8, False), 4, H100)
    low = check(fusion, [rand([17, 8], DataType.Float)], kind, splits, rtol=1e-5, atol=1e-5, chosen=(kind, params))
    if splits:
        assert [k.name for k in low.kernels] == [
            "k_partials1",
            "k_finish1",
            "k_partials2",
            "k_finish2",
        ]


def test_inner_outer_is_a_clear_error() -> None:
    fusion = build(WORKLOADS["col_sum"], "float32").fusion()
    shapes = concrete_shapes(fusion, [[8, 8]])
    with pytest.raises(LoweringError, match="inner_outer_persistent lowering not implemented"):
        lower_columns(
            fusion,
            shapes,
            [TensorLayout.contiguous((8, 8))],
            [TensorLayout.contiguous((8,))],
            None,
            "k",
            "inner_outer_persistent",
        )


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
    """``lower_segment``'s target reaches the column lowering: the row splits fill the
    target's SMs (it used to size them for the H100 whatever target was given)."""
    from dataclasses import replace

    from fuser.codegen.lower import lower_segment

    fusion = define(
        lambda fd: fd.add_output(
            fd.ops.sum(
                fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float),
                dims=[0],
            )
        )
    )
    lay = [TensorLayout.contiguous((32768, 2048))]
    grids = {}
    for target in (H100, replace(H100, name="half", sm_count=66)):
        low = lower_segment(fusion, lay, None, None, target)
        assert low.scheduler == "reduction"
        grids[target.name] = [k.grid for k in low.kernels]
    assert grids["half"] != grids[H100.name]
    # half the SMs: half the row splits of the partials kernel (grid.y)
    assert grids["half"][0][1] * 2 == grids[H100.name][0][1]
