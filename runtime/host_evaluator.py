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
* ``hir.launch`` runs the fusion with ``runtime.reference.run_fusion``; with ``outs``
  its outputs are copied into the ``outs`` buffers, which become the results.
* ``hir.allocate {preallocated}`` returned as result ``k`` is the caller's
  ``preallocated_outputs[k]`` when one is given (written in place, and returned).
* ``hir.deallocate`` drops the value: any later access raises ``HostIrError``.
* streams do nothing on the CPU but are tracked: ``HostEvaluator.stream_log`` lists
  ``(event, stream_id)`` for every stream op and launch, in execution order. The
  user's stream is ``Stream(0)``; ``hir.stream_for_index %i`` is the pool stream
  ``Stream(1 + i % num_streams)``.

Bad inputs raise ``ValueError`` naming the input; run-time errors raise
``HostIrError`` (a ``ValueError``) naming the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from fuser_ir.dialects import fuser as F
from fuser_ir.dialects import hir as H
from fuser_ir.dtypes import DType
from fuser_ir.shapes import DYN, normalize_dim
from runtime.reference import run_fusion

Value = Any  # np.ndarray, int, float, bool or Stream

__all__ = ["HostEvaluator", "HostIrError", "Stream", "run_program"]


class HostIrError(ValueError):
    """A run-time error of a host program; the message names the op."""


@dataclass(frozen=True)
class Stream:
    """A stream handle: ``0`` is the user's stream, ``1..n`` the pool streams."""

    id: int


USER_STREAM = Stream(0)


