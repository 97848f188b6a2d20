"""A numpy evaluator for ``hir.program`` (nvFuser's ``HostIrEvaluator``, on the CPU).

::

    module = parse_module(text)      # fuser.fusion kernels + hir.program @main
    outs = run_program(module, [x])  # -> list[np.ndarray]

Semantics:

* tensors are numpy arrays; host scalars (``index``, integers) are Python ints;
  streams are ``Stream`` values.
* program inputs are used as given (never copied), so a result aliasing an input
  writes into the caller's array.
* ``hir.reshape``/``permute``/``squeeze``/``broadcast``/``slice``/``alias_select``
  produce numpy views of their input (``np.shares_memory`` holds); a reshape that
  the strides do not allow is an error, never a silent copy; broadcast views are
  read-only.
* ``hir.alias %v, %t`` marks are collected before the program runs: every read of
  ``%v`` reads ``%t``'s buffer, every write of ``%v`` is copied into it, and an
  ``hir.allocate`` of ``%v`` allocates nothing.
* ``hir.launch`` runs the fusion with ``fuser.ir.reference.run_fusion``; with ``outs``
  its outputs are copied into the ``outs`` buffers, which become the results.
* ``hir.allocate {preallocated}`` returned as result ``k`` is the caller's
  ``preallocated_outputs[k]`` when one is given (written in place, and returned).
* ``hir.deallocate`` drops the value: any later access raises ``HostIrError``.
* streams do nothing on the CPU but are tracked: ``HostEvaluator.stream_log`` lists
  ``(event, stream_id)`` for every stream op, launch and communication (``("allgather",
  0)``, ``("send", 1)``, ...), in execution order. The user's stream is ``Stream(0)``;
  ``hir.stream_for_index %i`` is the pool stream ``Stream(1 + i % num_streams)``.
* communications (``hir.allgather``, ``hir.send``, ...) need ``communicator``, a
  ``fuser.runtime.communicator.Communicator`` (gloo between CPU processes: one process
  per device of the mesh, each running the program on its local arrays); without one,
  a program that communicates is an error before it starts.

Bad inputs raise ``ValueError`` naming the input; run-time errors raise
``HostIrError`` (a ``ValueError``) naming the op. The program walk itself (environment,
aliases, loops, deallocation, validation) is ``fuser.runtime.program_walker.HostProgramWalker``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.ir.reference import run_fusion
from fuser.ir.shapes import DYN
from fuser.runtime.program_walker import HostIrError, HostProgramWalker

if TYPE_CHECKING:
    from fuser.runtime.communicator import Communicator

Value = Any  # np.ndarray, int, float, bool or Stream

__all__ = ["HostEvaluator", "HostIrError", "Stream", "run_program"]


@dataclass(frozen=True)
class Stream:
    """A stream handle: ``0`` is the user's stream, ``1..n`` the pool streams."""

    id: int


USER_STREAM = Stream(0)


