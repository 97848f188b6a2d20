"""``fold-in-place-copies``: an in-place update that ``mark-aliases`` cut behind a
copy segment is written straight into its input when, after segmentation, its
segment is pointwise (an Adam step with gradient-norm clipping). Differential
tests through the host evaluator, and the clipped step through the CPU kernel
interpreter in place, against the float64 formulas. The FileCheck tests are
tests/filecheck/passes/fold-in-place-copies*.mlir."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend import execution
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.passes.fold_in_place_copies import FoldInPlaceCopies
from fuser.passes.mark_aliases import MarkAliases
from fuser.passes.segment import SegmentPass
from fuser.runtime.driver import PASSES
from tests.test_segment import check_pipeline, launches

CLIPPED = """
fuser.fusion @clipped(%m : !fuser.tensor<64xf32>, %g : !fuser.tensor<64xf32>, %p : !fuser.tensor<64xf32>) -> () {
  %s = fuser.sum %g {dims = array<i64: 0>} : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  %s2 = fuser.segment_set %s : (!fuser.tensor<f32>) -> !fuser.tensor<f32>
  %b = fuser.broadcast %s2 {is_broadcast_dim = array<i1: true>} : (!fuser.tensor<f32>) -> !fuser.tensor<1xf32>
  %d = fuser.mul %g, %b : (!fuser.tensor<64xf32>, !fuser.tensor<1xf32>) -> !fuser.tensor<64xf32>
  %c = fuser.constant 9.000000e-01 : f64
  %a = fuser.mul %m, %c : (!fuser.tensor<64xf32>, f64) -> !fuser.tensor<64xf32>
  %n = fuser.add %a, %d : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  %q = fuser.sub %p, %n : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %n, %q : !fuser.tensor<64xf32>, !fuser.tensor<64xf32> {alias_inputs = array<i64: 0, 2>}
}
"""

# The same update beside a reduction of the new moment: the update's segment
# reduces, so its copy stays.
NORM_OF_THE_UPDATE = """
fuser.fusion @norm(%m : !fuser.tensor<64xf32>, %g : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %n = fuser.add %m, %g : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  %s = fuser.sum %n {dims = array<i64: 0>} : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  fuser.output %n, %s : !fuser.tensor<64xf32>, !fuser.tensor<f32> {alias_inputs = array<i64: 0, -1>}
}
"""


@pytest.mark.parametrize(("text", "folded"), [(CLIPPED, True), (NORM_OF_THE_UPDATE, False)])
def test_differential(text: str, folded: bool) -> None:
    """The program after the fold computes what the fusion computes, the inputs
    updated in place included (random inputs, the host evaluator); the copy launch
    and its segment are gone where the update's segment is pointwise."""
    before = check_pipeline(text, [MarkAliases(), SegmentPass()], seed=3)
    after = check_pipeline(text, [MarkAliases(), SegmentPass(), FoldInPlaceCopies()], seed=3)
    assert len(launches(after)) == len(launches(before)) - folded
    fusions = [op for op in after.body.block.ops if isinstance(op, F.FusionOp)]
    assert len(fusions) == len(launches(after))
    aliases = [op for op in after.walk() if isinstance(op, H.AliasOp)]
    assert len(aliases) == sum(1 for op in before.walk() if isinstance(op, H.AliasOp))
    # Every in-place result is written by its launch into the buffer it aliases.
    assert all(op.target in op.value.owner.outs for op in aliases)


def test_the_pass_is_in_the_driver_pipeline() -> None:
    assert PASSES.index("fold-in-place-copies") == PASSES.index("segment") + 1


