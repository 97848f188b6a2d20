"""Kernels from written schedules (``fuser.codegen.lower.loop_nest``): a fusion that
carries ``iterdomain.loop`` ops is lowered from its loop nest alone. Hand-written
schedules that no heuristic makes (a split with a tail, rows on TIDy, another vector
width) and random valid schedules run in the CPU kernel interpreter to the reference
result and compile with NVRTC; changing a split factor changes the kernel; invalid
schedules are diagnostics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import VerifyException

from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweringError, TensorLayout
from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import ParallelType
from fuser.ir.reference import run_fusion
from fuser.ir.schedule import Schedule
from fuser.runtime.cpu_runner import run_segment_on_cpu

TAIL = """
fuser.fusion @tail(%x : !fuser.tensor<10x7xf32>) -> !fuser.tensor<10x7xf32> {
  %e = fuser.exp %x : (!fuser.tensor<10x7xf32>) -> !fuser.tensor<10x7xf32>
  %c = fuser.constant 2.000000e+00 : f64
  %y = fuser.mul %e, %c : (!fuser.tensor<10x7xf32>, f64) -> !fuser.tensor<10x7xf32>
  %r, %k = iterdomain.logical %y : !fuser.tensor<10x7xf32> -> !iterdomain.id<10>, !iterdomain.id<7>
  %ko, %ki = iterdomain.split %k by 3 : !iterdomain.id<7> -> !iterdomain.id<3>, !iterdomain.id<3>
  %rt = iterdomain.parallelize %r to TIDy : !iterdomain.id<10> -> !iterdomain.id<10, TIDy>
  %kb = iterdomain.parallelize %ko to BIDx : !iterdomain.id<3> -> !iterdomain.id<3, BIDx>
  iterdomain.loop %y [%kb, %rt, %ki] : !fuser.tensor<10x7xf32> [!iterdomain.id<3, BIDx>, !iterdomain.id<10, TIDy>, !iterdomain.id<3>]
  fuser.output %y : !fuser.tensor<10x7xf32>
}
"""

TAIL_BY_2 = (
    TAIL.replace("split %k by 3", "split %k by 2")
    .replace("!iterdomain.id<3>, !iterdomain.id<3>", "!iterdomain.id<4>, !iterdomain.id<2>")
    .replace("%ko to BIDx : !iterdomain.id<3> -> !iterdomain.id<3, BIDx>", "%ko to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>")
    .replace("[!iterdomain.id<3, BIDx>, !iterdomain.id<10, TIDy>, !iterdomain.id<3>]", "[!iterdomain.id<4, BIDx>, !iterdomain.id<10, TIDy>, !iterdomain.id<2>]")
)


def _fusion(text: str) -> F.FusionOp:
    return next(op for op in parse_module(text).ops if isinstance(op, F.FusionOp))


def _check(fusion: F.FusionOp, inputs: list[np.ndarray], atol: float = 1e-6) -> None:
    """The kernels in the CPU interpreter against the reference (``atol``: sums in
    another order differ by rounding)."""
    got, lowered = run_segment_on_cpu(fusion, inputs)  # NVRTC compiles it too
    assert lowered.kernels, "no kernel"
    want = run_fusion(fusion, inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol)


def test_a_split_with_a_tail_and_rows_on_tidy() -> None:
    fusion = _fusion(TAIL)
    x = np.random.default_rng(0).standard_normal((10, 7)).astype(np.float32)
    _check(fusion, [x])
    (kernel,) = lower_segment(fusion, [TensorLayout.contiguous((10, 7))]).kernels
    assert (kernel.grid, kernel.block) == ((3, 1, 1), (1, 10, 1))
    assert "t1 < 7" in print_cuda(kernel.module).replace("bool t2 = ", "")  # the tail's predicate


def test_changing_a_split_factor_changes_the_kernel() -> None:
    lay = [TensorLayout.contiguous((10, 7))]
    by3 = lower_segment(_fusion(TAIL), lay).kernels[0]
    by2 = lower_segment(_fusion(TAIL_BY_2), lay).kernels[0]
    assert (by3.grid, by2.grid) == ((3, 1, 1), (4, 1, 1))
    assert print_cuda(by3.module) != print_cuda(by2.module)
    x = np.random.default_rng(1).standard_normal((10, 7)).astype(np.float32)
    _check(_fusion(TAIL_BY_2), [x])


def _bias_fusion(rows: int, cols: int) -> F.FusionOp:
    return _fusion(f"""
