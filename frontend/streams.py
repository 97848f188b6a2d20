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
    (out,) = fd.execute([x], num_streams=4)   # through the compiler driver

``fd.execute`` on a definition with stream marks compiles ``stream_module``'s fusion
with the compiler driver (``fuser.runtime.driver.compile``) and the pipeline
``bind-sizes, lower-stream-loops{num-streams=n}, select-schedulers, schedule-fusions``
(``stream_passes``), then runs the program with
``fuser.runtime.host_evaluator.HostEvaluator`` for numpy arrays and as a
``fuser.runtime.gpu_program.GpuProgram`` (real streams) for GPU arrays.
``stream_program(fd, n)`` is the same lowering without sizes bound, to read.
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
_CACHES = ("_stream_programs", "_stream_fusion", "_stream_executables", "_stream_gpu_programs")


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
    for cached in _CACHES:  # compiled for the old marks
        fd.__dict__.pop(cached, None)


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


def stream_passes(num_streams: int) -> tuple[str, ...]:
    """The driver's pipeline after ``bind-sizes`` for a fusion with stream marks:
    ``lower-stream-loops`` cuts it into per-slice launches, ``select-schedulers``
    picks each launch's scheduler and ``schedule-fusions`` writes its loop nest (what
    the GPU lowers; deferred to the first use of the segments)."""
    return (f"lower-stream-loops{{num-streams={num_streams}}}", "select-schedulers{debug=true}", "schedule-fusions")


def execute_streams(fd: Any, inputs: Sequence[Any], num_streams: int = 4) -> list[Any]:
    """Run ``fd``'s stream marks through the compiler driver: ``stream_module(fd)``'s
    fusion compiled for the inputs' signature with ``stream_passes(num_streams)``
    (``fuser.runtime.driver.compile``, cached on the definition), then its
    ``hir.program`` on the CPU host evaluator for numpy arrays (torch CPU tensors
    too) or as a ``fuser.runtime.gpu_program.GpuProgram`` (a real stream pool) for
    GPU arrays. The evaluator of the last run is ``fd.last_stream_evaluator`` (its
    ``stream_log`` on the CPU)."""
    from fuser.frontend.execution import device_target, validated_gpu_inputs
    from fuser.frontend.validation import is_torch_tensor
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.driver import CompileError, Signature, compile
    from fuser.runtime.host_evaluator import HostEvaluator
    from fuser.runtime.torch_arrays import numpy_to_torch
    from fuser.schedulers.target import DEFAULT_TARGET

    entry = fd._ensure_defined()
    if not isinstance(inputs, list | tuple):
        raise ValueError(f"execute: inputs must be a list or tuple, got {type(inputs).__name__}")
    stream_program(fd, num_streams)  # checks num_streams and the marks, with their messages
    on_gpu = any(ga.is_gpu_array(x) for x in inputs)
    _, flat = validated_gpu_inputs(entry, inputs)
    flat = [x.item() if isinstance(x, np.generic) else x for x in flat]
    fusion = _stream_fusion(fd)
    target = device_target(flat) if on_gpu else DEFAULT_TARGET
    key = (Signature.of(fusion, flat), target, num_streams)
    exes: dict[tuple[Any, ...], Any] = fd.__dict__.setdefault("_stream_executables", {})
    exe = exes.get(key)
    if exe is None:
        try:
            exe = exes[key] = compile(fusion, key[0], target, stream_passes(num_streams))
        except CompileError as e:
            raise ValueError(f"fusion {entry.id}: {e}") from None
    if on_gpu:
        from fuser.runtime.gpu_program import GpuProgram

        programs: dict[tuple[Any, ...], GpuProgram] = fd.__dict__.setdefault("_stream_gpu_programs", {})
        pkey = (key, entry.gpu_key(inputs))
        prog = programs.get(pkey)
        if prog is None:
            prog = programs[pkey] = GpuProgram(exe, flat, num_streams=num_streams)
        outs = prog.run(flat)
        entry.last_run = prog
        fd.last_stream_evaluator = prog.evaluator
        return outs
    ev = HostEvaluator(exe.module, num_streams)
    outs = ev.run(flat, "main")
    if any(is_torch_tensor(x) for x in inputs):
        outs = [numpy_to_torch(o) for o in outs]
    entry.last_run = "cpu"
    fd.last_stream_evaluator = ev
    return outs


def _stream_fusion(fd: Any) -> FusionOp:
    """The fusion of ``stream_module(fd)``, made once per set of marks
    (``parallelize_stream`` clears it with the compiled programs)."""
    fusion = fd.__dict__.get("_stream_fusion")
    if fusion is None:
        fusion = fd.__dict__["_stream_fusion"] = next(
            op for op in stream_module(fd).ops if isinstance(op, FusionOp)
        )
    return fusion
