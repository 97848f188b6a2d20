"""Helpers shared by ``FusionDefinition`` and ``fd.ops``: creating states, recording
calls, building IR ops with errors turned into ``ValueError``s that name the op."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from fuser_ir.dialects.fuser import InferError, TensorType, dtype_of
from fuser_ir.dtypes import DType
from fuser_ir.frontend.state import (
    DefinitionState,
    Elem,
    Record,
    Scalar,
    State,
    Tensor,
    Value,
    Vector,
)
from fuser_ir.shapes import DYN, ShapeError

if TYPE_CHECKING:
    from fuser_ir.frontend.fusion_definition import FusionDefinition

_BUILD_ERRORS = (
    InferError,
    ShapeError,
    ValueError,
    VerifyException,
    AssertionError,
    IndexError,
    KeyError,
    TypeError,
)


def st(fd: FusionDefinition) -> DefinitionState:
    return fd._state


def new_tensor(fd: FusionDefinition, value: SSAValue) -> Tensor:
    s = st(fd)
    t = Tensor(fd, len(s.states), value)
    s.states.append(t)
    return t


def new_scalar(fd: FusionDefinition, value: SSAValue, known: Any = None) -> Scalar:
    s = st(fd)
    x = Scalar(fd, len(s.states), value, known)
    s.states.append(x)
    return x


def new_value(fd: FusionDefinition, value: SSAValue, known: Any = None) -> Tensor | Scalar:
    if isinstance(value.type, TensorType):
        return new_tensor(fd, value)
    return new_scalar(fd, value, known)


def new_vector(fd: FusionDefinition, elems: Sequence[Elem]) -> Vector:
    s = st(fd)
    v = Vector(fd, len(s.states), elems)
    s.states.append(v)
    return v


class CompletedDefinitionError(ValueError, RuntimeError):
    """nvFuser's ``RuntimeError`` for adding to a definition that is complete (after
    its ``with`` block or ``definition()``, e.g. an op inside a user ``schedule()``);
    also a ``ValueError`` like fuser's other definition errors."""


def check_open(fd: FusionDefinition) -> None:
    """Raise ``CompletedDefinitionError`` when ``fd`` is complete (nvFuser's message)."""
    if fd._entry is not None:
        raise CompletedDefinitionError("Attempting to add to a completed definition!")


def record(
    fd: FusionDefinition,
    target: str,
    args: Sequence[Any],
    kwargs: Sequence[tuple[str, Any]],
    outputs: Sequence[State],
) -> None:
    check_open(fd)
    st(fd).records.append(Record(target, tuple(args), tuple(kwargs), tuple(outputs)))


def build(fd: FusionDefinition, opname: str, ctor: Callable[..., Operation], *args: Any) -> Operation:
    """Construct an op with its typed constructor, verify it and insert it; errors
    become ``ValueError("<opname>: ...")``."""
    check_open(fd)
    try:
        op = ctor(*args)
        op.verify_()
    except _BUILD_ERRORS as e:
        msg = str(e)
        if msg.startswith("fuser.") and ": " in msg:
            msg = msg.split(": ", 1)[1]
        raise ValueError(f"{opname}: {msg}") from None
    st(fd).insert(op)
    return op


def check_mine(fd: FusionDefinition, x: State, opname: str) -> None:
    if x.fd is not fd:
        raise ValueError(f"{opname}: {x.name} belongs to another FusionDefinition")


def is_number(x: Any) -> bool:
    return isinstance(
        x, bool | int | float | complex | np.bool_ | np.integer | np.floating | np.complexfloating
    )


def as_value(fd: FusionDefinition, x: Any, opname: str, what: str) -> Value:
    """A tensor or scalar operand; Python numbers become weak constants."""
    if isinstance(x, Value):
        check_mine(fd, x, opname)
        return x
    if is_number(x):
        return fd.define_scalar(x.item() if isinstance(x, np.generic) else x)
    raise ValueError(f"{opname}: {what} must be a tensor, a scalar or a number, got {_describe(x)}")


