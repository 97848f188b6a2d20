"""Moving tensors between the processes of a multi-device ``hir.program`` run.

Every device of a mesh runs the same program in its own process; the communication
ops of the ``hir`` dialect (``hir.allgather``, ``hir.allreduce``, ``hir.reduce_scatter``,
``hir.broadcast_from``, ``hir.send``/``hir.recv``) exchange that process's local
buffers with the others through a ``Communicator``::

    comm = Communicator.init_from_env()          # under torchrun: RANK, WORLD_SIZE, ...
    outs = run_program(module, [x], communicator=comm)            # numpy, gloo
    outs = run_program_gpu(module, [x_cuda], launch_fusion, communicator=comm)  # NCCL

The communicator is a thin layer over ``torch.distributed``: the GPU evaluator's
arrays are torch tensors already, ``torch.distributed`` puts NCCL (between GPUs) and
gloo (between CPU processes: the tests, CI) behind one API, and ``torchrun`` launches
and rendezvouses the processes. The rank of a process is its device id: a mesh must be
the ranks ``0..size-1`` in order (``check_mesh``), so a mesh *position* (the peer and
root operands) is a rank. Sub-meshes would need process sub-groups, which are not
supported.

Arrays: numpy arrays (the CPU evaluator) go through ``torch.from_numpy`` without a
copy when they are C-contiguous; an output that is a strided view (``hir.slice``,
``hir.permute``) is produced in a contiguous temporary and copied into it. torch
tensors (the GPU evaluator) are used in place when contiguous, likewise. numpy has
no bfloat16 or float8 of its own (``ml_dtypes`` has): ``torch.from_numpy`` cannot take
them, so they cross as a bit view (``fuser.runtime.torch_arrays.numpy_to_torch``:
int16 viewed as torch.bfloat16, uint8 as float8). bfloat16 values move as bfloat16
(NCCL and gloo have it; gloo has no int16); float8 values, which not every backend
has, move as bytes. Sums (``allreduce``, ``reduce_scatter``) of float8 values and of
bfloat16 numpy arrays are computed in float32 and rounded once to the output's type;
a bfloat16 torch tensor is summed in bfloat16, as NCCL does.

GPU streams: every method takes ``stream``, the raw ``CUstream`` handle the work
belongs to (the evaluator's current stream; None: torch's current stream). The
collective is issued inside ``torch.cuda.stream(ExternalStream(stream))`` so that NCCL
waits for the work queued on that stream before it, and ``Work.wait()`` then makes the
stream wait for the collective: the host never blocks on the GPU. With gloo (CPU
tensors) every method returns when the transfer is done.

Point-to-point transfers are posted together by ``exchange`` (``batch_isend_irecv``:
one NCCL group), so a ring where every process sends and then receives cannot
deadlock; ``send`` and ``recv`` are exchanges of one transfer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from fuser.ir.dialects.sharding import DeviceMeshAttr
from fuser.runtime import gpu_arrays as ga
from fuser.runtime.torch_arrays import numpy_to_torch, torch_to_numpy

__all__ = ["Array", "Communicator"]

Array = np.ndarray | torch.Tensor
"""A buffer of an evaluator: a numpy array (CPU) or a torch tensor (GPU, or CPU)."""

_FP8 = frozenset({torch.float8_e4m3fn, torch.float8_e5m2})
_RAW: dict[torch.dtype, torch.dtype] = {
    torch.float8_e4m3fn: torch.uint8,
    torch.float8_e5m2: torch.uint8,
}
"""Element types that move as bytes (gloo has no int16: bfloat16 moves as itself)."""

_NOT_INITIALIZED = (
    "torch.distributed is not initialized: call torch.distributed.init_process_group "
    "(or Communicator.init_from_env) first, or launch the program with torchrun"
)


def _torch_dtype(dt: np.dtype) -> torch.dtype:
    """The torch element type of numpy's ``dt`` (bfloat16 and float8 included)."""
    return numpy_to_torch(np.empty(0, dtype=dt)).dtype


def _compute_dtype(dtype: torch.dtype, summed: bool, from_numpy: bool) -> torch.dtype:
    """The element type a collective works in: bytes for moved float8 values; float32
    for summed float8 values and summed bfloat16 numpy arrays; else ``dtype``."""
    if not summed:
        return _RAW.get(dtype, dtype)
    if dtype in _FP8 or (from_numpy and dtype == torch.bfloat16):
        return torch.float32
    return dtype


