"""Concrete sizes: bind every symbolic extent of a fusion from its input shapes.

``bind_sizes(fusion, inputs)`` clones the fusion, gives the clone's block arguments
the concrete input types, and re-runs each op's own type inference (``infer``) in
order, so symbolic extents (``?``) become concrete the same way the verifier derives
them. Size operands (``fuser.size``, scalar inputs, constants and scalar arithmetic)
are evaluated to fill the ``-1`` entries they bind. The result maps every value of
the *original* fusion to its concrete shape (``()`` for scalars)::

    fuser.fusion @f(%x : !fuser.tensor<?x?xf32>) -> ... { %s = fuser.sum %x {dims = array<i64: 1>} ... }
    bind_sizes(f, [(4, 1024)]).shape(%s) == (4,)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xdsl.ir import Attribute, Operation, SSAValue

from fuser.ir.dialects.fuser import (
    BINARY_OP_CLASSES,
    CastOp,
    ConstantOp,
    ElementwiseOp,
    FuserOp,
    FusionOp,
    InferError,
    IotaOp,
    SizeOp,
    TensorType,
)
from fuser.ir.shapes import DYN, ShapeError, run_time_extent_mismatch

from .graph import body_ops

Shape = tuple[int, ...]


class SizeBindingError(ValueError):
    """Input shapes that do not fit the fusion, or an extent that cannot be bound."""


class ConcreteSizes:
    """Concrete shapes (and known scalar values) of a fusion's values."""

    def __init__(self, shapes: Mapping[SSAValue, Shape], scalars: Mapping[SSAValue, Any]) -> None:
        self._shapes = dict(shapes)
        self._scalars = dict(scalars)

    def shape(self, v: SSAValue) -> Shape:
        shape = self._shapes.get(v)
        if shape is None:
            raise _NoShape(v)
        return shape

    def numel(self, v: SSAValue) -> int:
        return math.prod(self.shape(v))

    def scalar(self, v: SSAValue) -> Any:
        return self._scalars.get(v)

    def __contains__(self, v: object) -> bool:
        return v in self._shapes

    def items(self) -> list[tuple[SSAValue, Shape]]:
        return list(self._shapes.items())


class _NoShape(KeyError):
    """``KeyError("no concrete shape for <v>")``, the message formatted only when
    read: callers that probe every value of a fusion (``concrete_shapes``) catch it,
    and printing a value prints its whole op."""

    def __init__(self, v: SSAValue) -> None:
        super().__init__()
        self.value = v

    @property
    def message(self) -> str:
        return f"no concrete shape for {self.value.name_hint or self.value}"

    @property
    def args(self) -> tuple[str]:  # type: ignore[override]
        return (self.message,)

    def __str__(self) -> str:
        return repr(self.message)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (KeyError, (self.message,))


_SCALAR_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": lambda a, b: int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b,
    "truediv": operator.truediv,
    "maximum": max,
    "minimum": min,
}


def input_shape(value: object) -> Shape | None:
    """The shape of an input argument: an array (``.shape``), a shape sequence, or
    None for a scalar."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, int | float | bool):
        return tuple(int(d) for d in shape)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(int(d) for d in value)
    return None


def static_inputs(fusion: FusionOp) -> list[Shape | None]:
    """Input shapes from the fusion's own types; raises when an extent is symbolic."""
    out: list[Shape | None] = []
    for i, a in enumerate(fusion.inputs):
        t = a.type
        if not isinstance(t, TensorType):
            out.append(None)
            continue
        if DYN in t.get_shape():
            raise SizeBindingError(
                f"input #{i} of @{fusion.sym_name.data} has symbolic extents "
                f"{list(t.get_shape())}; give its concrete shape"
            )
        out.append(t.get_shape())
    return out


