"""Data types of fuser and the torch type-promotion rules.

fuser uses seven element types. Each has an xDSL type (what the IR prints), a numpy
dtype (what the reference interpreter computes with; bfloat16 comes from
``ml_dtypes``) and a CUDA C type (what the code generator emits).

Type promotion follows ``torch.result_type``: tensors take part with their full
dtype; scalars (block arguments or constants of a builtin type, and Python numbers in
the frontend) are *weak*: they only contribute their category (bool < integer <
floating). When a scalar's category is higher than every tensor's, the result takes
the default dtype of that category (``int64`` for integers, ``float32`` for floats).
Zero-dim tensors sit between the two: they count with their full dtype only when
their category is higher than that of every tensor with dimensions.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute


class DType(Enum):
    """An element type, named as in torch."""

    bool = "bool"
    int32 = "int32"
    int64 = "int64"
    float16 = "float16"
    bfloat16 = "bfloat16"
    float32 = "float32"
    float64 = "float64"

    # ---- categories -------------------------------------------------------------
    @property
    def is_bool(self) -> bool:
        return self is DType.bool

    @property
    def is_integer(self) -> bool:
        return self in (DType.int32, DType.int64)

    @property
    def is_float(self) -> bool:
        return self in (DType.float16, DType.bfloat16, DType.float32, DType.float64)

    @property
    def category(self) -> int:
        """0 for bool, 1 for integers, 2 for floating point."""
        return 0 if self.is_bool else 1 if self.is_integer else 2

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self]

    # ---- conversions ------------------------------------------------------------
    def to_xdsl(self) -> Attribute:
        return _TO_XDSL[self]()

    def to_numpy(self) -> np.dtype:
        return np.dtype(_TO_NUMPY[self])

    @property
    def cuda_type(self) -> str:
        return _CUDA[self]

    @staticmethod
    def from_xdsl(attr: Attribute) -> DType:
        try:
            return _FROM_XDSL[attr]
        except (KeyError, TypeError):  # TypeError: an unhashable attribute
            raise ValueError(f"unsupported element type {attr}") from None

    @staticmethod
    def from_numpy(dtype: np.dtype | type) -> DType:
        dt = np.dtype(dtype)
        for ours, theirs in _TO_NUMPY.items():
            if np.dtype(theirs) == dt:
                return ours
        raise ValueError(f"unsupported numpy dtype {dt}")

    def __str__(self) -> str:
        return self.value


_ITEMSIZE = {
    DType.bool: 1,
    DType.int32: 4,
    DType.int64: 8,
    DType.float16: 2,
    DType.bfloat16: 2,
    DType.float32: 4,
    DType.float64: 8,
}

_TO_XDSL = {
    DType.bool: lambda: IntegerType(1),
    DType.int32: lambda: IntegerType(32),
    DType.int64: lambda: IntegerType(64),
    DType.float16: Float16Type,
    DType.bfloat16: BFloat16Type,
    DType.float32: Float32Type,
    DType.float64: Float64Type,
}

# The reverse lookup, built once: constructing xDSL types on every query was a hot spot.
_FROM_XDSL: dict[Attribute, DType] = {ctor(): dtype for dtype, ctor in _TO_XDSL.items()}

_TO_NUMPY = {
    DType.bool: np.bool_,
    DType.int32: np.int32,
    DType.int64: np.int64,
    DType.float16: np.float16,
    DType.bfloat16: ml_dtypes.bfloat16,
    DType.float32: np.float32,
    DType.float64: np.float64,
}

_CUDA = {
    DType.bool: "bool",
    DType.int32: "int",
    DType.int64: "long long",
    DType.float16: "__half",
    DType.bfloat16: "__nv_bfloat16",
    DType.float32: "float",
    DType.float64: "double",
}


def is_element_type(attr: Attribute) -> bool:
    """Whether ``attr`` is one of the seven supported xDSL element types."""
    try:
        DType.from_xdsl(attr)
    except ValueError:
        return False
    return True


def promote_pair(a: DType, b: DType) -> DType:
    """torch.promote_types for two full-strength dtypes."""
    if a == b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.is_integer:
        return DType.int64
    # Two different floats: float64 wins, then float32; f16 with bf16 gives f32.
    if DType.float64 in (a, b):
        return DType.float64
    return DType.float32


def _promote_all(dtypes: list[DType]) -> DType | None:
    out = dtypes[0] if dtypes else None
    for d in dtypes[1:]:
        out = promote_pair(out, d)  # type: ignore[arg-type]
    return out


def _combine_categories(higher: DType | None, lower: DType | None) -> DType | None:
    """torch's ``combine_categories``: the higher priority class wins unless the lower
    one is of a higher category (then the two promote)."""
    if higher is None:
        return lower
    if lower is None or higher.is_float:
        return higher
    if higher.is_bool or lower.is_float:
        return promote_pair(higher, lower)
    return higher


def result_type(
    tensors: Iterable[DType], scalars: Iterable[DType] = (), zero_dim: Iterable[DType] = ()
) -> DType:
    """torch.result_type over three priority classes: ``tensors`` (with dimensions),
    ``zero_dim`` tensors, then ``scalars`` (weak: only their category counts, as the
    default dtype of the category). A lower class changes the result only when its
    category is higher: ``f16[4] + f32[]`` is f16, ``i32[4] + f16[]`` is f16."""
    tensors = list(tensors)
    scalars = list(scalars)
    zero_dim = list(zero_dim)
    if not tensors and not scalars and not zero_dim:
        raise ValueError("result_type needs at least one operand")
    weak = _promote_all(scalars)
    if not tensors and not zero_dim:
        assert weak is not None
        # Scalars alone compute in double / long / bool, like Python numbers.
        return {0: DType.bool, 1: DType.int64, 2: DType.float64}[weak.category]
    if weak is not None:
        weak = {0: DType.bool, 1: DType.int64, 2: DType.float32}[weak.category]
    out = _combine_categories(
        _promote_all(tensors), _combine_categories(_promote_all(zero_dim), weak)
    )
    assert out is not None
    return out


def float_result(dtype: DType) -> DType:
    """The dtype of a floating-point function (exp, sin, ...) of ``dtype``: ints and
    bools compute in float32 as in torch; floats keep their type."""
    return dtype if dtype.is_float else DType.float32


def compute_dtype(dtype: DType) -> DType:
    """The type arithmetic is carried out in: float32 for half and bfloat16."""
    return DType.float32 if dtype in (DType.float16, DType.bfloat16) else dtype
