"""``mark-aliases``: views of inputs on the host, in-place updates as ``hir.alias``
of the caller's buffer, the in-place race cut, preallocated outputs."""

from __future__ import annotations

import numpy as np
import pytest

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import run_fusion
from fuser.passes.mark_aliases import MarkAliases, guard_inplace_races
from fuser.passes.segment import SegmentPass
from fuser.runtime.host_evaluator import run_program
from tests.test_segment import check_pipeline, fusion_of, launches

RACY = """
fuser.fusion @racy(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<8xf32>) -> !fuser.tensor<1x8xf32>
  %s = fuser.add %y, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<1x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %n = fuser.add %x, %c : (!fuser.tensor<8xf32>, f64) -> !fuser.tensor<8xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 2, 4>} : !fuser.tensor<8xf32> -> !fuser.tensor<2x4xf32>
  fuser.output %s, %r, %n : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<8xf32> {alias_inputs = array<i64: -1, -1, 0>}
}
"""

ALIGNED = """
fuser.fusion @aligned(%x : !fuser.tensor<5x8xf32>, %g : !fuser.tensor<5x8xf32>) -> !fuser.tensor<5x8xf32> {
  %c = fuser.constant 1.000000e-01 : f64
  %d = fuser.mul %g, %c : (!fuser.tensor<5x8xf32>, f64) -> !fuser.tensor<5x8xf32>
  %n = fuser.sub %x, %d : (!fuser.tensor<5x8xf32>, !fuser.tensor<5x8xf32>) -> !fuser.tensor<5x8xf32>
  %e = fuser.exp %d : (!fuser.tensor<5x8xf32>) -> !fuser.tensor<5x8xf32>
  fuser.output %n, %e : !fuser.tensor<5x8xf32>, !fuser.tensor<5x8xf32> {alias_inputs = array<i64: 0, -1>}
}
"""

FEEDS_ANOTHER = ALIGNED.replace("@aligned", "@feeds_another").replace("fuser.exp %d", "fuser.exp %n")
"""``exp`` of the update returned beside it: a pointwise fusion whose kernel stores
both outputs (one shape, one layout) together, after loading ``%x``: no cut."""

FEEDS_ANOTHER_LAID_OUT = FEEDS_ANOTHER.replace(
    "%e = fuser.exp %n : (!fuser.tensor<5x8xf32>) -> !fuser.tensor<5x8xf32>",
    "%e = fuser.exp %n : (!fuser.tensor<5x8xf32>) -> !fuser.tensor<5x8xf32, stride_order=[0, 1]>",
).replace(
    "fuser.output %n, %e : !fuser.tensor<5x8xf32>, !fuser.tensor<5x8xf32> {",
    "fuser.output %n, %e : !fuser.tensor<5x8xf32>, !fuser.tensor<5x8xf32, stride_order=[0, 1]> {",
)
"""The same with ``exp`` stored column-major: another store group (or a transpose
kernel), which could load ``%x`` after the update was stored: cut."""

FEEDS_ANOTHER_BESIDE_A_SUM = FEEDS_ANOTHER.replace(
    "  fuser.output %n, %e : !fuser.tensor<5x8xf32>, !fuser.tensor<5x8xf32> {alias_inputs = array<i64: 0, -1>}",
    "  %s = fuser.sum %g {dims = array<i64: 1>} : (!fuser.tensor<5x8xf32>) -> !fuser.tensor<5xf32>\n"
    "  fuser.output %n, %e, %s : !fuser.tensor<5x8xf32>, !fuser.tensor<5x8xf32>, !fuser.tensor<5xf32> "
    "{alias_inputs = array<i64: 0, -1, -1>}",
).replace("-> !fuser.tensor<5x8xf32> {\n", "-> (!fuser.tensor<5x8xf32>, !fuser.tensor<5xf32>) {\n", 1)
"""The same beside a reduction of another input: not a pointwise fusion (a reduction
kernel stores its outputs elsewhere): cut."""

REDUCED = """
fuser.fusion @reduced(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  %c = fuser.constant 2.000000e+00 : f64
  %n = fuser.mul %x, %c : (!fuser.tensor<4x8xf32>, f64) -> !fuser.tensor<4x8xf32>
  fuser.output %s, %n : !fuser.tensor<4xf32>, !fuser.tensor<4x8xf32> {alias_inputs = array<i64: -1, 0>}
}
"""

