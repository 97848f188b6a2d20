"""The kernels of one segment against the reference interpreter, for the kernel tests
(``test_*_kernels.py``): run in the CPU kernel interpreter (and compiled by NVRTC),
with the scheduler kind, the number of outputs, their shapes and dtypes checked."""

from __future__ import annotations

from typing import Any

import numpy as np

from fuser.codegen.lower.common import LoweredFusion
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu


def kernels_and_reference(
    fusion: F.FusionOp, inputs: list[Any], kind: str, scheduled: F.FusionOp | None = None, nvrtc: bool = True
) -> tuple[list[np.ndarray], list[np.ndarray], LoweredFusion]:
    """(kernel outputs, reference outputs, lowering) of ``scheduled`` (default:
    ``fusion`` scheduled by the heuristic) for ``inputs``; the lowering's kind is
    ``kind`` and every output has the reference's shape and dtype."""
    ours, lowered = run_segment_on_cpu(fusion if scheduled is None else scheduled, inputs, nvrtc=nvrtc)
    assert lowered.scheduler == kind, lowered.scheduler
    ref = [np.asarray(r) for r in run_fusion(fusion, [x.copy() if isinstance(x, np.ndarray) else x for x in inputs])]
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref, strict=True):
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, r.shape, o.dtype, r.dtype)
    return ours, ref, lowered


def assert_close(ours: list[np.ndarray], ref: list[np.ndarray], rtol: float, atol: float) -> None:
    """Integers and booleans exactly, floats to ``rtol``/``atol`` in float64 (NaN where
    the reference has NaN)."""
    for o, r in zip(ours, ref, strict=True):
        if o.dtype.kind in "biu":
            np.testing.assert_array_equal(o, r)
        else:
            np.testing.assert_allclose(o.astype(np.float64), r.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
