"""``compute-half-in-float``: differential tests through the reference interpreter.
The pass changes results by design (a chain rounds once, not after every op), so the
check is against the float32 chain computed in numpy and rounded once, and against
the unrewritten fusion within one bfloat16 step."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.reference import run_fusion
from fuser.passes.compute_half_in_float import ComputeHalfInFloat

CHAIN = """
fuser.fusion @f(%0 : !fuser.tensor<4x64xbf16>, %1 : !fuser.tensor<256xbf16>) -> (!fuser.tensor<256xbf16>, !fuser.tensor<4x64xf32>) {
  %c = fuser.constant 4.471500e-02 : f64
  %2 = fuser.mul %0, %0 : (!fuser.tensor<4x64xbf16>, !fuser.tensor<4x64xbf16>) -> !fuser.tensor<4x64xbf16>
  %3 = fuser.mul %2, %c : (!fuser.tensor<4x64xbf16>, f64) -> !fuser.tensor<4x64xbf16>
  %4 = fuser.tanh %3 : (!fuser.tensor<4x64xbf16>) -> !fuser.tensor<4x64xbf16>
  %5 = fuser.reshape %4 {new_shape = array<i64: 256>} : !fuser.tensor<4x64xbf16> -> !fuser.tensor<256xbf16>
  %6 = fuser.add %5, %1 : (!fuser.tensor<256xbf16>, !fuser.tensor<256xbf16>) -> !fuser.tensor<256xbf16>
  %7 = fuser.cast %3 : (!fuser.tensor<4x64xbf16>) -> !fuser.tensor<4x64xf32>
  fuser.output %6, %7 : !fuser.tensor<256xbf16>, !fuser.tensor<4x64xf32>
}
"""


def _fusion(module: object) -> F.FusionOp:
    return next(op for op in module.ops if isinstance(op, F.FusionOp))  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_chain_is_the_float32_chain_rounded_once(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((4, 64)) * 3).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal(256).astype(ml_dtypes.bfloat16)
    before = _fusion(parse_module(CHAIN))
    module = parse_module(CHAIN)
    ComputeHalfInFloat().apply(make_context(), module)
    module.verify()
    after = _fusion(module)
    assert not [op for op in after.body.block.ops if isinstance(op, F.MulOp) and op.result.type.dtype is DType.bfloat16]
    got_sum, got_cast = run_fusion(after, [x, y])
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    inner = xf * xf * np.float32(0.044715)
    want = (np.tanh(inner).reshape(256) + yf).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(np.asarray(got_sum), want)
    np.testing.assert_allclose(np.asarray(got_cast), inner, rtol=1e-6)
    eager_sum, _ = run_fusion(before, [x, y])  # every op rounded
    np.testing.assert_allclose(
        np.asarray(got_sum, np.float32), np.asarray(eager_sum, np.float32), rtol=2**-6, atol=2**-6
    )


def test_float_fusions_are_unchanged() -> None:
    text = """
fuser.fusion @g(%0 : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %1 = fuser.mul %0, %0 : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %1 : !fuser.tensor<8xf32>
}
"""
    module = parse_module(text)
    ComputeHalfInFloat().apply(make_context(), module)
    assert str(module) == str(parse_module(text))
