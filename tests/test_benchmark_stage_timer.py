"""``benchmarks/stage_timer.py``: the stage functions are timed inside the block and
put back after it, also when the block raises."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.stage_timer import STAGES, _owner, stage_times
from fuser import DataType, FusionDefinition
from fuser.frontend.execution import execute_kernels_on_cpu


def _functions() -> dict[str, object]:
    return {s: _owner(where).__dict__[attr] for s, (where, attr) in STAGES.items()}


def test_stages_are_timed_and_put_back() -> None:
    before = _functions()
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.exp(t), [1]))
    x = np.ones((4, 8), np.float32)
    with stage_times() as spent:
        fd.execute([x])  # the compiler driver
        execute_kernels_on_cpu(fd._ensure_defined(), [x])  # noqa: SLF001 - schedule-fusions, NVRTC
    assert spent["driver"] > 0 and spent["schedule"] > 0 and spent["nvrtc"] > 0, dict(spent)
    assert _functions() == before
    with pytest.raises(RuntimeError, match="inside"), stage_times(("driver",)):
        raise RuntimeError("inside")
    assert _functions() == before
