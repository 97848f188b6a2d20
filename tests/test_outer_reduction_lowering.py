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
