"""``fd.last_cuda_code()`` says why it has no code instead of returning None (issue 10,
item 9); tests/gpu/test_gpu_last_cuda_code.py checks the code it returns on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from fuser_ir import DataType, FusionDefinition


def _double() -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(x, 2.0))
    return fd


def test_before_any_run_it_says_the_fusion_has_not_run() -> None:
    fd = _double()
    with pytest.raises(RuntimeError, match=r"has not been executed.*cuda_code_for"):
        fd.last_cuda_code()


def test_after_a_cpu_run_it_says_the_cpu_generates_no_cuda() -> None:
    fd = _double()
    fd.execute([np.arange(4, dtype=np.float32)])
    with pytest.raises(RuntimeError, match=r"last ran on the CPU.*reference interpreter"):
        fd.last_cuda_code()
    assert "__global__" in fd.cuda_code_for([np.arange(4, dtype=np.float32)])


def test_what_ran_last_is_per_fusion() -> None:
    # The kernel cache is process-wide; what a fusion last ran is its own (a
    # definition identical to one that ran is the same cached fusion, as in nvFuser).
    with FusionDefinition() as other:
        x = other.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        other.add_output(other.ops.mul(x, 3.25))
    _double().execute([np.arange(4, dtype=np.float32)])
    with pytest.raises(RuntimeError, match="has not been executed"):
        other.last_cuda_code()
