"""Tensors staged in shared memory (``iterdomain.loop ... {compute_at = q, memory =
"shared"}``, ``codegen/lower/shared_tile.py`` and the compute-at lowering): a tile is
written by its producer's thread mapping and, after a barrier, read by consumers with
theirs. Hand-written transposes and the ``transpose`` kind that ``schedule-fusions``
places run in the CPU kernel interpreter (which runs every thread of a block, barriers
included) to the reference result and compile with NVRTC; the tile's shape comes from
the schedule; reads outside the producer's tile are diagnostics."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweringError, TensorLayout
from fuser.codegen.lower.shared_tile import Split, places, split_at
from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import LoopOp, MemoryType
from fuser.ir.reference import run_fusion
from fuser.ir.schedule import Const, Schedule, Var
from fuser.runtime.cpu_runner import run_segment_on_cpu
from tests.test_compute_at_lowering import _inputs, _placements, _scheduled


def _check(fusion: F.FusionOp, inputs: list[np.ndarray]) -> str:
    got, lowered = run_segment_on_cpu(fusion, inputs)  # NVRTC compiles it too
    (kernel,) = lowered.kernels
    want = run_fusion(fusion, inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-5, atol=1e-6)
    return print_cuda(kernel.module)


def _kernel(cuda: str) -> str:
    """The kernel's body (not the helpers before it)."""
    return cuda[cuda.index("__global__"):]


# ---- the tile analysis --------------------------------------------------------------


