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


def test_a_rejected_loop_nest_falls_back_to_the_recorded_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    # No random fusion of [0, 1000) is rejected any more: the rejection is made here.
    import fuser.codegen.lower as lower

    def reject(fusion: object, *args: object) -> object:
        raise LoweringError(f"@{fusion.sym_name.data}: a loop nest this test rejects")  # type: ignore[attr-defined]

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        m = fd.ops.max(x, [1], keepdim=True)
        fd.add_output(fd.ops.div(fd.ops.exp(fd.ops.sub(x, m)), fd.ops.sum(fd.ops.exp(fd.ops.sub(x, m)), [1], keepdim=True)))
    x = np.random.default_rng(1).standard_normal((6, 40)).astype(np.float32)
    monkeypatch.setattr(lower, "_lower_loop_nest", reject)
    ((seg, low),) = lowered_segments(fd._ensure_defined(), [x])
    assert "a loop nest this test rejects" in low.fallback
    assert any(isinstance(op, LoopOp) for op in seg.body.block.ops)  # the schedule was written
    layouts = [TensorLayout.contiguous(tuple(a.type.get_shape())) for a in seg.inputs]
    with pytest.raises(LoweringError, match="this test rejects"):  # and is an error when asked for
        lower_segment(seg, layouts)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(execute_kernels_on_cpu(fd._ensure_defined(), [x])[0], e / e.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-7)