def as_tensor(fd: FusionDefinition, x: Any, opname: str, what: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise ValueError(f"{opname}: {what} must be a tensor, got {_describe(x)}")
    check_mine(fd, x, opname)
    return x


def as_int(x: Any, opname: str, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer):
        raise ValueError(f"{opname}: {what} must be an integer, got {_describe(x)}")
    return int(x)


def as_ints(x: Any, opname: str, what: str) -> list[int]:
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return [int(x)]
    if not isinstance(x, list | tuple):
        raise ValueError(f"{opname}: {what} must be a list of integers, got {_describe(x)}")
    return [as_int(v, opname, what) for v in x]


def as_bools(x: Any, opname: str, what: str) -> list[bool]:
    if not isinstance(x, list | tuple) or not all(isinstance(v, bool | np.bool_) for v in x):
        raise ValueError(f"{opname}: {what} must be a list of booleans, got {_describe(x)}")
    return [bool(v) for v in x]


def _describe(x: Any) -> str:
    if isinstance(x, State):
        return f"{x.name} ({type(x).__name__.lower()})"
    return f"{x!r} ({type(x).__name__})"


def shape_elems(fd: FusionDefinition, shape: Any, opname: str, what: str = "shape") -> tuple[Any, list[Elem]]:
    """Read a shape: a list/tuple of ints and integer scalars, or a vector. Returns the
    canonical argument (a list, or the vector) and one ``Elem`` per axis."""
    if isinstance(shape, Vector):
        check_mine(fd, shape, opname)
        return shape, list(shape.elements)
    if not isinstance(shape, list | tuple):
        raise ValueError(f"{opname}: {what} must be a list, a tuple or a vector, got {_describe(shape)}")
    canon: list[Any] = []
    elems: list[Elem] = []
    for i, e in enumerate(shape):
        if isinstance(e, Scalar):
            check_mine(fd, e, opname)
            if not dtype_of(e.value.type).is_integer:
                raise ValueError(f"{opname}: {what} entry {i} ({e.name}) must be an integer scalar, got {e.dtype!r}")
            canon.append(e)
            elems.append(Elem(e.value, None if e.known is None else int(e.known)))
        elif isinstance(e, int | np.integer) and not isinstance(e, bool):
            canon.append(int(e))
            elems.append(Elem(None, int(e)))
        else:
            raise ValueError(f"{opname}: {what} entry {i} must be an integer or an integer scalar, got {_describe(e)}")
    return canon, elems


def mixed_sizes(fd: FusionDefinition, elems: Sequence[Elem]) -> tuple[list[int], list[SSAValue]]:
    """MLIR-style mixed sizes: known entries static, the others ``-1`` plus an operand."""
    static: list[int] = []
    sizes: list[SSAValue] = []
    for e in elems:
        if e.known is not None:
            static.append(int(e.known))
        else:
            assert e.value is not None
            static.append(DYN)
            sizes.append(e.value)
    return static, sizes


def _trunc_div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


_FOLD: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": _trunc_div,
    "truediv": operator.truediv,
    "remainder": operator.mod,
    "fmod": math.fmod,
    "maximum": max,
    "minimum": min,
    "neg": operator.neg,
    "abs": abs,
    "set": lambda x: x,
}


def fold(name: str, values: Sequence[Any], dtype: DType) -> Any:
    """The value of a scalar op on known values, or None."""
    fn = _FOLD.get(name)
    if fn is None or any(v is None for v in values):
        return None
    try:
        return convert_scalar(fn(*values), dtype)
    except (ArithmeticError, ValueError, TypeError):
        return None


def convert_scalar(v: Any, dtype: DType) -> Any:
    """``v`` as the Python number of ``dtype`` (bool, int, float or complex); a complex
    value with a nonzero imaginary part has no real value (ValueError)."""
    if dtype.is_complex:
        return complex(v)
    if isinstance(v, complex | np.complexfloating):
        if v.imag != 0:
            raise ValueError(f"complex value {v!r} is not a {dtype}")
        v = v.real
    if dtype.is_bool:
        return bool(v)
    if dtype.is_integer:
        return int(v)
    return float(v)
