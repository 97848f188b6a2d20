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

A program with anything else (stream loops, host integer arithmetic, size operands,
an in-place write through an alias that is not the launch's own out buffer, a
launch run on the host for zero-size tensors, a view the build cannot prove is a
view) is not replayable: ``Replay.build`` returns None and the program is walked
every time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN
from fuser.runtime import cuda_driver as drv
from fuser.runtime import gpu_arrays as ga
from fuser.runtime.compile_fusion import CompiledSegment, run_compiled
from fuser.runtime.library_ops import LibraryCall
from fuser.runtime.program_walker import HostIrError, stride_order_of

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
    ) -> Replay | None:
        """The replay of ``program`` for inputs at ``input_places`` (None: a scalar),
        with the segments compiled by the first run (``launched``, by fusion name;
        None for one run on the host) and its library calls (``library``: matrix
        products); ``view_hook`` applies a host view op to a metadata-only DeviceArray
        (the evaluator's own view rules). None when the program is not replayable."""
        try:
            return _Builder(program, input_places, launched, view_hook, kind, device, library or {}).build()
        except (_NotReplayable, HostIrError):
            return None

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
            else:  # _FREE
                env[step[1]] = None
        return [env[r] if place is None else _view(env[r], place) for r, place in self.returns]


_LAUNCH, _ALLOCATE, _FREE, _LIBRARY = 0, 1, 2, 3


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
        self.steps: list[list[Any]] = []

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
        return Replay(
            self.num_inputs + len(self.allocations),
            sorted(self.scalars.values()),
            sorted(r for r in used if r < self.num_inputs),
            [tuple(s) for s in self.steps],
            returns,
            self.kind,
            self.device,
            self.num_inputs,
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
            returns[i] = (root, None)  # a later view of this root is a view of this buffer

    def add(self, op: Operation) -> None:
        if isinstance(op, H.AliasOp):
            return
        if isinstance(op, H.HostViewOp) and not isinstance(op, H.AliasSelectOp):
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
        raise _NotReplayable

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
        self.places.setdefault(res, p_out)
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
            self.places.setdefault(r, p)
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


def _zero(buf: Any, ptr: int, stream: int) -> None:
    """Zero ``buf`` on ``stream`` (the caller's current stream: torch's for torch)."""
    if isinstance(buf, ga.DeviceArray):
        if buf.nbytes:
            drv.memset_d8(ptr, 0, buf.nbytes, stream)
        return
    buf.zero_()


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
