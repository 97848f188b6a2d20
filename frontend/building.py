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

from fuser.frontend.state import (
    DefinitionState,
    Elem,
    Record,
    Scalar,
    State,
    Tensor,
    Value,
    Vector,
)
from fuser.ir.dialects.fuser import CastOp, InferError, TensorType, dtype_of
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN, ShapeError

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition

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


class NvFuserCheckError(ValueError, RuntimeError):
    """A definition error whose condition and text are nvFuser's own check (nvFuser
    raises it as a ``RuntimeError``): a ``ValueError`` like every fuser definition
    error, and a ``RuntimeError`` for code written against nvFuser."""


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
    """Read a shape: a list/tuple of ints and scalars, or a vector. Returns the
    canonical argument (a list, or the vector) and one ``Elem`` per axis. A scalar that
    is not an integer (a Double, a Bool) is cast to Int, truncating, as nvFuser casts
    every size to its index type."""
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
            canon.append(e)
            elems.append(scalar_elem(fd, e, opname, f"{what} entry {i}"))
        elif isinstance(e, int | np.integer) and not isinstance(e, bool):
            canon.append(int(e))
            elems.append(Elem(None, int(e)))
        else:
            raise ValueError(
                f"{opname}: {what} entry {i} must be an integer or a scalar, got {_describe(e)}"
            )
    return canon, elems


def scalar_elem(fd: FusionDefinition, e: Scalar, opname: str, what: str) -> Elem:
    """The integer ``Elem`` of a scalar used as a size or an index: an integer scalar as
    it is; a floating-point or bool one through a ``fuser.cast`` to Int (no record),
    its known value truncated toward zero (nvFuser's cast to its index type). A complex
    scalar, or a known value that is NaN, infinite or beyond int64, is a ValueError."""
    dt = dtype_of(e.value.type)
    if dt.is_integer:
        return Elem(e.value, None if e.known is None else int(e.known))
    if dt.is_complex:
        raise ValueError(f"{opname}: {what} ({e.name}) must be a real scalar, got {e.dtype!r}")
    known = None
    if e.known is not None:
        v = float(e.known)
        if not math.isfinite(v) or not -(2**63) <= math.trunc(v) < 2**63:
            raise ValueError(
                f"{opname}: {what} ({e.name}) is {e.known!r}, which is not an integer size or index"
            )
        known = math.trunc(v)
    cast = st(fd).insert(CastOp(e.value, DType.int64))
    return Elem(cast.results[0], known)


def index_elems(fd: FusionDefinition, x: Any, opname: str, what: str) -> tuple[Any, list[Elem]]:
    """Read indices (pad widths, slice bounds): ints, scalars, or a vector, any of
    them negative. Returns the canonical argument and one ``Elem`` per entry."""
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        x = [x]
    if not isinstance(x, list | tuple | Vector):
        raise ValueError(
            f"{opname}: {what} must be a list, a tuple or a vector of integers, got {_describe(x)}"
        )
    return shape_elems(fd, x, opname, what)


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


def fold(name: str, values: Sequence[Any], dtype: DType, op: Operation | None = None) -> Any:
    """The value of a scalar op on known values, or None. Ops outside the Python table
    (``signbit``, ``ne``, ``reciprocal``, ...) are evaluated by the reference
    interpreter when ``op`` is given, so that sizes computed from constants and bound
    inputs are known when a fusion is concretized."""
    fn = _FOLD.get(name)
    if any(v is None for v in values):
        return None
    if fn is None:
        return None if op is None else fold_op(op, values)
    try:
        return convert_scalar(fn(*values), dtype)
    except (ArithmeticError, ValueError, TypeError):
        return None


def fold_op(op: Operation, values: Sequence[Any]) -> Any:
    """The value of the scalar result of ``op`` given its operands' known values, by
    the reference interpreter (``fuser.ir.reference``, fuser's semantics); None when a
    value is unknown or the evaluation fails."""
    if any(v is None for v in values) or len(op.results) != 1:
        return None
    if isinstance(op.results[0].type, TensorType):
        return None
    try:
        from fuser.ir.reference import evaluate_op

        args = [
            np.asarray(v, dtype=dtype_of(o.type).to_numpy())
            for v, o in zip(values, op.operands, strict=True)
        ]
        with np.errstate(all="ignore"):
            (res,) = evaluate_op(op, args)
        return convert_scalar(np.asarray(res).item(), dtype_of(op.results[0].type))
    except Exception:  # noqa: BLE001 - an unknown value, as without folding
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
