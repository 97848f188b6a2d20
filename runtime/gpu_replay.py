"""The replay of a straight-line ``hir.program`` on the GPU: the cache-hit path of
``fd.execute``.

After the first run of a ``GpuProgram`` (which walks the program with the GPU
evaluator and compiles every launch), everything but the pointers is known: the
input signature fixes every shape and stride. ``Replay`` turns a program made only
of host views, ``hir.allocate`` of static shapes, ``hir.launch ... outs(...)``,
``hir.alias``, ``hir.deallocate`` and ``hir.return`` (what ``segment`` emits without
stream loops) into a few flat lists, so a call does only what must happen per call:

* every tensor value is a **place**: a window (element offset, shape, strides) of
  a *root*, which is a program input or an ``hir.allocate``. Host views are
  composed at build time into their place, so a view feeding a launch costs one
  addition (the root's pointer plus a byte offset), not a view object per call;
* an output that is a view of an allocation that it covers exactly (a reshape or a
  permute of a kernel's result) is allocated directly in its returned shape and
  strides: one allocation, no view, the kernel writes into it;
* any other returned view is one ``as_strided`` of its root.

For example (``transpose_bookend_views``: the bookend views moved to the host)::

    hir.program @main(%0: !fuser.tensor<768x128x64xf32>) -> !fuser.tensor<8192x768xf32> {
      %1 = hir.reshape %0 [64, 12, 128, 64] : ...
      %2 = hir.permute %1 [0, 2, 1, 3] : ...
      %3 = hir.allocate : !fuser.tensor<64x128x12x64xf32>
      %4 = hir.launch @seg0(%2) outs(%3 : ...) : ...
      %5 = hir.reshape %4 [8192, 768] : ...
      hir.return %5 : ...
    }

replays as: allocate an 8192x768 tensor; launch ``seg0`` with the input's pointer
and the new tensor's pointer; return the tensor.

Stream-parallel and multi-device programs replay too (seed 001's stream loops,
issue 17's communications). Everything they compute on the host is fixed by the
signature and the process, so the build evaluates it once:

* **host integers** (``arith`` constants and arithmetic, ``fuser.size`` of a tensor,
  ``hir.mesh_position``: this process's place in the mesh) are folded, and every
  ``hir.for`` (its bounds are such integers) is unrolled into its iterations'
  steps; ``hir.alias_select`` at a folded index is one more place;
* **streams**: ``hir.set_current_stream`` becomes a step switching the stream the
  following steps are queued on (0: the caller's current stream, read per call;
  ``k + 1``: the evaluator's pool stream ``k``), ``hir.synchronize_stream`` a step
  recording one event on the source stream and making the current stream wait for
  it (the events are made once, on the first call, and recorded again every call);
* **communications** (``hir.allgather``, ``hir.send``/``hir.recv`` runs posted as one
  exchange, ...) become one step each, calling the communicator the replay was
  built with on the current stream, with the arrays of their places.

For example, the ring of ``overlap-allgather-matmul{chunks=1}`` on 2 devices,
``hir.for %i = 1 to 2 { set_current_stream (pool %i); synchronize_stream (caller);
send; recv; set_current_stream (caller) }`` followed by the GEMM loops, replays on
rank 0 as: stream 2; wait for stream 0; exchange (send rows 0, receive rows 1);
stream 0; stream 1; wait for stream 0; GEMM of rows 0; stream 0; wait for stream 1;
stream 2; GEMM of rows 1; stream 0; wait for stream 2.

A program with anything else (a host integer from a scalar input, size operands of
views and allocations, an in-place write through an alias that is not the launch's
own out buffer, a launch run on the host for zero-size tensors, a view the build
cannot prove is a view, a communication without a communicator) is not replayable:
``Replay.build`` returns None and the program is walked every time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN
from fuser.runtime import cuda_driver as drv
from fuser.runtime import gpu_arrays as ga
from fuser.runtime.compile_fusion import CompiledSegment, run_compiled
from fuser.runtime.library_ops import LibraryCall
from fuser.runtime.program_walker import HOST_ARITH, HostIrError, p2p_run, stride_order_of

if TYPE_CHECKING:
    from fuser.runtime.gpu_evaluator import GpuEvaluator

__all__ = ["Place", "Replay"]


@dataclass(frozen=True)
class Place:
    """Where a tensor value lives: ``shape``/``strides`` (elements) starting
    ``offset`` elements into root buffer ``root`` (a slot: inputs first, then the
    allocations in program order)."""

    root: int
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def covers(self, root_numel: int) -> bool:
        """Whether this window is exactly the root's dense buffer of ``root_numel``
        elements (no offset, every element once)."""
        if self.offset or math.prod(self.shape) != root_numel:
            return False
        acc = 1
        for e, s in sorted((e, s) for e, s in zip(self.shape, self.strides, strict=True) if e != 1):
            if s != acc:
                return False
            acc *= e
        return True


class _NotReplayable(Exception):
    """The program has an op the replay does not model (module docstring)."""


def _fake(place: Place, dtype: DType) -> ga.DeviceArray:
    """A metadata-only DeviceArray of ``place`` (its ``ptr`` is the byte offset into
    the root; nothing is allocated or read)."""
    return ga.DeviceArray(place.shape, dtype, strides=place.strides, ptr=place.offset * dtype.itemsize)


class Replay:
    """A straight-line program compiled into flat steps (module docstring); call it
    with the flat inputs of the signature it was built for."""

    def __init__(
        self,
        num_roots: int,
        scalar_inputs: list[int],
        pointer_inputs: list[int],
        steps: list[tuple[Any, ...]],
        returns: list[tuple[int, Place | None]],
        kind: str,
        device: int,
        num_inputs: int | None = None,
        pool: Sequence[int] = (),
        num_events: int = 0,
        communicator: Any = None,
        buffers: Mapping[int, tuple[tuple[int, ...], tuple[int, ...], DType]] | None = None,
    ) -> None:
        self.num_roots = num_roots
        self.num_inputs = num_inputs
        """The program's inputs (the first roots); None when not given."""
        self.scalar_inputs = scalar_inputs
        self.pointer_inputs = pointer_inputs
        self.steps = steps
        self.returns = returns
        self.kind = kind
        self.device = device
        self.pool = list(pool)
        """The raw handles of the pool streams the steps use (stream ``k + 1``)."""
        self.num_events = num_events
        self._events: list[drv.Event] = []
        self.communicator = communicator
        """The communicator the communication steps call (None: the program has none)."""
        self.buffers = dict(buffers or {})
        """Per allocated root, the (shape, strides, dtype) its ``_ALLOCATE`` step makes."""

    # ---- building -----------------------------------------------------------------
    @classmethod
    def build(
        cls,
        program: H.ProgramOp,
        input_places: Sequence[Place | None],
        launched: Mapping[str, CompiledSegment | None],
        view_hook: Callable[[H.HostViewOp, ga.DeviceArray], ga.DeviceArray],
        kind: str,
        device: int,
        library: Mapping[str, LibraryCall | None] | None = None,
        *,
        pool: Callable[[int], int] | None = None,
        num_streams: int = 1,
        communicator: Any = None,
    ) -> Replay | None:
        """The replay of ``program`` for inputs at ``input_places`` (None: a scalar),
        with the segments compiled by the first run (``launched``, by fusion name;
        None for one run on the host) and its library calls (``library``: matrix
        products); ``view_hook`` applies a host view op to a metadata-only DeviceArray
        (the evaluator's own view rules). Stream programs need ``pool`` (the raw
        handle of the evaluator's pool stream ``k``) and its ``num_streams``;
        programs that communicate, the ``communicator`` they run with. None when the
        program is not replayable."""
        try:
            return _Builder(
                program, input_places, launched, view_hook, kind, device, library or {}, pool, num_streams,
                communicator,
            ).build()
        except (_NotReplayable, HostIrError):
            return None

    @classmethod
    def after_walk(
        cls,
        evaluator: GpuEvaluator,
        program: H.ProgramOp,
        flat: Sequence[Any],
        launched: Mapping[str, CompiledSegment | None] | None = None,
        library: Mapping[str, LibraryCall | None] | None = None,
    ) -> Replay | None:
        """The replay of ``program`` after ``evaluator`` walked it on ``flat``: its
        view rules, buffer kind, pool streams and communicator (``build``)."""
        places: list[Place | None] = []
        for k, x in enumerate(flat):
            if ga.is_gpu_array(x):
                info = ga.array_info(x)
                places.append(Place(k, 0, tuple(info.shape), tuple(info.strides)))
            else:
                places.append(None)

        def view(op: H.HostViewOp, x: ga.DeviceArray) -> ga.DeviceArray:
            hook, args = evaluator._view_call(op, list(x.shape))  # noqa: SLF001 - the walk's own view rules
            return hook(x, *args)

        kind = "torch" if evaluator._torch else "fuser"  # noqa: SLF001 - the walk's buffer kind: fixed by the signature
        return cls.build(
            program, places, launched or {}, view, kind, evaluator.device, library,
            pool=lambda k: evaluator.pool_stream(k).ptr, num_streams=evaluator.num_streams,
            communicator=evaluator.communicator,
        )

    # ---- running ------------------------------------------------------------------
    def __call__(self, flat: Sequence[Any]) -> list[Any]:
        env: list[Any] = list(flat)
        env.extend([None] * (self.num_roots - len(env)))
        ptrs = [0] * self.num_roots
        for k in self.scalar_inputs:
            x = env[k]
            env[k] = x.item() if hasattr(x, "item") else x
        for k in self.pointer_inputs:
            ptrs[k] = ga.data_ptr(env[k])
        stream = ga.current_stream(self.kind, self.device)
        handles = [stream, *self.pool]
        if len(self._events) < self.num_events:
            self._events = [drv.Event(timing=False, device=self.device) for _ in range(self.num_events)]
        for step in self.steps:
            tag = step[0]
            if tag == _LAUNCH:
                _, seg, args, outs = step
                run_compiled(
                    seg,
                    [ptrs[r] + o if p else env[r] for p, r, o in args],
                    [ptrs[r] + o for r, o in outs],
                    stream,
                )
            elif tag == _ALLOCATE:
                _, r, make, zero = step
                buf = env[r] = make()
                ptrs[r] = ga.data_ptr(buf)
                if zero:
                    _zero(buf, ptrs[r], stream)
            elif tag == _LIBRARY:
                _, call, args, out = step
                call(
                    [env[r] if p is None else _view(env[r], p) for r, p in args],
                    env[out[0]] if out[1] is None else _view(env[out[0]], out[1]),
                    stream,
                )
            elif tag == _FREE:
                env[step[1]] = None
            elif tag == _STREAM:
                stream = handles[step[1]]
            elif tag == _SYNC:
                source = handles[step[1]]
                if source != stream:
                    event = self._events[step[2]]
                    event.record(source)
                    event.wait(stream)
            else:  # _CALL
                try:
                    step[2]([env[r] if p is None else _view(env[r], p) for r, p in step[3]], stream)
                except (ValueError, RuntimeError) as e:
                    raise HostIrError(f"{step[1]}: {e}") from e
        return [env[r] if place is None else _view(env[r], place) for r, place in self.returns]

    # ---- reading it ------------------------------------------------------------------
    def describe(self) -> str:
        """The steps, one line each (``r<k>``: root ``k``, inputs first; a window
        ``r<k>+<offset>:<shape>`` with ``/<strides>`` when they are not row-major;
        streams by index: 0 the caller's, ``k + 1`` pool stream ``k``)."""
        lines = []
        for step in self.steps:
            tag = step[0]
            if tag == _LAUNCH:
                args = ", ".join(f"r{r}+{o}B" if p else f"%{r}" for p, r, o in step[2])
                outs = ", ".join(f"r{r}+{o}B" for r, o in step[3])
                lines.append(f"launch @{step[1].fusion.sym_name.data}({args}) outs({outs})")
            elif tag == _ALLOCATE:
                lines.append(f"allocate r{step[1]}" + (" zeroed" if step[3] else ""))
            elif tag == _FREE:
                lines.append(f"free r{step[1]}")
            elif tag == _LIBRARY:
                call = step[1]
                name = call.fusion.sym_name.data if hasattr(call, "fusion") else call.name
                args = ", ".join(_describe_window(w) for w in step[2])
                lines.append(f"library @{name}({args}) outs({_describe_window(step[3])})")
            elif tag == _STREAM:
                lines.append(f"stream {step[1]}")
            elif tag == _SYNC:
                lines.append(f"wait for stream {step[1]}")
            else:
                args = ", ".join(_describe_window(w) for w in step[3])
                lines.append(f"{step[1]}{step[4]}({args})")
        return "\n".join(lines)


