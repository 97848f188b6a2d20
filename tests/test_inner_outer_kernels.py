"""Inner-outer persistent segments (layer-norm backward) scheduled as the driver
schedules a segment (``fuser.runtime.schedule_segment``) and lowered from their loop
nests: a kernel group per reduction loop nest (``codegen/lower/loop_nest_groups.py``),
the row half's and the column half's (``half_fusion``). Kernel outputs, run by the
CPU kernel interpreter, equal the reference; kernels compile with NVRTC (through the
kernel cache, in ``run_segment_on_cpu``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu
from fuser.runtime.schedule_segment import ScheduleSegmentError, schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.analysis.output_groups import half_fusion
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.inner_outer_persistent import InnerOuterPersistentScheduler
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100
from tests.fuzz.triage import SMALL_GPU


def layer_norm_backward(dtype=DataType.Float):
    with FusionDefinition() as fd:
        dy = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        mean = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        rstd = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
        dyf, xf, wf = (fd.ops.cast(t, DataType.Float) for t in (dy, x, w))
        xhat = fd.ops.mul(fd.ops.sub(xf, mean), rstd)
        g = fd.ops.mul(dyf, fd.ops.broadcast(wf, [True, False]))
        a = fd.ops.sum(g, [1], keepdim=True)
        c = fd.ops.sum(fd.ops.mul(g, xhat), [1], keepdim=True)
        n = fd.ops.cast(fd.ops.size(x, 1), DataType.Float)
        t = fd.ops.sub(fd.ops.sub(fd.ops.mul(g, n), a), fd.ops.mul(xhat, c))
        fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.div(rstd, n), t), dtype))
        fd.add_output(fd.ops.sum(fd.ops.mul(dyf, xhat), [0]))
        fd.add_output(fd.ops.sum(dyf, [0]))
    return fd.fusion()


def inputs(rows: int, cols: int, dt=np.float32):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(dt)
    mean = x.astype(np.float32).mean(1, keepdims=True)
    rstd = 1 / np.sqrt(x.astype(np.float32).var(1, keepdims=True) + 1e-5)
    return [rng.standard_normal((rows, cols)).astype(dt), x, mean, rstd.astype(np.float32),
            rng.standard_normal(cols).astype(dt)]


def test_the_scheduler_picks_inner_outer_for_enough_rows() -> None:
    fusion = layer_norm_backward()
    sel = select(fusion, bind_sizes(fusion, [(264, 64), (264, 64), (264, 1), (264, 1), (64,)]), H100)
    assert sel.kind == "inner_outer_persistent"


def test_held_buffers_are_the_choice_for_four_byte_or_wide_rows() -> None:
    """``SINGLE_KERNEL_HOLD_ITEMSIZE``: f32 rows hold xhat and dy * w (float32, no wider
    than the inputs); bf16 rows of 2048 recompute them (held, they doubled the
    registers of the inputs and were slower on the H100); bf16 rows of at least 8 KB
    hold them on 256 threads a row, one block an SM (``SINGLE_KERNEL_WIDE_ROW_BYTES``:
    4096 wide, 83.2 -> 76.4 us; 8192 wide, 113.4 -> 85.2)."""

    def inner(dt: DataType, rows: int, cols: int):  # noqa: ANN202
        shapes = [(rows, cols), (rows, cols), (rows, 1), (rows, 1), (cols,)]
        fusion = layer_norm_backward(dt)
        return InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, shapes), H100).inner

    assert inner(DataType.Float, 4096, 4096).hold_buffers
    assert not inner(DataType.BFloat16, 8192, 2048).hold_buffers
    wide = inner(DataType.BFloat16, 4096, 4096)
    assert wide.hold_buffers and (wide.threads_per_row, wide.rows_per_block, wide.grid) == (256, 2, (132, 1, 1))
    wider = inner(DataType.BFloat16, 2048, 8192)
    assert wider.hold_buffers and (wider.threads_per_row, wider.rows_per_block, wider.grid) == (256, 1, (132, 1, 1))


@pytest.mark.parametrize("single_kernel", [True, False], ids=["one-kernel", "halves"])
@pytest.mark.parametrize("rows,cols", [(6, 40), (9, 64), (300, 24)])
def test_layer_norm_backward_matches_reference(rows: int, cols: int, single_kernel: bool) -> None:
    """Too few rows for the scheduler to pick the kind on an H100 (one row per SM): its
    heuristic's parameters at these sizes are forced, so that the interpreter stays fast.
    One kernel (the default): dx stored by the persistent kernel, dw and db by the
    finishing kernel from its per-block partial sums; 300 rows are more than the 132
    blocks' first iteration, so blocks loop, and the last iteration is partial. The
    halves: a kernel group per loop nest."""
    fusion = layer_norm_backward()
    xs = inputs(rows, cols)
    params = InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, [x.shape for x in xs]), H100)
    assert params.single_kernel
    params = replace(params, single_kernel=single_kernel)
    sched = schedule_segment(fusion, Signature.of(fusion, xs), H100, ("inner_outer_persistent", params))
    ours, lowered = run_segment_on_cpu(sched, xs)
    assert lowered.scheduler == "inner_outer_persistent"
    names = [k.name for k in lowered.kernels]
    if single_kernel:
        assert names == [names[0], f"{names[0]}_finish"]
        assert len(lowered.scratch) == 2  # dw's and db's partial sums, one buffer each
    else:  # a kernel group per loop nest: dx from the row kernel, dw and db from the column one
        stored = [{a.index for a in k.args if a.kind == "output"} for k in lowered.kernels]
        assert set().union(*stored) == {0, 1, 2}
        assert 0 in stored[0] and not stored[0] & {1, 2}
    ref = run_fusion(fusion, [x.copy() for x in xs])
    for o, r in zip(ours, ref, strict=True):
        np.testing.assert_allclose(o, r, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("rows,cols,bf16", [(300, 24, False), (301, 64, False), (301, 64, True)])
def test_held_buffers_are_registers_and_match_reference(rows: int, cols: int, bf16: bool) -> None:
    """``hold_buffers`` on the one-kernel schedule's row parameters: ``schedule-fusions``
    holds the persistent buffers computed in the fusion (``xhat`` and ``dy * w``) in
    registers at the rows' loop instead of recomputing them after the row sums, and
    the kernels still match the reference (16 blocks of 4 rows: partial last
    iterations). In bf16 the rows are 8-lane vectors, so the held float32 buffers are
    32 bytes a thread's lanes (unrolled, not one memory vector)."""
    import ml_dtypes

    from fuser.ir.dialects.iterdomain import LoopOp

    fusion = layer_norm_backward(DataType.BFloat16 if bf16 else DataType.Float)
    xs = inputs(rows, cols, ml_dtypes.bfloat16 if bf16 else np.float32)
    tol = 1e-2 if bf16 else 2e-5
    params = InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, [x.shape for x in xs]), H100)
    held_regs = {}
    for hold in (False, True):
        p = replace(params, inner=replace(params.inner, grid=(16, 1, 1), hold_buffers=hold))
        sched = schedule_segment(fusion, Signature.of(fusion, xs), H100, ("inner_outer_persistent", p))
        held_regs[hold] = {
            op.tensor for op in sched.body.block.ops
            if isinstance(op, LoopOp) and op.memory_attr is not None and op.memory_attr.data == "registers"
            and op.tensor not in sched.body.block.args
        }
        ours, lowered = run_segment_on_cpu(sched, xs)
        assert lowered.scheduler == "inner_outer_persistent"
        for o, r in zip(ours, run_fusion(fusion, [x.copy() for x in xs]), strict=True):
            np.testing.assert_allclose(o.astype(np.float64), r.astype(np.float64), rtol=tol, atol=tol)
    assert not held_regs[False]  # by default only inputs are held: the rest is recomputed
    assert len(held_regs[True]) >= 2, held_regs[True]


