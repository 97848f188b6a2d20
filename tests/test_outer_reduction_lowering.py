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
    writes one partial per split; the finishing kernel (8 columns x 32 rows of
    threads, so that its 128 blocks fill the GPU; at most 5 splits each, an unrolled
    loop) combines the splits and stores."""
    fusion = _scheduled(COLUMNS.format(op="sum", dt="f32"), "0=16384x1024")
    params = fusion.attributes["fuser.schedule"].data  # type: ignore[attr-defined]
    splits = params["grid"].get_values()[1]
    assert _grid(fusion) and splits > 16  # a full wave, not one block per SM
    from fuser.codegen.lower import lower_segment
    from fuser.codegen.lower.common import TensorLayout

    lowered = lower_segment(fusion, [TensorLayout.contiguous((16384, 1024))])
    first, finish = lowered.kernels
    assert first.grid == (8, splits, 1) and first.block == (32, 8, 1)
    assert finish.block == (8, 32, 1) and finish.grid == (128, 1, 1)
    assert lowered.scratch[0].numel == splits * 1024
    a, b = (print_cuda(k.module) for k in lowered.kernels)
    assert "float slots_tile[8][4][32];" in a and "fuser_block_reduce" not in a[a.index("__global__"):]
    assert "Vec<float, 4> x_v = " in a and "#pragma unroll" in a
    assert "fuser_block_reduce<false, true, false," in b
    assert "#pragma unroll\n  for (int j = 0; j < 5; ++j) {" in b


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


SIBLINGS = """
fuser.fusion @sib(%x : !fuser.tensor<?x?xf32>) -> (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>) {
  %s = fuser.sum %x {dims = array<i64: DIM>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %m = fuser.max %x {dims = array<i64: DIM>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %v, %mu = fuser.var_mean %x {dims = array<i64: DIM>, correction = 1.000000e+00 : f64, keepdim = false} : (!fuser.tensor<?x?xf32>) -> (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>)
  fuser.output %s, %m, %v, %mu : !fuser.tensor<?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
}"""


@pytest.mark.parametrize(("dim", "shape", "kernels"), [("0", "300x33", 2), ("0", "2000x8", 1), ("0", "40x300", 1)])
def test_sibling_reductions_fold_in_one_loop_nest(dim: str, shape: str, kernels: int) -> None:
    """A sum, a max and a var_mean of one input over the rows, with the same written
    loop nest: one fold carries all of their accumulators (1 + 1 + 3 per slot), the
    combine over ``TIDy`` and the grid's partial buffers hold them side by side."""
    fusion = _scheduled(SIBLINGS.replace("DIM", dim), f"0={shape}")
    kernels_src = _run(fusion, 6, rtol=1e-4)
    assert len(kernels_src) == kernels
    if kernels == 2:  # the grid reduction: 5 partial buffers, merged in the finishing kernel
        assert "partial4" in kernels_src[0] and "partial5" not in kernels_src[0]


def _reschedule_max(fusion: F.FusionOp) -> None:
    """Give the max its own loop nest: one block per column, the rows a serial loop."""
    from fuser.ir.schedule import Schedule, find_loop_op

    m = next(op for op in fusion.body.block.ops if isinstance(op, F.ReductionOp) and op.name == "fuser.max").results[0]
    loop = find_loop_op(fusion, m)
    assert loop is not None
    fusion.body.block.erase_op(loop)
    Schedule(m).reorder([1, 0]).parallelize(0, "BIDx").emit()


def test_reductions_with_different_loop_nests_get_a_kernel_group_each() -> None:
    """The max rescheduled by hand (one block per column): the outputs computed from it
    are one kernel group, the others another (``loop_nest_groups``); each runs to the
    reference. An output computed from both nests cannot be split so: a diagnostic
    naming the two reductions."""
    from fuser.codegen.lower.common import LoweringError

    fusion = _scheduled(SIBLINGS.replace("DIM", "0"), "0=300x33")
    _reschedule_max(fusion)
    x = _inputs(fusion, 1)
    got, lowered = run_segment_on_cpu(fusion, x)
    for g, w in zip(got, run_fusion(fusion, x), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    by_kernel = {k.name: {a.index for a in k.args if a.kind == "output"} for k in lowered.kernels}
    assert by_kernel["sib_nest1"] == {1}  # the max
    both = SIBLINGS.replace("DIM", "0").replace(
        "  fuser.output %s, %m,",
        "  %sm = fuser.add %s, %m : (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>\n"
        "  fuser.output %sm, %m,",
    )
    fusion = _scheduled(both, "0=300x33")
    _reschedule_max(fusion)
    with pytest.raises(LoweringError, match="reductions fuser.sum and fuser.max have different loop nests"):
        run_segment_on_cpu(fusion, _inputs(fusion, 1))


LN_BWD = """
fuser.fusion @ln_bwd(%dy : !fuser.tensor<?x?xf32>, %x : !fuser.tensor<?x?xf32>, %mean : !fuser.tensor<?x1xf32>, %rstd : !fuser.tensor<?x1xf32>, %w : !fuser.tensor<1x?xf32>) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>) {
  %d = fuser.sub %x, %mean : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %xhat = fuser.mul %d, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %g = fuser.mul %dy, %w : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  %a = fuser.sum %g {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %gx = fuser.mul %g, %xhat : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %c = fuser.sum %gx {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %t0 = fuser.sub %g, %a : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t1 = fuser.mul %xhat, %c : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.sub %t0, %t1 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %dx = fuser.mul %t2, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %dyx = fuser.mul %dy, %xhat : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %dw = fuser.sum %dyx {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %db = fuser.sum %dy {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %dx, %dw, %db : !fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
}"""


@pytest.mark.parametrize("rows", [264, 270, 2400])
def test_inner_outer_runs_as_one_kernel_and_a_finishing_kernel(rows: int) -> None:
    """Layer-norm backward (the inner-outer persistent kind) on a persistent grid: the
    row sums placed at the rows' loop, dy and xhat held in registers, and the column sums
    dw and db placed at the same loop, folded across its iterations (their rows are
    reduced by the block index, the row loop and TIDy); the blocks' partial sums are
    added up by a finishing kernel. 2400 rows are two iterations of the 528 blocks (4 an
    SM: a block's rows are few bytes) of 4 rows (the second partial)."""
    from fuser.ir.dialects.iterdomain import IterType, LoopOp

    cols = 64
    fusion = _scheduled(LN_BWD, f"0={rows}x{cols},1={rows}x{cols},2={rows}x1,3={rows}x1,4=1x{cols}")
    assert fusion.attributes["fuser.schedule"].data["kind"].data == "inner_outer_persistent"  # type: ignore[attr-defined]
    loops = {op.tensor.name_hint: op for op in fusion.body.block.ops if isinstance(op, LoopOp)}
    # f32 rows hold xhat (computed once) rather than x (``SINGLE_KERNEL_HOLD_ITEMSIZE``)
    assert {n for n, op in loops.items() if op.compute_at is not None} >= {"a", "c", "dy", "xhat", "dw", "db"}
    dw = [v.type for v in loops["dw"].ids]
    assert [t.iter_type for t in dw[:3]] == [IterType.reduction] * 3  # type: ignore[attr-defined]
    blocks = min(528, -(-rows // 4))
    assert dw[0].extent == blocks  # type: ignore[attr-defined]
    assert dw[1].extent == (2 if rows == 2400 else 1)  # type: ignore[attr-defined]  # the rows' loop
    x = _inputs(fusion, rows)
    got, lowered = run_segment_on_cpu(fusion, x)
    for g, w in zip(got, run_fusion(fusion, x), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    assert [k.name for k in lowered.kernels] == ["ln_bwd", "ln_bwd_finish"]
    assert lowered.kernels[0].grid[0] == blocks


def test_a_broadcast_input_held_in_registers_is_read_at_index_0_on_every_row() -> None:
    """The weight [1, cols] scheduled by hand on the rows' loops (its broadcast row
    axis split as the rows are: [66 BIDx, 4 TIDy] over an extent-1 axis) and held in
    registers at the rows' loop of the one-kernel schedule ([66 BIDx, 1, 4 TIDy | ...]):
    every row's threads load row 0 of it (a broadcast id is index 0), none reads zeros
    as an element outside the tensor."""
    from fuser.ir.dialects.iterdomain import MemoryType
    from fuser.ir.schedule import Schedule, find_loop_op

    fusion = _scheduled(LN_BWD, "0=264x64,1=264x64,2=264x1,3=264x1,4=1x64")
    w = fusion.body.block.args[4]
    loop = find_loop_op(fusion, w)
    assert loop is not None
    fusion.body.block.erase_op(loop)
    s = Schedule(w).split(1, 4).split(1, 32).split(0, 4).split(0, 66, inner_split=False)
    for axis, ptype in ((0, "BIDx"), (2, "TIDy"), (3, "unroll"), (4, "TIDx"), (5, "vectorize")):
        s.parallelize(axis, ptype)
    s.emit().set_compute_at(3, MemoryType.registers)
    x = _inputs(fusion, 2)
    got, _ = run_segment_on_cpu(fusion, x)
    for g, want in zip(got, run_fusion(fusion, x), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "order,ptypes,message",
    [
        # The column sum's TIDy rows moved after the position: it reduces loops on both sides.
        ([0, 1, 3, 2, 4, 5], ((0, "BIDx"), (3, "TIDy"), (4, "TIDx"), (5, "vectorize")),
         r"%dw reduces loop #3, after its compute-at position 3, and loops before it"),
        # Its rows of threads bound to TIDx: the block combines them along TIDy and TIDz only.
        ([0, 1, 2, 3, 4, 5], ((0, "BIDx"), (2, "TIDx"), (4, "TIDy"), (5, "vectorize")),
         r"reduction loop #2 of %dw is bound to TIDx"),
    ],
    ids=["reduces-both-sides", "rows-on-TIDx"],
)
def test_a_reduction_across_the_shared_loops_is_checked(order: list[int], ptypes: tuple, message: str) -> None:
    """A column sum placed at the rows' loop is folded across its iterations only when
    every reduced loop is before the position and the block combines it along TIDy:
    the lowering names the loop otherwise."""
    from fuser.codegen.lower.common import LoweringError
    from fuser.ir.schedule import Schedule, find_loop_op

    fusion = _scheduled(LN_BWD, "0=264x64,1=264x64,2=264x1,3=264x1,4=1x64")
    dw = next(op.results[0] for op in fusion.body.block.ops if op.results and op.results[0].name_hint == "dw")
    loop = find_loop_op(fusion, dw)
    assert loop is not None and loop.compute_at == 3
    fusion.body.block.erase_op(loop)
    s = Schedule(dw).split(1, 4).split(1, 32).split(0, 4).split(0, 66, inner_split=False)
    s.reorder(order)
    for axis, ptype in ptypes:
        s.parallelize(axis, ptype)
    s.emit().set_compute_at(3)
    with pytest.raises(LoweringError, match=message):
        run_segment_on_cpu(fusion, _inputs(fusion, 2))