def _describe(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a value of type {v.type}"


@dataclass
class HostEvaluator:
    """Runs the ``hir.program`` symbols of ``module``; keeps the stream log."""

    module: ModuleOp
    num_streams: int = 4
    stream_log: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.num_streams <= 0:
            raise ValueError(f"num_streams must be positive, got {self.num_streams}")
        self._env: dict[SSAValue, Value] = {}
        self._dropped: dict[SSAValue, Operation] = {}
        self._alias: dict[SSAValue, SSAValue] = {}
        self._prealloc: dict[Operation, np.ndarray] = {}
        self._current = USER_STREAM

    # ---- entry point --------------------------------------------------------------
    def program(self, name: str) -> H.ProgramOp:
        for op in self.module.walk():
            if isinstance(op, H.ProgramOp) and op.sym_name.data == name:
                return op
        raise ValueError(f"no hir.program named @{name} in the module")

    def run(
        self,
        inputs: Sequence[Value],
        name: str = "main",
        preallocated_outputs: Sequence[np.ndarray | None] | None = None,
    ) -> list[Value]:
        program = self.program(name)
        args = self._check_inputs(program, inputs)
        self._env = dict(zip(program.inputs, args, strict=True))
        self._dropped = {}
        self._alias = {
            op.value: op.target for op in program.walk() if isinstance(op, H.AliasOp)
        }
        self._prealloc = self._check_preallocated(program, preallocated_outputs)
        self._current = USER_STREAM
        self._run_block(program.body.block)
        return [self._read(v, program.return_op) for v in program.return_op.values]

    # ---- inputs -------------------------------------------------------------------
    @staticmethod
    def _check_inputs(program: H.ProgramOp, inputs: Sequence[Value]) -> list[Value]:
        where = f"hir.program @{program.sym_name.data}"
        types = program.function_type.inputs.data
        if len(inputs) != len(types):
            raise ValueError(f"{where} takes {len(types)} inputs, got {len(inputs)}")
        out: list[Value] = []
        for i, (v, t, arg) in enumerate(zip(inputs, types, program.inputs, strict=True)):
            what = f"input #{i}" + (f" (%{arg.name_hint})" if arg.name_hint else "")
            if isinstance(t, F.TensorType):
                if not isinstance(v, np.ndarray):
                    raise ValueError(
                        f"{where}: {what} must be a numpy array, got {type(v).__name__}"
                    )
                if v.dtype != t.dtype.to_numpy():
                    raise ValueError(f"{where}: {what} must have dtype {t.dtype}, got {v.dtype}")
                if v.ndim != t.rank:
                    raise ValueError(
                        f"{where}: {what} must have rank {t.rank}, got shape {list(v.shape)}"
                    )
                for a, (e, g) in enumerate(zip(t.get_shape(), v.shape, strict=True)):
                    if e != DYN and e != g:
                        raise ValueError(
                            f"{where}: {what} must have extent {e} on axis {a}, got shape "
                            f"{list(v.shape)}"
                        )
                out.append(v)
                continue
            if isinstance(t, IndexType) or DType.from_xdsl(t).is_integer:
                if isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer):
                    raise ValueError(f"{where}: {what} must be an integer, got {v!r}")
                out.append(int(v))
                continue
            dt = DType.from_xdsl(t)
            if not isinstance(v, int | float | bool | np.generic):
                raise ValueError(f"{where}: {what} must be a {dt} scalar, got {v!r}")
            out.append(bool(v) if dt.is_bool else float(v))
        return out

    @staticmethod
    def _check_preallocated(
        program: H.ProgramOp, buffers: Sequence[np.ndarray | None] | None
    ) -> dict[Operation, np.ndarray]:
        if buffers is None:
            return {}
        where = f"hir.program @{program.sym_name.data}"
        results = program.return_op.values
        if len(buffers) != len(results):
            raise ValueError(
                f"{where} has {len(results)} results, got {len(buffers)} preallocated outputs"
            )
        out: dict[Operation, np.ndarray] = {}
        for k, (buf, v) in enumerate(zip(buffers, results, strict=True)):
            if buf is None:
                continue
            what = f"{where}: preallocated output #{k}"
            alloc = v.owner
            if not isinstance(alloc, H.AllocateOp) or not alloc.is_preallocated:
                raise ValueError(
                    f"{what}: result #{k} is not a hir.allocate marked preallocated"
                )
            t = alloc.result.type
            assert isinstance(t, F.TensorType)
            if not isinstance(buf, np.ndarray) or not buf.flags.writeable:
                raise ValueError(f"{what} must be a writeable numpy array")
            if buf.dtype != t.dtype.to_numpy() or buf.ndim != t.rank:
                raise ValueError(
                    f"{what} must be a rank-{t.rank} {t.dtype} array, got {buf.dtype} of shape "
                    f"{list(buf.shape)}"
                )
            if alloc in out:
                raise ValueError(f"{what}: the buffer of this result is already given")
            out[alloc] = buf
        return out

    # ---- values -------------------------------------------------------------------
    def _resolve(self, v: SSAValue) -> SSAValue:
        while v in self._alias:
            v = self._alias[v]
        return v

    def _read(self, v: SSAValue, user: Operation) -> Value:
        r = self._resolve(v)
        if r in self._dropped:
            raise HostIrError(
                f"{user.name}: {_describe(v)} is read after hir.deallocate dropped it"
            )
        if r not in self._env:
            raise HostIrError(f"{user.name}: {_describe(v)} has no value yet")
        return self._env[r]

    def _write(self, v: SSAValue, value: Value, op: Operation) -> None:
        t = v.type
        if isinstance(t, F.TensorType) and isinstance(value, np.ndarray):
            if value.ndim != t.rank or any(
                e != DYN and e != g for e, g in zip(t.get_shape(), value.shape, strict=True)
            ):
                raise HostIrError(
                    f"{op.name}: produced shape {list(value.shape)} for a result of type {t}"
                )
        r = self._resolve(v)
        if r is v:
            self._env[v] = value
            self._dropped.pop(v, None)
            return
        target = self._read(r, op)
        self._copy_into(target, value, op, f"alias target {_describe(r)}")

    @staticmethod
    def _copy_into(target: np.ndarray, value: Value, op: Operation, what: str) -> None:
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

    def _int(self, v: SSAValue, op: Operation) -> int:
        x = self._read(v, op)
        return int(x)

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
            self._dropped[r] = op
            return
        if isinstance(op, H.AllocateOp) and self._resolve(op.result) is not op.result:
            return  # the aliased buffer is the target's
        if isinstance(op, H.SetCurrentStreamOp):
            self._current = self._read(op.stream, op)
            self.stream_log.append(("set_current_stream", self._current.id))
            return
        if isinstance(op, H.SynchronizeStreamOp):
            s = self._read(op.stream, op)
            self.stream_log.append(("synchronize_stream", s.id))
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

    def _evaluate(self, op: Operation) -> list[Value]:
        if isinstance(op, H.AllocateOp):
            return [self._allocate(op)]
        if isinstance(op, H.LaunchOp):
            return self._launch(op)
        if isinstance(op, H.HostViewOp):
            return [self._view(op)]
        if isinstance(op, H.GetCurrentStreamOp):
            self.stream_log.append(("get_current_stream", self._current.id))
            return [self._current]
        if isinstance(op, H.StreamForIndexOp):
            n = op.get_num_streams() or self.num_streams
            return [Stream(1 + self._int(op.index, op) % n)]
        if isinstance(op, F.SizeOp):
            x = self._read(op.input, op)
            return [int(x.shape[normalize_dim(op.dim.value.data, x.ndim)])]
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if not isinstance(value, IntegerAttr):
                raise HostIrError(f"arith.constant: host constants are integers, got {value}")
            return [int(value.value.data)]
        binary = _ARITH_BINARY.get(op.name)
        if binary is not None:
            a, b = (self._int(v, op) for v in op.operands)
            try:
                return [binary(a, b)]
            except ZeroDivisionError as e:
                raise HostIrError(f"{op.name}: division by zero") from e
        if isinstance(op, arith.IndexCastOp):
            return [self._int(op.input, op)]
        raise HostIrError(f"the host evaluator cannot run {op.name}")

    def _allocate(self, op: H.AllocateOp) -> np.ndarray:
        t = op.result.type
        assert isinstance(t, F.TensorType)
        shape = self._shape(op, t.get_shape(), op.sizes)
        buf = self._prealloc.get(op)
        if buf is not None:
            if list(buf.shape) != shape:
                raise ValueError(
                    f"preallocated output for hir.allocate must have shape {shape}, got "
                    f"{list(buf.shape)}"
                )
            if op.is_zero_init:
                buf[...] = 0
            return buf
        make = np.zeros if op.is_zero_init else np.empty
        return make(shape, dtype=t.dtype.to_numpy())

    def _launch(self, op: H.LaunchOp) -> list[Value]:
        fusion = op.callee_fusion()
        if fusion is None:  # pragma: no cover - the verifier rules this out
            raise HostIrError(f"hir.launch: no fuser.fusion named {op.callee}")
        self.stream_log.append((f"launch @{fusion.sym_name.data}", self._current.id))
        args = [self._read(v, op) for v in op.args]
        try:
            outs = run_fusion(fusion, args)
        except ValueError as e:
            raise HostIrError(f"hir.launch @{fusion.sym_name.data}: {e}") from e
        if not op.outs:
            return outs
        buffers = [self._read(v, op) for v in op.outs]
        for i, (buf, value) in enumerate(zip(buffers, outs, strict=True)):
            self._copy_into(buf, value, op, f"outs #{i}")
        return buffers

    def _view(self, op: H.HostViewOp) -> np.ndarray:
        x = self._read(op.view_input(), op)
        if isinstance(op, H.ReshapeOp):
            shape = self._shape(op, [int(d) for d in op.new_shape.get_values()], op.sizes)
            if int(np.prod(shape)) != x.size:
                raise HostIrError(
                    f"hir.reshape: shape {list(x.shape)} ({x.size} elements) cannot become "
                    f"{shape}"
                )
            try:
                return np.reshape(x, shape, copy=False)
            except ValueError as e:
                raise HostIrError(
                    f"hir.reshape: cannot view shape {list(x.shape)} (strides "
                    f"{list(x.strides)}) as {shape} without a copy"
                ) from e
        if isinstance(op, H.PermuteOp):
            return np.transpose(x, op.get_dims())
        if isinstance(op, H.SqueezeOp):
            dims = op.get_dims()
            bad = [d for d in dims if x.shape[d] != 1]
            if bad:
                raise HostIrError(f"hir.squeeze: axis {bad[0]} has extent {x.shape[bad[0]]}, not 1")
            return np.squeeze(x, axis=tuple(dims))
        if isinstance(op, H.BroadcastOp):
            shape = self._shape(op, [int(d) for d in op.shape.get_values()], op.sizes)
            bdims = [int(d) for d in op.broadcast_dims.get_values()]
            inserted = [1] * len(shape)
            for i, d in enumerate(bdims):
                inserted[d] = x.shape[i]
            try:
                return np.broadcast_to(np.reshape(x, inserted, copy=False), shape)
            except ValueError as e:
                raise HostIrError(
                    f"hir.broadcast: cannot broadcast shape {list(x.shape)} to {shape}"
                ) from e
        if isinstance(op, H.SliceOp):
            idx = tuple(
                slice(a, b, s)
                for a, b, s in zip(
                    op.starts.get_values(), op.ends.get_values(), op.strides.get_values(),
                    strict=True,
                )
            )
            return x[idx]
        assert isinstance(op, H.AliasSelectOp)
        axis = op.get_axis()
        i = self._int(op.index, op)
        if not 0 <= i < x.shape[axis]:
            raise HostIrError(
                f"hir.alias_select: index {i} is out of range for axis {axis} of extent "
                f"{x.shape[axis]}"
            )
        return x[(slice(None),) * axis + (i, Ellipsis)]  # Ellipsis: a 0-d view, not a scalar


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_ARITH_BINARY = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _trunc_div,
    "arith.remsi": lambda a, b: a - b * _trunc_div(a, b),
    "arith.floordivsi": lambda a, b: a // b,
    "arith.maxsi": max,
    "arith.minsi": min,
}


def run_program(
    module: ModuleOp,
    inputs: Sequence[Value],
    name: str = "main",
    preallocated_outputs: Sequence[np.ndarray | None] | None = None,
    *,
    num_streams: int = 4,
) -> list[Value]:
    """Run ``hir.program @name`` of ``module`` on ``inputs``; see the module docstring."""
    return HostEvaluator(module, num_streams).run(inputs, name, preallocated_outputs)