@dataclass
class HostEvaluator(HostProgramWalker):
    """Runs the ``hir.program`` symbols of ``module``; keeps the stream log;
    communicates through ``communicator`` (see the module docstring)."""

    backend: ClassVar[str] = "host"
    _integer_types: ClassVar[tuple[type, ...]] = (int, np.integer)
    _named_inputs: ClassVar[bool] = True

    module: ModuleOp
    num_streams: int = 4
    stream_log: list[tuple[str, int]] = field(default_factory=list)
    communicator: Communicator | None = None

    def __post_init__(self) -> None:
        self._init_walker()
        self._current = USER_STREAM

    def _enter(self) -> None:
        self._current = USER_STREAM

    # ---- inputs -------------------------------------------------------------------
    def _check_tensor(self, x: Any, t: F.TensorType, what: str) -> np.ndarray:
        if not isinstance(x, np.ndarray):
            raise ValueError(f"{what} must be a numpy array, got {type(x).__name__}")
        if x.dtype != t.dtype.to_numpy():
            raise ValueError(f"{what} must have dtype {t.dtype}, got {x.dtype}")
        if x.ndim != t.rank:
            raise ValueError(f"{what} must have rank {t.rank}, got shape {list(x.shape)}")
        for a, (e, g) in enumerate(zip(t.get_shape(), x.shape, strict=True)):
            if e != DYN and e != g:
                raise ValueError(
                    f"{what} must have extent {e} on axis {a}, got shape {list(x.shape)}"
                )
        return x

    def _check_float_input(self, v: Any, t: Any, what: str) -> float | bool | complex:
        dt = DType.from_xdsl(t)
        if dt.is_complex and isinstance(v, int | float | complex | np.generic) and not isinstance(v, bool):
            return complex(v)
        if not isinstance(v, int | float | bool | np.generic):
            raise ValueError(f"{what} must be a {dt} scalar, got {v!r}")
        return bool(v) if dt.is_bool else float(v)

    def _check_output_buffer(
        self, buf: Any, alloc: H.AllocateOp, what: str, given: Mapping[Operation, Any]
    ) -> np.ndarray:
        t = alloc.result.type
        assert isinstance(t, F.TensorType)
        if not isinstance(buf, np.ndarray) or not buf.flags.writeable:
            raise ValueError(f"{what} must be a writeable numpy array")
        if buf.dtype != t.dtype.to_numpy() or buf.ndim != t.rank:
            raise ValueError(
                f"{what} must be a rank-{t.rank} {t.dtype} array, got {buf.dtype} of shape "
                f"{list(buf.shape)}"
            )
        if alloc in given:
            raise ValueError(f"{what}: the buffer of this result is already given")
        return buf

    # ---- values -------------------------------------------------------------------
    def _shape_of(self, x: np.ndarray) -> tuple[int, ...]:
        return x.shape

    def _check_result(self, v: SSAValue, value: Value, op: Operation) -> None:
        t = v.type
        if isinstance(t, F.TensorType) and isinstance(value, np.ndarray):
            if value.ndim != t.rank or any(
                e != DYN and e != g for e, g in zip(t.get_shape(), value.shape, strict=True)
            ):
                raise HostIrError(
                    f"{op.name}: produced shape {list(value.shape)} for a result of type {t}"
                )

    def _copy_into(self, target: np.ndarray, value: Value, op: Operation, what: str) -> None:
        if value is target:
            return
        if not target.flags.writeable:
            raise HostIrError(f"{op.name}: {what} is a read-only view")
        if np.shape(value) != target.shape:
            raise HostIrError(
                f"{op.name}: cannot write shape {list(np.shape(value))} into {what} of shape "
                f"{list(target.shape)}"
            )
        np.copyto(target, value, casting="same_kind")

    # ---- streams ------------------------------------------------------------------
    def _log(self, event: str, stream: Stream) -> None:
        self.stream_log.append((event, stream.id))

    def _stream_for_index(self, k: int) -> Stream:
        return Stream(1 + k)

    def _synchronize(self, op: H.SynchronizeStreamOp, stream: Stream) -> None:
        self._log("synchronize_stream", stream)

    # ---- buffers and launches -----------------------------------------------------
    def _empty(self, shape: list[int], dtype: DType) -> np.ndarray:
        return np.empty(shape, dtype=dtype.to_numpy())

    def _empty_in_order(self, shape: list[int], dtype: DType, stride_order: tuple[int, ...]) -> np.ndarray:
        from fuser.codegen.lower.common import TensorLayout

        dt = dtype.to_numpy()
        strides = TensorLayout.with_stride_order(tuple(shape), stride_order).strides
        buf = np.empty(max(math.prod(shape), 1), dtype=dt)
        return np.lib.stride_tricks.as_strided(buf, shape, [st * dt.itemsize for st in strides])

    def _zero(self, buf: np.ndarray) -> None:
        buf[...] = 0

    def _run_fusion(self, fusion: F.FusionOp, args: list[Value], outs: list[Value] | None) -> list[Value]:
        """Compute a launched segment's returned outputs (the reference interpreter;
        ``fuser.runtime.cpu_runner.KernelHostEvaluator`` runs its generated kernels,
        writing into the launch's ``outs`` buffers when given, and returns them)."""
        del outs  # computed apart, then copied into them (``_launch``)
        return run_fusion(fusion, args)

    def _launch(self, op: H.LaunchOp) -> list[Value]:
        fusion = self._callee(op)
        self._log(f"launch @{fusion.sym_name.data}", self._current)
        args = [self._read(v, op) for v in op.args]
        buffers = [self._read(v, op) for v in op.outs] if op.outs else None
        try:
            outs = self._run_fusion(fusion, args, buffers)
        except ValueError as e:
            raise HostIrError(f"hir.launch @{fusion.sym_name.data}: {e}") from e
        if buffers is None:
            return outs
        for i, (buf, value) in enumerate(zip(buffers, outs, strict=True)):
            self._copy_into(buf, value, op, f"outs #{i}")  # nothing to do for a buffer written itself
        return buffers

    # ---- views --------------------------------------------------------------------
    def _view_reshape(self, x: np.ndarray, new: list[int]) -> np.ndarray:
        if int(np.prod(new)) != x.size:
            raise HostIrError(
                f"hir.reshape: shape {list(x.shape)} ({x.size} elements) cannot become {new}"
            )
        try:
            return np.reshape(x, new, copy=False)
        except ValueError as e:
            raise HostIrError(
                f"hir.reshape: cannot view shape {list(x.shape)} (strides {list(x.strides)}) "
                f"as {new} without a copy"
            ) from e

    def _view_permute(self, x: np.ndarray, dims: Sequence[int]) -> np.ndarray:
        return np.transpose(x, dims)

    def _view_squeeze(self, x: np.ndarray, dims: Sequence[int]) -> np.ndarray:
        return np.squeeze(x, axis=tuple(dims))

    def _view_broadcast(self, x: np.ndarray, shape: list[int], bdims: list[int]) -> np.ndarray:
        inserted = [1] * len(shape)
        for i, d in enumerate(bdims):
            inserted[d] = x.shape[i]
        try:
            return np.broadcast_to(np.reshape(x, inserted, copy=False), shape)
        except ValueError as e:
            raise HostIrError(
                f"hir.broadcast: cannot broadcast shape {list(x.shape)} to {shape}"
            ) from e

    def _view_slice(
        self, x: np.ndarray, starts: list[int], ends: list[int], steps: list[int]
    ) -> np.ndarray:
        return x[tuple(slice(a, b, s) for a, b, s in zip(starts, ends, steps, strict=True))]

    def _view_select(self, x: np.ndarray, axis: int, i: int) -> np.ndarray:
        return x[(slice(None),) * axis + (i, Ellipsis)]  # Ellipsis: a 0-d view, not a scalar


def run_program(
    module: ModuleOp,
    inputs: Sequence[Value],
    name: str = "main",
    preallocated_outputs: Sequence[np.ndarray | None] | None = None,
    *,
    num_streams: int = 4,
    communicator: Communicator | None = None,
) -> list[Value]:
    """Run ``hir.program @name`` of ``module`` on ``inputs``; see the module docstring."""
    ev = HostEvaluator(module, num_streams, communicator=communicator)
    return ev.run(inputs, name, preallocated_outputs)
