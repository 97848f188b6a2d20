"""``strip-bookend-views``: the fusions of seed 002 lose their bookend views, the
layout rules hold, and the module through the host evaluator equals the reference."""

from __future__ import annotations

import numpy as np
import pytest

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import run_fusion
from fuser.passes.strip_bookend_views import StripBookendViews
from fuser.runtime.host_evaluator import run_program
from tests.test_segment import check_pipeline, fusion_of, launches

# seed 002's GELU and transpose, scaled down (same views, same pointwise chain)
GELU = """
fuser.fusion @gelu(%t0 : !fuser.tensor<96x48xf32>) -> !fuser.tensor<96x48xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 4, 24, 48>} : !fuser.tensor<96x48xf32> -> !fuser.tensor<4x24x48xf32>
  %s2 = fuser.constant 5.000000e-01 : f64
  %t3 = fuser.mul %t1, %s2 : (!fuser.tensor<4x24x48xf32>, f64) -> !fuser.tensor<4x24x48xf32>
  %s4 = fuser.constant 7.071070e-01 : f64
  %t5 = fuser.mul %t1, %s4 : (!fuser.tensor<4x24x48xf32>, f64) -> !fuser.tensor<4x24x48xf32>
  %t6 = fuser.erf %t5 : (!fuser.tensor<4x24x48xf32>) -> !fuser.tensor<4x24x48xf32>
  %s7 = fuser.constant 1.000000e+00 : f64
  %t8 = fuser.add %t6, %s7 : (!fuser.tensor<4x24x48xf32>, f64) -> !fuser.tensor<4x24x48xf32>
  %t9 = fuser.mul %t3, %t8 : (!fuser.tensor<4x24x48xf32>, !fuser.tensor<4x24x48xf32>) -> !fuser.tensor<4x24x48xf32>
  %t10 = fuser.reshape %t9 {new_shape = array<i64: 96, 48>} : !fuser.tensor<4x24x48xf32> -> !fuser.tensor<96x48xf32>
  fuser.output %t10 : !fuser.tensor<96x48xf32>
}
"""

TRANSPOSE = """
fuser.fusion @transpose(%t0 : !fuser.tensor<24x8x4xf32>) -> !fuser.tensor<16x48xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 2, 12, 8, 4>} : !fuser.tensor<24x8x4xf32> -> !fuser.tensor<2x12x8x4xf32>
  %t2 = fuser.permute %t1 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<2x12x8x4xf32>) -> !fuser.tensor<2x8x12x4xf32>
  %t3 = fuser.set %t2 : (!fuser.tensor<2x8x12x4xf32>) -> !fuser.tensor<2x8x12x4xf32>
  %t4 = fuser.reshape %t3 {new_shape = array<i64: 2, 8, 48>} : !fuser.tensor<2x8x12x4xf32> -> !fuser.tensor<2x8x48xf32>
  %t5 = fuser.reshape %t4 {new_shape = array<i64: 16, 48>} : !fuser.tensor<2x8x48xf32> -> !fuser.tensor<16x48xf32>
  fuser.output %t5 : !fuser.tensor<16x48xf32>
}
"""

LAYOUTS = """
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>, %y : !fuser.tensor<8x4xf32, stride_order=[0, 1]>, %z : !fuser.tensor<6xf32>) -> (!fuser.tensor<8x4xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<32xf32>, !fuser.tensor<1x6xf32>) {
  %e = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %p = fuser.permute %e {dims = array<i64: 1, 0>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32>
  %s = fuser.slice %x {starts = array<i64: 0, 2>, ends = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x6xf32>
  %n = fuser.neg %s : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<4x6xf32>
  %c = fuser.set %n : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<4x6xf32>
  %r = fuser.reshape %y {new_shape = array<i64: 32>} : !fuser.tensor<8x4xf32, stride_order=[0, 1]> -> !fuser.tensor<32xf32>
  %a = fuser.abs %r : (!fuser.tensor<32xf32>) -> !fuser.tensor<32xf32>
  %b = fuser.broadcast %z {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<6xf32>) -> !fuser.tensor<1x6xf32>
  %m = fuser.mul %b, %b : (!fuser.tensor<1x6xf32>, !fuser.tensor<1x6xf32>) -> !fuser.tensor<1x6xf32>
  fuser.output %p, %c, %a, %m : !fuser.tensor<8x4xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<32xf32>, !fuser.tensor<1x6xf32>
}
"""


def test_gelu_has_no_view_left_and_one_launch() -> None:
    module = check_pipeline(GELU, [StripBookendViews()])
    fusion = fusion_of(module)
    assert not any(isinstance(op, F.ViewLikeOp) for op in fusion.body.block.ops)
    assert fusion.function_type.inputs.data[0] == F.TensorType([4, 24, 48], F.DType.float32)
    program = next(op for op in module.ops if isinstance(op, H.ProgramOp))
    names = [op.name for op in program.body.block.ops]
    assert names == ["hir.reshape", "hir.launch", "hir.reshape", "hir.return"]


