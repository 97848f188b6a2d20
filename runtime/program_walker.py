"""The backend-independent part of the ``hir.program`` evaluators.

``HostProgramWalker`` walks a ``hir.program`` (nvFuser's ``HostIrEvaluator`` loop):
it validates the inputs and preallocated outputs, keeps the value environment,
resolves ``hir.alias`` marks, runs ``hir.for`` loops, ``hir.deallocate``,
``arith`` host arithmetic and ``fuser.size``, and dispatches the rest to hooks.
A backend (``fuser.runtime.host_evaluator.HostEvaluator`` on numpy,
``fuser.runtime.gpu_evaluator.GpuEvaluator`` on device memory) supplies only what touches
its arrays and streams::

    class MyEvaluator(HostProgramWalker):
        backend = "my"                      # "the my evaluator cannot run <op>"
        def _check_tensor(self, x, t, what): ...       # an input / preallocated output
        def _check_float_input(self, v, t, what): ...
        def _empty(self, shape, dtype): ...            # hir.allocate
        def _zero(self, buf): ...
        def _copy_into(self, target, value, op, what): ...  # writes through aliases
        def _launch(self, op): ...                     # hir.launch
        def _stream_for_index(self, k): ...            # pool stream k (0-based)
        def _synchronize(self, op, stream): ...        # hir.synchronize_stream
        def _view_reshape(self, op, x, new): ...       # one hook per hir view op
        ...

Communications (``hir.allgather``, ``hir.allreduce``, ``hir.reduce_scatter``,
``hir.shard``, ``hir.broadcast_from``, ``hir.send``, ``hir.recv``: ``H.COMMUNICATIONS``)
go to ``_communicate``, which runs them with ``self.communicator``
(``fuser.runtime.communicator.Communicator``, one process per device of the mesh) on
the current stream (``_communication_stream``; a backend checks its arrays with
``_communication_array``). A program that communicates fails before its first op
when there is no communicator or a mesh is not the communicator's processes. A run of
consecutive ``hir.send``/``hir.recv`` ops of a block is posted as one exchange (one
NCCL group), so a ring that sends and then receives cannot deadlock. ``hir.shard``
moves nothing: the device at mesh position ``p`` copies part ``p`` of its input.

Run-time errors raise ``HostIrError`` (a ``ValueError``) naming the op.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN, normalize_dim

if TYPE_CHECKING:
    from fuser.runtime.communicator import Communicator

__all__ = ["HOST_ARITH", "HostIrError", "HostProgramWalker", "p2p_run"]


def stride_order_of(t: F.TensorType) -> tuple[int, ...] | None:
    """The stride order a buffer of type ``t`` is allocated in; None: row-major."""
    return None if t.has_default_layout else t.get_stride_order()


class HostIrError(ValueError):
    """A run-time error of a host program; the message names the op."""


def describe(v: SSAValue) -> str:
    """``%name`` of ``v``, or its type when it has no name."""
    return f"%{v.name_hint}" if v.name_hint else f"a value of type {v.type}"


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


HOST_ARITH: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _trunc_div,
    "arith.remsi": lambda a, b: a - b * _trunc_div(a, b),
    "arith.floordivsi": lambda a, b: a // b,
    "arith.maxsi": max,
    "arith.minsi": min,
}
"""The host integer ops of a program and what they compute (C's truncating ``divsi``
and ``remsi``); the walkers and the replay's build evaluate them the same way."""


def p2p_run(op: H.SendOp | H.RecvOp) -> list[H.SendOp | H.RecvOp]:
    """``op`` and the ``hir.send``/``hir.recv`` ops right after it in its block: the
    transfers posted together (one NCCL group)."""
    run: list[H.SendOp | H.RecvOp] = [op]
    nxt = op.next_op
    while isinstance(nxt, H.SendOp | H.RecvOp):
        run.append(nxt)
        nxt = nxt.next_op
    return run


