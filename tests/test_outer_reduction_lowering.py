"""Outer and middle-axis reductions from their written schedule
(``codegen/lower/loop_nest_reduction.py``): reduction loops interleaved with
iteration loops (``[BIDx, BIDy, serial, unroll, TIDy, TIDx, vectorize]``), the vector
lanes of an iteration loop folding into separate accumulators, a combine across
``TIDy`` through one shared tile, and a grid reduction over ``BIDy`` as a partials
kernel plus a finishing kernel. Everything ``schedule-fusions`` writes for the
``reduction`` kind over a slow axis runs in the CPU kernel interpreter to the
reference result and compiles with NVRTC."""

from __future__ import annotations

import numpy as np
import pytest

from fuser.codegen.cuda_printer import print_cuda
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu
from tests.test_compute_at_lowering import _inputs, _scheduled

COLUMNS = """
fuser.fusion @col(%x : !fuser.tensor<?x?x{dt}>) -> !fuser.tensor<?x{dt}> {{
  %s = fuser.{op} %x {{dims = array<i64: 0>}} : (!fuser.tensor<?x?x{dt}>) -> !fuser.tensor<?x{dt}>
  fuser.output %s : !fuser.tensor<?x{dt}>
}}"""

THREE_D = """
fuser.fusion @r(%x : !fuser.tensor<?x?x?xf32>) -> !fuser.tensor<{osh}xf32> {{
  %s = fuser.sum %x {{dims = array<i64: {dims}>}} : (!fuser.tensor<?x?x?xf32>) -> !fuser.tensor<{osh}xf32>
  %t = fuser.mul %s, %s : (!fuser.tensor<{osh}xf32>, !fuser.tensor<{osh}xf32>) -> !fuser.tensor<{osh}xf32>
  fuser.output %t : !fuser.tensor<{osh}xf32>
}}"""


def _run(fusion: F.FusionOp, seed: int, rtol: float = 1e-5) -> list[str]:
    assert fusion.attributes["fuser.schedule"].data["kind"].data == "reduction"  # type: ignore[attr-defined]
    x = _inputs(fusion, seed)
    got, lowered = run_segment_on_cpu(fusion, x)  # NVRTC compiles it too
    want = run_fusion(fusion, x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=1e-4)
    return [print_cuda(k.module) for k in lowered.kernels]


def _grid(fusion: F.FusionOp) -> bool:
    return bool(fusion.attributes["fuser.schedule"].data["cross_grid"].value.data)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("op", "dt", "shape"),
    [
        ("sum", "f32", "1024x256"), ("sum", "f32", "100x70"), ("max", "f32", "300x33"), ("min", "f32", "7x5"),
        ("sum", "bf16", "300x33"), ("max", "bf16", "100x70"), ("sum", "bf16", "64x1"),
    ],
)
def test_column_reductions_run_from_their_loop_nest(op: str, dt: str, shape: str) -> None:
    """Column reductions, divisible and with tails, one block per column tile or
    split over grid.y (two kernels)."""
    fusion = _scheduled(COLUMNS.format(op=op, dt=dt), f"0={shape}")
    kernels = _run(fusion, len(shape), rtol=1e-2 if dt == "bf16" else 1e-5)
    assert len(kernels) == (2 if _grid(fusion) else 1)


@pytest.mark.parametrize(("dims", "osh"), [("1", "?x?"), ("0, 2", "?"), ("0", "?x?"), ("0, 1", "?")])
@pytest.mark.parametrize("shape", ["8x100x32", "3x7x130", "16x256x4"])
def test_middle_and_outer_axes_of_3d_tensors(dims: str, osh: str, shape: str) -> None:
    """Reductions over the middle axis, the outer ones, and outer + inner, with an
    epilogue at the result's index (``s * s``)."""
    fusion = _scheduled(THREE_D.format(dims=dims, osh=osh), f"0={shape}")
    _run(fusion, 3, rtol=1e-4)


