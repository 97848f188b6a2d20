"""Kernels from written schedules whose tensors are computed at a loop
(``iterdomain.loop ... {compute_at = q, memory = "registers"}``,
``codegen/lower/loop_nest_compute_at.py``): the normalizations ``schedule-fusions``
writes for the inner persistent kind, hand-written and random schedules run in the
CPU kernel interpreter to the reference result and compile with NVRTC; a tensor held
in registers is read from global memory once; invalid placements are diagnostics."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweringError, TensorLayout
from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import LoopOp, MemoryType
from fuser.ir.reference import run_fusion
from fuser.ir.schedule import Schedule
from fuser.runtime.cpu_runner import run_segment_on_cpu

SOFTMAX = """
fuser.fusion @softmax(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %e = fuser.exp %d : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}"""

RMS_BF16 = """
fuser.fusion @rms(%x : !fuser.tensor<?x?xbf16>, %w : !fuser.tensor<?xbf16>) -> (!fuser.tensor<?x?xbf16>, !fuser.tensor<?xf32>) {
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %sq = fuser.mul %xf, %xf : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %ss = fuser.sum %sq {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %sb = fuser.broadcast %ss {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %r = fuser.rsqrt %sb : (!fuser.tensor<?x1xf32>) -> !fuser.tensor<?x1xf32>
  %n = fuser.mul %xf, %r : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %wf = fuser.cast %w {dtype = f32} : (!fuser.tensor<?xbf16>) -> !fuser.tensor<?xf32>
  %wb = fuser.broadcast %wf {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<1x?xf32>
  %o = fuser.mul %n, %wb : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  %ob = fuser.cast %o {dtype = bf16} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  fuser.output %ob, %ss : !fuser.tensor<?x?xbf16>, !fuser.tensor<?xf32>
}"""

SUM_BCAST_ADD = """
fuser.fusion @sba(%x : !fuser.tensor<?x?xf32>, %y : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %z = fuser.add %y, %sb : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %z : !fuser.tensor<?x?xf32>
}"""


def _scheduled(text: str, sizes: str) -> F.FusionOp:
    from fuser.passes.bind_sizes import BindSizes
    from fuser.passes.schedule_fusions import ScheduleFusions
    from fuser.passes.select_schedulers import SelectSchedulers

    module = parse_module(text)
    ctx = make_context()
    BindSizes(sizes).apply(ctx, module)
    SelectSchedulers().apply(ctx, module)
    ScheduleFusions().apply(ctx, module)
    return next(op for op in module.ops if isinstance(op, F.FusionOp))


def _inputs(fusion: F.FusionOp, seed: int) -> list[np.ndarray]:
    import ml_dtypes

    rng = np.random.default_rng(seed)
    out = []
    for a in fusion.inputs:
        text = str(a.type)
        dt = ml_dtypes.bfloat16 if "bf16" in text else np.float16 if "f16" in text else np.float32
        out.append(rng.standard_normal(a.type.get_shape()).astype(dt))  # type: ignore[attr-defined]
    return out


def _check(fusion: F.FusionOp, inputs: list[np.ndarray], atol: float = 1e-5) -> None:
    got, lowered = run_segment_on_cpu(fusion, inputs)  # NVRTC compiles it too
    assert len(lowered.kernels) == 1
    want = run_fusion(fusion, inputs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-2 if g.dtype != np.float32 else 1e-5, atol=atol)


def _placements(fusion: F.FusionOp) -> dict[str, tuple[int | None, MemoryType]]:
    return {
        op.tensor.name_hint or "?": (op.compute_at, op.memory)
        for op in fusion.body.block.ops
        if isinstance(op, LoopOp) and op.compute_at is not None
    }


@pytest.mark.parametrize("shape", [(16, 1024), (5, 1000), (3, 4096), (33, 96), (2, 7)])
def test_schedule_fusions_places_softmax_and_it_lowers(shape: tuple[int, int]) -> None:
    """The inner persistent softmax: both reductions at the rows' loops, the input in
    registers there (two stages and the output read it), and ``exp(x - max)`` too
    while the row's two buffers take at most ``AVOID_RECOMPUTE_MAX_BYTES`` (else it is
    recomputed from ``x`` after the sum); the kernel computes the reference at
    divisible and non-divisible sizes."""
    from fuser.schedulers.persistent import AVOID_RECOMPUTE_MAX_BYTES

    fusion = _scheduled(SOFTMAX, f"0={shape[0]}x{shape[1]}")
    assert fusion.attributes["fuser.schedule"].data["kind"].data == "inner_persistent"  # type: ignore[attr-defined]
    placed = _placements(fusion)
    held = 2 * 4 * shape[1] <= AVOID_RECOMPUTE_MAX_BYTES
    assert set(placed) == ({"m", "s", "x", "e"} if held else {"m", "s", "x"})
    (q,) = {p for p, _ in placed.values()}
    assert placed["x"] == (q, MemoryType.registers)
    _check(fusion, _inputs(fusion, shape[1]))


@pytest.mark.parametrize("shape", [(8, 1024), (5, 1000), (40, 96)])
def test_rms_norm_in_bf16_with_its_sum_as_a_second_output(shape: tuple[int, int]) -> None:
    """Casts in and out (the input in registers is the bf16 tensor), a weight read only
    by the outputs (inlined: loaded where used), the sum of squares also returned
    (stored by its stage, thread 0 of each row)."""
    fusion = _scheduled(RMS_BF16, f"0={shape[0]}x{shape[1]},1={shape[1]}")
    placed = _placements(fusion)
    assert placed["x"][1] == MemoryType.registers and "w" not in placed
    _check(fusion, _inputs(fusion, 3), atol=1e-4 * shape[1])


def test_seed000_unsegmented_is_one_kernel_reading_each_input_once() -> None:
    """``add(y, broadcast(sum(x)))`` as one inner persistent kernel: ``y``'s axis meets
    the reduced axis only through the broadcast, it takes the reference's transforms
    by extent; ``x`` is read by one stage only, so it is inlined (not held)."""
    fusion = _scheduled(SUM_BCAST_ADD, "0=8x1024,1=8x1024")
    assert set(_placements(fusion)) == {"s"}
    _check(fusion, _inputs(fusion, 0), atol=1e-4)


@pytest.mark.parametrize("shape", [(32, 1024), (7, 1000), (12, 96)])
def test_layer_norm_welford_stage(shape: tuple[int, int]) -> None:
    """Seed 004's layer norm (f16 in and out, var_mean, mean and rstd returned per
    row): var_mean is a Welford stage (mean, M2 and count per thread, Chan's merge
    across the block), the f16 input is held in registers."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "examples" / "layer_norm.mlir").read_text()
    text = text.replace("256", str(shape[0])).replace("1024", str(shape[1]))
    fusion = _scheduled(text, "")
    placed = _placements(fusion)
    assert placed["x"][1] == MemoryType.registers and "var" in placed
    _check(fusion, _inputs(fusion, shape[0]), atol=2e-3)


def test_a_tensor_in_registers_is_loaded_once() -> None:
    """Holding the softmax input in registers (what schedule-fusions writes) loads each
    of its vectors once; dropping the placement (the input inlined) loads it in each
    of the three stages: the IR, not the lowering, decides. (Rows of 4096: over
    ``AVOID_RECOMPUTE_MAX_BYTES``, so ``exp(x - max)`` is not held, and the output's
    stage reads ``x`` too.)"""
    fusion = _scheduled(SOFTMAX, "0=4x4096")
    layout = [TensorLayout.contiguous((4, 4096))]
    held = print_cuda(lower_segment(fusion, layout).kernels[0].module)
    loop = next(op for op in fusion.body.block.ops if isinstance(op, LoopOp) and op.tensor.name_hint == "x")
    del loop.properties["compute_at"], loop.properties["memory"]
    inlined = print_cuda(lower_segment(fusion, layout).kernels[0].module)
    loads = [len(re.findall(r"reinterpret_cast<const Vec<float, 4>\*>\(&x\[", code)) for code in (held, inlined)]
    assert loads[0] > 0 and loads[1] == 3 * loads[0]
    _check(fusion, _inputs(fusion, 1))


# ---- invalid placements -----------------------------------------------------------


def _hand_softmax(
    rows: int = 4,
    cols: int = 64,
    x_steps: tuple[int, int] = (16, 2),
    x_unroll: str = "unroll",
    x_memory: MemoryType | None = MemoryType.registers,
    x_at: int = 1,
    m_at: int = 1,
    m_steps: tuple[int, int] = (16, 2),
) -> F.FusionOp:
    """Softmax at ``rows x cols`` scheduled by hand: rows on BIDx, the columns split by
    the vector width then the threads: ``[BIDx, unroll, TIDx, vector]``."""
    fusion = _scheduled(SOFTMAX.replace("fuser.fusion", "fuser.fusion"), f"0={rows}x{cols}")
    for op in [op for op in fusion.body.block.ops if op.name.startswith("iterdomain.")][::-1]:
        op.detach()
        op.erase()
    del fusion.attributes["fuser.schedule"]
    values = {v.name_hint: v for op in fusion.body.block.ops for v in op.results} | {"x": fusion.inputs[0]}

    def sched(name: str, steps: tuple[int, int], unroll: str, vec: str) -> LoopOp:
        tx, w = steps
        s = Schedule(values[name]).split(1, w).split(1, tx)
        s.parallelize(0, "BIDx").parallelize(2, "TIDx")
        if unroll != "serial":
            s.parallelize(1, unroll)
        if vec != "serial":
            s.parallelize(3, vec)
        return s.emit()

    sched("m", m_steps, "unroll", "serial").set_compute_at(m_at)
    sched("s", m_steps, "unroll", "serial").set_compute_at(m_at)
    x = sched("x", x_steps, x_unroll, "vectorize")
    if x_memory is not None:
        x.set_compute_at(x_at, x_memory)
    sched("y", m_steps, "unroll", "vectorize")
    return fusion


def test_a_hand_written_placement_runs() -> None:
    fusion = _hand_softmax()
    _check(fusion, _inputs(fusion, 2))
    (kernel,) = lower_segment(fusion, [TensorLayout.contiguous((4, 64))]).kernels
    assert (kernel.grid, kernel.block) == ((4, 1, 1), (16, 1, 1))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"x_at": 2, "m_at": 1}, r"%m is computed at loop 1, outside loop #1 of its producer %x \(computed at 2\)"),
        ({"x_steps": (32, 2)}, r"loop #2 of %x binds TIDx to extent 32, loop #2 of %m to extent 16: a kernel has one TIDx extent"),
        ({"x_unroll": "serial"}, r"loop #1 of %x is a serial loop of 2, but %x is held in registers, indexed at compile time: unroll the loop"),
        ({"x_steps": (16, 4), "cols": 128, "m_steps": (16, 2)},
         r"%m reads %x \(held in registers\) at another index than its loops hold on axis 1"),
    ],
)
def test_invalid_placements_are_diagnostics(kwargs: dict, message: str) -> None:
    fusion = _hand_softmax(**kwargs)
    cols = kwargs.get("cols", 64)
    with pytest.raises(LoweringError, match=message):
        lower_segment(fusion, [TensorLayout.contiguous((4, cols))])


