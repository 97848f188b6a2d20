"""Run a ``hir.program`` on the GPU, with real CUDA streams (issue 6 item 6, seed 001).

::

    ev = GpuEvaluator(module, launcher, num_streams=4)
    (out,) = ev.run([x])                 # x: torch CUDA tensor, DeviceArray, CAI or DLPack

Semantics (those of ``fuser.runtime.host_evaluator``, on device memory):

* **arrays**: when any tensor input (or preallocated output) is a torch tensor, the
  program's buffers are torch tensors, otherwise ``DeviceArray``; other GPU arrays
  (``__cuda_array_interface__``, DLPack) are wrapped as ``DeviceArray`` views of the
  caller's memory. Program inputs are used in place, never copied.
* **host views** (``hir.reshape``/``permute``/``squeeze``/``broadcast``/``slice``/
  ``alias_select``) are strided views of their input's memory: torch views
  (``view``/``permute``/``select``/``expand``...) or ``DeviceArray`` s sharing the
  pointer. A reshape the strides do not allow is an error, never a copy.
* **aliases** (``hir.alias %v, %t``): reads of ``%v`` read ``%t``; a write of ``%v``
  is copied into ``%t``'s buffer on the current stream; ``hir.allocate`` of ``%v``
  allocates nothing.
* **preallocated outputs**: ``preallocated_outputs[k]`` is the buffer of result
  ``k`` when it is an ``hir.allocate {preallocated}`` (written in place).
* ``hir.deallocate`` drops the buffer (later accesses are errors).
* **launches** call ``launcher(fusion_op, args, outs, stream)``: ``args`` are the
  arrays and host scalars, ``outs`` the destination buffers (or None when the launch
  has no ``outs``: the launcher allocates), ``stream`` the raw ``CUstream`` handle
  (int) of the current stream; it returns the outputs. ``fuser.runtime.compile_fusion.
  launch_fusion`` is the real one.
* **streams**: the current stream on entry is the caller's (``cuda_driver.
  current_stream()``: ``use_stream``, torch's current stream, or the default);
  ``hir.stream_for_index %i`` is pool stream ``i % n`` (``n`` from the op, else
  ``num_streams``) of a pool of non-blocking streams kept by the evaluator;
  ``hir.set_current_stream`` switches where launches (and alias copies, zero fills)
  go; ``hir.synchronize_stream %s`` records an event on ``%s`` and makes the current
  stream wait for it (``cuStreamWaitEvent``: no host synchronization).

* **communications** (``hir.allgather``, ``hir.send``, ...) go through
  ``communicator`` (``fuser.runtime.communicator.Communicator``: NCCL, one process per
  GPU of the mesh), ordered on the current stream: the collective waits for the work
  queued before it and the stream waits for the collective. They need torch tensors
  (torch.distributed's arrays): pass torch CUDA tensors as the program's inputs.

The host never waits for the device: ``run`` returns when the work is queued on the
caller's stream (the program's final ``synchronize_stream`` ops join the workers
back into it). Bad inputs raise ``ValueError`` naming the input; run-time errors
``HostIrError`` naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN
from fuser.runtime import cuda_driver as drv
from fuser.runtime.gpu_arrays import (
    ArrayError,
    DeviceArray,
    array_info,
    contiguous_strides,
    torch_dtype,
    torch_stream,
    view_strides,
)
from fuser.runtime.program_walker import HostIrError, HostProgramWalker

if TYPE_CHECKING:
    from fuser.runtime.communicator import Communicator

__all__ = ["GpuEvaluator", "GpuStream", "Launcher", "run_program_gpu"]

Launcher = Callable[[F.FusionOp, list[Any], "list[Any] | None", int], Sequence[Any]]
"""``launcher(fusion_op, args, outs, stream) -> outputs``."""


@dataclass(frozen=True)
class GpuStream:
    """A stream value of a program: ``index`` 0 is the caller's stream, ``1..n`` the
    pool streams; ``handle`` is the raw ``CUstream``."""

    index: int
    handle: int


def _is_torch(x: Any) -> bool:
    mod = type(x).__module__
    return mod.startswith("torch") and hasattr(x, "data_ptr")


# ---- strided DeviceArray views ------------------------------------------------------


def _da_reshape(x: DeviceArray, shape: Sequence[int]) -> DeviceArray | None:
    """A view with ``shape`` when one exists (``gpu_arrays.view_strides``, torch's
    rule), else None."""
    strides = view_strides(x.shape, x.strides_elements, shape)
    return None if strides is None else x.strided_view(shape, strides)


# ---- the evaluator ------------------------------------------------------------------


class GpuEvaluator(HostProgramWalker):
    """Runs the ``hir.program`` symbols of ``module`` on device ``device``."""

    backend: ClassVar[str] = "GPU"

    def __init__(
        self,
        module: ModuleOp,
        launcher: Launcher,
        num_streams: int = 4,
        device: int = 0,
        communicator: Communicator | None = None,
    ) -> None:
        self.module = module
        self.launcher = launcher
        self.num_streams = num_streams
        self.device = device
        self.communicator = communicator
        self._init_walker()
        self._pool: list[drv.Stream] = []
        self._events: list[drv.Event] = []
        self._torch = False
        self._current = GpuStream(0, 0)

    def _prepare(
        self, inputs: Sequence[Any], preallocated_outputs: Sequence[Any | None] | None
    ) -> None:
        drv.ensure_context(self.device)
        self._torch = any(_is_torch(x) for x in inputs) or any(
            _is_torch(x) for x in (preallocated_outputs or ()) if x is not None
        )

    def _enter(self) -> None:
        self._current = GpuStream(0, drv.current_stream(self.device))
        self._events = []

    # ---- streams ------------------------------------------------------------------
    def pool_stream(self, k: int) -> drv.Stream:
        while len(self._pool) <= k:
            self._pool.append(drv.Stream(device=self.device))
        return self._pool[k]

    def synchronize(self) -> None:
        """Wait (on the host) for the caller's stream and every pool stream."""
        drv.Stream(drv.current_stream(self.device)).synchronize()
        for s in self._pool:
            s.synchronize()

    def _stream_for_index(self, k: int) -> GpuStream:
        return GpuStream(1 + k, self.pool_stream(k).ptr)

    def _synchronize(self, op: H.SynchronizeStreamOp, stream: GpuStream) -> None:
        if stream.handle != self._current.handle:
            ev = drv.Event(timing=False, device=self.device)
            ev.record(stream.handle)
            ev.wait(self._current.handle)
            self._events.append(ev)

    # ---- inputs -------------------------------------------------------------------
    def _as_array(self, x: Any, where: str) -> Any:
        if _is_torch(x):
            if not x.is_cuda:
                raise ValueError(f"{where} must be a CUDA tensor, got one on {x.device}")
            return x
        if isinstance(x, DeviceArray):
            return x
        try:
            info = array_info(x)
        except ArrayError as e:
            raise ValueError(f"{where}: {e}") from None
        return DeviceArray(info.shape, info.dtype, device=info.device, strides=info.strides,
                           ptr=info.ptr, base=info.owner)

    def _meta(self, x: Any) -> tuple[tuple[int, ...], DType]:
        if _is_torch(x):
            return tuple(x.shape), array_info(x).dtype
        return tuple(x.shape), x.dtype

    def _check_tensor(self, x: Any, t: F.TensorType, what: str) -> Any:
        x = self._as_array(x, what)
        shape, dtype = self._meta(x)
        if dtype != t.dtype:
            raise ValueError(f"{what} must have dtype {t.dtype}, got {dtype}")
        if len(shape) != t.rank or any(
            e != DYN and e != g for e, g in zip(t.get_shape(), shape, strict=True)
        ):
            raise ValueError(f"{what} must have type {t}, got shape {list(shape)}")
        return x

    def _check_float_input(self, v: Any, t: Any, what: str) -> Any:
        if not isinstance(v, int | float | bool | complex):
            raise ValueError(f"{what} must be a scalar, got {v!r}")
        return v

    # ---- values -------------------------------------------------------------------
    def _shape_of(self, x: Any) -> tuple[int, ...]:
        return self._meta(x)[0]

    def _copy_into(self, target: Any, value: Any, op: Operation, what: str) -> None:
        if value is target:
            return
        if self._meta(target)[0] != self._meta(value)[0]:
            raise HostIrError(
                f"{op.name}: cannot write shape {list(self._meta(value)[0])} into a buffer of "
                f"shape {list(self._meta(target)[0])}"
            )
        if _is_torch(target):
            import torch

            with torch.cuda.stream(torch_stream(self._current.handle, self.device)):
                target.copy_(value)
            return
        if target.ptr == value.ptr and target.strides_elements == value.strides_elements:
            return
        contiguous = contiguous_strides(target.shape)
        if target.strides_elements != contiguous or value.strides_elements != contiguous:
            raise HostIrError(f"{op.name}: copying between strided DeviceArrays is not supported")
        drv.memcpy_dtod(target.ptr, value.ptr, target.nbytes, self._current.handle)

    # ---- buffers and launches -----------------------------------------------------
    def _empty(self, shape: list[int], dtype: DType) -> Any:
        if self._torch:
            import torch

            return torch.empty(shape, dtype=torch_dtype(dtype), device=f"cuda:{self.device}")
        return DeviceArray(shape, dtype, device=self.device)

    def _empty_in_order(self, shape: list[int], dtype: DType, stride_order: tuple[int, ...]) -> Any:
        from fuser.codegen.lower.common import TensorLayout

        strides = TensorLayout.with_stride_order(tuple(shape), stride_order).strides
        if self._torch:
            import torch

            return torch.empty_strided(shape, strides, dtype=torch_dtype(dtype), device=f"cuda:{self.device}")
        return DeviceArray(shape, dtype, device=self.device, strides=strides)

    def _zero(self, buf: Any) -> None:
        if _is_torch(buf):
            import torch

            with torch.cuda.stream(torch_stream(self._current.handle, self.device)):
                buf.zero_()
        elif buf.nbytes:
            drv.memset_d8(buf.ptr, 0, buf.nbytes, self._current.handle)

    def _launch(self, op: H.LaunchOp) -> list[Any]:
        fusion = self._callee(op)
        args = [self._read(v, op) for v in op.args]
        outs = [self._read(v, op) for v in op.outs] if op.outs else None
        try:
            results = list(self.launcher(fusion, args, outs, self._current.handle))
        except ValueError as e:
            raise HostIrError(f"hir.launch @{fusion.sym_name.data}: {e}") from e
        if len(results) != len(op.res):
            raise HostIrError(
                f"hir.launch @{fusion.sym_name.data}: the launcher returned {len(results)} "
                f"outputs for {len(op.res)} results"
            )
        return outs if outs is not None else results

    # ---- communications -----------------------------------------------------------
    def _communication_array(self, x: Any, op: H.CommunicationOp, what: str) -> Any:
        if not _is_torch(x):
            raise HostIrError(
                f"{op.name}: the {what} is a {type(x).__name__}; communication on the GPU "
                "needs torch CUDA tensors (pass torch tensors as the program's inputs)"
            )
        return x

    def _communication_stream(self) -> int | None:
        return self._current.handle

    # ---- views --------------------------------------------------------------------
    def _view_reshape(self, x: Any, new: list[int]) -> Any:
        shape = list(self._shape_of(x))
        if math.prod(new) != math.prod(shape):
            raise HostIrError(f"hir.reshape: shape {shape} cannot become {new}")
        out = None
        if _is_torch(x):
            try:
                out = x.view(new)
            except RuntimeError:
                out = None
        else:
            out = _da_reshape(x, new)
        if out is None:
            raise HostIrError(f"hir.reshape: cannot view shape {shape} as {new} without a copy")
        return out

    def _view_permute(self, x: Any, dims: Sequence[int]) -> Any:
        if _is_torch(x):
            return x.permute(dims)
        return x.strided_view([x.shape[d] for d in dims], [x.strides_elements[d] for d in dims])

    def _view_squeeze(self, x: Any, dims: Sequence[int]) -> Any:
        shape = self._shape_of(x)
        keep = [i for i in range(len(shape)) if i not in dims]
        if _is_torch(x):
            return x.reshape([shape[i] for i in keep]) if dims else x
        return x.strided_view([shape[i] for i in keep], [x.strides_elements[i] for i in keep])

    def _view_broadcast(self, x: Any, shape: list[int], bdims: list[int]) -> Any:
        torch_x = _is_torch(x)
        in_shape = list(self._shape_of(x))
        strides = [0] * len(shape)
        for i, d in enumerate(bdims):
            if in_shape[i] not in (1, shape[d]):
                raise HostIrError(f"hir.broadcast: cannot broadcast shape {in_shape} to {shape}")
            if in_shape[i] != 1:
                strides[d] = x.stride(i) if torch_x else x.strides_elements[i]
        if torch_x:
            return x.as_strided(shape, strides, x.storage_offset())
        return x.strided_view(shape, strides)

    def _view_slice(self, x: Any, starts: list[int], ends: list[int], steps: list[int]) -> Any:
        if _is_torch(x):
            return x[tuple(slice(a, b, s) for a, b, s in zip(starts, ends, steps, strict=True))]
        new_shape, new_strides, offset = [], [], 0
        for e, st, a, b, s in zip(
            self._shape_of(x), x.strides_elements, starts, ends, steps, strict=True
        ):
            r = range(e)[slice(a, b, s)]
            new_shape.append(len(r))
            new_strides.append(st * s)
            offset += (r.start if len(r) else 0) * st
        return x.strided_view(new_shape, new_strides, offset)

    def _view_select(self, x: Any, axis: int, i: int) -> Any:
        if _is_torch(x):
            return x.select(axis, i)
        shape, st = self._shape_of(x), x.strides_elements
        return x.strided_view([e for k, e in enumerate(shape) if k != axis],
            [s for k, s in enumerate(st) if k != axis],
            i * st[axis],
        )


def run_program_gpu(
    module: ModuleOp,
    inputs: Sequence[Any],
    launcher: Launcher,
    name: str = "main",
    preallocated_outputs: Sequence[Any | None] | None = None,
    *,
    num_streams: int = 4,
    communicator: Communicator | None = None,
) -> list[Any]:
    """Run ``hir.program @name`` on the GPU; see the module docstring."""
    ev = GpuEvaluator(module, launcher, num_streams, communicator=communicator)
    return ev.run(inputs, name, preallocated_outputs)