def _describe_window(window: tuple[int, Place | None]) -> str:
    root, place = window
    if place is None:
        return f"r{root}"
    text = f"r{root}+{place.offset}:{'x'.join(map(str, place.shape))}"
    if place.strides != ga.contiguous_strides(place.shape):
        text += "/" + ",".join(map(str, place.strides))
    return text


_LAUNCH, _ALLOCATE, _FREE, _LIBRARY, _STREAM, _SYNC, _CALL = range(7)
"""The step kinds: ``(_LAUNCH, segment, args, outs)``, ``(_ALLOCATE, root, make,
zero)``, ``(_FREE, root)``, ``(_LIBRARY, call, args, out)`` on the current stream;
``(_STREAM, k)`` makes stream ``k`` current; ``(_SYNC, k, event)`` makes the current
stream wait for stream ``k``; ``(_CALL, op name, fn, args, detail)`` runs ``fn(arrays,
stream)`` (a communication) on the arrays of ``args`` (``(root, place or None)``).
``Replay.describe`` prints them."""


class _Builder:
    def __init__(
        self,
        program: H.ProgramOp,
        input_places: Sequence[Place | None],
        launched: Mapping[str, CompiledSegment | None],
        view_hook: Callable[[H.HostViewOp, ga.DeviceArray], ga.DeviceArray],
        kind: str,
        device: int,
        library: Mapping[str, LibraryCall | None],
        pool: Callable[[int], int] | None,
        num_streams: int,
        communicator: Any,
    ) -> None:
        self.program = program
        self.launched = launched
        self.library = library
        self.view_hook = view_hook
        self.kind = kind
        self.device = device
        self.alias = {op.value: op.target for op in program.walk() if isinstance(op, H.AliasOp)}
        self.places: dict[SSAValue, Place] = {}
        self.scalars: dict[SSAValue, int] = {}
        for k, (arg, place) in enumerate(zip(program.inputs, input_places, strict=True)):
            if place is None:
                self.scalars[arg] = k
            else:
                self.places[arg] = place
        self.num_inputs = len(input_places)
        self.allocations: dict[int, tuple[H.AllocateOp, list[int], DType]] = {}
        self.buffers: dict[int, tuple[tuple[int, ...], tuple[int, ...], DType]] = {}
        self.steps: list[list[Any]] = []
        # Stream programs and communications (the module docstring).
        self.pool = pool
        self.num_streams = num_streams
        self.communicator = communicator
        self.ints: dict[SSAValue, int] = {}
        self.streams: dict[SSAValue, int] = {}
        self.current = 0
        self.pool_handles: list[int] = []
        self.num_events = 0
        self.posted: set[Operation] = set()

    def resolve(self, v: SSAValue) -> SSAValue:
        while v in self.alias:
            v = self.alias[v]
        return v

    def place(self, v: SSAValue) -> Place:
        place = self.places.get(self.resolve(v))
        if place is None:
            raise _NotReplayable
        return place

    def build(self) -> Replay:
        ret: Sequence[SSAValue] = ()
        for op in self.program.body.block.ops:
            if isinstance(op, H.ReturnOp):
                ret = op.values
                break
            self.add(op)
        returns: list[tuple[int, Place | None]] = []
        for v in ret:
            if v in self.scalars:
                raise _NotReplayable
            returns.append(self._window(self.place(v)))
        self._allocate_returned_views(returns)
        used = {r for s in self.steps if s[0] == _LAUNCH for r, _ in s[3]}
        used |= {r for s in self.steps if s[0] == _LAUNCH for p, r, _ in s[2] if p}
        communicates = any(s[0] == _CALL for s in self.steps)
        return Replay(
            self.num_inputs + len(self.allocations),
            sorted(self.scalars.values()),
            sorted(r for r in used if r < self.num_inputs),
            [tuple(s) for s in self.steps],
            returns,
            self.kind,
            self.device,
            self.num_inputs,
            self.pool_handles,
            self.num_events,
            self.communicator if communicates else None,
            self.buffers,
        )

    def _is_whole_allocation(self, place: Place) -> bool:
        op, shape, _ = self.allocations[place.root]
        t = op.result.type
        assert isinstance(t, F.TensorType)
        return place == Place(place.root, 0, tuple(shape), _strides(shape, stride_order_of(t)))

    def _allocate_returned_views(self, returns: list[tuple[int, Place | None]]) -> None:
        """An allocation returned only through views, one of which covers it exactly,
        is allocated as that view (module docstring); the others stay views of it."""
        library_roots = {r for s in self.steps if s[0] == _LIBRARY for r, _ in [*s[2], s[3]]}
        library_roots |= {r for s in self.steps if s[0] == _CALL for r, _ in s[3]}
        for i, (root, place) in enumerate(returns):
            if place is None or root < self.num_inputs or root in library_roots:
                continue  # (a library call takes its buffers in their own shapes)
            if any(r == root and p is None for r, p in returns):
                continue
            _, shape, dtype = self.allocations[root]
            if not place.covers(math.prod(shape)):
                continue
            step = next(s for s in self.steps if s[0] == _ALLOCATE and s[1] == root)
            step[2] = _allocator(self.kind, self.device, list(place.shape), dtype, place.strides)
            self.buffers[root] = (place.shape, place.strides, dtype)
            returns[i] = (root, None)  # a later view of this root is a view of this buffer

    def add(self, op: Operation) -> None:
        if isinstance(op, H.AliasOp):
            return
        if self.add_host(op):
            return
        if isinstance(op, H.AliasSelectOp):
            self.add_select(op)
            return
        if isinstance(op, H.HostViewOp):
            src = op.view_input()
            if any(True for _ in getattr(op, "sizes", ())) or not isinstance(src.type, F.TensorType):
                raise _NotReplayable
            place = self.place(src)
            view = self.view_hook(op, _fake(place, src.type.dtype))
            self.places[op.results[0]] = Place(
                place.root, view.ptr // src.type.dtype.itemsize, view.shape, view.strides_elements
            )
            return
        if isinstance(op, H.AllocateOp):
            t = op.result.type
            if op.sizes or not isinstance(t, F.TensorType) or DYN in t.get_shape():
                raise _NotReplayable
            if self.resolve(op.result) is not op.result:
                return  # an aliased allocation is its target's buffer
            root = self.num_inputs + len(self.allocations)
            shape = list(t.get_shape())
            strides = _strides(shape, stride_order_of(t))
            self.allocations[root] = (op, shape, t.dtype)
            self.buffers[root] = (tuple(shape), strides, t.dtype)
            self.places[op.result] = Place(root, 0, tuple(shape), strides)
            self.steps.append(
                [_ALLOCATE, root, _allocator(self.kind, self.device, shape, t.dtype, strides), op.is_zero_init]
            )
            return
        if isinstance(op, H.LaunchOp):
            self.add_launch(op)
            return
        if isinstance(op, H.DeallocateOp):
            r = self.resolve(op.buffer)
            place = self.places.get(r)
            if place is None or place.root < self.num_inputs or r.owner is not self.allocations[place.root][0]:
                raise _NotReplayable
            self.steps.append([_FREE, place.root])
            return
        if isinstance(op, H.CommunicationOp):
            self.add_communication(op)
            return
        raise _NotReplayable

    # ---- host integers, loops and streams: folded at build time -------------------
    def int_of(self, v: SSAValue) -> int:
        value = self.ints.get(v)
        if value is None:
            raise _NotReplayable  # e.g. a scalar input: not fixed by the signature
        return value

    def add_host(self, op: Operation) -> bool:
        """Folds a host integer, unrolls a loop or records a stream op; False for any
        other op."""
        if isinstance(op, arith.ConstantOp):
            if not isinstance(op.value, IntegerAttr):
                raise _NotReplayable
            self.ints[op.result] = int(op.value.value.data)
        elif op.name in HOST_ARITH:
            a, b = (self.int_of(v) for v in op.operands)
            try:
                self.ints[op.results[0]] = HOST_ARITH[op.name](a, b)
            except ZeroDivisionError:
                raise _NotReplayable from None  # the walk reports the division by zero
        elif isinstance(op, arith.IndexCastOp):
            self.ints[op.result] = self.int_of(op.input)
        elif isinstance(op, F.SizeOp):
            shape = self.place(op.input).shape
            d = op.dim.value.data
            self.ints[op.result] = shape[d if d >= 0 else d + len(shape)]
        elif isinstance(op, H.MeshPositionOp):
            if self.communicator is None:
                raise _NotReplayable
            self.ints[op.result] = self.communicator.position(op.mesh)
        elif isinstance(op, H.ForOp):
            lb, ub, step = (self.int_of(v) for v in (op.lb, op.ub, op.step))
            if step <= 0:
                raise _NotReplayable
            for i in range(lb, ub, step):
                self.ints[op.induction_var] = i
                for inner in op.body.block.ops:
                    self.add(inner)
        elif isinstance(op, H.GetCurrentStreamOp):
            self.streams[op.results[0]] = self.current
        elif isinstance(op, H.StreamForIndexOp):
            if self.pool is None:
                raise _NotReplayable
            k = self.int_of(op.index) % (op.get_num_streams() or self.num_streams)
            while len(self.pool_handles) <= k:
                self.pool_handles.append(self.pool(len(self.pool_handles)))
            self.streams[op.results[0]] = k + 1
        elif isinstance(op, H.SetCurrentStreamOp):
            k = self.stream_of(op.stream)
            if k != self.current:
                self.steps.append([_STREAM, k])
                self.current = k
        elif isinstance(op, H.SynchronizeStreamOp):
            k = self.stream_of(op.stream)
            if k != self.current:
                self.steps.append([_SYNC, k, self.num_events])
                self.num_events += 1
        else:
            return False
        return True

    def stream_of(self, v: SSAValue) -> int:
        k = self.streams.get(v)
        if k is None:
            raise _NotReplayable
        return k

    def add_select(self, op: H.AliasSelectOp) -> None:
        """``hir.alias_select`` at a folded index: the place one index along ``axis``."""
        place = self.place(op.view_input())
        axis, i = op.get_axis(), self.int_of(op.index)
        if not 0 <= i < place.shape[axis]:
            raise _NotReplayable  # the walk reports the index out of range
        self.places[op.results[0]] = Place(
            place.root,
            place.offset + i * place.strides[axis],
            place.shape[:axis] + place.shape[axis + 1 :],
            place.strides[:axis] + place.strides[axis + 1 :],
        )

    # ---- communications --------------------------------------------------------------
    def add_communication(self, op: H.CommunicationOp) -> None:
        """One ``_CALL`` step calling the communicator (a ``hir.send``/``hir.recv``
        run: one exchange, as the walk posts it)."""
        if op in self.posted:
            self.posted.discard(op)
            return
        comm = self.communicator
        if comm is None or self.kind != "torch":
            raise _NotReplayable  # the walk reports what is missing
        if isinstance(op, H.SendOp | H.RecvOp):
            run = p2p_run(op)  # posted together, as the walk posts them
            self.posted.update(run[1:])
            sends = [o for o in run if isinstance(o, H.SendOp)]
            recvs = [o for o in run if isinstance(o, H.RecvOp)]
            peers = [self.peer(o) for o in (*sends, *recvs)]
            ns = len(sends)
            args = [self.array(o.input) for o in sends] + [self.array(o.output) for o in recvs]

            def exchange(a: list[Any], stream: int) -> None:
                sent = list(zip(a[:ns], peers[:ns], strict=True))
                comm.exchange(sent, list(zip(a[ns:], peers[ns:], strict=True)), stream)

            names = "/".join(dict.fromkeys(o.name for o in run))
            detail = "".join(f" to {p}" for p in peers[:ns]) + "".join(f" from {p}" for p in peers[ns:])
            self.steps.append([_CALL, names, exchange, args, detail])
            return
        inp, out = self.array(op.input), self.array(op.output)
        fn: Callable[[list[Any], int], None]
        detail = ""
        if isinstance(op, H.AllgatherOp | H.ReduceScatterOp):
            axis = op.axis.value.data
            method = comm.allgather if isinstance(op, H.AllgatherOp) else comm.reduce_scatter
            fn, detail = _collective(method, axis), f" axis {axis}"
        elif isinstance(op, H.AllreduceOp):
            fn = _collective(comm.allreduce)
        elif isinstance(op, H.BroadcastFromOp):
            root = self.int_of(op.root)
            fn, detail = _collective(comm.broadcast, root), f" root {root}"
        else:  # hir.shard: this device's part of the input, copied
            assert isinstance(op, H.ShardOp)
            inp = self._window(self.shard_part(op))
            device = self.device

            def fn(a: list[Any], stream: int | None) -> None:
                _copy(a[1], a[0], stream, device)
        self.steps.append([_CALL, op.name, fn, [inp, out], detail])

    def array(self, v: SSAValue) -> tuple[int, Place | None]:
        if not isinstance(v.type, F.TensorType):
            raise _NotReplayable
        return self._window(self.place(v))

    def peer(self, op: H.SendOp | H.RecvOp) -> int:
        p = self.int_of(op.peer)
        if not 0 <= p < op.mesh.size or p == self.communicator.position(op.mesh):
            raise _NotReplayable  # the walk reports the bad peer
        return p

    def shard_part(self, op: H.ShardOp) -> Place:
        place = self.place(op.input)
        axis, d = op.axis.value.data, op.mesh.size
        if place.shape[axis] % d:
            raise _NotReplayable  # the walk reports it
        n = place.shape[axis] // d
        position = self.communicator.position(op.mesh)
        shape = list(place.shape)
        shape[axis] = n
        return Place(place.root, place.offset + position * n * place.strides[axis], tuple(shape), place.strides)

    def add_library(self, op: H.LaunchOp, call: LibraryCall) -> None:
        """A library call: its operands and its output as (root, view or None for
        the whole root), viewed per call (the call takes arrays, not pointers)."""
        if len(op.outs) != 1:
            raise _NotReplayable
        places = []
        for i in call.operand_inputs:
            a = op.args[i]
            if not isinstance(a.type, F.TensorType):
                raise _NotReplayable
            places.append(self.place(a))
        out, res = op.outs[0], op.res[0]
        p_out = self.place(out)
        if self.resolve(res) is not res and self.place(res) != p_out:
            raise _NotReplayable
        self.places[res] = p_out
        self.steps.append([_LIBRARY, call, [self._window(p) for p in places], self._window(p_out)])

    def _window(self, p: Place) -> tuple[int, Place | None]:
        """``(root, None)`` when ``p`` is its root buffer as the root is (an input or a
        whole allocation), else ``(root, p)``: a view made per call."""
        if p.root < self.num_inputs:
            whole = self.places.get(self.program.inputs[p.root]) == p
        else:
            whole = self._is_whole_allocation(p)
        return (p.root, None if whole else p)

    def add_launch(self, op: H.LaunchOp) -> None:
        call = self.library.get(op.callee.root_reference.data)
        if call is not None:
            self.add_library(op, call)
            return
        seg = self.launched.get(op.callee.root_reference.data)
        if seg is None or not op.outs or any(a >= 0 for a in seg.fusion.output_op.get_alias_inputs()):
            raise _NotReplayable
        args: list[tuple[bool, int, int]] = []
        for a in op.args:
            if isinstance(a.type, F.TensorType):
                p = self.place(a)
                args.append((True, p.root, p.offset * a.type.dtype.itemsize))
            elif a in self.scalars:
                args.append((False, self.scalars[a], 0))
            else:
                raise _NotReplayable
        outs: list[tuple[int, int]] = []
        for o, r in zip(op.outs, op.res, strict=True):
            p = self.place(o)
            if self.resolve(r) is not r and self.place(r) != p:
                raise _NotReplayable  # a write into an alias target that is not this buffer
            self.places[r] = p  # (in an unrolled loop: this iteration's)
            assert isinstance(o.type, F.TensorType)
            outs.append((p.root, p.offset * o.type.dtype.itemsize))
        self.steps.append([_LAUNCH, seg, args, outs])