# ---- random schedules ---------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1, 6),
    cols=st.integers(1, 70),
    vec=st.sampled_from([1, 2, 4]),
    threads=st.sampled_from([1, 2, 4, 32]),
    rows_on_tidy=st.booleans(),
    hold=st.booleans(),
    kind=st.sampled_from(["max", "sum", "min"]),
)
def test_random_placements_match_the_reference(
    rows: int, cols: int, vec: int, threads: int, rows_on_tidy: bool, hold: bool, kind: str
) -> None:
    """Random softmax-like fusions (the first reduction's kind drawn) under random
    schedules: vector width, threads per row, rows on TIDy or BIDx, the input held in
    registers or inlined; the kernel interpreter computes the reference."""
    text = SOFTMAX.replace("fuser.max", f"fuser.{kind}")
    fusion = _scheduled(text, f"0={rows}x{cols}")
    for op in [op for op in fusion.body.block.ops if op.name.startswith("iterdomain.")][::-1]:
        op.detach()
        op.erase()
    del fusion.attributes["fuser.schedule"]
    values = {v.name_hint: v for op in fusion.body.block.ops for v in op.results} | {"x": fusion.inputs[0]}
    unroll = -(-cols // (vec * threads))

    def sched(name: str, inner: str) -> LoopOp:
        s = Schedule(values[name]).split(1, vec).split(1, threads)
        s.parallelize(0, "TIDy" if rows_on_tidy else "BIDx").parallelize(2, "TIDx").parallelize(1, "unroll")
        if inner == "vectorize" and vec > 1 and cols % vec == 0:
            s.parallelize(3, "vectorize")
        return s.emit()

    q = 1
    sched("m", "serial").set_compute_at(q)
    sched("s", "serial").set_compute_at(q)
    x = sched("x", "vectorize")
    if hold:
        x.set_compute_at(q, MemoryType.registers)
    sched("y", "vectorize")
    assert unroll >= 1
    _check(fusion, _inputs(fusion, rows * 100 + cols), atol=1e-5)


# ---- rFactor: partial results -------------------------------------------------------

ROW_SUM_RFACTOR = """
fuser.fusion @rows(%x : !fuser.tensor<6x10xf32>) -> !fuser.tensor<6xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<6x10xf32>) -> !fuser.tensor<6xf32>
  %r, %k = iterdomain.logical %s : !fuser.tensor<6xf32> -> !iterdomain.id<6>, !iterdomain.id<10, reduction>
  %ko, %ki = iterdomain.split %k by 2 : !iterdomain.id<10, reduction> -> !iterdomain.id<5, reduction>, !iterdomain.id<2, reduction>
  %rb = iterdomain.parallelize %r to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>
  iterdomain.loop %s [%rb, %ko, %ki] {compute_at = 1 : i64, partials = array<i64: 2>} : !fuser.tensor<6xf32> [!iterdomain.id<6, BIDx>, !iterdomain.id<5, reduction>, !iterdomain.id<2, reduction>]
  fuser.output %s : !fuser.tensor<6xf32>
}"""


def test_a_reduction_rfactored_by_2_keeps_two_partial_sums() -> None:
    """Each row's 10 elements split by 2, the inner loop's iterations kept as partial
    results (``partials``: nvFuser's rFactor): even and odd elements in two
    accumulators, added at the end. Without it, one accumulator: another kernel."""
    fusion = _fusion_of(ROW_SUM_RFACTOR)
    x = np.random.default_rng(4).standard_normal((6, 10)).astype(np.float32)
    _check(fusion, [x])
    layout = [TensorLayout.contiguous((6, 10))]
    split = print_cuda(lower_segment(fusion, layout).kernels[0].module)
    plain = print_cuda(lower_segment(_fusion_of(ROW_SUM_RFACTOR.replace(", partials = array<i64: 2>", "")), layout).kernels[0].module)
    # rFactored: the loop carries two sums, added after it; plain: one sum.
    two = re.search(r"float (t\d+) = 0\.0f;\s+float (t\d+) = 0\.0f;\s+for \(int i1 = 0; i1 < 5; \+\+i1\) \{", split)
    assert two, split
    assert re.search(rf"= {two[1]} \+ {two[2]};\s+out0\[bidx\] = ", split)
    assert plain.count("= 0.0f;") == 1 and split.count("= 0.0f;") == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("partials = array<i64: 2>", "partials = array<i64: 1>").replace("%ki] {", "%ki] {").replace(
            "!iterdomain.id<5, reduction>, !iterdomain.id<2, reduction>]", "!iterdomain.id<5, reduction>, !iterdomain.id<2, reduction>]"),
         r"partials of %s name loop #1, a serial loop of 5: each partial result is a register, indexed at compile time: unroll the loop"),
        (lambda t: t.replace("partials = array<i64: 2>", "partials = array<i64: 0>"),
         r"partials name loop #0 \(extent 6 \(BIDx\)\), which is not a serial or unrolled reduction id"),
        (lambda t: t.replace("partials = array<i64: 2>", "partials = array<i64: 2, 2>"), r"partials \[2, 2\] repeat a loop position"),
    ],
)
def test_invalid_partials_are_diagnostics(edit, message: str) -> None:  # noqa: ANN001
    from xdsl.utils.exceptions import VerifyException

    with pytest.raises((LoweringError, VerifyException), match=message):
        fusion = _fusion_of(edit(ROW_SUM_RFACTOR))
        lower_segment(fusion, [TensorLayout.contiguous((6, 10))])


def _fusion_of(text: str) -> F.FusionOp:
    return next(op for op in parse_module(text).ops if isinstance(op, F.FusionOp))