def bind_sizes(fusion: FusionOp, inputs: Sequence[object] | None = None) -> ConcreteSizes:
    """Concrete shapes of every value of ``fusion`` for the given inputs.

    ``inputs[i]`` is, for a tensor input, its shape (a sequence of ints) or an array
    with ``.shape``; for a scalar input, its value (or None when unknown). Without
    ``inputs`` the fusion's static extents are used.
    """
    name = f"@{fusion.sym_name.data}"
    if inputs is None:
        inputs = static_inputs(fusion)
    if len(inputs) != len(fusion.inputs):
        raise SizeBindingError(
            f"{name} has {len(fusion.inputs)} inputs but {len(inputs)} shapes were given"
        )
    fast = _bind_static(fusion, inputs, name)
    if fast is not None:
        return fast
    clone = fusion.clone()
    shapes: dict[SSAValue, Shape] = {}
    scalars: dict[SSAValue, Any] = {}
    for i, (arg, value) in enumerate(zip(clone.inputs, inputs, strict=True)):
        t = arg.type
        if isinstance(t, TensorType):
            shape = input_shape(value)
            if shape is None:
                raise SizeBindingError(
                    f"{name}: input #{i} is a tensor {t}, got a scalar {value!r}"
                )
            declared = t.get_shape()
            if len(shape) != len(declared) or any(
                d != DYN and d != s for d, s in zip(declared, shape, strict=True)
            ):
                raise SizeBindingError(
                    f"{name}: input #{i} has type {t} but the given shape is {list(shape)}"
                )
            if any(s < 0 for s in shape):
                raise SizeBindingError(f"{name}: input #{i} has a negative extent in {list(shape)}")
            arg._type = TensorType(shape, t.element_type)  # layout does not change extents
            shapes[arg] = shape
        else:
            if input_shape(value) is not None:
                raise SizeBindingError(f"{name}: input #{i} is a scalar {t}, got a shape {value!r}")
            shapes[arg] = ()
            if value is not None:
                scalars[arg] = value
    for op, orig in zip(body_ops(clone), body_ops(fusion), strict=True):
        _bind_op(op, shapes, scalars, name)
        if isinstance(orig, ElementwiseOp):
            # the declared types say which axes broadcast (binding makes them static)
            problem = run_time_extent_mismatch(
                orig.name,
                [v.type.get_shape() if isinstance(v.type, TensorType) else None for v in orig.operands],
                [shapes.get(v) if isinstance(v.type, TensorType) else None for v in op.operands],
            )
            if problem is not None:
                raise SizeBindingError(f"{name}: {problem}")
    # Map the clone's values back onto the original fusion's, position by position.
    out_shapes: dict[SSAValue, Shape] = {}
    out_scalars: dict[SSAValue, Any] = {}
    for a, b in zip(fusion.inputs, clone.inputs, strict=True):
        out_shapes[a] = shapes[b]
        if b in scalars:
            out_scalars[a] = scalars[b]
    for op_a, op_b in zip(body_ops(fusion), body_ops(clone), strict=True):
        for ra, rb in zip(op_a.results, op_b.results, strict=True):
            out_shapes[ra] = shapes[rb]
            if rb in scalars:
                out_scalars[ra] = scalars[rb]
    return ConcreteSizes(out_shapes, out_scalars)


