"""nvFuser's ``DataType`` enum and its mapping onto fuser's ``DType``.

``DataType.Null`` means "not given" (for example the ``dtype=`` of a reduction). The
complex types exist so that definitions naming them fail with a clear message
instead of an ``AttributeError``::

    >>> DataType.Float.to_dtype()
    <DType.float32: 'float32'>
    >>> DataType.ComplexFloat.to_dtype()
    Traceback (most recent call last):
    ValueError: DataType.ComplexFloat: complex types are not supported by fuser
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np

from fuser_ir.dtypes import DType


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
    Null = "Null"

    def __repr__(self) -> str:
        return f"DataType.{self.value}"

    __str__ = __repr__

    @property
    def is_null(self) -> bool:
        return self is DataType.Null

    def to_dtype(self) -> DType:
        """The fuser dtype; raises ValueError for complex types and Null."""
        if self in (DataType.ComplexFloat, DataType.ComplexDouble):
            raise ValueError(f"{self!r}: complex types are not supported by fuser")
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
        if torch_name.startswith("complex"):
            raise ValueError(f"{what}: complex types are not supported by fuser")
        try:
            return DataType.from_dtype(DType(torch_name))
        except ValueError:
            raise ValueError(f"{what}: unsupported torch dtype {value}") from None
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise ValueError(f"{what}: expected a DataType, got {value!r}") from None
    if np_dtype.kind == "c":
        raise ValueError(f"{what}: complex types are not supported by fuser")
    try:
        return DataType.from_dtype(DType.from_numpy(np_dtype))
    except ValueError:
        raise ValueError(f"{what}: unsupported dtype {np_dtype}") from None


def _torch_dtype_name(value: Any) -> str | None:
    """``'float32'`` for ``torch.float32`` (without importing torch)."""
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value).removeprefix("torch.")
    return None


def python_scalar_datatype(value: bool | int | float) -> DataType:
    """The weak dtype of a Python number: Bool, Int (int64) or Double."""
    if isinstance(value, bool | np.bool_):
        return DataType.Bool
    if isinstance(value, int | np.integer):
        return DataType.Int
    if isinstance(value, float | np.floating):
        return DataType.Double
    if isinstance(value, complex):
        raise ValueError(f"complex scalar {value!r}: complex types are not supported by fuser")
    raise ValueError(f"expected a Python number, got {type(value).__name__}")