def test_a_block_whose_column_tile_would_overflow_shared_memory_still_compiles() -> None:
    """At 32768x768 f32, 64x8 threads with held buffers: the column sums' slot tile
    ``[8][24][64]`` floats is exactly 48 KB, and the row sums' block reductions need a
    workspace beside it (NVRTC's ptxas rejected the kernel, 51200 bytes, in a tune run
    on the H100). The lowering leaves the tile out (the slots are combined by block
    reductions), and every kernel declares at most 48 KB and compiles."""
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.codegen.lower import lower_segment
    from fuser.codegen.lower.common import TensorLayout
    from fuser.codegen.nvrtc import CompileOptions, compile_cuda
    from fuser.ir.dialects import kernel as k

    fusion = layer_norm_backward()
    shapes = [(32768, 768), (32768, 768), (32768, 1), (32768, 1), (768,)]
    params = InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, shapes), H100)
    inner = replace(params.inner, threads_per_row=64, rows_per_block=8, cross_block=True, block=(64, 8, 1),
                    grid=(132, 1, 1), hold_buffers=True)
    sched = schedule_segment(fusion, Signature(tuple(shapes)), H100, ("inner_outer_persistent", replace(params, inner=inner)))
    lowered = lower_segment(sched, [TensorLayout.contiguous(s, 4) for s in shapes])
    funcs = [op for m in lowered.modules() for op in m.walk() if isinstance(op, k.FuncOp)]
    assert funcs[0].get_block_size() == (64, 8, 1)
    assert "%across_tile" not in funcs[0].static_shared_bytes()
    for f in funcs:
        assert sum(f.static_shared_bytes().values()) <= k.STATIC_SHARED_LIMIT, f.static_shared_bytes()
    compile_cuda(print_cuda(*lowered.modules()), name=lowered.kernels[0].name,
                 options=CompileOptions(arch="sm_90"))