def _convert(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``t`` in ``dtype``: a bit view for moved bytes, else a conversion."""
    if t.dtype == dtype:
        return t
    if _RAW.get(t.dtype) == dtype:
        return t.view(dtype)
    return t.to(dtype)


def _as_numpy(t: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    """The values of the CPU tensor ``t`` (in a compute type of ``dtype``) as a numpy
    array of ``dtype``: the bits of moved bytes, else converted."""
    if _RAW.get(_torch_dtype(dtype)) == t.dtype:
        return t.numpy().view(dtype)
    return torch_to_numpy(t).astype(dtype, copy=False)


def _source(x: Array, summed: bool) -> torch.Tensor:
    """A contiguous tensor of ``x``'s values in the compute type; it may share ``x``'s
    memory, so it is only read."""
    if isinstance(x, np.ndarray):
        t = numpy_to_torch(np.ascontiguousarray(x))
        return _convert(t, _compute_dtype(t.dtype, summed, from_numpy=True))
    return _convert(x.contiguous(), _compute_dtype(x.dtype, summed, from_numpy=False))


def _target(x: Array, summed: bool) -> tuple[torch.Tensor, Callable[[], None]]:
    """A contiguous tensor of ``x``'s shape in the compute type for a collective to
    write, and the function that copies it into ``x`` (nothing when it is ``x``'s own
    memory)."""
    if isinstance(x, np.ndarray):
        if not x.flags.writeable:
            raise ValueError("the output is a read-only numpy array")
        dtype = _torch_dtype(x.dtype)
        want = _compute_dtype(dtype, summed, from_numpy=True)
        if x.flags.c_contiguous and (want == dtype or _RAW.get(dtype) == want):
            return _convert(numpy_to_torch(x), want), lambda: None
        tmp = torch.empty(x.shape, dtype=want)

        def store_numpy() -> None:
            np.copyto(x, _as_numpy(tmp, x.dtype))

        return tmp, store_numpy
    want = _compute_dtype(x.dtype, summed, from_numpy=False)
    if x.is_contiguous() and (want == x.dtype or _RAW.get(x.dtype) == want):
        return _convert(x, want), lambda: None
    tmp = torch.empty(tuple(x.shape), dtype=want, device=x.device)

    def store_torch() -> None:
        if _RAW.get(x.dtype) == want:
            x.view(want).copy_(tmp)
        else:
            x.copy_(tmp)

    return tmp, store_torch


def _split_view(x: Array, axis: int, parts: int) -> Array:
    """``x`` with ``axis`` split into ``(parts, n)`` and the ``parts`` axis moved first:
    a view in which ``[p]`` is part ``p`` along ``axis``."""
    shape = list(x.shape)
    new = shape[:axis] + [parts, shape[axis] // parts] + shape[axis + 1 :]
    if isinstance(x, np.ndarray):
        return np.moveaxis(np.reshape(x, new, copy=False), axis, 0)  # splitting: a view
    return x.unflatten(axis, (parts, shape[axis] // parts)).movedim(axis, 0)


def _store_parts(out: Array, stacked: torch.Tensor, axis: int) -> None:
    """Writes ``stacked`` (``[parts, *part]``, contiguous) into ``out``: part ``p`` goes
    to part ``p`` of ``out`` along ``axis``."""
    parts = stacked.shape[0]
    view = _split_view(out, axis, parts)
    if isinstance(out, np.ndarray):
        assert isinstance(view, np.ndarray)
        np.copyto(view, _as_numpy(stacked, out.dtype))
        return
    assert isinstance(view, torch.Tensor)
    if _RAW.get(out.dtype) == stacked.dtype:
        view = view.view(stacked.dtype)
    view.copy_(stacked)


def _device_of(x: Array) -> torch.device:
    return torch.device("cpu") if isinstance(x, np.ndarray) else x.device


def _shape(x: Array) -> list[int]:
    return list(x.shape)


def _dtype_name(x: Array) -> str:
    return str(x.dtype).removeprefix("torch.")


class Communicator:
    """The processes of a ``torch.distributed`` group (the default group unless
    ``group`` is given), seen from this process; see the module docstring."""

    def __init__(self, group: dist.ProcessGroup | None = None) -> None:
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError(_NOT_INITIALIZED)
        self._group = group
        self._rank = dist.get_rank(group)
        self._size = dist.get_world_size(group)
        self._backend = str(dist.get_backend(group))

    @classmethod
    def init_from_env(cls, backend: str | None = None) -> Communicator:
        """The communicator of the default group, which is first initialized from
        torchrun's environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
        ``MASTER_PORT``) unless it already is. ``backend``: ``"nccl"`` when CUDA is
        available, else ``"gloo"``; with NCCL the process takes GPU ``LOCAL_RANK``."""
        if not dist.is_initialized():
            missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
                       if v not in os.environ]
            if missing:
                raise RuntimeError(
                    f"Communicator.init_from_env: {', '.join(missing)} not set; launch the "
                    "program with torchrun, or call torch.distributed.init_process_group"
                )
            if backend is None:
                backend = "nccl" if torch.cuda.is_available() else "gloo"
            if backend == "nccl" and "LOCAL_RANK" in os.environ:
                torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            dist.init_process_group(backend=backend)
        return cls()

    def __repr__(self) -> str:
        return f"Communicator(rank={self._rank}, size={self._size}, backend={self._backend!r})"

    # ---- the group ----------------------------------------------------------------
    @property
    def rank(self) -> int:
        """This process's rank in the group: its device id."""
        return self._rank

    @property
    def size(self) -> int:
        """The number of processes in the group."""
        return self._size

    @property
    def backend(self) -> str:
        """``"nccl"``, ``"gloo"``, ..."""
        return self._backend

    def check_mesh(self, mesh: DeviceMeshAttr, what: str) -> None:
        """``ValueError`` starting with ``what`` unless ``mesh`` is the ranks
        ``0..size-1`` in order."""
        devices = mesh.devices
        world = "world" if self._group is None else "group"
        need = max(devices) + 1
        if need > self._size:
            raise ValueError(
                f"{what}: mesh {devices} needs {need} processes; the {world} has {self._size}"
            )
        if devices != list(range(self._size)):
            raise ValueError(
                f"{what}: mesh {devices} is not the ranks 0..{self._size - 1} of the {world} "
                "in order; sub-meshes and reordered meshes (process sub-groups) are not "
                "supported"
            )

    def position(self, mesh: DeviceMeshAttr) -> int:
        """This process's position in ``mesh``."""
        p = mesh.position(self._rank)
        if p is None:
            raise ValueError(f"rank {self._rank} is not a device of mesh {mesh.devices}")
        return p

    def _peer(self, position: int, what: str) -> int:
        """The global rank of mesh position ``position`` (ranks are positions)."""
        if not 0 <= position < self._size:
            raise ValueError(f"{what} {position} is not a rank of 0..{self._size - 1}")
        return position if self._group is None else dist.get_global_rank(self._group, position)

    # ---- running on a stream ------------------------------------------------------
    @staticmethod
    def _on_stream(stream: int | None, device: torch.device) -> AbstractContextManager[Any]:
        """Where the work of one method is queued: on ``stream`` for CUDA tensors."""
        if stream is None or device.type != "cuda":
            return nullcontext()
        index = device.index if device.index is not None else torch.cuda.current_device()
        return ga.on_torch_stream(stream, index)

    @staticmethod
    def _finish(work: Any) -> None:
        """Waits for ``work``: the current CUDA stream waits (NCCL), or the host (gloo)."""
        if work is not None:
            work.wait()

    @staticmethod
    def _check_pair(inp: Array, out: Array, shape: list[int], what: str) -> None:
        if _dtype_name(inp) != _dtype_name(out):
            raise ValueError(
                f"the input ({_dtype_name(inp)}) and the output ({_dtype_name(out)}) differ in "
                "element type"
            )
        if _shape(out) != shape:
            raise ValueError(f"the output has shape {_shape(out)}; {what} needs {shape}")

    def _check_axis(self, x: Array, axis: int, role: str) -> None:
        if not 0 <= axis < len(x.shape):
            raise ValueError(f"axis {axis} is out of range for the {role} of shape {_shape(x)}")

    # ---- collectives --------------------------------------------------------------
    def allgather(self, inp: Array, out: Array, axis: int, stream: int | None = None) -> None:
        """``out`` = the concatenation along ``axis`` of every process's ``inp``, in rank
        order."""
        self._check_axis(inp, axis, "input")
        shape = _shape(inp)
        shape[axis] *= self._size
        what = f"the input {_shape(inp)} with axis {axis} times {self._size}"
        self._check_pair(inp, out, shape, what)
        with self._on_stream(stream, _device_of(out)):
            src = _source(inp, summed=False)
            if axis == 0:
                dst, store = _target(out, summed=False)
                self._finish(_all_gather(dst.view(-1), src.view(-1), self._group))
                store()
                return
            stacked = torch.empty((self._size, *src.shape), dtype=src.dtype, device=src.device)
            self._finish(_all_gather(stacked.view(-1), src.view(-1), self._group))
            _store_parts(out, stacked, axis)

    def allreduce(self, inp: Array, out: Array, stream: int | None = None) -> None:
        """``out`` = the elementwise sum of every process's ``inp`` (``out`` may be
        ``inp``)."""
        self._check_pair(inp, out, _shape(inp), "the input's shape")
        with self._on_stream(stream, _device_of(out)):
            dst, store = _target(out, summed=True)
            src = _source(inp, summed=True)
            if src.data_ptr() != dst.data_ptr():  # else out is inp
                dst.copy_(src)
            self._finish(dist.all_reduce(dst, group=self._group, async_op=True))
            store()

    def reduce_scatter(self, inp: Array, out: Array, axis: int, stream: int | None = None) -> None:
        """``out`` = part ``rank`` along ``axis`` of the elementwise sum of every
        process's ``inp``."""
        self._check_axis(inp, axis, "input")
        shape = _shape(inp)
        if shape[axis] % self._size:
            raise ValueError(
                f"axis {axis} of the input {shape} does not divide among {self._size} processes"
            )
        shape[axis] //= self._size
        what = f"the input {_shape(inp)} with axis {axis} divided by {self._size}"
        self._check_pair(inp, out, shape, what)
        with self._on_stream(stream, _device_of(out)):
            src = _source(inp, summed=True)
            if axis != 0:  # the parts along axis, one after another
                src = src.unflatten(axis, (self._size, -1)).movedim(axis, 0).contiguous()
            dst, store = _target(out, summed=True)
            if self._backend == "gloo":
                # gloo has no reduce_scatter in every torch version: sum it all (into a
                # copy: the source may be the caller's input) and keep this rank's part
                # (twice the traffic; gloo is for CPU tests)
                total = src.clone()
                self._finish(dist.all_reduce(total, group=self._group, async_op=True))
                dst.copy_(total.view(self._size, -1)[self._rank].view(dst.shape))
            else:
                self._finish(_reduce_scatter(dst.view(-1), src.view(-1), self._group))
            store()

    def broadcast(
        self, inp: Array, out: Array, root_position: int, stream: int | None = None
    ) -> None:
        """``out`` = the ``inp`` of the process at ``root_position`` (which copies its
        own); ``inp`` is only read on the root."""
        root = self._peer(root_position, "root")
        self._check_pair(inp, out, _shape(inp), "the input's shape")
        with self._on_stream(stream, _device_of(out)):
            dst, store = _target(out, summed=False)
            if root_position == self._rank:
                dst.copy_(_source(inp, summed=False))
            self._finish(dist.broadcast(dst, src=root, group=self._group, async_op=True))
            store()

    # ---- point to point -----------------------------------------------------------
    def exchange(
        self,
        sends: Sequence[tuple[Array, int]],
        recvs: Sequence[tuple[Array, int]],
        stream: int | None = None,
    ) -> None:
        """Posts the transfers ``sends`` (``(inp, peer_position)``) and ``recvs`` (``(out,
        peer_position)``) together (one NCCL group) and waits for all of them."""
        arrays = [a for a, _ in (*sends, *recvs)]
        if not arrays:
            return
        for _, p in (*sends, *recvs):
            if p == self._rank:
                raise ValueError(f"peer {p} is this process's own rank")
        devices = {_device_of(a) for a in arrays}
        if len(devices) > 1:
            names = sorted(map(str, devices))
            raise ValueError(f"the transfers' buffers are on several devices: {names}")
        with self._on_stream(stream, devices.pop()):
            ops: list[dist.P2POp] = []
            stores: list[Callable[[], None]] = []
            for inp, p in sends:
                src = _source(inp, summed=False)
                ops.append(dist.P2POp(dist.isend, src, self._peer(p, "peer"), self._group))
            for out, p in recvs:
                dst, store = _target(out, summed=False)
                ops.append(dist.P2POp(dist.irecv, dst, self._peer(p, "peer"), self._group))
                stores.append(store)
            for work in dist.batch_isend_irecv(ops):
                self._finish(work)
            for store in stores:
                store()

    def send(self, inp: Array, peer_position: int, stream: int | None = None) -> None:
        """Sends ``inp`` to the process at ``peer_position`` (which receives it)."""
        self.exchange([(inp, peer_position)], [], stream)

    def recv(self, out: Array, peer_position: int, stream: int | None = None) -> None:
        """Receives into ``out`` what the process at ``peer_position`` sends."""
        self.exchange([], [(out, peer_position)], stream)


def _all_gather(out: torch.Tensor, inp: torch.Tensor, group: dist.ProcessGroup | None) -> Any:
    """``all_gather_single`` (torch >= 2.12), else ``all_gather_into_tensor``."""
    fn = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    return fn(out, inp, group=group, async_op=True)


def _reduce_scatter(out: torch.Tensor, inp: torch.Tensor, group: dist.ProcessGroup | None) -> Any:
    """``reduce_scatter_single`` (torch >= 2.12), else ``reduce_scatter_tensor``."""
    fn = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    return fn(out, inp, op=dist.ReduceOp.SUM, group=group, async_op=True)
