"""The compiler driver (``fuser.runtime.driver``) and ``bind-sizes``: the pipeline is
fixed and printable, runs on a copy, and what it builds computes what the fusion
computes (differential runs through the reference interpreter)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fuser.codegen.lower.common import TensorLayout
from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import run_fusion
from fuser.passes.bind_sizes import BindSizes, BindSizesError
from fuser.runtime.driver import PASSES, CompileError, Signature, compile, pipeline_spec

SEED000 = """
fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}
"""


def _fusion(text: str) -> F.FusionOp:
    module = parse_module(text)
    return next(op for op in module.ops if isinstance(op, F.FusionOp))


def _gelu() -> F.FusionOp:
    from pathlib import Path

    text = (Path(__file__).parents[1] / "examples" / "gelu_bookend_views.mlir").read_text()
    return _fusion(text)


def test_bind_sizes_is_a_differential_no_op() -> None:
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((6, 40)).astype(np.float32) for _ in range(2))
    module = parse_module(SEED000)
    before = run_fusion(_fusion(SEED000), [x, y])
    BindSizes("0=6x40,1=6x40").apply(make_context(), module)
    module.verify()
    bound = next(op for op in module.ops if isinstance(op, F.FusionOp))
    assert [a.type.get_shape() for a in bound.inputs] == [(6, 40), (6, 40)]
    assert bound.function_type.outputs.data[0].get_shape() == (6, 40)
    np.testing.assert_array_equal(run_fusion(bound, [x, y])[0], before[0])


def test_bind_sizes_rejects_sizes_that_disagree_inside_the_fusion() -> None:
    module = parse_module(SEED000)
    with pytest.raises(BindSizesError, match=r"bind-sizes: @sum_broadcast_add: fuser\.add"):
        BindSizes("0=6x40,1=7x40").apply(make_context(), module)


def test_compile_runs_the_printed_pipeline_and_computes_the_fusion() -> None:
    fusion = _fusion(SEED000)
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((4, 1024)).astype(np.float32) for _ in range(2))
    exe = compile(fusion, Signature.of(fusion, [x, y]))
    assert exe.pipeline == pipeline_spec("0=4x1024,1=4x1024")
    assert exe.pipeline == 'bind-sizes{sizes="0=4x1024,1=4x1024"},' + ",".join(PASSES)
    (seg,) = exe.fusions.values()
    assert seg.attributes["fuser.schedule"].data["kind"].data == "inner_persistent"
    assert "?" not in str(exe.module)  # every extent bound
    assert str(fusion).count("?") > 0  # on a copy: the caller's fusion is unchanged
    np.testing.assert_allclose(exe.run_on_cpu([x, y])[0], run_fusion(fusion, [x, y])[0], rtol=1e-6)


def test_print_pipeline_is_the_drivers() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fuser.tools.fuser_opt", "--print-pipeline=0=4x1024,1=4x1024"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert out == pipeline_spec("0=4x1024,1=4x1024")


def test_dropping_a_pass_changes_what_is_compiled() -> None:
    fusion = _gelu()
    x = np.random.default_rng(2).standard_normal((8192, 3072)).astype(np.float32)[:64]
    sig = Signature(((8192, 3072),))
    full = compile(fusion, sig)
    (seg,) = full.fusions.values()
    assert not any(isinstance(op, F.ReshapeOp) for op in seg.body.block.ops)
    assert sum(isinstance(op, H.ReshapeOp) for op in full.program.walk()) == 2
    without = compile(fusion, sig, passes=tuple(p for p in PASSES if p != "strip-bookend-views"))
    (kept,) = without.fusions.values()
    assert sum(isinstance(op, F.ReshapeOp) for op in kept.body.block.ops) == 2
    assert "strip-bookend-views" not in without.pipeline
    # both compute GELU (a small slice of rows: the same program at another size)
    small = Signature(((64, 3072),))
    del x
    a = np.random.default_rng(3).standard_normal((64, 3072)).astype(np.float32)
    f64 = _fusion(str(fusion).replace("8192", "64").replace("64x128x3072", "1x64x3072").replace(
        "array<i64: 64, 128, 3072>", "array<i64: 1, 64, 3072>").replace("split [64, 128]", "split [1, 64]"))
    outs = [compile(f64, small, passes=p).run_on_cpu([a])[0] for p in (PASSES, without.pipeline.split(",")[1:])]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)
    np.testing.assert_allclose(outs[0], run_fusion(f64, [a])[0], rtol=1e-6)


def test_a_bad_signature_is_a_compile_error_naming_the_fusion() -> None:
    with pytest.raises(CompileError, match=r"cannot compile @sum_broadcast_add: bind-sizes: .*given shape is \[4, 8, 2\]"):
        compile(_fusion(SEED000), Signature(((4, 8, 2), (4, 8))))
    with pytest.raises(CompileError, match="made no hir.program"):
        compile(_fusion(SEED000), Signature(((4, 8), (4, 8))), passes=("canonicalize",))


def test_launch_layouts_keep_the_callers_layout_and_make_intermediates_dense() -> None:
    from fuser.ir.dialects.fuser import SegmentSetOp  # noqa: F401 - the op the cut needs

    cut = SEED000.replace(
        "%t3 = fuser.broadcast %t2", "%c = fuser.segment_set %t2 : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>\n  %t3 = fuser.broadcast %c"
    )
    fusion = _fusion(cut)
    exe = compile(fusion, Signature(((4, 8), (4, 8))))
    assert len(exe.launches) == 2
    strided = TensorLayout((4, 8), (16, 2), 1)
    dense = TensorLayout((4, 8), (8, 1), 4)
    launches = exe.launch_layouts([strided, dense], [None, None])
    (first, lay0, _), (second, lay1, _) = launches
    assert lay0 == [strided]
    assert dense in lay1 and any(lay is not None and lay.shape == (4,) and lay.strides == (1,) for lay in lay1)
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal((4, 8)).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(exe.run_on_cpu([x, y])[0], y + x.sum(1, keepdims=True), rtol=1e-6)
    del first, second


def test_a_declared_output_layout_survives_segmentation() -> None:
    fusion = _fusion("""
