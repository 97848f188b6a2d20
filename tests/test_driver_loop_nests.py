"""The compiler driver lowers every segment from the loop nest ``schedule-fusions``
wrote, and from nothing else: a pipeline without ``schedule-fusions`` has no kernels
to run, and a loop nest the lowering rejects is an error naming the segment (there is
no other lowering to fall back to)."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.lower.common import LoweringError
from fuser.frontend.execution import execute_kernels_on_cpu, lowered_segments
from fuser.ir.dialects.iterdomain import LoopOp
from fuser.runtime.driver import PASSES
from fuser.runtime.program_walker import HostIrError


def _row_sum_of_exp() -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.exp(x), [1]))
    return fd


def test_the_default_pipeline_writes_loop_nests() -> None:
    assert PASSES[-1] == "schedule-fusions"
    fd = _row_sum_of_exp()
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    ((seg, low),) = lowered_segments(fd._ensure_defined(), [x])
    assert any(isinstance(op, LoopOp) for op in seg.body.block.ops)
    assert low.kernels
    np.testing.assert_allclose(execute_kernels_on_cpu(fd._ensure_defined(), [x])[0], np.exp(x).sum(1), rtol=1e-5)


def test_a_pipeline_without_schedule_fusions_has_no_kernels_to_run() -> None:
    fd = _row_sum_of_exp()
    fd.pipeline = [p for p in PASSES if not p.startswith("schedule-fusions")]
    try:  # the pipeline belongs to the fusion (every definition of it): restored below
        x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
        with pytest.raises(HostIrError, match=r"has no loop nest.*run schedule-fusions after select-schedulers"):
            execute_kernels_on_cpu(fd._ensure_defined(), [x])
        # The reference interpreter needs no kernels.
        np.testing.assert_allclose(fd.execute([x])[0], np.exp(x).sum(1), rtol=1e-5)
    finally:
        fd.pipeline = PASSES


def test_a_rejected_loop_nest_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import fuser.codegen.lower as lower

    def reject(fusion: object, *args: object) -> object:
        raise LoweringError(f"@{fusion.sym_name.data}: a loop nest this test rejects")  # type: ignore[attr-defined]

    monkeypatch.setattr(lower, "_lower_loop_nest", reject)
    fd = _row_sum_of_exp()
    x = np.random.default_rng(2).standard_normal((6, 40)).astype(np.float32)
    with pytest.raises(HostIrError, match=r"hir.launch @\w+_seg0: .*a loop nest this test rejects"):
        execute_kernels_on_cpu(fd._ensure_defined(), [x])