fuser.fusion @bias(%x : !fuser.tensor<{rows}x{cols}xf32>, %w : !fuser.tensor<{cols}xf32>) -> (!fuser.tensor<{rows}x{cols}xf32>, !fuser.tensor<{rows}x{cols}xf32>) {{
  %wb = fuser.broadcast %w {{is_broadcast_dim = array<i1: true, false>}} : (!fuser.tensor<{cols}xf32>) -> !fuser.tensor<1x{cols}xf32>
  %y = fuser.add %x, %wb : (!fuser.tensor<{rows}x{cols}xf32>, !fuser.tensor<1x{cols}xf32>) -> !fuser.tensor<{rows}x{cols}xf32>
  %z = fuser.exp %y : (!fuser.tensor<{rows}x{cols}xf32>) -> !fuser.tensor<{rows}x{cols}xf32>
  fuser.output %y, %z : !fuser.tensor<{rows}x{cols}xf32>, !fuser.tensor<{rows}x{cols}xf32>
}}""")


_PARALLEL = [ParallelType.BIDx, ParallelType.BIDy, ParallelType.TIDx, ParallelType.TIDy, ParallelType.serial, ParallelType.unroll]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[int, int, list[tuple[str, int, object]]]:
    """A 2-D tensor's sizes and a random valid transform list: splits (any factor, so
    tails), an optional merge, reversed axes (not the innermost, which may be
    vectorized), a reorder, distinct parallel types, and a vectorized innermost split
    where it divides."""
    rows = draw(st.integers(1, 9))
    cols = draw(st.integers(1, 17))
    steps: list[tuple[str, int, object]] = []
    n = 2
    if draw(st.booleans()):
        steps.append(("merge", 0, None))
        n = 1
    for _ in range(draw(st.integers(0, 2))):
        axis = draw(st.integers(0, n - 1))
        steps.append(("split", axis, draw(st.integers(1, 5))))
        n += 1
    if n > 1:
        for axis in draw(st.lists(st.integers(0, n - 2), max_size=2, unique=True)):
            steps.append(("reverse", axis, None))
    order = draw(st.permutations(range(n)))
    steps.append(("reorder", 0, list(order)))
    types = draw(st.lists(st.sampled_from(_PARALLEL), min_size=n, max_size=n))
    used: set[ParallelType] = set()
    for k, pt in enumerate(types):
        if pt in used and pt != ParallelType.serial:  # the verifier: one loop per parallel type
            pt = ParallelType.serial
        used.add(pt)
        steps.append(("parallelize", k, pt))
    return rows, cols, steps


def _apply(fusion: F.FusionOp, steps: list[tuple[str, int, object]], vec: int | None) -> None:
    """The transforms, then (``vec``) the innermost axis split by ``vec`` with its inner
    part kept innermost, the reorder of the other axes, their parallel types and
    ``vectorize`` on the innermost: ids are transformed before they are parallelized."""
    for out in fusion.output_op.values:
        s = Schedule(out)
        for kind, axis, arg in steps:
            if kind == "merge":
                s.merge(axis)
            elif kind == "split":
                s.split(axis, int(arg))  # type: ignore[call-overload]
            elif kind == "reverse":
                s.reverse(axis)
        n = len(s.extents)
        if vec is not None:
            s.split(n - 1, vec)
        for kind, axis, arg in steps:
            if kind == "reorder":
                s.reorder([*arg, *([n] if vec is not None else [])])  # type: ignore[list-item]
            elif kind == "parallelize":
                s.parallelize(axis, arg)  # type: ignore[arg-type]
        if vec is not None:
            s.parallelize(n, ParallelType.vectorize)
        s.emit()


@settings(max_examples=40, deadline=None)
@given(schedules(), st.sampled_from([None, 2, 4]))
def test_random_schedules_compute_the_reference(sched: tuple[int, int, list], vec: int | None) -> None:
    rows, cols, steps = sched
    fusion = _bias_fusion(rows, cols)
    _apply(fusion, steps, vec)
    rng = np.random.default_rng(rows * 100 + cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    try:
        lowered = lower_segment(fusion, [TensorLayout.contiguous((rows, cols)), TensorLayout.contiguous((cols,))])
    except LoweringError as e:  # launch limits, or a vectorize whose split does not divide
        assert "threads" in str(e) or "is vectorized, but its" in str(e), str(e)
        return
    _check(fusion, [x, w])
    assert lowered.kernels[0].block[0] * lowered.kernels[0].block[1] <= 1024


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.split(1, 4).parallelize(1, ParallelType.vectorize), "is vectorized but is not the innermost loop"),
        (lambda s: s.parallelize(0, ParallelType.TIDx).parallelize(1, ParallelType.TIDx), "TIDx"),
        (lambda s: s.split(1, 8).parallelize(2, ParallelType.vectorize), "more than 16"),
        (lambda s: s.parallelize(0, ParallelType.stream), "stream"),
    ],
)
def test_invalid_schedules_are_diagnostics(edit, message: str) -> None:  # noqa: ANN001
    """Refused by the iterdomain verifier when the schedule is written, or by the
    lowering: either way a diagnostic naming the problem, never a traceback."""
    fusion = _bias_fusion(4, 8)
    with pytest.raises((VerifyException, LoweringError), match=message):
        s = Schedule(fusion.output_op.values[0])
        edit(s)
        s.emit()
        Schedule(fusion.output_op.values[1]).emit()
        lower_segment(fusion, [TensorLayout.contiguous((4, 8)), TensorLayout.contiguous((8,))])


def test_a_vectorized_split_that_does_not_divide_ends_in_a_partial_vector() -> None:
    """10 columns split by 4: the lanes move one for one along the row from a multiple
    of 4, so whole groups are one vector (both ends in bounds) and the last group,
    8..11, is stored lane by lane under each lane's predicate. 8 columns split by 3
    (lanes 6..8 leave the row): the same, without vector accesses (3 lanes)."""
    fusion = _bias_fusion(1, 10)
    for out in fusion.output_op.values:
        Schedule(out).split(1, 4).parallelize(2, ParallelType.vectorize).emit()
    rng = np.random.default_rng(3)
    _check(fusion, [rng.standard_normal((1, 10)).astype(np.float32), rng.standard_normal(10).astype(np.float32)])
    (kernel,) = lower_segment(fusion, [TensorLayout.contiguous((1, 10)), TensorLayout.contiguous((10,))]).kernels
    src = print_cuda(kernel.module)
    body, edge = src[src.index("extern \"C\""):].split("} else {")
    assert "*reinterpret_cast<const Vec<float, 4>*>(&x[" in body  # whole groups: one vector load
    assert "Vec<float" not in edge and edge.count("out0[") == 4  # the last one: lane by lane
    fusion = _bias_fusion(4, 8)
    for out in fusion.output_op.values:
        Schedule(out).split(1, 3).parallelize(2, ParallelType.vectorize).emit()
    _check(fusion, [rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)])


def test_outputs_with_different_loop_nests_are_a_kernel_each() -> None:
    """%y split into three loops on BIDx/TIDx, %z left as two serial loops: two loop
    nests, so two kernels (``loop_nest_classes``), each storing its own output, each
    output at the reference's values."""
    fusion = _bias_fusion(4, 8)
    Schedule(fusion.output_op.values[0]).split(1, 2).parallelize(0, "BIDx").parallelize(1, "TIDx").emit()
    Schedule(fusion.output_op.values[1]).emit()
    lay = [TensorLayout.contiguous((4, 8)), TensorLayout.contiguous((8,))]
    first, second = lower_segment(fusion, lay).kernels
    assert (first.grid, first.block, second.grid, second.block) == ((4, 1, 1), (4, 1, 1), (1, 1, 1), (1, 1, 1))
    assert [[a.index for a in k.args if a.kind == "output"] for k in (first, second)] == [[0], [1]]
    rng = np.random.default_rng(2)
    _check(fusion, [rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)])


