"""torch's type promotion (``fuser.ir.dtypes.result_type``) against torch itself:
tensors with dimensions, zero-dim tensors and Python scalars are three priority
classes (issue 10: ``add(f16[4], sum(f32[4]))`` is f16 in torch)."""

from __future__ import annotations

import itertools

import pytest

from fuser.ir.dtypes import DType, result_type
from tests.test_reference_ops import TORCH_DT

torch = pytest.importorskip("torch")
prims = pytest.importorskip("torch._prims_common")

TORCH = TORCH_DT  # DType -> torch dtype, shared with the reference-op tests
PYTHON = {DType.bool: True, DType.int64: 2, DType.float64: 2.5, DType.complex128: 2.5j}
OPTIONAL = [*TORCH, None]


def torch_result(dims: list[DType], zero: list[DType], scalars: list[DType]) -> torch.dtype:
    args = [torch.ones(2, dtype=TORCH[d]) for d in dims]
    args += [torch.ones((), dtype=TORCH[d]) for d in zero]
    args += [PYTHON[s] for s in scalars]
    kind = prims.ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
    return prims.elementwise_dtypes(*args, type_promotion_kind=kind)[1]


def test_zero_dim_tensor_ranks_below_tensors_with_dimensions() -> None:
    assert result_type([DType.float16], zero_dim=[DType.float32]) == DType.float16
    assert result_type([DType.int32], zero_dim=[DType.float16]) == DType.float16
    assert result_type([DType.int32], zero_dim=[DType.int64]) == DType.int32
    assert result_type([], [DType.float64], [DType.bfloat16]) == DType.bfloat16


@pytest.mark.parametrize("dim", list(TORCH))
def test_result_type_matches_torch(dim: DType) -> None:
    checked = 0
    for dim2, zero, zero2 in itertools.product(OPTIONAL, OPTIONAL, OPTIONAL):
        for scalar in [None, *PYTHON]:
            dims = [d for d in (dim, dim2) if d is not None]
            zeros = [d for d in (zero, zero2) if d is not None]
            scalars = [scalar] if scalar is not None else []
            expected = torch_result(dims, zeros, scalars)
            if expected == torch.complex32:  # half with complex: not supported
                with pytest.raises(ValueError, match="complex32"):
                    result_type(dims, scalars, zeros)
            else:
                got = result_type(dims, scalars, zeros)
                assert TORCH[got] == expected, (dims, zeros, scalars)
            checked += 1
    assert checked == len(OPTIONAL) ** 3 * (len(PYTHON) + 1)
