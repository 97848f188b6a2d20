"""Data types of fuser and the torch type-promotion rules.

fuser uses nine element types. Each has an xDSL type (what the IR prints), a numpy
dtype (what the reference interpreter computes with; bfloat16 comes from
``ml_dtypes``) and a CUDA C type (what the code generator emits). The two complex
types (``complex64``: ``complex<f32>``, ``complex128``: ``complex<f64>``) are stored as
interleaved (real, imaginary) pairs of their component type, as in torch and nvFuser;
the CUDA type is the kernel preamble's ``fuser_complex<T>`` (``fuser.codegen.complex_preamble``).

Type promotion follows ``torch.result_type``: tensors take part with their full
dtype; scalars (block arguments or constants of a builtin type, and Python numbers in
the frontend) are *weak*: they only contribute their category (bool < integer <
floating < complex). When a scalar's category is higher than every tensor's, the result
takes the default dtype of that category (``int64`` for integers, ``float32`` for floats,
``complex64`` for complex), except that a complex scalar with a floating tensor gives the
complex type of that tensor's float type (``f64[4] * 1j`` is complex128), as in torch.
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
    ComplexType,
    Float8E4M3FNType,
    Float8E5M2Type,
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
    complex64 = "complex64"
    complex128 = "complex128"
    float8_e4m3fn = "float8_e4m3fn"
    float8_e5m2 = "float8_e5m2"

    # ---- categories -------------------------------------------------------------
    @property
    def is_bool(self) -> bool:
        return self is DType.bool

    @property
    def is_integer(self) -> bool:
        return self in (DType.int32, DType.int64)

    @property
    def is_float(self) -> bool:
        return self in (
            DType.float16,
            DType.bfloat16,
            DType.float32,
            DType.float64,
            DType.float8_e4m3fn,
            DType.float8_e5m2,
        )

    @property
    def is_fp8(self) -> bool:
        """The 8-bit floats (torch's ``float8_e4m3fn``/``float8_e5m2``): storage types
        that only take part in casts, as in torch (``fuser.ir.fp8`` converts)."""
        return self in (DType.float8_e4m3fn, DType.float8_e5m2)

    @property
    def is_complex(self) -> bool:
        return self in (DType.complex64, DType.complex128)

    @property
    def category(self) -> int:
        """0 for bool, 1 for integers, 2 for floating point, 3 for complex."""
        return 0 if self.is_bool else 1 if self.is_integer else 3 if self.is_complex else 2

    @property
    def real_dtype(self) -> DType:
        """The component type of a complex type (float32/float64); other types are
        their own."""
        return _COMPLEX_PART.get(self, self)

    @property
    def complex_dtype(self) -> DType:
        """The complex type with this float type's components (torch's
        ``toComplexType``: bfloat16 gives complex64); complex types are their own.
        Raises ValueError for float16 (torch's complex32 is not supported) and
        non-floats."""
        if self.is_complex:
            return self
        if self in (DType.bfloat16, DType.float32, DType.float64):
            return DType.complex128 if self is DType.float64 else DType.complex64
        raise ValueError(f"no complex type of {self} (complex32 is not supported)")

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
    DType.complex64: 8,
    DType.complex128: 16,
    DType.float8_e4m3fn: 1,
    DType.float8_e5m2: 1,
}

_COMPLEX_PART = {DType.complex64: DType.float32, DType.complex128: DType.float64}

_TO_XDSL = {
    DType.bool: lambda: IntegerType(1),
    DType.int32: lambda: IntegerType(32),
    DType.int64: lambda: IntegerType(64),
    DType.float16: Float16Type,
    DType.bfloat16: BFloat16Type,
    DType.float32: Float32Type,
    DType.float64: Float64Type,
    DType.complex64: lambda: ComplexType(Float32Type()),
    DType.complex128: lambda: ComplexType(Float64Type()),
    DType.float8_e4m3fn: Float8E4M3FNType,
    DType.float8_e5m2: Float8E5M2Type,
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
    DType.complex64: np.complex64,
    DType.complex128: np.complex128,
    DType.float8_e4m3fn: ml_dtypes.float8_e4m3fn,
    DType.float8_e5m2: ml_dtypes.float8_e5m2,
}

_CUDA = {
    DType.bool: "bool",
    DType.int32: "int",
    DType.int64: "long long",
    DType.float16: "__half",
    DType.bfloat16: "__nv_bfloat16",
    DType.float32: "float",
    DType.float64: "double",
    DType.complex64: "fuser_complex<float>",
    DType.complex128: "fuser_complex<double>",
    DType.float8_e4m3fn: "fuser_e4m3",
    DType.float8_e5m2: "fuser_e5m2",
}


def is_element_type(attr: Attribute) -> bool:
    """Whether ``attr`` is one of the nine supported xDSL element types."""
    try:
        DType.from_xdsl(attr)
    except ValueError:
        return False
    return True


def promote_pair(a: DType, b: DType) -> DType:
    """torch.promote_types for two full-strength dtypes; float8 types promote only with
    themselves (torch raises otherwise)."""
    if a == b:
        return a
    if a.is_fp8 or b.is_fp8:
        raise ValueError(f"promotion of {a} and {b} is not supported (float8 types only cast, as in torch)")
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.is_complex and lo.is_float:
            # complex64 with float64 is complex128 (torch.promote_types).
            return promote_pair(hi, lo.complex_dtype) if lo.itemsize >= 4 else hi
        return hi
    if a.is_integer:
        return DType.int64
    if a.is_complex:
        return DType.complex128
    # Two different floats: float64 wins, then float32; f16 with bf16 gives f32.
    if DType.float64 in (a, b):
        return DType.float64
    return DType.float32


def _promote_all(dtypes: list[DType]) -> DType | None:
    out = dtypes[0] if dtypes else None
    for d in dtypes[1:]:
        out = promote_pair(out, d)  # type: ignore[arg-type]
    return out


_COMPLEX32 = "complex32"
"""torch's complex32 (ComplexHalf) as an intermediate of ``result_type``: a half
zero-dim tensor with a complex scalar is complex32, which a bfloat16 tensor with
dimensions then turns into complex64; as a final result it is unsupported."""


def _combine_categories(
    higher: DType | str | None, lower: DType | str | None
) -> DType | str | None:
    """torch's ``combine_categories``: the higher priority class wins unless the lower
    one is of a higher category (then the two promote)."""
    if higher is None:
        return lower
    if lower is None or higher == _COMPLEX32 or higher.is_complex:  # type: ignore[union-attr]
        return higher
    assert isinstance(higher, DType)
    if lower == _COMPLEX32 or lower.is_complex:  # type: ignore[union-attr]
        # A float keeps its width and becomes complex (f64[4] * 1j is complex128).
        if higher is DType.float16:
            return _COMPLEX32
        return higher.complex_dtype if higher.is_float else lower
    assert isinstance(lower, DType)
    if higher.is_float:
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
        # Scalars alone keep their own promoted dtype, as nvFuser's computeTypes: a
        # where of two Float scalars is Float; half and bfloat16 scalars count as
        # float32. (A Python number is a Double, Int, Bool or ComplexDouble scalar.)
        return DType.float32 if weak in (DType.float16, DType.bfloat16) else weak
    if weak is not None:
        weak = {0: DType.bool, 1: DType.int64, 2: DType.float32, 3: DType.complex64}[
            weak.category
        ]
    out = _combine_categories(
        _promote_all(tensors), _combine_categories(_promote_all(zero_dim), weak)
    )
    if out == _COMPLEX32:
        raise ValueError("float16 with a complex value gives complex32, which is not supported")
    assert isinstance(out, DType)
    return out


def float_result(dtype: DType) -> DType:
    """The dtype of a floating-point function (exp, sin, ...) of ``dtype``: ints and
    bools compute in float32 as in torch; floats and complex types keep their type."""
    return dtype if dtype.is_float or dtype.is_complex else DType.float32


def compute_dtype(dtype: DType) -> DType:
    """The type arithmetic is carried out in: float32 for half, bfloat16 and float8."""
    return DType.float32 if dtype in _NARROW_FLOATS else dtype


_NARROW_FLOATS = (DType.float16, DType.bfloat16, DType.float8_e4m3fn, DType.float8_e5m2)
