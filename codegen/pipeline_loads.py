"""Load the next iteration's inputs into registers while this iteration waits.

A persistent kernel's row loop waits for other threads in every iteration (a block
or warp reduction, a barrier): the row's loads go out, the reduction needs all of
them, and only then can the next row's loads start, so each iteration pays the full
memory latency. ``codegen/prefetch_loads.py`` asks the cache for the next row early
(``prefetch.global``), but the data still has to come from L2 when the next
iteration loads it. This transform keeps the next row in registers instead
(software pipelining, nvFuser's circular buffering of a persistent loop's inputs):

``pipeline_loads(func)`` rewrites every ``scf.for`` of ``func`` whose body waits for
other threads (``prefetch_loads.waits_for_other_threads``). Each load that ``NextIteration.candidates``
accepts (a global tensor the kernel only reads, its index and the conditions of the
``scf.if``s around it computable from the induction variable, values defined before
the loop, constants and launch indices) becomes a value the loop carries: the first
iteration's is loaded before the loop, under ``lb < ub`` and the load's own
conditions at ``lb``; at the top of each iteration the next one's is loaded, under
``next < ub`` and the conditions at ``next``, and yielded; the load itself is gone
and its uses read the carried value::

    scf.for %i = %lb to %ub step %s {              %x0 = scf.if (%lb < %ub && %p(%lb)) {
      %p = ... %i ...                                 memref.load %x[%off(%lb)] } else { 0 }
      %v = scf.if %p -> (f32) {                     %r = scf.for %i = ... iter_args(%xc = %x0) {
        %xv = memref.load %x[%off]                    %n = %i + %s
        ...                                           %xn = scf.if (%n < %ub && %p(%n)) {
      }                                                 memref.load %x[%off(%n)] } else { %xc }
      %r = kernel.block_reduce %v ...                 %v = scf.if %p -> (f32) { ... %xc ... }
                                                      %r = kernel.block_reduce %v ...
                                                      scf.yield %xn
                                                    } {kernel.pipelined}

When the load's conditions hold at iteration ``i``, the carried value was loaded at
the same index under the same conditions one iteration earlier (or before the loop),
from memory no thread of the kernel writes: the value the load would have read.
When they do not, the original load is not executed and its value not read; the
carried value is a zero or the previous one. Two loads of one element under the same
conditions share one carried value. Loads of complex numbers are left as they are.

The cost is registers: every pipelined element is live across the whole iteration.
Measured on the H200 (``benchmarks/tune.py --only layernorm_backward``, RESULTS.md,
twentieth session), the heuristic's layer-norm backward kernels went from 110-168
registers to 128-255 with spills and got slower (4096 x 4096 bf16 61.9 -> 86.7 us);
only schedules of one block an SM gained (f32 4096 x 4096, 512 threads a row: 83.8
-> 67.4 us, faster than the heuristic's own 71.2; bf16: 75.1 -> 71.5, slower than its
62.0), where the carried row stands in for a second block's loads; caps of 8 or 40
bytes a thread gained nothing beyond prefetching.
``FUSER_PIPELINE_LOADS=1`` (or ``bytes=N``, a cap) turns it on in the lowering
(``KernelBuilder.finish``);
``fuser-opt -p pipeline-loads`` runs it on kernel IR.
"""

from __future__ import annotations

import os

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    ComplexType,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from fuser.codegen.prefetch_loads import NextIteration, waits_for_other_threads
from fuser.ir.dialects import kernel as k

__all__ = ["PIPELINE_ATTR", "pipeline_setting", "pipeline_loads", "pipeline_loop", "value_bytes", "waits"]

PIPELINE_ATTR = "kernel.pipelined"
"""Marks a loop whose loads this transform has pipelined (not done again)."""


def pipeline_setting() -> tuple[bool, int | None]:
    """Whether the lowering pipelines its waiting loops' loads, and the cap on the
    bytes a thread carries: ``FUSER_PIPELINE_LOADS`` ``1`` (on, no cap) or
    ``bytes=N`` (on, at most ``N`` bytes a loop); unset or ``0``: off (the default)."""
    env = os.environ.get("FUSER_PIPELINE_LOADS", "").strip()
    if env in ("", "0", "off"):
        return False, None
    if env == "1":
        return True, None
    if env.startswith("bytes=") and env[6:].isdigit() and int(env[6:]) > 0:
        return True, int(env[6:])
    raise ValueError(f"FUSER_PIPELINE_LOADS must be 0, 1 or bytes=N (N > 0), got {env!r}")


def pipeline_loads(func: k.FuncOp, max_bytes: int | None = None) -> int:
    """Pipeline the loads of every loop of ``func`` that waits for other threads
    (module docstring); returns how many loads became carried values. ``max_bytes``:
    at most that many bytes a thread carried per loop (its first loads in program
    order that fit; None: all)."""
    written = k.written_tensors(func)
    loops = [op for op in func.walk() if isinstance(op, scf.ForOp) and waits(op)]
    return sum(pipeline_loop(loop, written, max_bytes) for loop in loops)


def waits(loop: scf.ForOp) -> bool:
    """Whether ``loop``'s body waits for other threads and has not been pipelined."""
    return PIPELINE_ATTR not in loop.attributes and waits_for_other_threads(loop)


def pipeline_loop(
    loop: scf.ForOp, written: set[SSAValue], max_bytes: int | None = None, rewriter: PatternRewriter | None = None
) -> int:
    """Pipeline one loop's loads (``written``: the tensors the kernel stores to;
    ``max_bytes`` as in ``pipeline_loads``). The loop is replaced by one carrying the
    loaded values, marked ``kernel.pipelined`` (through ``rewriter`` when given);
    returns how many distinct loads it carries (0: the loop is only marked)."""
    loop.attributes[PIPELINE_ATTR] = UnitAttr()
    return _Pipeline(loop, written).run(max_bytes, rewriter)