def _bind_static(fusion: FusionOp, inputs: Sequence[object], name: str) -> ConcreteSizes | None:
    """``bind_sizes`` without cloning and re-inferring the fusion when nothing is left
    to bind: every tensor input given its declared (static) shape, every op's result
    types static and no extent given by a size operand. The verifier holds each
    op's declared result type equal to the one its ``infer`` gives, so the shapes
    are the declared ones; scalars are evaluated as ``bind_sizes`` does. None when
    some extent needs binding (or an input does not match: ``bind_sizes`` says why)."""
    shapes: dict[SSAValue, Shape] = {}
    scalars: dict[SSAValue, Any] = {}
    for arg, value in zip(fusion.inputs, inputs, strict=True):
        t = arg.type
        if isinstance(t, TensorType):
            shape = input_shape(value)
            if shape is None or shape != t.get_shape() or any(s < 0 for s in shape):
                return None
            shapes[arg] = shape
        else:
            if input_shape(value) is not None:
                return None
            shapes[arg] = ()
            if value is not None:
                scalars[arg] = value
    ops = body_ops(fusion)
    for op in ops:
        if not isinstance(op, FuserOp) or size_operands(op):
            return None
        for r in op.results:
            t = r.type
            if isinstance(t, TensorType):
                shape = t.get_shape()
                if DYN in shape:
                    return None
                shapes[r] = shape
            else:
                shapes[r] = ()
    for op in ops:
        _eval_scalar(op, shapes, scalars)
        if isinstance(op, ElementwiseOp):
            declared = [v.type.get_shape() if isinstance(v.type, TensorType) else None for v in op.operands]
            problem = run_time_extent_mismatch(op.name, declared, declared)
            if problem is not None:
                raise SizeBindingError(f"{name}: {problem}")
    return ConcreteSizes(shapes, scalars)


def has_size_operands(fusion: FusionOp) -> bool:
    """Whether an extent of ``fusion`` comes from a scalar operand (``fuser.size``, or
    ``size_operands``: an op's ``sizes``, ``fuser.iota``'s length): then the values of
    its scalar inputs decide shapes."""
    return any(isinstance(op, SizeOp) or size_operands(op) for op in fusion.body.block.ops)


def size_operands(op: Operation) -> list[SSAValue]:
    """The scalar operands of ``op`` that give its result's symbolic extents, in order:
    its ``sizes`` operands, or ``fuser.iota``'s length."""
    if isinstance(op, IotaOp):  # its extent is its length operand
        return [op.length]
    return list(getattr(op, "sizes", ()))


def _bind_op(
    op: Operation, shapes: dict[SSAValue, Shape], scalars: dict[SSAValue, Any], name: str
) -> None:
    _eval_scalar(op, shapes, scalars)
    if not isinstance(op, FuserOp):
        raise SizeBindingError(f"{name}: cannot bind sizes through {op.name}")
    try:
        inferred: list[Attribute] = op.infer()
    except (ShapeError, ValueError, InferError) as e:
        raise SizeBindingError(f"{name}: {op.name}: {e}") from e
    sizes = size_operands(op)
    for r, t in zip(op.results, inferred, strict=True):
        if not isinstance(t, TensorType):
            shapes[r] = ()
            continue
        shape = list(t.get_shape())
        dyn = [i for i, d in enumerate(shape) if d == DYN]
        if dyn and len(sizes) == len(dyn):
            for i, s in zip(dyn, sizes, strict=True):
                if s not in scalars:
                    raise SizeBindingError(
                        f"{name}: {op.name}: extent {i} depends on an unknown scalar"
                    )
                shape[i] = int(scalars[s])
        if DYN in shape:
            raise SizeBindingError(f"{name}: {op.name}: cannot bind the extents of {t}")
        r._type = TensorType(shape, t.element_type)
        shapes[r] = tuple(shape)


def _eval_scalar(
    op: Operation, shapes: dict[SSAValue, Shape], scalars: dict[SSAValue, Any]
) -> None:
    if isinstance(op, ConstantOp):
        scalars[op.result] = op.python_value
    elif isinstance(op, SizeOp):
        shape = shapes[op.input]
        scalars[op.result] = shape[op.dim.value.data % max(len(shape), 1)]
    elif isinstance(op, CastOp) and op.input in scalars:
        scalars[op.result] = scalars[op.input]
    else:
        for key, cls in BINARY_OP_CLASSES.items():
            if isinstance(op, cls) and key in _SCALAR_BINARY:
                a, b = op.operands
                if a in scalars and b in scalars:
                    scalars[op.results[0]] = _SCALAR_BINARY[key](scalars[a], scalars[b])
                return