fuser.fusion @neg(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32, stride_order=[0, 1]> {
  %y = fuser.neg %x : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}
""")
    exe = compile(fusion, Signature(((3, 4),)))
    (alloc,) = [op for op in exe.program.walk() if isinstance(op, H.AllocateOp)]
    assert alloc.result.type.get_stride_order() == (0, 1)
    (seg,) = exe.fusions.values()
    assert seg.function_type.outputs.data[0].get_stride_order() == (0, 1)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = exe.run_on_cpu([x])
    assert out.strides == (4, 12)  # column-major, as declared
    np.testing.assert_array_equal(out, -x)


def test_scalar_extents_bound_by_types() -> None:
    """After bind-sizes an iota's length is in its type: segment and the schedulers
    need no scalar value (the scalar stays a program input)."""
    fusion = _fusion("""
fuser.fusion @ramp(%n : i64) -> !fuser.tensor<?xi64> {
  %s = fuser.constant 2 : i64
  %d = fuser.constant 3 : i64
  %r = fuser.iota %n, %s, %d : (i64, i64, i64) -> !fuser.tensor<?xi64>
  fuser.output %r : !fuser.tensor<?xi64>
}
""")
    exe = compile(fusion, Signature((5,)))
    assert exe.pipeline.startswith('bind-sizes{sizes="0=5"}')
    np.testing.assert_array_equal(exe.run_on_cpu([5])[0], 2 + 3 * np.arange(5))


def test_the_lowering_reads_the_schedule_select_schedulers_recorded() -> None:
    """No scheduler is asked again after select-schedulers: a segment's kernels follow
    its ``fuser.schedule`` (edit the parameters in the IR and the kernel changes), and
    ``fd.plan``'s rejections are the ones the pass recorded (``debug``)."""
    import dataclasses

    from xdsl.dialects.builtin import DictionaryAttr, StringAttr

    from fuser.codegen.lower import lower_segment
    from fuser.ir.schedule import drop_schedule
    from fuser.passes.schedule_fusions import schedule_fusion
    from fuser.schedulers.params import (
        REJECTIONS_ATTR,
        SCHEDULE_ATTR,
        params_entries,
        read_schedule,
    )

    fusion = _fusion(SEED000)
    exe = compile(fusion, Signature(((64, 1024), (64, 1024))))
    (seg,) = exe.fusions.values()
    assert set(seg.attributes[REJECTIONS_ATTR].data) >= {"no_op", "pointwise"}
    kind, params = read_schedule(seg.attributes[SCHEDULE_ATTR])
    layouts = [TensorLayout.contiguous((64, 1024))] * 2
    before = lower_segment(seg, layouts).kernels[0]
    assert before.block == params.block
    edited = dataclasses.replace(params, rows_per_block=1, block=(params.block[0], 1, 1), grid=(64, 1, 1))
    seg.attributes[SCHEDULE_ATTR] = DictionaryAttr({"kind": StringAttr(kind), **params_entries(edited)})
    # The loop nest schedule-fusions wrote is the kernel, whatever the record says now...
    assert lower_segment(seg, layouts).kernels[0].grid == before.grid
    # ... and the loop nest written again from the edited record follows it.
    drop_schedule(seg)
    assert schedule_fusion(seg)
    after = lower_segment(seg, layouts).kernels[0]
    assert after.block == edited.block and after.grid == edited.grid != before.grid