def test_gelu_output_is_a_view_of_the_kernel_output() -> None:
    module = parse_module(GELU)
    StripBookendViews().apply(make_context(), module)
    x = np.random.default_rng(0).standard_normal((96, 48)).astype(np.float32)
    (out,) = run_program(module, [x])
    assert out.shape == (96, 48) and out.base is not None  # a host reshape, no copy


def test_transpose_is_a_strided_read_feeding_the_set() -> None:
    module = check_pipeline(TRANSPOSE, [StripBookendViews()])
    fusion = fusion_of(module)
    assert [op.name for op in fusion.body.block.ops] == ["fuser.set", "fuser.output"]
    (arg,) = fusion.inputs
    assert isinstance(arg.type, F.TensorType)
    assert arg.type.get_stride_order() == (3, 1, 2, 0)
    assert len(launches(module)) == 1


def test_layout_rules() -> None:
    module = check_pipeline(LAYOUTS, [StripBookendViews()])
    fusion = fusion_of(module)
    names = [op.name for op in fusion.body.block.ops]
    # output permute returned directly -> host; input slice -> host; set dropped;
    # the reshape of a non-row-major input stays; so does the mul of the broadcast
    assert "fuser.permute" not in names and "fuser.slice" not in names
    assert "fuser.set" not in names and "fuser.broadcast" not in names
    assert "fuser.reshape" in names
    ins = [a.type for a in fusion.inputs]
    assert F.TensorType([4, 6], F.DType.float32, [False, True]) in ins


def test_idempotent() -> None:
    module = parse_module(GELU)
    StripBookendViews().apply(make_context(), module)
    once = str(module)
    StripBookendViews().apply(make_context(), module)
    assert str(module) == once


@pytest.mark.parametrize("text", [GELU, TRANSPOSE, LAYOUTS])
@pytest.mark.parametrize("seed", [1, 2])
def test_differential(text: str, seed: int) -> None:
    check_pipeline(text, [StripBookendViews()], seed=seed)


ROW_PITCH = """
fuser.fusion @f(%x : !fuser.tensor<2x8x11xf32, contiguity=[true, false, true]>, %y : !fuser.tensor<16x11xbf16, contiguity=[false, true]>) -> (!fuser.tensor<16x1xf32>, !fuser.tensor<2x8x11xf32>, !fuser.tensor<176xf32>) {
  %c = fuser.cast %x : (!fuser.tensor<2x8x11xf32, contiguity=[true, false, true]>) -> !fuser.tensor<2x8x11xf32>
  %r = fuser.reshape %c {new_shape = array<i64: 16, 11>} : !fuser.tensor<2x8x11xf32> -> !fuser.tensor<16x11xf32>
  %m = fuser.max %r {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<16x11xf32>) -> !fuser.tensor<16x1xf32>
  %s = fuser.reshape %y {new_shape = array<i64: 2, 8, 11>} : !fuser.tensor<16x11xbf16, contiguity=[false, true]> -> !fuser.tensor<2x8x11xbf16>
  %n = fuser.neg %s : (!fuser.tensor<2x8x11xbf16>) -> !fuser.tensor<2x8x11xbf16>
  %f = fuser.cast %n : (!fuser.tensor<2x8x11xbf16>) -> !fuser.tensor<2x8x11xf32>
  %a = fuser.reshape %y {new_shape = array<i64: 176>} : !fuser.tensor<16x11xbf16, contiguity=[false, true]> -> !fuser.tensor<176xbf16>
  %b = fuser.cast %a : (!fuser.tensor<176xbf16>) -> !fuser.tensor<176xf32>
  fuser.output %m, %f, %b : !fuser.tensor<16x1xf32>, !fuser.tensor<2x8x11xf32>, !fuser.tensor<176xf32>
}
"""


def test_views_of_inputs_with_a_row_pitch() -> None:
    """Inputs whose rows are 16 elements apart and 11 long (a padded product's
    slice): the reshapes that keep the gap on one axis are host views of them, the
    one that merges across it stays in the kernel, and the whole program computes
    what the reference computes on those strided arrays."""
    import ml_dtypes

    module = parse_module(ROW_PITCH)
    before = fusion_of(parse_module(ROW_PITCH))
    StripBookendViews().apply(make_context(), module)
    module.verify()
    program = next(op for op in module.ops if isinstance(op, H.ProgramOp))
    assert [op.name for op in program.body.block.ops if isinstance(op, H.HostViewOp)] == ["hir.reshape"] * 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 16)).astype(np.float32)[:, :11].reshape(2, 8, 11)
    y = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16)[:, :11]
    assert x.strides == (8 * 16 * 4, 16 * 4, 4) and not y.flags.c_contiguous
    want = run_fusion(before, [x, y])
    got = run_program(module, [x, y])
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g, np.float32), np.asarray(w, np.float32))