ROW_REDUCTION = """
fuser.fusion @rows(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.KIND %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %c = fuser.constant 2.000000e+00 : f64
  %y = fuser.mul %s, %c : (!fuser.tensor<?xf32>, f64) -> !fuser.tensor<?xf32>
  fuser.output %y : !fuser.tensor<?xf32>
}"""


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("shape", [(16, 1024), (4, 4096), (128, 512), (128, 64), (5, 37), (3, 7)])
def test_schedule_fusions_reductions_lower_from_the_loop_nest(kind: str, shape: tuple[int, int]) -> None:
    """The reduction schedules schedule-fusions writes (one block or warp per row,
    rows on TIDy for short rows, the row split by vector and threads) lowered from the
    loop nest: the block/warp reduction, the epilogue at the row's index."""
    from fuser.ir.context import make_context
    from fuser.passes.bind_sizes import BindSizes
    from fuser.passes.schedule_fusions import ScheduleFusions
    from fuser.passes.select_schedulers import SelectSchedulers

    module = parse_module(ROW_REDUCTION.replace("KIND", kind))
    ctx = make_context()
    BindSizes(f"0={shape[0]}x{shape[1]}").apply(ctx, module)
    SelectSchedulers().apply(ctx, module)
    ScheduleFusions().apply(ctx, module)
    fusion = next(op for op in module.ops if isinstance(op, F.FusionOp))
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float32)
    _check(fusion, [x], atol=1e-6 * shape[1])
    (kernel,) = lower_segment(fusion, [TensorLayout.contiguous(shape)]).kernels
    params = fusion.attributes["fuser.schedule"].data
    assert list(kernel.block) == list(params["block"].get_values())


