"""nvFuser's ``DataType`` enum and its mapping onto fuser's ``DType``.

``DataType.Null`` means "not given" (for example the ``dtype=`` of a reduction)::

    >>> DataType.Float.to_dtype()
    <DType.float32: 'float32'>
    >>> DataType.ComplexFloat.to_dtype()
    <DType.complex64: 'complex64'>
    >>> DataType.Null.to_dtype()
    Traceback (most recent call last):
    ValueError: DataType.Null has no element type
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np

from fuser.ir.dtypes import DType


class DataType(Enum):
    """Element types under nvFuser's names."""

    Bool = "Bool"
    Int32 = "Int32"
    Int = "Int"
    Half = "Half"
    BFloat16 = "BFloat16"
    Float = "Float"
    Double = "Double"
    ComplexFloat = "ComplexFloat"
    ComplexDouble = "ComplexDouble"
    Float8_e4m3fn = "Float8_e4m3fn"
    Float8_e5m2 = "Float8_e5m2"
    Null = "Null"

    def __repr__(self) -> str:
        return f"DataType.{self.value}"

    __str__ = __repr__

    @property
    def is_null(self) -> bool:
        return self is DataType.Null

    def to_dtype(self) -> DType:
        """The fuser dtype; raises ValueError for Null."""
        if self is DataType.Null:
            raise ValueError("DataType.Null has no element type")
        return _TO_DTYPE[self]

    @staticmethod
    def from_dtype(dtype: DType) -> DataType:
        return _FROM_DTYPE[dtype]


_TO_DTYPE = {
    DataType.Bool: DType.bool,
    DataType.Int32: DType.int32,
    DataType.Int: DType.int64,
    DataType.Half: DType.float16,
    DataType.BFloat16: DType.bfloat16,
    DataType.Float: DType.float32,
    DataType.Double: DType.float64,
    DataType.ComplexFloat: DType.complex64,
    DataType.ComplexDouble: DType.complex128,
    DataType.Float8_e4m3fn: DType.float8_e4m3fn,
    DataType.Float8_e5m2: DType.float8_e5m2,
}
_FROM_DTYPE = {v: k for k, v in _TO_DTYPE.items()}


def as_datatype(value: Any, what: str = "dtype") -> DataType:
    """Accept a DataType, a fuser DType, a numpy dtype or a torch dtype."""
    if isinstance(value, DataType):
        if value is not DataType.Null:
            value.to_dtype()
        return value
    if isinstance(value, DType):
        return DataType.from_dtype(value)
    torch_name = _torch_dtype_name(value)
    if torch_name is not None:
        try:
            return DataType.from_dtype(DType(torch_name))
        except ValueError:
            raise ValueError(f"{what}: unsupported torch dtype {value}") from None
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise ValueError(f"{what}: expected a DataType, got {value!r}") from None
    try:
        return DataType.from_dtype(DType.from_numpy(np_dtype))
    except ValueError:
        raise ValueError(f"{what}: unsupported dtype {np_dtype}") from None


def _torch_dtype_name(value: Any) -> str | None:
    """``'float32'`` for ``torch.float32`` (without importing torch)."""
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value).removeprefix("torch.")
    return None


def python_scalar_datatype(value: bool | int | float | complex) -> DataType:
    """The weak dtype of a Python number: Bool, Int (int64), Double or ComplexDouble."""
    if isinstance(value, bool | np.bool_):
        return DataType.Bool
    if isinstance(value, int | np.integer):
        return DataType.Int
    if isinstance(value, float | np.floating):
        return DataType.Double
    if isinstance(value, complex | np.complexfloating):
        return DataType.ComplexDouble
    raise ValueError(f"expected a Python number, got {type(value).__name__}")
