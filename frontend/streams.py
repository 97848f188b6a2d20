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

From the definition itself::

    fd.parallelize_stream(t1, 0)
    (out,) = fd.execute([x], num_streams=4)   # stream_program + host/GPU evaluator

``fd.execute`` on a definition with stream marks runs ``stream_program(fd, n)``
(``stream_module`` lowered by ``lower-stream-loops{num-streams=n}``, cached per
``n``) with ``fuser.runtime.host_evaluator.HostEvaluator`` for numpy arrays and with
``fuser.runtime.gpu_evaluator.GpuEvaluator`` (real streams, ``launch_fusion`` kernels)
for GPU arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.ir.dialects.iterdomain import ParallelType
from fuser.ir.schedule import Schedule
from fuser.ir.shapes import ShapeError, normalize_dim

__all__ = [
    "execute_streams",
    "parallelize_stream",
    "stream_axes_of",
    "stream_module",
    "stream_program",
]

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


def stream_program(fd: Any, num_streams: int = 4) -> ModuleOp:
    """``stream_module(fd)`` lowered by ``lower-stream-loops{num-streams=n}`` (cached
    on the definition per stream count; ``parallelize_stream`` clears the cache)."""
    from fuser.passes.host_rewrites import HostPassError
    from fuser.passes.lower_stream_loops import lower_stream_loops

    if isinstance(num_streams, bool) or not isinstance(num_streams, int) or num_streams <= 0:
        raise ValueError(f"num_streams must be a positive integer, got {num_streams!r}")
    cache: dict[int, ModuleOp] = fd.__dict__.setdefault("_stream_programs", {})
    module = cache.get(num_streams)
    if module is None:
        if fd._ensure_defined().needs_concretization:
            raise ValueError("stream-parallel fusions cannot have reshapes decided at execute time")
        module = stream_module(fd)
        try:
            lower_stream_loops(module, num_streams)
            module.verify()
        except (HostPassError, VerifyException) as e:
            raise ValueError(f"lower-stream-loops: {e}") from None
        cache[num_streams] = module
    return module


def execute_streams(fd: Any, inputs: Sequence[Any], num_streams: int = 4) -> list[Any]:
    """Run the stream-loop program of ``fd``: on the CPU host evaluator for numpy
    arrays (torch CPU tensors too), on the GPU evaluator (a real stream pool, kernels
    from ``fuser.runtime.segmented_gpu.launch_segment``) for GPU arrays. The evaluator of
    the last run is ``fd.last_stream_evaluator`` (its ``stream_log`` on the CPU)."""
    from fuser.frontend.validation import (
        flatten_inputs,
        is_torch_tensor,
        plain_inputs,
        validate_inputs,
    )
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import meta_array
    from fuser.runtime.host_evaluator import HostEvaluator
    from fuser.runtime.torch_arrays import numpy_to_torch

    entry = fd._ensure_defined()
    if not isinstance(inputs, list | tuple):
        raise ValueError(f"execute: inputs must be a list or tuple, got {type(inputs).__name__}")
    module = stream_program(fd, num_streams)
    on_gpu = any(ga.is_gpu_array(x) for x in inputs)
    metas = [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    if on_gpu:
        from fuser.runtime.segmented_gpu import stream_evaluator

        flat = flatten_inputs(
            entry.inputs, [x if ga.is_gpu_array(x) else p for x, p in zip(inputs, plain, strict=True)], draw_rng=True
        )
        ev: Any = stream_evaluator(fd, module, num_streams, flat)
        outs = ev.run([x.item() if isinstance(x, np.generic) else x for x in flat])
        entry.last_run = ev.launcher  # a RecordingLauncher: the kernels it launched
    else:
        flat = flatten_inputs(entry.inputs, plain, draw_rng=True)
        ev = HostEvaluator(module, num_streams)
        outs = ev.run([x.item() if isinstance(x, np.generic) else x for x in flat])
        if any(is_torch_tensor(x) for x in inputs):
            outs = [numpy_to_torch(o) for o in outs]
        entry.last_run = "cpu"
    fd.last_stream_evaluator = ev
    return outs