HAND_REDUCTION = """
fuser.fusion @rows(%x : !fuser.tensor<6x10xf32>) -> !fuser.tensor<6xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<6x10xf32>) -> !fuser.tensor<6xf32>
  %r, %k = iterdomain.logical %s : !fuser.tensor<6xf32> -> !iterdomain.id<6>, !iterdomain.id<10, reduction>
  %ko, %ki = iterdomain.split %k by 3 : !iterdomain.id<10, reduction> -> !iterdomain.id<4, reduction>, !iterdomain.id<3, reduction>
  %rb = iterdomain.parallelize %r to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>
  %kt = iterdomain.parallelize %ko to TIDx : !iterdomain.id<4, reduction> -> !iterdomain.id<4, reduction, TIDx>
  iterdomain.loop %s [%rb, %kt, %ki] : !fuser.tensor<6xf32> [!iterdomain.id<6, BIDx>, !iterdomain.id<4, reduction, TIDx>, !iterdomain.id<3, reduction>]
  fuser.output %s : !fuser.tensor<6xf32>
}"""


def test_a_hand_written_reduction_split_with_a_tail() -> None:
    """Rows on blocks, the row split by 3 (10 = 3 + 3 + 3 + 1) with the outer part on 4
    threads: the tail's element contributes nothing, the threads' partials combine."""
    fusion = _fusion(HAND_REDUCTION)
    x = np.random.default_rng(5).standard_normal((6, 10)).astype(np.float32)
    _check(fusion, [x])
    (kernel,) = lower_segment(fusion, [TensorLayout.contiguous((6, 10))]).kernels
    assert (kernel.grid, kernel.block) == ((6, 1, 1), (4, 1, 1))
    assert "fuser_block_reduce" in print_cuda(kernel.module)


def test_a_reduction_across_tidy_runs() -> None:
    """The same split with its 4 threads along TIDy: a block reduction over y."""
    fusion = _fusion(HAND_REDUCTION.replace("%ko to TIDx", "%ko to TIDy").replace("reduction, TIDx>", "reduction, TIDy>"))
    _check(fusion, [np.random.default_rng(6).standard_normal((6, 10)).astype(np.float32)])
    (kernel,) = lower_segment(fusion, [TensorLayout.contiguous((6, 10))]).kernels
    assert kernel.block == (1, 4, 1)
    assert "fuser_block_reduce<false, true, false," in print_cuda(kernel.module)