def _strides(shape: Sequence[int], order: tuple[int, ...] | None) -> tuple[int, ...]:
    if order is None:
        return ga.contiguous_strides(shape)
    from fuser.codegen.lower.common import TensorLayout

    return TensorLayout.with_stride_order(tuple(shape), order).strides


def _allocator(kind: str, device: int, shape: list[int], dtype: DType, strides: tuple[int, ...]) -> Callable[[], Any]:
    """A function making an uninitialised buffer of the program's array kind."""
    if kind == "torch":
        import torch

        dev = torch.device("cuda", device)
        td = ga.torch_dtype(dtype)
        if strides == ga.contiguous_strides(shape):
            return functools.partial(torch.empty, shape, dtype=td, device=dev)
        return functools.partial(torch.empty_strided, shape, strides, dtype=td, device=dev)
    return functools.partial(ga.DeviceArray, shape, dtype, device=device, strides=strides)


def _collective(method: Callable[..., None], *extra: Any) -> Callable[[list[Any], int], None]:
    """A ``_CALL`` function: ``method(input, output, *extra, stream)``."""

    def fn(a: list[Any], stream: int) -> None:
        method(a[0], a[1], *extra, stream)

    return fn


def _zero(buf: Any, ptr: int, stream: int) -> None:
    """Zero ``buf`` on ``stream``."""
    if isinstance(buf, ga.DeviceArray):
        if buf.nbytes:
            drv.memset_d8(ptr, 0, buf.nbytes, stream)
        return
    _on_stream(stream, buf.device.index or 0, buf.zero_)