class HostProgramWalker(ABC):
    """Runs the ``hir.program`` symbols of ``module``; subclasses supply the arrays and
    streams (see the module docstring)."""

    backend: ClassVar[str]
    """Named in "the <backend> evaluator cannot run <op>"."""
    _integer_types: ClassVar[tuple[type, ...]] = (int,)
    """What an integer input may be (``bool`` never is)."""
    _named_inputs: ClassVar[bool] = False
    """Whether input errors name the program argument (``input #0 (%x)``)."""

    module: ModuleOp
    num_streams: int
    communicator: Communicator | None = None
    """Runs the communication ops; None: a program that communicates is an error."""

    def _init_walker(self) -> None:
        if self.num_streams <= 0:
            raise ValueError(f"num_streams must be positive, got {self.num_streams}")
        self._env: dict[SSAValue, Any] = {}
        self._dropped: set[SSAValue] = set()
        self._alias: dict[SSAValue, SSAValue] = {}
        self._prealloc: dict[Operation, Any] = {}
        self._current: Any = None
        self._posted: set[Operation] = set()

    # ---- entry point --------------------------------------------------------------
    def program(self, name: str) -> H.ProgramOp:
        for op in self.module.walk():
            if isinstance(op, H.ProgramOp) and op.sym_name.data == name:
                return op
        raise ValueError(f"no hir.program named @{name} in the module")

    def run(
        self,
        inputs: Sequence[Any],
        name: str = "main",
        preallocated_outputs: Sequence[Any | None] | None = None,
    ) -> list[Any]:
        program = self.program(name)
        self._prepare(inputs, preallocated_outputs)
        args = self._check_inputs(program, inputs)
        self._check_communications(program)
        self._posted = set()
        self._env = dict(zip(program.inputs, args, strict=True))
        self._dropped = set()
        self._alias = {op.value: op.target for op in program.walk() if isinstance(op, H.AliasOp)}
        self._prealloc = self._check_preallocated(program, preallocated_outputs)
        try:
            self._enter()
            self._run_block(program.body.block)
            return [self._read(v, program.return_op) for v in program.return_op.values]
        finally:
            # A walker outlives its run (a program keeps its evaluator for the next
            # walk): it must not keep the run's inputs, intermediates and outputs alive.
            self._env = {}
            self._prealloc = {}

    def _prepare(
        self, inputs: Sequence[Any], preallocated_outputs: Sequence[Any | None] | None
    ) -> None:
        """Called before the inputs are checked (nothing by default)."""
        return

    @abstractmethod
    def _enter(self) -> None:
        """Called just before the program body runs: sets ``self._current``."""

    # ---- inputs -------------------------------------------------------------------
    @abstractmethod
    def _check_tensor(self, x: Any, t: F.TensorType, what: str) -> Any:
        """``x`` as a tensor of type ``t``; ``ValueError`` starting with ``what`` if not."""

    @abstractmethod
    def _check_float_input(self, v: Any, t: Any, what: str) -> Any:
        """``v`` as a floating-point or boolean scalar of type ``t``."""

    def _check_output_buffer(
        self, buf: Any, alloc: H.AllocateOp, what: str, given: Mapping[Operation, Any]
    ) -> Any:
        """The preallocated buffer ``buf`` of ``alloc`` (``given``: those checked so far)."""
        t = alloc.result.type
        assert isinstance(t, F.TensorType)
        return self._check_tensor(buf, t, what)

    def _check_inputs(self, program: H.ProgramOp, inputs: Sequence[Any]) -> list[Any]:
        where = f"hir.program @{program.sym_name.data}"
        types = program.function_type.inputs.data
        if len(inputs) != len(types):
            raise ValueError(f"{where} takes {len(types)} inputs, got {len(inputs)}")
        out: list[Any] = []
        for i, (v, t, arg) in enumerate(zip(inputs, types, program.inputs, strict=True)):
            what = f"{where}: input #{i}"
            if self._named_inputs and arg.name_hint:
                what += f" (%{arg.name_hint})"
            if isinstance(t, F.TensorType):
                out.append(self._check_tensor(v, t, what))
            elif isinstance(t, IndexType) or DType.from_xdsl(t).is_integer:
                if isinstance(v, bool) or not isinstance(v, self._integer_types):
                    raise ValueError(f"{what} must be an integer, got {v!r}")
                out.append(int(v))
            else:
                out.append(self._check_float_input(v, t, what))
        return out

    def _check_preallocated(
        self, program: H.ProgramOp, buffers: Sequence[Any | None] | None
    ) -> dict[Operation, Any]:
        if buffers is None:
            return {}
        where = f"hir.program @{program.sym_name.data}"
        results = program.return_op.values
        if len(buffers) != len(results):
            raise ValueError(
                f"{where} has {len(results)} results, got {len(buffers)} preallocated outputs"
            )
        out: dict[Operation, Any] = {}
        for k, (buf, v) in enumerate(zip(buffers, results, strict=True)):
            if buf is None:
                continue
            what = f"{where}: preallocated output #{k}"
            alloc = v.owner
            if not isinstance(alloc, H.AllocateOp) or not alloc.is_preallocated:
                raise ValueError(f"{what}: result #{k} is not a hir.allocate marked preallocated")
            out[alloc] = self._check_output_buffer(buf, alloc, what, out)
        return out

    # ---- values -------------------------------------------------------------------
    @abstractmethod
    def _shape_of(self, x: Any) -> tuple[int, ...]:
        """The shape of the array ``x``."""

    def _resolve(self, v: SSAValue) -> SSAValue:
        while v in self._alias:
            v = self._alias[v]
        return v

    def _read(self, v: SSAValue, user: Operation) -> Any:
        r = self._resolve(v)
        if r in self._dropped:
            raise HostIrError(f"{user.name}: {describe(v)} is read after hir.deallocate dropped it")
        if r not in self._env:
            raise HostIrError(f"{user.name}: {describe(v)} has no value yet")
        return self._env[r]

    def _check_result(self, v: SSAValue, value: Any, op: Operation) -> None:
        """Called on every value ``op`` produces for ``v``, before it is written (nothing by default)."""
        return

    def _write(self, v: SSAValue, value: Any, op: Operation) -> None:
        self._check_result(v, value, op)
        r = self._resolve(v)
        if r is v:
            self._env[v] = value
            self._dropped.discard(v)
            return
        self._copy_into(self._read(r, op), value, op, f"alias target {describe(r)}")

    @abstractmethod
    def _copy_into(self, target: Any, value: Any, op: Operation, what: str) -> None:
        """Writes ``value`` into the buffer ``target`` (``what``, for messages)."""

    def _int(self, v: SSAValue, op: Operation) -> int:
        return int(self._read(v, op))

    def _shape(self, op: Operation, static: Sequence[int], sizes: Sequence[SSAValue]) -> list[int]:
        it = iter(self._int(s, op) for s in sizes)
        shape = [next(it) if d == DYN else d for d in static]
        if any(d < 0 for d in shape):
            raise HostIrError(f"{op.name}: negative extent in shape {shape}")
        return shape

    # ---- execution ----------------------------------------------------------------
    def _run_block(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, H.ReturnOp):
                return
            self._run_op(op)

    def _run_op(self, op: Operation) -> None:
        if isinstance(op, H.AliasOp):
            return  # collected before the run
        if isinstance(op, H.ForOp):
            self._run_for(op)
            return
        if isinstance(op, H.DeallocateOp):
            self._read(op.buffer, op)
            r = self._resolve(op.buffer)
            del self._env[r]
            self._dropped.add(r)
            return
        if isinstance(op, H.AllocateOp) and self._resolve(op.result) is not op.result:
            return  # the aliased buffer is the target's
        if isinstance(op, H.SetCurrentStreamOp):
            self._current = self._read(op.stream, op)
            self._log("set_current_stream", self._current)
            return
        if isinstance(op, H.SynchronizeStreamOp):
            self._synchronize(op, self._read(op.stream, op))
            return
        results = self._evaluate(op)
        for r, v in zip(op.results, results, strict=True):
            self._write(r, v, op)

    def _run_for(self, op: H.ForOp) -> None:
        lb, ub, step = (self._int(v, op) for v in (op.lb, op.ub, op.step))
        if step <= 0:
            raise HostIrError(f"hir.for: step {step} must be positive")
        for i in range(lb, ub, step):
            self._env[op.induction_var] = i
            self._run_block(op.body.block)

    def _evaluate(self, op: Operation) -> list[Any]:
        if isinstance(op, H.AllocateOp):
            return [self._allocate(op)]
        if isinstance(op, H.LaunchOp):
            return self._launch(op)
        if isinstance(op, H.CommunicationOp):
            self._communicate(op)
            return []
        if isinstance(op, H.MeshPositionOp):
            return [self._call(op, self._require_communicator(op).position, op.mesh)]
        if isinstance(op, H.HostViewOp):
            return [self._view(op)]
        if isinstance(op, H.GetCurrentStreamOp):
            self._log("get_current_stream", self._current)
            return [self._current]
        if isinstance(op, H.StreamForIndexOp):
            n = op.get_num_streams() or self.num_streams
            return [self._stream_for_index(self._int(op.index, op) % n)]
        if isinstance(op, F.SizeOp):
            shape = self._shape_of(self._read(op.input, op))
            return [int(shape[normalize_dim(op.dim.value.data, len(shape))])]
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if not isinstance(value, IntegerAttr):
                raise HostIrError(f"arith.constant: host constants are integers, got {value}")
            return [int(value.value.data)]
        binary = HOST_ARITH.get(op.name)
        if binary is not None:
            a, b = (self._int(v, op) for v in op.operands)
            try:
                return [binary(a, b)]
            except ZeroDivisionError as e:
                raise HostIrError(f"{op.name}: division by zero") from e
        if isinstance(op, arith.IndexCastOp):
            return [self._int(op.input, op)]
        raise HostIrError(f"the {self.backend} evaluator cannot run {op.name}")

    # ---- streams ------------------------------------------------------------------
    def _log(self, event: str, stream: Any) -> None:
        """Called for every stream op, with the stream it acts on (nothing by default)."""
        return

    @abstractmethod
    def _stream_for_index(self, k: int) -> Any:
        """Pool stream ``k`` (``0 <= k < num_streams``)."""

    @abstractmethod
    def _synchronize(self, op: H.SynchronizeStreamOp, stream: Any) -> None:
        """Makes the current stream wait for ``stream``."""

    # ---- buffers and launches -----------------------------------------------------
    @abstractmethod
    def _empty(self, shape: list[int], dtype: DType) -> Any:
        """A new uninitialized buffer."""

    def _new_buffer(self, shape: list[int], dtype: DType, stride_order: tuple[int, ...] | None) -> Any:
        """A new dense buffer for ``hir.allocate``: row-major, or in ``stride_order``
        (``stride_order_of`` its type)."""
        if stride_order is None:
            return self._empty(shape, dtype)
        return self._empty_in_order(shape, dtype, stride_order)

    def _empty_in_order(self, shape: list[int], dtype: DType, stride_order: tuple[int, ...]) -> Any:
        """A new buffer whose strides follow ``stride_order`` (the ``fuser.tensor``
        layout: ``stride_order[i]`` ranks axis ``i``'s stride); dense by default."""
        return self._empty(shape, dtype)

    @abstractmethod
    def _zero(self, buf: Any) -> None:
        """Fills ``buf`` with zeros (on the current stream)."""

    def _allocate(self, op: H.AllocateOp) -> Any:
        t = op.result.type
        assert isinstance(t, F.TensorType)
        shape = self._shape(op, t.get_shape(), op.sizes)
        buf = self._prealloc.get(op)
        if buf is None:
            buf = self._new_buffer(shape, t.dtype, stride_order_of(t))
        elif list(self._shape_of(buf)) != shape:
            raise ValueError(
                f"preallocated output for hir.allocate must have shape {shape}, got "
                f"{list(self._shape_of(buf))}"
            )
        if op.is_zero_init:
            self._zero(buf)
        return buf

    @staticmethod
    def _callee(op: H.LaunchOp) -> F.FusionOp:
        fusion = op.callee_fusion()
        if fusion is None:  # pragma: no cover - the verifier rules this out
            raise HostIrError(f"hir.launch: no fuser.fusion named {op.callee}")
        return fusion

    @abstractmethod
    def _launch(self, op: H.LaunchOp) -> list[Any]:
        """Runs the fusion of ``op``; returns its results."""

    # ---- communications -----------------------------------------------------------
    def _require_communicator(self, op: H.CommunicationOp | H.MeshPositionOp) -> Communicator:
        if self.communicator is None:
            raise HostIrError(
                f"{op.name}: this program communicates between devices; run it with a "
                "communicator (fuser.runtime.communicator.Communicator, under "
                "torch.distributed)"
            )
        return self.communicator

    def _check_communications(self, program: H.ProgramOp) -> None:
        """Before the program runs: a communicator whose processes are every mesh."""
        for op in program.walk():
            if isinstance(op, H.CommunicationOp | H.MeshPositionOp):
                comm = self._require_communicator(op)
                try:
                    comm.check_mesh(op.mesh, op.name)
                except ValueError as e:
                    raise HostIrError(str(e)) from e

    def _communication_array(self, x: Any, op: H.CommunicationOp, what: str) -> Any:
        """``x``, the ``what`` buffer of ``op``, as the communicator takes it; a
        ``HostIrError`` when it cannot (nothing to check by default)."""
        return x

    def _communication_stream(self) -> int | None:
        """The raw stream handle communications are ordered with (None: no streams)."""
        return None

    def _position(self, op: H.CommunicationOp, v: SSAValue, what: str) -> int:
        p = self._int(v, op)
        if not 0 <= p < op.mesh.size:
            raise HostIrError(
                f"{op.name}: {what} {p} is not a position of mesh {op.mesh.devices} "
                f"(0..{op.mesh.size - 1})"
            )
        return p

    def _communicate(self, op: H.CommunicationOp) -> None:
        """Runs the communication ``op`` with ``self.communicator``."""
        if op in self._posted:  # posted with the hir.send/hir.recv before it
            self._posted.discard(op)
            return
        comm = self._require_communicator(op)
        stream = self._communication_stream()
        if isinstance(op, H.SendOp | H.RecvOp):
            run = p2p_run(op)
            sends: list[tuple[Any, int]] = []
            recvs: list[tuple[Any, int]] = []
            for o in run:
                self._log(o.name.removeprefix("hir."), self._current)
                peer = self._position(o, o.peer, "peer")
                if peer == self._call(o, comm.position, o.mesh):
                    raise HostIrError(f"{o.name}: peer {peer} is this device's own position")
                if isinstance(o, H.SendOp):
                    buf = self._communication_array(self._read(o.input, o), o, "input")
                    sends.append((buf, peer))
                else:
                    buf = self._communication_array(self._read(o.output, o), o, "output")
                    recvs.append((buf, peer))
            self._posted.update(run[1:])
            names = "/".join(dict.fromkeys(o.name for o in run))  # hir.send/hir.recv
            self._call(names, comm.exchange, sends, recvs, stream)
            return
        self._log(op.name.removeprefix("hir."), self._current)
        assert isinstance(
            op, H.AllgatherOp | H.AllreduceOp | H.ReduceScatterOp | H.ShardOp | H.BroadcastFromOp
        )
        inp = self._communication_array(self._read(op.input, op), op, "input")
        out = self._communication_array(self._read(op.output, op), op, "output")
        if isinstance(op, H.ShardOp):
            self._shard(op, inp, out, self._call(op, comm.position, op.mesh))
        elif isinstance(op, H.AllgatherOp):
            self._call(op, comm.allgather, inp, out, op.axis.value.data, stream)
        elif isinstance(op, H.AllreduceOp):
            self._call(op, comm.allreduce, inp, out, stream)
        elif isinstance(op, H.ReduceScatterOp):
            self._call(op, comm.reduce_scatter, inp, out, op.axis.value.data, stream)
        elif isinstance(op, H.BroadcastFromOp):
            root = self._position(op, op.root, "root")
            self._call(op, comm.broadcast, inp, out, root, stream)
        else:
            raise AssertionError(op.name)  # the assert above lists every other op

    @staticmethod
    def _call(op: Operation | str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``; its ``ValueError`` or ``RuntimeError`` (torch.distributed's)
        becomes a ``HostIrError`` naming ``op``."""
        try:
            return fn(*args)
        except (ValueError, RuntimeError) as e:
            if isinstance(e, HostIrError):
                raise
            name = op if isinstance(op, str) else op.name
            raise HostIrError(f"{name}: {e}") from e

    def _shard(self, op: H.ShardOp, inp: Any, out: Any, position: int) -> None:
        """``hir.shard``: copies part ``position`` (along the op's axis) of ``inp``."""
        shape = list(self._shape_of(inp))
        axis, d = op.axis.value.data, op.mesh.size
        if shape[axis] % d:
            raise HostIrError(
                f"hir.shard: axis {axis} of the input {shape} does not divide among the {d} "
                "devices of the mesh"
            )
        n = shape[axis] // d
        starts, ends = [0] * len(shape), list(shape)
        starts[axis], ends[axis] = position * n, (position + 1) * n
        part = self._view_slice(inp, starts, ends, [1] * len(shape))
        self._copy_into(out, part, op, "the output")

    # ---- views --------------------------------------------------------------------
    def _view(self, op: H.HostViewOp) -> Any:
        x = self._read(op.view_input(), op)
        hook, args = self._view_call(op, list(self._shape_of(x)))
        return hook(x, *args)

    def _view_call(self, op: H.HostViewOp, shape: list[int]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        """The hook that computes ``op``'s view of an input of ``shape`` and the
        arguments after the input (size operands read from the environment)."""
        if isinstance(op, H.ReshapeOp):
            return self._view_reshape, (self._shape(op, [int(d) for d in op.new_shape.get_values()], op.sizes),)
        if isinstance(op, H.PermuteOp):
            return self._view_permute, (op.get_dims(),)
        if isinstance(op, H.SqueezeOp):
            dims = op.get_dims()
            bad = [d for d in dims if shape[d] != 1]
            if bad:
                raise HostIrError(f"hir.squeeze: axis {bad[0]} has extent {shape[bad[0]]}, not 1")
            return self._view_squeeze, (dims,)
        if isinstance(op, H.BroadcastOp):
            out_shape = self._shape(op, [int(d) for d in op.shape.get_values()], op.sizes)
            return self._view_broadcast, (out_shape, [int(d) for d in op.broadcast_dims.get_values()])
        if isinstance(op, H.SliceOp):
            starts = [int(v) for v in op.starts.get_values()]
            ends = [int(v) for v in op.ends.get_values()]
            steps = [int(v) for v in op.strides.get_values()]
            return self._view_slice, (starts, ends, steps)
        assert isinstance(op, H.AliasSelectOp)
        axis = op.get_axis()
        i = self._int(op.index, op)
        if not 0 <= i < shape[axis]:
            raise HostIrError(
                f"hir.alias_select: index {i} is out of range for axis {axis} of extent "
                f"{shape[axis]}"
            )
        return self._view_select, (axis, i)

    @abstractmethod
    def _view_reshape(self, x: Any, new: list[int]) -> Any:
        """``x`` viewed with shape ``new`` (same element count checked by the hook)."""

    @abstractmethod
    def _view_permute(self, x: Any, dims: Sequence[int]) -> Any: ...

    @abstractmethod
    def _view_squeeze(self, x: Any, dims: Sequence[int]) -> Any:
        """``x`` without the axes ``dims`` (of extent 1)."""

    @abstractmethod
    def _view_broadcast(self, x: Any, shape: list[int], bdims: list[int]) -> Any:
        """``x`` broadcast to ``shape``; axis ``i`` of ``x`` is axis ``bdims[i]``."""

    @abstractmethod
    def _view_slice(
        self, x: Any, starts: list[int], ends: list[int], steps: list[int]
    ) -> Any: ...

    @abstractmethod
    def _view_select(self, x: Any, axis: int, i: int) -> Any:
        """``x[..., i, ...]`` on ``axis`` (``i`` in range), as a view."""