def test_half_fusion_keeps_inputs_and_drops_dead_ops() -> None:
    fusion = layer_norm_backward()
    half = half_fusion(fusion, [1, 2], "cols")
    assert len(half.inputs) == len(fusion.inputs)
    assert len(half.output_op.values) == 2
    names = [op.name for op in half.body.block.ops]
    assert names.count("fuser.sum") == 2  # the row sums are gone


def test_an_output_needing_both_kinds_is_segmented() -> None:
    """An output computed from a row and a column reduction cannot be split into the
    two kernel groups: the inner-outer kind rejects it (naming the output), and the
    segmenter runs it as two segments whose kernels equal the reference."""
    from fuser.frontend.execution import execute_kernels_on_cpu

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        r = fd.ops.sum(x, [1], keepdim=True)
        c = fd.ops.sum(x, [0], keepdim=True)
        fd.add_output(fd.ops.add(fd.ops.add(x, r), c))
    fusion = fd.fusion()
    with pytest.raises(ScheduleSegmentError, match="output #0 depends on both row and column reductions"):
        schedule_segment(fusion, Signature.of(fusion, [(264, 40)]), H100)
    x = np.random.default_rng(0).standard_normal((4, 40)).astype(np.float32)
    assert len(fd.plan([x]).segments) == 2
    (ours,) = execute_kernels_on_cpu(fd._ensure_defined(), [x])
    np.testing.assert_allclose(ours, run_fusion(fusion, [x.copy()])[0], rtol=1e-5, atol=1e-5)


def _column_max() -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sub(x, fd.ops.sum(x, [1], keepdim=True)))
        fd.add_output(fd.ops.max(x, [0]))
    return fd


def _column_var_mean() -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(x, fd.ops.sum(x, [1], keepdim=True)))
        var, mean = fd.ops.var_mean(x, [0], correction=0)
        fd.add_output(var)
        fd.add_output(mean)
    return fd


