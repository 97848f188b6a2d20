"""Vector lanes through reshapes inside a pointwise segment.

A torch graph's pointwise partitions reshape between ``[B*T, C]`` and ``[B, T, C]``
mid-fusion (GPT-2's GELU backward: 4096 x 3072 <-> 8 x 512 x 3072). The element
evaluator maps an index through a reshape by ravelling it in one shape and
unravelling it in the other. ``unravel`` kept a vector's lanes as ``base + j``;
``ravel`` did not, so every lane got its own division chain and the loads behind the
reshape went element by element (164 us a call on the H200 where 16-byte vectors
take about 25). Now both keep the lanes, and the loads are vectors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fuser.codegen.cuda_printer import print_cuda
from fuser.frontend.datatype import DataType
from fuser.frontend.fusion_definition import FusionDefinition
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu
from fuser.runtime.schedule_segment import schedule_segment
from fuser.runtime.signature import Signature

BF16 = ml_dtypes.bfloat16


def _fusion(rows: int, cols: int, split: int, dt: DataType) -> object:
    """``(x.view(split, rows // split, cols) * 0.5).view(rows, cols) * y``, with the
    reshapes inside the fusion (no bookends: ``y`` is multiplied after)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor([rows, cols], contiguity=[True, True], dtype=dt)
        y = fd.define_tensor([rows, cols], contiguity=[True, True], dtype=dt)
        t = fd.ops.reshape(x, [split, rows // split, cols])
        t = fd.ops.mul(fd.ops.tanh(t), t)
        t = fd.ops.reshape(t, [rows, cols])
        fd.add_output(fd.ops.add(fd.ops.mul(t, y), x))
    return fd.fusion()


@pytest.mark.parametrize(("rows", "cols", "split", "dtype"), [
    (64, 48, 4, BF16), (96, 24, 8, BF16), (64, 40, 2, np.float32), (30, 16, 3, np.float32),
])
def test_loads_behind_a_reshape_are_vectors_and_match(rows: int, cols: int, split: int, dtype: type) -> None:
    dt = DataType.BFloat16 if dtype is BF16 else DataType.Float
    fusion = _fusion(rows, cols, split, dt)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((rows, cols)).astype(dtype) for _ in range(2)]
    scheduled = schedule_segment(fusion, Signature.of(fusion, xs))
    ours, lowered = run_segment_on_cpu(scheduled, xs)
    (ref,) = run_fusion(fusion, [x.copy() for x in xs])
    np.testing.assert_array_equal(ours[0].astype(np.float32), np.asarray(ref).astype(np.float32))
    src = print_cuda(*lowered.modules())
    ctype, lanes = ("__nv_bfloat16", 8) if dtype is BF16 else ("float", 4)
    for name in ("in0", "in1"):
        assert f"*reinterpret_cast<const Vec<{ctype}, {lanes}>*>(&{name}[" in src, name
    # One unravel per vector, not one per lane: the lane offsets never reach a division.
    assert "+ 1;\n" not in src.split("__global__", 1)[1]