SERIAL_COLUMNS = """
fuser.fusion @cols(%x : !fuser.tensor<10x40xf32>) -> !fuser.tensor<40xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<10x40xf32>) -> !fuser.tensor<40xf32>
  %k, %c = iterdomain.logical %s : !fuser.tensor<40xf32> -> !iterdomain.id<10, reduction>, !iterdomain.id<40>
  iterdomain.loop %s [%k, %c] : !fuser.tensor<40xf32> [!iterdomain.id<10, reduction>, !iterdomain.id<40>]
  fuser.output %s : !fuser.tensor<40xf32>
}"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (SERIAL_COLUMNS, r"iteration loop #1 of the reduction is a serial loop of 40 inside its reduction loop #0: "
                         r"its results are registers, indexed at compile time"),
        (HAND_REDUCTION.replace("fuser.output %s : !fuser.tensor<6xf32>", "fuser.output %s, %x : !fuser.tensor<6xf32>, !fuser.tensor<6x10xf32>")
         .replace("-> !fuser.tensor<6xf32> {\n  %s", "-> (!fuser.tensor<6xf32>, !fuser.tensor<6x10xf32>) {\n  %s"),
         r"@rows: the outputs after fuser.sum: output #1 \(%x\): the tensor has no iterdomain.loop in this fusion"),
    ],
)
def test_written_reduction_schedules_not_lowered_yet_are_diagnostics(text: str, message: str) -> None:
    fusion = _fusion(text)
    with pytest.raises(LoweringError, match=message):
        lower_segment(fusion, [TensorLayout.contiguous(tuple(fusion.inputs[0].type.get_shape()))])  # type: ignore[attr-defined]


def test_seed000_segments_run_from_their_loop_nests() -> None:
    """Seed 000 at nvFuser's sizes, segmented and scheduled by the driver's passes plus
    schedule-fusions: the reduction segment (its sum broadcast back to [2, 1]) and the
    pointwise segment, each lowered from its loop nest, compute the reference."""
    from pathlib import Path

    from xdsl.passes import PassPipeline

    from fuser.ir.context import make_context
    from fuser.passes import all_passes

    text = (Path(__file__).parents[1] / "examples" / "sum_broadcast_add.mlir").read_text()
    module = parse_module(text)
    spec = 'bind-sizes{sizes="0=2x32,1=2x128"},canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions'
    PassPipeline.parse_spec(all_passes(), spec).apply(make_context(), module)
    segments = [op for op in module.ops if isinstance(op, F.FusionOp)]
    assert [s.attributes["fuser.schedule"].data["kind"].data for s in segments] == ["reduction", "pointwise"]
    rng = np.random.default_rng(7)
    for seg in segments:
        inputs = [rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in seg.inputs]
        _check(seg, inputs, atol=1e-5)


def test_a_long_chain_lowers_without_python_recursion() -> None:
    """400 elementwise ops in a chain: the element evaluator walks it with an explicit
    stack (``_evaluate_operands``, ``prefetch``), so the lowering fits in 300 Python
    frames (it needed about three per op before: a RecursionError past ~330 ops at
    the default limit), and the kernel computes the reference."""
    import sys

    n, names = 400, ["exp", "neg", "sin"]
    lines = ["fuser.fusion @chain(%x0 : !fuser.tensor<16xf32>) -> !fuser.tensor<16xf32> {"]
    lines += [
        f"  %x{i + 1} = fuser.{names[i % 3]} %x{i} : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xf32>" for i in range(n)
    ]
    lines += [f"  fuser.output %x{n} : !fuser.tensor<16xf32>", "}"]
    fusion = _fusion("\n".join(lines))
    Schedule(fusion.output_op.values[0]).split(0, 8).parallelize(1, "TIDx").emit()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        lowered = lower_segment(fusion, [TensorLayout.contiguous((16,))])
    finally:
        sys.setrecursionlimit(limit)
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    got, _ = run_segment_on_cpu(fusion, [x], lowered, nvrtc=False)
    np.testing.assert_allclose(got[0], run_fusion(fusion, [x])[0], rtol=1e-4, atol=1e-5)