def _copy(dst: Any, src: Any, stream: int | None, device: int) -> None:
    """``dst`` = ``src`` (arrays of one shape) on ``stream``: torch tensors on the GPU;
    host arrays (``stream`` None: the CPU, where the step functions are tested)."""
    if tuple(dst.shape) != tuple(src.shape):
        raise ValueError(f"cannot write shape {list(src.shape)} into a buffer of shape {list(dst.shape)}")
    if stream is None:
        dst[...] = src
        return
    _on_stream(stream, device, lambda: dst.copy_(src))


def _on_stream(stream: int, device: int, fn: Callable[[], Any]) -> None:
    """``fn()`` with torch's current stream ``stream`` (on ``device``)."""
    with ga.on_torch_stream(stream, device):
        fn()


def _view(root: Any, place: Place) -> Any:
    """The returned view ``place`` of the root buffer ``root`` (one ``as_strided``)."""
    if hasattr(root, "as_strided"):  # torch
        return root.as_strided(place.shape, place.strides, root.storage_offset() + place.offset)
    if not isinstance(root, ga.DeviceArray):  # an input of another kind, wrapped
        info = ga.array_info(root)
        root = ga.DeviceArray(
            info.shape, info.dtype, device=info.device, strides=info.strides, ptr=info.ptr,
            base=info.owner if info.owner is not None else root,
        )
    return root.strided_view(place.shape, place.strides, place.offset)