def value_bytes(t: Attribute) -> int:
    """The bytes of a scalar or vector value of type ``t`` (a bool is one byte)."""
    if isinstance(t, VectorType):
        return t.get_shape()[0] * value_bytes(t.element_type)
    width = t.width.data if isinstance(t, IntegerType) else t.bitwidth  # type: ignore[attr-defined]
    return max(1, width // 8)


def _zero(t: Attribute, ops: list[Operation]) -> SSAValue:
    """A zero of the scalar or vector type ``t``, its ops appended to ``ops``."""
    elem = t.element_type if isinstance(t, VectorType) else t
    if isinstance(elem, IntegerType):
        c = arith.ConstantOp(IntegerAttr(0, elem))
    else:
        c = arith.ConstantOp(FloatAttr(0.0, elem))  # type: ignore[arg-type]
    ops.append(c)
    if not isinstance(t, VectorType):
        return c.result
    vec = k.FromElementsOp([c.result] * t.get_shape()[0])
    ops.append(vec)
    return vec.result


class _Pipeline(NextIteration):
    """The carried loads of one loop."""

    def run(self, max_bytes: int | None = None, rewriter: PatternRewriter | None = None) -> int:
        loop = self.loop
        jobs: dict[object, tuple[Operation, SSAValue, list[SSAValue]]] = {}
        uses: dict[object, list[Operation]] = {}
        carried_bytes = 0
        for load, _, index, guards in self.candidates():
            t = load.results[0].type
            elem = t.element_type if isinstance(t, VectorType) else t
            if isinstance(elem, ComplexType):
                continue
            key = (load.name, t, self.key(load.operands[0]), self.key(index), tuple(self.key(g) for g in guards))
            if key not in jobs:
                size = value_bytes(t)
                if max_bytes is not None and carried_bytes + size > max_bytes:
                    continue
                carried_bytes += size
                jobs[key] = (load, index, guards)
            uses.setdefault(key, []).append(load)
        if not jobs:
            return 0
        # Before the loop: the first iteration's values, under lb < ub.
        before: list[Operation] = []
        first = self.issue(before, loop.lb, jobs, None)
        # At the top of the body: the next iteration's, under next < ub; otherwise
        # the carried value again.
        body = self.body
        carried = [body.insert_arg(v.type, len(body.args)) for v in first]
        for c, (load, _, _) in zip(carried, jobs.values(), strict=True):
            c.name_hint = f"{load.results[0].name_hint or 'ld'}_cur"
        top: list[Operation] = []
        nxt = arith.AddiOp(self.iv, loop.step)
        nxt.result.name_hint = "next"
        top.append(nxt)
        following = self.issue(top, nxt.result, jobs, carried)
        r: PatternRewriter | type[Rewriter] = rewriter if rewriter is not None else Rewriter
        head = body.first_op
        assert head is not None
        r.insert_op(top, InsertPoint.before(head))
        for c, key in zip(carried, jobs, strict=True):
            for load in uses[key]:
                r.replace_op(load, [], [c])
        y = body.last_op
        assert isinstance(y, scf.YieldOp)
        r.replace_op(y, scf.YieldOp(*y.arguments, *following))
        n_old = len(loop.results)
        new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *first], loop.detach_region(loop.body))
        new.attributes.update(loop.attributes)
        for old, res in zip(loop.results, new.results[:n_old], strict=True):
            res.name_hint = old.name_hint
        r.insert_op(before, InsertPoint.before(loop))
        r.replace_op(loop, new, new.results[:n_old])
        return len(jobs)

    def issue(
        self, ops: list[Operation], at: SSAValue, jobs: dict[object, tuple[Operation, SSAValue, list[SSAValue]]],
        otherwise: list[SSAValue] | None,
    ) -> list[SSAValue]:
        """Append to ``ops`` the loads of ``jobs`` at iteration ``at`` (each under
        ``at < ub`` and its conditions there; else a zero, or ``otherwise``'s value);
        returns the loaded values."""
        more = arith.CmpiOp(at, self.loop.ub, "slt")
        more.result.name_hint = "more"
        ops.append(more)
        scratch = Block()
        copies: dict[object, SSAValue] = {self.iv: at}
        suffix = "next" if otherwise is not None else "first"
        conds: dict[tuple[SSAValue, ...], SSAValue] = {}
        out: list[SSAValue] = []
        for j, (load, index, guards) in enumerate(jobs.values()):
            t = load.results[0].type
            idx = self.copy(index, scratch, copies, suffix)
            gs = tuple(dict.fromkeys(self.copy(g, scratch, copies, suffix) for g in guards))
            if gs not in conds:
                cond = more.result
                for g in gs:
                    a = arith.AndIOp(cond, g)
                    scratch.add_op(a)
                    cond = a.result
                conds[gs] = cond
            cond = conds[gs]
            then_load = load.clone(value_mapper={index: idx}, clone_name_hints=False)
            name = load.results[0].name_hint or "ld"
            then_load.results[0].name_hint = f"{name}_{suffix}"
            alt: list[Operation] = []  # the else-branch's ops: a zero's constants, or none
            other = otherwise[j] if otherwise is not None else _zero(t, alt)
            iff = scf.IfOp(
                cond, [t],
                Region(Block([then_load, scf.YieldOp(then_load.results[0])])),
                Region(Block([*alt, scf.YieldOp(other)])),
            )
            iff.results[0].name_hint = then_load.results[0].name_hint
            scratch.add_op(iff)
            out.append(iff.results[0])
        moved = list(scratch.ops)
        for op in moved:
            op.detach()
        ops.extend(moved)
        return out
