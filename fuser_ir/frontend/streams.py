"""Mark tensor axes of a ``FusionDefinition`` as stream-parallel (seed 001).

nvFuser writes ``tv1->axis(0)->parallelize(ParallelType::Stream)``; here::

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], dtype=DataType.Float)
        t1 = fd.ops.set(t0)
        fd.add_output(t1)
    parallelize_stream(fd, t1, 0)
    module = stream_module(fd)       # fuser.fusion with the iterdomain ops
    PassManager: lower-stream-loops{num-streams=4}

The marks are kept beside the definition (they are a schedule, not part of the
definition's text, so they do not change the fusion cache key), and
``stream_module`` writes them as ``iterdomain.logical`` +
``iterdomain.parallelize ... to stream`` + ``iterdomain.loop`` on a copy of the
definition's ``fuser.fusion``: the input of ``lower-stream-loops``.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue

from fuser_ir.dialects.fuser import FusionOp, TensorType
from fuser_ir.dialects.iterdomain import ParallelType
from fuser_ir.schedule import Schedule
from fuser_ir.shapes import ShapeError, normalize_dim

__all__ = ["parallelize_stream", "stream_axes_of", "stream_module"]

_ATTR = "_fuser_stream_axes"


def _values(block: Block) -> list[SSAValue]:
    return [*block.args, *(r for op in block.ops for r in op.results)]


def parallelize_stream(fd: Any, tensor: Any, axis: int = 0) -> None:
    """Mark axis ``axis`` of ``tensor`` (a tensor of ``fd``) as stream-parallel."""
    value = getattr(tensor, "value", None)
    if getattr(tensor, "fd", None) is not fd or not isinstance(value, SSAValue):
        raise ValueError("parallelize_stream: the tensor does not belong to this definition")
    t = value.type
    if not isinstance(t, TensorType):
        raise ValueError(f"parallelize_stream: {tensor!r} is not a tensor")
    try:
        axis = normalize_dim(axis, t.rank, "stream axis")
    except ShapeError as e:
        raise ValueError(f"parallelize_stream: {e}") from None
    block = fd._state.block
    position = _values(block).index(value)
    marks: dict[int, int] = fd.__dict__.setdefault(_ATTR, {})
    marks[position] = axis


def stream_axes_of(fd: Any) -> dict[int, int]:
    """``{value position in the definition: stream axis}`` as marked so far."""
    return dict(fd.__dict__.get(_ATTR, {}))


def stream_module(fd: Any) -> ModuleOp:
    """A module holding a copy of ``fd``'s fusion with the stream marks as iterdomain ops."""
    fusion: FusionOp = fd.fusion().clone()
    values = _values(fusion.body.block)
    for position, axis in sorted(stream_axes_of(fd).items()):
        Schedule(values[position]).parallelize(axis, ParallelType.stream).emit()
    return ModuleOp([fusion])
