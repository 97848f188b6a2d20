"""The compiler driver's loop nests, and its fallback where the generic lowering
rejects one: ``schedule-fusions{fallback=true}`` leaves a fusion whose schedule cannot
be written unscheduled (the reason in ``fuser.schedule_fallback``), and
``lower_segment(..., fallback=True)`` (the runtime's compiles) lowers a written
schedule that the loop-nest lowering rejects from the segment's ``fuser.schedule``
instead, saying why in ``LoweredFusion.fallback``. Without the flags (``fuser-opt``,
hand-written schedules) both stay errors."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweringError, TensorLayout
from fuser.frontend.execution import execute_kernels_on_cpu, lowered_segments
from fuser.ir.dialects.iterdomain import LoopOp
from fuser.runtime.driver import PASSES


def _sibling_var_means() -> FusionDefinition:
    """Random fusion 425: var_mean over an extent-1 axis, then a var of its mean; the
    two Welford reductions get different loop nests, and an output needs both."""
    with FusionDefinition() as fd:
        t1 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Float)
        t13 = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Double)
        t3, t4 = fd.ops.var_mean(t1, dims=[0], correction=0, keepdim=True)
        t5 = fd.ops.var(t4, dims=[0], correction=0, keepdim=False)
        t7 = fd.ops.min(fd.ops.maximum(t5, t5), dims=[0], keepdim=True)
        t8, _ = fd.ops.var_mean(t7, dims=[0], correction=0, keepdim=True)
        fd.add_output(fd.ops.maximum(t5, t8))
        fd.add_output(fd.ops.mul(t3, t13))
    return fd


def test_the_default_pipeline_writes_loop_nests() -> None:
    assert any(p.startswith("schedule-fusions") and "fallback=true" in p for p in PASSES)
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.exp(x), [1]))
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    ((seg, low),) = lowered_segments(fd._ensure_defined(), [x])
    assert any(isinstance(op, LoopOp) for op in seg.body.block.ops)
    assert low.fallback == ""
    np.testing.assert_allclose(execute_kernels_on_cpu(fd._ensure_defined(), [x])[0], np.exp(x).sum(1), rtol=1e-5)


def test_a_rejected_loop_nest_falls_back_to_the_recorded_schedule() -> None:
    fd = _sibling_var_means()
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((1, 2)).astype(np.float32), rng.standard_normal((1, 2))]
    lowered = lowered_segments(fd._ensure_defined(), xs)
    fell = [(seg, low) for seg, low in lowered if low.fallback]
    assert len(fell) == 1 and "different loop nests" in fell[0][1].fallback
    seg = fell[0][0]
    assert any(isinstance(op, LoopOp) for op in seg.body.block.ops)  # the schedule was written
    layouts = [TensorLayout.contiguous(tuple(a.type.get_shape())) for a in seg.inputs]
    with pytest.raises(LoweringError, match="different loop nests"):  # and is an error when asked for
        lower_segment(seg, layouts)
    got = execute_kernels_on_cpu(fd._ensure_defined(), xs)
    want = fd.execute(xs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=1e-5, atol=1e-6)