@pytest.mark.parametrize("make", [_column_max, _column_var_mean], ids=["max", "var_mean"])
@pytest.mark.parametrize("rows", [300, 700])
def test_other_column_reductions_run_in_the_one_kernel(make, rows: int) -> None:  # noqa: ANN001
    """Column reductions other than sums across the rows' persistent loop: a max (its
    identity, not zero, in every accumulator) and a Welford var_mean (mean, M2 and count
    a column, merged by Chan's formula in the shared tile and the finishing kernel; both
    of its results are outputs, the mean a sibling result of the op)."""
    from fuser.frontend.execution import execute_kernels_on_cpu, lowered_segments

    fd = make()
    x = np.random.default_rng(1).standard_normal((rows, 40)).astype(np.float32)
    ((seg, lowered),) = lowered_segments(fd._ensure_defined(), [x])
    assert lowered.scheduler == "inner_outer_persistent"
    assert [k.name for k in lowered.kernels] == [lowered.kernels[0].name, f"{lowered.kernels[0].name}_finish"]
    got = execute_kernels_on_cpu(fd._ensure_defined(), [x])
    for g, w in zip(got, run_fusion(fd.fusion(), [x.copy()]), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _column_stat_beside_rows() -> FusionDefinition:
    """Random fusion 3878's shape: a column ``var_mean`` whose mean also feeds an
    output at the input's shape (``minimum(mean, x)``), beside a row sum."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(x, dims=[0], correction=1, keepdim=True)
        fd.add_output(fd.ops.minimum(mean, x))
        fd.add_output(fd.ops.sum(x, dims=[1], keepdim=False))
        fd.add_output(var)
    return fd


def test_an_output_past_the_columns_at_the_full_shape_takes_the_halves() -> None:
    """The one-kernel schedule has the column reductions' results only in its
    finishing kernel, which stores outputs at their index: an output computed from a
    column reduction at the input's shape makes the heuristic take the halves
    (``outputs_past_columns``), which run it (on a GPU of 4 SMs the small case is
    this kind: its kernels in the CPU interpreter match the reference). Forced to
    one kernel, the lowering names the output instead of failing inside Python."""
    from fuser.codegen.lower.common import LoweringError
    from fuser.frontend.execution import execute_kernels_on_cpu
    from fuser.schedulers.inner_outer_persistent import outputs_past_columns

    fd = _column_stat_beside_rows()
    fusion = fd._ensure_defined().fusion  # noqa: SLF001
    sizes = bind_sizes(fusion, [(300, 8)])
    assert [v.owner.name for v in outputs_past_columns(fusion, sizes)] == ["fuser.minimum"]
    params = InnerOuterPersistentScheduler.heuristic(fusion, sizes, H100)
    assert not params.single_kernel
    ln = layer_norm_backward()
    assert not outputs_past_columns(ln, bind_sizes(ln, [(300, 8), (300, 8), (300, 1), (300, 1), (8,)]))

    x = np.random.default_rng(3).standard_normal((9, 5)).astype(np.float32)
    small_gpu = SMALL_GPU
    assert [s.scheduler for s in fd.plan([x], target=small_gpu).segments] == ["inner_outer_persistent"]
    for got, want in zip(execute_kernels_on_cpu(fd._ensure_defined(), [x], nvrtc=False, target=small_gpu),  # noqa: SLF001
                         fd.execute([x]), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    xs = [x]
    one = replace(InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, [(9, 5)]), small_gpu),
                  single_kernel=True)
    sched = schedule_segment(fusion, Signature.of(fusion, xs), small_gpu, ("inner_outer_persistent", one))
    with pytest.raises(LoweringError, match=r"output the result of fuser.minimum \(shape \[9, 5\]\) is computed from .* at another shape than "
                                            r"its \[1, 5\]: the finishing kernel stores outputs at the reduction's index only"):
        run_segment_on_cpu(sched, xs)