def clipped_adam(fd: FusionDefinition) -> None:
    """An Adam step whose gradient is scaled by ``min(1, c / |g|)`` (global
    gradient-norm clipping); ``m``, ``v`` and ``p`` written in place. The norm's
    reduction is a segment of its own (``segment_set``), the step a pointwise one."""
    p, g, m, v = (fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float) for _ in range(4))
    lr, c = (fd.define_scalar(dtype=DataType.Double) for _ in range(2))
    norm = fd.ops.sqrt(fd.ops.sum(fd.ops.mul(g, g), dims=[0]))
    scale = fd.ops.segment_set(fd.ops.minimum(fd.ops.div(c, fd.ops.add(norm, 1e-6)), 1.0))
    gc = fd.ops.mul(g, scale)
    m2 = fd.ops.add(fd.ops.mul(m, 0.9), fd.ops.mul(gc, 0.1))
    v2 = fd.ops.add(fd.ops.mul(v, 0.999), fd.ops.mul(fd.ops.mul(gc, gc), 0.001))
    p2 = fd.ops.sub(p, fd.ops.mul(fd.ops.div(m2, fd.ops.add(fd.ops.sqrt(v2), 1e-8)), lr))
    fd.add_output(m2, alias_input=m)
    fd.add_output(v2, alias_input=v)
    fd.add_output(p2, alias_input=p)


def _reference(p: Any, g: Any, m: Any, v: Any, lr: float, c: float) -> tuple[Any, Any, Any]:
    gc = g * min(c / (np.sqrt((g * g).sum()) + 1e-6), 1.0)
    m2 = 0.9 * m + 0.1 * gc
    v2 = 0.999 * v + 0.001 * gc * gc
    return m2, v2, p - lr * m2 / (np.sqrt(v2) + 1e-8)


@pytest.mark.parametrize("fold", [True, False])
def test_a_clipped_adam_step_writes_its_moments_in_place(fold: bool) -> None:
    """Two kernels with the fold (the norm, then the step writing ``m``, ``v`` and
    ``p``), four without it (two copy kernels); the same values, in place, through
    the CPU kernel interpreter (which checks the order of the in-place loads and
    stores as the GPU launcher does)."""
    with FusionDefinition() as fd:
        clipped_adam(fd)
    # A pipeline belongs to every definition of the same fusion: set it back.
    fd.pipeline = PASSES if fold else [p for p in PASSES if p != "fold-in-place-copies"]
    try:
        _run_clipped(fd, fold)
    finally:
        fd.pipeline = PASSES


def _run_clipped(fd: FusionDefinition, fold: bool) -> None:
    rng = np.random.default_rng(11)
    n = 1003
    p, g, m = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    v = rng.random(n).astype(np.float32)
    lr, c = 1e-2, 0.5
    want = _reference(*(t.astype(np.float64) for t in (p, g, m, v)), lr, c)
    entry = fd._ensure_defined()  # noqa: SLF001
    args = [t.copy() for t in (p, g, m, v)]
    kernels = sum(len(lowered.kernels) for _, lowered in execution.lowered_segments(entry, [*args, lr, c]))
    assert kernels == (2 if fold else 4)
    execution.execute_kernels_on_cpu(entry, [*args, lr, c], nvrtc=False)
    for got, w in zip((args[2], args[3], args[0]), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(args[1], g)


def test_a_host_view_of_the_writers_result_beside_the_fold() -> None:
    """GPU fuzz seed 4444: the writer's other result is sliced on the host
    (``hir.slice``). ``segment`` had left a second, never-inserted ``hir.slice`` as a
    use of that result (``host_view_ops_typed`` retyped the op by building a new one),
    and the fold's rewriter, visiting the users of the replaced launch, failed on it
    ("Operation insertion point must have a parent block")."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        e = fd.ops.exp(fd.ops.abs(x))
        fd.add_output(fd.ops.erf(x))
        fd.add_output(e)
        fd.add_output(fd.ops.strided_slice(e, [1, 0], [10, 1], [3, 2]))
        fd.add_output(fd.ops.silu(x), alias_input=x)
    a = np.random.default_rng(4).standard_normal((32, 1)).astype(np.float32)
    b = a.copy()
    erf, exp, sliced = fd.execute([b])
    from math import erf as scalar_erf

    np.testing.assert_allclose(erf, np.vectorize(scalar_erf)(a), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exp, np.exp(np.abs(a)), rtol=1e-6)
    np.testing.assert_allclose(sliced, np.exp(np.abs(a))[1:10:3, 0:1:2], rtol=1e-6)
    np.testing.assert_allclose(b, a / (1 + np.exp(-a)), rtol=1e-5)