def test_split_at_separates_the_corner_from_the_place() -> None:
    i0, i2, i3 = Var("i0"), Var("i2"), Var("i3")
    sp = split_at((i0 * 4 + i2) * 8 + i3, 1)  # split by 8, then by 4: nested
    assert sp == Split(frozenset({(i0, 32)}), i2 * 8 + i3)
    assert places([sp.place], [10, 1, 4, 8]) == {(p,) for p in range(32)}
    # A merge across the position has no corner.
    assert split_at((i0 * 128 + i2) // 32, 1) is None
    assert split_at((i0 * 128 + i2) // 32, 3) == Split(frozenset({((i0 * 128 + i2) // 32, 1)}), Const(0))


def test_places_enumerate_the_combinations() -> None:
    i1, i2 = Var("i1"), Var("i2")
    assert places([i1, i2 * 2], [1, 2, 3]) == {(a, 2 * b) for a in range(2) for b in range(3)}
    assert places([i1 * 0 + i2], [1, 1, 5]) == {(b,) for b in range(5)}
    assert places([i1], [1, 10**6]) is None  # more elements than a tile holds


# ---- hand-written schedules ---------------------------------------------------------


LOOPS = ("BIDy", "BIDx", "unroll", "TIDy", "TIDx")


def _transpose(
    rows: int, cols: int, tile: int = 32, ty: int = 8, types: tuple[str, ...] = LOOPS, at: int = 2, dtype: str = "f32"
) -> F.FusionOp:
    """``exp(x.T)`` at ``rows x cols``: ``x`` staged in shared memory at loop 2 with
    ``[BIDy, BIDx, unroll, TIDy, TIDx]`` over its (rows, cols) tiles, the output with
    the same loops over its own axes: the threads of TIDx run along each tensor's
    innermost axis."""
    text = f"""
    fuser.fusion @tr(%x : !fuser.tensor<{rows}x{cols}x{dtype}>) -> !fuser.tensor<{cols}x{rows}x{dtype}> {{
      %t = fuser.permute %x {{dims = array<i64: 1, 0>}} : (!fuser.tensor<{rows}x{cols}x{dtype}>) -> !fuser.tensor<{cols}x{rows}x{dtype}>
      %y = fuser.exp %t : (!fuser.tensor<{cols}x{rows}x{dtype}>) -> !fuser.tensor<{cols}x{rows}x{dtype}>
      fuser.output %y : !fuser.tensor<{cols}x{rows}x{dtype}>
    }}"""
    fusion = next(op for op in parse_module(text).ops if isinstance(op, F.FusionOp))
    x, y = fusion.inputs[0], fusion.output_op.values[0]
    for v, order in ((x, [0, 3, 1, 2, 4]), (y, [3, 0, 1, 2, 4])):
        # x: [r/T, T/ty, ty, c/T, T] -> [r/T, c/T, T/ty, ty, T]; y (c x r) the same
        # over its axes, its row tiles first: both have [rows/T, cols/T] outside.
        s = Schedule(v).split(0, tile).split(2, tile).split(1, ty).reorder(order)
        for k, p in enumerate(types):
            if p != "serial":
                s.parallelize(k, p)
        loop = s.emit()
        if v is x:
            loop.set_compute_at(at, MemoryType.shared)
    return fusion


@pytest.mark.parametrize(("rows", "cols", "tile", "ty"), [(70, 96, 32, 8), (64, 64, 32, 8), (5, 40, 16, 4), (33, 17, 8, 8)])
def test_a_hand_written_shared_transpose_runs(rows: int, cols: int, tile: int, ty: int) -> None:
    fusion = _transpose(rows, cols, tile, ty)
    cuda = _check(fusion, _inputs(fusion, rows + cols))
    pad = 1 if tile % 32 == 0 else 0
    assert f"__shared__ __align__(16) float x_tile[{tile}][{tile + pad}];" in cuda
    # Written once per element, one barrier, then read: the input is loaded once.
    assert _kernel(cuda).count("__syncthreads();") == 1
    assert len(re.findall(r"= x\[", cuda)) == tile // ty


def test_changing_the_tile_split_changes_the_kernel() -> None:
    a = _check(_transpose(64, 64, 32, 8), _inputs(_transpose(64, 64), 0))
    b = _check(_transpose(64, 64, 16, 8), _inputs(_transpose(64, 64), 0))
    assert "x_tile[32][33]" in a and "x_tile[16][16]" in b


def test_the_barrier_is_needed() -> None:
    """Without the barrier the interpreter (threads run to the next barrier in turn)
    reads elements other threads have not written yet: the test above would catch a
    lowering that forgets it."""
    fusion = _transpose(64, 64)
    x = _inputs(fusion, 3)
    lowered = lower_segment(fusion, [TensorLayout.contiguous((64, 64))])
    from fuser.ir.dialects import kernel as k

    for op in list(lowered.kernels[0].module.walk()):
        if isinstance(op, k.BarrierOp):
            op.detach()
            op.erase()
    got, _ = run_segment_on_cpu(fusion, x, lowered, nvrtc=False)
    assert not np.allclose(got[0], run_fusion(fusion, x)[0])


def test_a_serial_loop_around_the_tile_gets_a_second_barrier() -> None:
    """Tiles reused by the iterations of a serial shared loop (one block walks the
    row tiles): a barrier after the reads, before the next iteration writes."""
    fusion = _transpose(64, 96, types=("serial", "BIDx", "unroll", "TIDy", "TIDx"))
    cuda = _check(fusion, _inputs(fusion, 5))
    assert _kernel(cuda).count("__syncthreads();") == 2


# ---- the transpose kind ---------------------------------------------------------------

TRANSPOSE_ADD = """
fuser.fusion @tr(%x : !fuser.tensor<?x?x{dt}>, %b : !fuser.tensor<?x?x{dt}>) -> !fuser.tensor<?x?x{dt}> {{
  %t = fuser.permute %x {{dims = array<i64: 1, 0>}} : (!fuser.tensor<?x?x{dt}>) -> !fuser.tensor<?x?x{dt}>
  %y = fuser.add %t, %b : (!fuser.tensor<?x?x{dt}>, !fuser.tensor<?x?x{dt}>) -> !fuser.tensor<?x?x{dt}>
  fuser.output %y : !fuser.tensor<?x?x{dt}>
}}"""

BATCHED = """
fuser.fusion @tr(%x : !fuser.tensor<?x?x?x{dt}>) -> !fuser.tensor<?x?x?x{dt}> {{
  %t = fuser.permute %x {{dims = array<i64: 0, 2, 1>}} : (!fuser.tensor<?x?x?x{dt}>) -> !fuser.tensor<?x?x?x{dt}>
  %y = fuser.set %t : (!fuser.tensor<?x?x?x{dt}>) -> !fuser.tensor<?x?x?x{dt}>
  fuser.output %y : !fuser.tensor<?x?x?x{dt}>
}}"""


@pytest.mark.parametrize(
    ("text", "sizes", "dt"),
    [
        (TRANSPOSE_ADD, "0=200x300,1=300x200", "f32"),
        (TRANSPOSE_ADD, "0=33x65,1=65x33", "f32"),
        (TRANSPOSE_ADD, "0=128x64,1=64x128", "bf16"),
        (BATCHED, "0=3x70x130", "bf16"),
        (BATCHED, "0=2x64x96", "f32"),
    ],
)
def test_schedule_fusions_stages_the_transposed_inputs(text: str, sizes: str, dt: str) -> None:
    """The ``transpose`` kind: the inputs of the transposed group computed at the
    tile's loop in shared memory, loaded along their innermost axis; the outputs read
    the tile along theirs."""
    fusion = _scheduled(text.format(dt=dt), sizes)
    assert fusion.attributes["fuser.schedule"].data["kind"].data == "transpose"  # type: ignore[attr-defined]
    assert _placements(fusion) == {"x": (1, MemoryType.shared)}
    cuda = _check(fusion, _inputs(fusion, len(sizes)))
    assert "x_tile" in cuda and "__syncthreads();" in cuda


def test_an_input_laid_out_transposed_is_vectorized_along_its_stride_1_axis() -> None:
    """After ``strip-bookend-views`` a permuted input is a tensor whose innermost axis
    in memory is not its last (``stride_order``): its loads are vectors along that
    axis, into the tile."""
    from fuser import DataType, FusionDefinition
    from fuser.runtime.driver import PASSES

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.set(fd.ops.permute(x, [0, 2, 1])))
    fd.pipeline = [*PASSES, "schedule-fusions"]
    base = np.random.default_rng(0).standard_normal((2, 40, 72)).astype(np.float32)
    text = fd.generate_scheduled_fusion_ir([base])
    fusion = next(op for op in parse_module(text).ops if isinstance(op, F.FusionOp))
    assert "stride_order" in str(fusion.inputs[0].type)
    view = base.transpose(0, 2, 1)  # what the segment reads: (2, 72, 40), axis 1 contiguous
    got, lowered = run_segment_on_cpu(fusion, [view])
    np.testing.assert_array_equal(got[0], base.transpose(0, 2, 1))
    cuda = _kernel(print_cuda(lowered.kernels[0].module))
    loads = re.findall(r"Vec<float, (\d)> \w+ = \*reinterpret_cast<const Vec<float, \d>\*>\(&in0\[", cuda)
    assert loads and all(w == "4" for w in loads), cuda
    assert re.search(r"\bin0\[t\d+\];", cuda) is None  # no scalar loads


# ---- diagnostics ----------------------------------------------------------------------


def test_a_read_outside_the_iterations_tile_is_a_diagnostic() -> None:
    """x computed inside the serial loop #2 (at 3): its tile is 8 rows per
    iteration, but the output's iteration reads 32 rows."""
    fusion = _transpose(64, 64, types=("BIDy", "BIDx", "serial", "TIDy", "TIDx"), at=3)
    with pytest.raises(LoweringError, match=(
        r"@tr: %y reads %x \(a shared tile computed at loop 3\) on axis 0 at an index that is not its "
        r"tile's: index the axis with the same loops before loop 3 as %x does"
    )):
        lower_segment(fusion, [TensorLayout.contiguous((64, 64))])


def test_a_tile_that_mixes_loops_is_a_diagnostic() -> None:
    """A merge before the split: the tile has no corner."""
    fusion = _transpose(64, 64)
    x = fusion.inputs[0]
    for op in [op for op in fusion.body.block.ops if op.name.startswith("iterdomain.")][::-1]:
        if _tensor_of(op) is x:
            op.detach()
            op.erase()
    s = Schedule(x).merge(0).split(0, 1024).split(0, 2).split(2, 32).split(2, 8)  # [2, 2, 4, 8, 32]
    for k, p in enumerate(LOOPS):
        s.parallelize(k, p)
    s.emit().set_compute_at(2, MemoryType.shared)
    with pytest.raises(LoweringError, match=r"axis 0 of %x is indexed by .*, which mixes loops before and after its compute-at position 2"):
        lower_segment(fusion, [TensorLayout.contiguous((64, 64))])


def test_a_tile_larger_than_shared_memory_is_a_diagnostic() -> None:
    fusion = _transpose(256, 256, tile=128, ty=8)
    with pytest.raises(LoweringError, match=r"the shared tiles of %x take 66048 bytes, more than the 49152 bytes"):
        lower_segment(fusion, [TensorLayout.contiguous((256, 256))])


def test_a_reduction_in_shared_memory_is_a_diagnostic() -> None:
    from tests.test_compute_at_lowering import _hand_softmax

    fusion = _hand_softmax()
    for op in fusion.body.block.ops:
        if isinstance(op, LoopOp) and op.tensor.name_hint == "m":
            op.set_compute_at(1, MemoryType.shared)
    with pytest.raises(LoweringError, match=r"%m is a reduction placed in shared memory"):
        lower_segment(fusion, [TensorLayout.contiguous((4, 64))])


def _tensor_of(op) -> object:  # noqa: ANN001
    """The tensor whose domain an iterdomain op transforms."""
    from fuser.ir.dialects.iterdomain import LogicalOp

    while not isinstance(op, LogicalOp | LoopOp):
        op = op.operands[0].owner
    return op.tensor if isinstance(op, LoopOp) else op.operands[0]