VIEWS_ONLY = """
fuser.fusion @views(%x : !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>, !fuser.tensor<4x6xf32>) {
  %p = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<6x4xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  fuser.output %p, %r, %x : !fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>, !fuser.tensor<4x6xf32>
}
"""


def test_race_detection() -> None:
    assert guard_inplace_races(fusion_of(parse_module(RACY)))
    assert guard_inplace_races(fusion_of(parse_module(REDUCED)))  # read by a reduction
    assert not guard_inplace_races(fusion_of(parse_module(ALIGNED)))
    # Another output computed from the update: stored with it (pointwise, one layout)...
    assert not guard_inplace_races(fusion_of(parse_module(FEEDS_ANOTHER)))
    # ... or apart from it.
    assert guard_inplace_races(fusion_of(parse_module(FEEDS_ANOTHER_LAID_OUT)))
    assert guard_inplace_races(fusion_of(parse_module(FEEDS_ANOTHER_BESIDE_A_SUM)))


def test_racy_update_is_cut_and_aliased() -> None:
    module = check_pipeline(RACY, [MarkAliases()])
    fusion = fusion_of(module)
    assert any(isinstance(op, F.SegmentSetOp) for op in fusion.body.block.ops)
    assert fusion.output_op.get_alias_inputs() == [-1, -1]
    (alias,) = [op for op in module.walk() if isinstance(op, H.AliasOp)]
    program = next(op for op in module.ops if isinstance(op, H.ProgramOp))
    assert alias.target == program.inputs[0]
    segmented = check_pipeline(RACY, [MarkAliases(), SegmentPass()])
    last = launches(segmented)[-1]
    assert last.outs and last.outs[0] == next(
        op for op in segmented.ops if isinstance(op, H.ProgramOp)
    ).inputs[0]  # the copy into the caller's buffer comes last


def test_inplace_writes_the_callers_buffer() -> None:
    module = parse_module(ALIGNED)
    fusion = fusion_of(parse_module(ALIGNED))
    MarkAliases().apply(make_context(), module)
    rng = np.random.default_rng(3)
    x, g = (rng.standard_normal((5, 8)).astype(np.float32) for _ in range(2))
    x_ref = x.copy()
    (expected,) = run_fusion(fusion, [x_ref, g])
    (got,) = run_program(module, [x, g])
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose(x, x_ref, rtol=1e-6)  # updated in place


def test_view_outputs_share_storage_and_launch_nothing() -> None:
    module = check_pipeline(VIEWS_ONLY, [MarkAliases()])
    assert launches(module) == []
    assert not any(isinstance(op, F.FusionOp) for op in module.ops)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    outs = run_program(module, [x])
    assert all(np.shares_memory(o, x) for o in outs)


def test_preallocated_output() -> None:
    module = parse_module(RACY)
    MarkAliases().apply(make_context(), module)
    allocs = [op for op in module.walk() if isinstance(op, H.AllocateOp)]
    # the returned sum in the caller's buffer; the update of %x in a buffer of its own
    # (the launch reads %x through a broadcast), copied into %x by the hir.alias
    assert [a.is_preallocated for a in allocs] == [True, False]
    x = np.ones(8, np.float32)
    y = np.ones((4, 8), np.float32)
    out = np.empty((4, 8), np.float32)
    res = run_program(module, [x, y], preallocated_outputs=[out, None])
    assert res[0] is out
    np.testing.assert_allclose(out, 2.0)
    np.testing.assert_allclose(x, 2.0)


@pytest.mark.parametrize("text", [RACY, ALIGNED, FEEDS_ANOTHER, FEEDS_ANOTHER_LAID_OUT, FEEDS_ANOTHER_BESIDE_A_SUM, REDUCED, VIEWS_ONLY])
@pytest.mark.parametrize("segment", [False, True])
def test_differential(text: str, segment: bool) -> None:
    passes = [MarkAliases(), SegmentPass()] if segment else [MarkAliases()]
    check_pipeline(text, passes, seed=7)