def test_a_grid_reduction_is_a_partials_kernel_and_a_finishing_kernel() -> None:
    """16384x1024: 8 column blocks x one wave of row splits on BIDy. The partials
    kernel folds 4 unrolled rows per iteration into 4 vector-lane accumulators,
    combines them across TIDy in one shared tile (no block reduction per lane) and
    writes one partial per split; the finishing kernel (32 columns x 16 rows of
    threads) combines the splits and stores."""
    fusion = _scheduled(COLUMNS.format(op="sum", dt="f32"), "0=16384x1024")
    params = fusion.attributes["fuser.schedule"].data  # type: ignore[attr-defined]
    splits = params["grid"].get_values()[1]
    assert _grid(fusion) and splits > 16  # a full wave, not one block per SM
    from fuser.codegen.lower import lower_segment
    from fuser.codegen.lower.common import TensorLayout

    lowered = lower_segment(fusion, [TensorLayout.contiguous((16384, 1024))])
    first, finish = lowered.kernels
    assert first.grid == (8, splits, 1) and first.block == (32, 8, 1)
    assert finish.block == (32, 16, 1) and finish.grid == (32, 1, 1)
    assert lowered.scratch[0].numel == splits * 1024
    a, b = (print_cuda(k.module) for k in lowered.kernels)
    assert "float slots_tile[8][4][32];" in a and "fuser_block_reduce" not in a[a.index("__global__"):]
    assert "Vec<float, 4> x_v = " in a and "#pragma unroll" in a
    assert "fuser_block_reduce<false, true, false>" in b


# ---- outer normalizations: statistics, then an apply kernel ----------------------------

OUTER_SUM_NORM = """
fuser.fusion @on(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<1x?xf32>
  %y = fuser.sub %x, %sb : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}"""

OUTER_VAR_NORM = """
fuser.fusion @on(%x : !fuser.tensor<?x?xf32>) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) {
  %v, %m = fuser.var_mean %x {dims = array<i64: 0>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<?x?xf32>) -> (!fuser.tensor<1x?xf32>, !fuser.tensor<1x?xf32>)
  %c = fuser.constant 1.000000e-05 : f64
  %ve = fuser.add %v, %c : (!fuser.tensor<1x?xf32>, f64) -> !fuser.tensor<1x?xf32>
  %r = fuser.rsqrt %ve : (!fuser.tensor<1x?xf32>) -> !fuser.tensor<1x?xf32>
  %d = fuser.sub %x, %m : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  %y = fuser.mul %d, %r : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y, %m : !fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>
}"""


@pytest.mark.parametrize(("text", "shape", "kernels"), [
    (OUTER_SUM_NORM, "100x70", 2), (OUTER_SUM_NORM, "1024x64", 3),
    (OUTER_VAR_NORM, "100x70", 2), (OUTER_VAR_NORM, "33x8", 2),
])
def test_outer_normalizations_run_from_their_loop_nests(text: str, shape: str, kernels: int) -> None:
    """The outer persistent kind: the statistics (a sum, or Welford's mean, M2 and
    count, merged by Chan's formula across threads and grid splits) into scratch
    buffers, then an apply kernel over the output's loop nest reading them; the mean
    (an output of the statistics' shape) is stored by the statistics kernels."""
    fusion = _scheduled(text, f"0={shape}")
    assert fusion.attributes["fuser.schedule"].data["kind"].data == "outer_persistent"  # type: ignore[attr-defined]
    x = _inputs(fusion, 4)
    got, lowered = run_segment_on_cpu(fusion, x)
    for g, w in zip(got, run_fusion(fusion, x), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    assert len(lowered.kernels) == kernels
    assert lowered.kernels[-1].name.endswith("_apply")


VAR_MEAN = """
fuser.fusion @vm(%x : !fuser.tensor<?x?xf32>) -> (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>) {
  %v, %m = fuser.var_mean %x {dims = array<i64: DIM>, correction = 1.000000e+00 : f64, keepdim = false} : (!fuser.tensor<?x?xf32>) -> (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>)
  fuser.output %v, %m : !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
}"""


@pytest.mark.parametrize(("dim", "shape"), [("0", "300x33"), ("0", "100x70"), ("1", "8x1000"), ("1", "100x70")])
def test_unplaced_var_mean_runs(dim: str, shape: str) -> None:
    """``var_mean`` over the rows (a grid Welford at 300x33: the blocks' mean, M2 and
    count in three scratch buffers) and over the columns."""
    fusion = _scheduled(VAR_MEAN.replace("DIM", dim), f"0={shape}")
    _run(fusion, 5, rtol=1e-4)
