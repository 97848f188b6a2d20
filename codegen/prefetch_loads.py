"""Prefetch the next iteration's global loads of a loop that waits for other threads.

A persistent kernel loops over its rows, and each iteration waits: the row's loads go
out, then a reduction across threads (a warp or block reduction, a barrier) needs
every one of them, so a block has one iteration's loads in flight at a time and,
while it reduces and stores, only the multiprocessor's other blocks keep the memory
busy. The layer-norm backward over 4096 x 4096 bf16 runs at 0.49 of a copy, and no
other split of threads, rows and blocks did better (``benchmarks/RESULTS.md``, eighth
session): this transform tests whether that wait is the cause.

``prefetch_next_iteration(func, level)`` issues, at the top of each iteration of every
``scf.for`` whose body waits for other threads (``kernel.block_reduce``,
``kernel.warp_reduce``, ``kernel.cluster_reduce``, ``kernel.shuffle``,
``kernel.barrier``), a ``kernel.prefetch`` of each element the *next* iteration loads
from a global tensor the kernel only reads, so that the memory fetches the next row
while this one is reduced. The prefetch costs no register and never waits; the load
it serves is unchanged. A load qualifies when its index and the conditions of the
``scf.if``s around it (its then-regions) are computed from values defined before the
loop, the induction variable, constants and launch indices by side-effect-free
integer ``arith``, and depend on the induction variable (a loop-invariant load stays
in the cache by itself). Those computations are copied with
the induction variable advanced by one step, under ``next < ub``::

    scf.for %i = %lb to %ub step %s {          scf.for %i = %lb to %ub step %s {
                                               // {kernel.prefetch = "L2"} on the loop
                                                 %n = arith.addi %i, %s
                                                 %more = arith.cmpi slt, %n, %ub
                                                 scf.if %more {
                                                   %row2 = arith.addi %base, %n
                                                   %p2 = arith.cmpi slt, %row2, %rows
                                                   scf.if %p2 {
                                                     %off2 = arith.muli %row2, %cols
                                                     kernel.prefetch %x[%off2] {level = "L2"}
                                                   }
                                                 }
      %row = arith.addi %base, %i                %row = arith.addi %base, %i
      %p = arith.cmpi slt, %row, %rows           %p = arith.cmpi slt, %row, %rows
      %v = scf.if %p -> (f32) {                  %v = scf.if %p -> (f32) { ... }
        %off = arith.muli %row, %cols            ...
        %v = memref.load %x[%off]
        ...
      %r = kernel.block_reduce %v ...            %r = kernel.block_reduce %v ...

Every prefetched address is one the next iteration loads under the same conditions,
so it lies inside the tensor (the kernel interpreter checks each one).

**Where the schedule asks for it.** On the H100 (``benchmarks/tune.py --only
layernorm_backward --variants prefetch``, RESULTS.md, eleventh session) prefetching
every waiting loop's loads made no layer-norm backward faster: 4096 x 4096 bf16 83.2
us with them against 83.9 without, f32 16384 x 1024 93.5 against 84.6, 4096 x 4096
f32 102.2 against 91.8 (L1 the same as L2). On the H200 (twenty-third session) the
bf16 layer-norm backwards gained (4096 x 4096 60.4 -> 55.0 us) and the f32 ones lost
4-7% (twentieth session), as before. So a schedule names the inputs whose loads are
prefetched (``iterdomain.loop {prefetch = "L2"}``: the inner-outer persistent kind's
16-bit inputs, ``schedulers/inner_outer_persistent.py``), and
``KernelBuilder.finish`` prefetches those (``prefetch_kernel``). ``FUSER_PREFETCH``
overrides the schedule: ``0`` no prefetch, ``L2`` or ``L1`` every waiting loop's
read-only loads. ``fuser-opt -p prefetch-loads`` runs the transform on kernel IR for
experiments.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from xdsl.dialects import arith, scf, vector
from xdsl.dialects import memref as memrefd
from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from fuser.ir.dialects import kernel as k

__all__ = [
    "OFF", "PREFETCH_ATTR", "NextIteration", "prefetch_kernel", "prefetch_loop", "prefetch_next_iteration",
    "prefetch_setting", "waits",
    "waits_for_other_threads",
]

_PURE = (*k.INDEX_ARITH_OPS, *k.LAUNCH_INDEX_OPS)
"""Ops an address or a guard may be computed with: integer math and launch indices
(a division only by a non-zero constant: the copy runs before the guards that the
original may sit under)."""
WAITS = (k.BlockReduceOp, k.BarrierOp, k.ClusterReduceOp, k.WarpReduceOp, k.ShuffleOp)
"""Ops that wait for other threads' values: a loop with one cannot run ahead of its
slowest load."""
DEFAULT_LEVEL = "L2"
PREFETCH_ATTR = "kernel.prefetch"
"""Marks a loop whose next iteration's loads are prefetched (its value: the level)."""


OFF = "off"
"""``prefetch_setting()`` for ``FUSER_PREFETCH=0``: no prefetch at all, not even the schedule's."""


def prefetch_setting() -> str | None:
    """``FUSER_PREFETCH``: None when unset or empty (the schedule decides: the inputs
    an ``iterdomain.loop {prefetch}`` names are prefetched, nothing else), ``"off"``
    for ``0``, ``off`` or ``none`` (no prefetch at all, not even the schedule's), or
    ``L1``/``L2``: every waiting loop prefetches all its read-only loads to that level
    (the experiment of the module docstring); ``ValueError`` naming the variable for
    anything else."""
    env = os.environ.get("FUSER_PREFETCH", "").strip()
    if env == "":
        return None
    if env in ("0", "off", "none"):
        return OFF
    if env not in k.PREFETCH_LEVELS:
        raise ValueError(f"FUSER_PREFETCH must be one of L1, L2 or 0, got {env!r}")
    return env


def prefetch_kernel(func: k.FuncOp, scheduled: Mapping[SSAValue, str]) -> int:
    """The prefetches of a lowered kernel: those its schedule asks for (``scheduled``:
    the kernel arguments of inputs with ``iterdomain.loop {prefetch}``, to their
    level) unless ``FUSER_PREFETCH`` overrides them (``prefetch_setting``). Returns how
    many ``kernel.prefetch`` ops it added."""
    setting = prefetch_setting()
    if setting is None:
        return prefetch_next_iteration(func, tensors=scheduled)
    return 0 if setting == OFF else prefetch_next_iteration(func, setting)


def prefetch_next_iteration(
    func: k.FuncOp, level: str | None = DEFAULT_LEVEL, tensors: Mapping[SSAValue, str] | None = None
) -> int:
    """Add the next iteration's prefetches to every loop of ``func`` that waits for
    other threads (module docstring; ``level`` None: none); returns how many
    ``kernel.prefetch`` ops it added. ``tensors`` (kernel arguments to their cache
    level: the inputs a schedule prefetches, ``iterdomain.loop {prefetch}``) limits
    them to the loads of those tensors, each to its own level; ``level`` is then
    unused. A loop it has seen carries ``{kernel.prefetch = "L2"}`` and is left alone
    the next time."""
    if not (level if tensors is None else tensors):
        return 0
    written = k.written_tensors(func)
    loops = [op for op in func.walk() if isinstance(op, scf.ForOp) and waits(op)]
    return sum(prefetch_loop(loop, written, level or DEFAULT_LEVEL, tensors) for loop in loops)


def waits_for_other_threads(loop: scf.ForOp) -> bool:
    """Whether ``loop``'s body waits for other threads' values (a reduction across
    threads or a barrier, ``WAITS``)."""
    return any(isinstance(o, WAITS) for o in loop.body.walk())


def waits(loop: scf.ForOp) -> bool:
    """Whether ``loop``'s body waits for other threads and its next iteration's loads
    have not been prefetched yet."""
    return PREFETCH_ATTR not in loop.attributes and waits_for_other_threads(loop)


def prefetch_loop(
    loop: scf.ForOp, written: set[SSAValue], level: str, tensors: Mapping[SSAValue, str] | None = None
) -> int:
    """The prefetches of one loop (``written``: the tensors the kernel stores to;
    ``tensors``: as ``prefetch_next_iteration``'s); marks the loop with ``level`` (the
    one level of ``tensors`` when they name one). Returns how many it added."""
    levels = set((tensors or {}).values())
    loop.attributes[PREFETCH_ATTR] = StringAttr(levels.pop() if len(levels) == 1 else level)
    return _Prefetch(loop, written, level, tensors).run()


def _loads(block: Block) -> Iterator[tuple[Operation, SSAValue, SSAValue]]:
    """``(load, tensor, index)`` of every global load nested in ``block``."""
    for op in block.walk():
        if isinstance(op, vector.LoadOp):
            yield op, op.base, op.indices[0]
        elif isinstance(op, memrefd.LoadOp) and len(op.indices) == 1:
            yield op, op.memref, op.indices[0]


class NextIteration:
    """What the next iteration of ``loop`` loads, and the computations of its
    addresses and guards with the induction variable advanced (``copy``): shared by
    the prefetches here and the register pipelining of ``codegen/pipeline_loads.py``."""

    def __init__(self, loop: scf.ForOp, written: set[SSAValue]) -> None:
        self.loop = loop
        self.body = loop.body.block
        self.iv = self.body.args[0]
        self.written = written
        self.varies: dict[SSAValue, bool | None] = {}  # value -> depends on iv (None: not computable)
        self.keys: dict[SSAValue, object] = {}

    def inside(self, v: SSAValue) -> bool:
        owner = v.owner
        op = owner.parent_op() if isinstance(owner, Block) else owner
        return op is not None and (op is self.loop or self.loop.is_ancestor(op))

    def computable(self, v: SSAValue) -> bool | None:
        """Whether ``v`` can be computed at the top of the body with the induction
        variable advanced: None if not, else whether it depends on the induction
        variable."""
        if v is self.iv:
            return True
        if not self.inside(v):
            return False
        if v in self.varies:
            return self.varies[v]
        res: bool | None = None
        if not isinstance(v, BlockArgument) and isinstance(v.owner, _PURE) and _cannot_fault(v.owner):
            deps = [self.computable(o) for o in v.owner.operands]
            res = None if None in deps else any(deps)
        self.varies[v] = res
        return res

    def guards(self, load: Operation) -> list[SSAValue] | None:
        """The conditions of the ``scf.if``s between ``load`` and the loop body (the
        load must be in their then-regions), or None when it is elsewhere (a nested
        loop, an else-region)."""
        out: list[SSAValue] = []
        op = load
        while True:
            region = op.parent_region()
            parent = op.parent_op()
            if parent is self.loop:
                return out
            if not isinstance(parent, scf.IfOp) or region is not parent.true_region:
                return None
            out.append(parent.cond)
            op = parent

    def candidates(self) -> list[tuple[Operation, SSAValue, SSAValue, list[SSAValue]]]:
        """``(load, tensor, index, guards)`` of every load the next iteration can issue
        early: from a global tensor the kernel only reads (a kernel argument), at an
        index computable at the top of the body, under guards that are too (the
        ``scf.if`` conditions around it)."""
        jobs: list[tuple[Operation, SSAValue, SSAValue, list[SSAValue]]] = []
        for load, tensor, index in _loads(self.body):
            if not isinstance(tensor, BlockArgument) or tensor in self.written:
                continue
            if not isinstance(tensor.owner, Block) or not isinstance(tensor.owner.parent_op(), k.FuncOp):
                continue
            guards = self.guards(load)
            if guards is None or not self.computable(index):
                continue
            if any(self.computable(g) is None for g in guards):
                continue
            jobs.append((load, tensor, index, guards))
        return jobs

    def key(self, v: SSAValue) -> object:
        """What ``v`` computes, structurally (the lowering recomputes a row index at
        every load: one copy and one prefetch each)."""
        if v is self.iv or not self.inside(v):
            return v
        if v not in self.keys:
            op = v.owner
            assert isinstance(op, Operation)
            attrs = tuple(sorted((n, str(a)) for n, a in (*op.properties.items(), *op.attributes.items())))
            self.keys[v] = (op.name, attrs, tuple(self.key(o) for o in op.operands), op.results.index(v))
        return self.keys[v]

    def copy(self, v: SSAValue, block: Block, copies: dict[object, SSAValue], suffix: str = "next") -> SSAValue:
        """``v`` computed in ``block`` with the induction variable advanced (operands
        first; values defined before the loop are used as they are); the copies'
        name hints end in ``_<suffix>``."""
        key = self.key(v)
        if key in copies:
            return copies[key]
        if not self.inside(v):
            return v
        op = v.owner
        assert isinstance(op, Operation)
        mapping = {o: self.copy(o, block, copies, suffix) for o in op.operands}
        new = op.clone(value_mapper=mapping, clone_name_hints=False)
        block.add_op(new)
        for old, res in zip(op.results, new.results, strict=True):
            res.name_hint = f"{old.name_hint}_{suffix}" if old.name_hint else None
            copies[self.key(old)] = res
        return copies[key]


class _Prefetch(NextIteration):
    """The prefetches of one loop."""

    def __init__(
        self, loop: scf.ForOp, written: set[SSAValue], level: str, tensors: Mapping[SSAValue, str] | None = None
    ) -> None:
        super().__init__(loop, written)
        self.level = level
        self.tensors = tensors

    def level_of(self, tensor: SSAValue) -> str | None:
        """The level ``tensor``'s loads are prefetched to (None: not prefetched)."""
        return self.level if self.tensors is None else self.tensors.get(tensor)

    def run(self) -> int:
        jobs = [(t, index, guards) for _, t, index, guards in self.candidates() if self.level_of(t) is not None]
        if not jobs:
            return 0
        ops: list[Operation] = []
        nxt = _append(ops, arith.AddiOp(self.iv, self.loop.step))
        more = _append(ops, arith.CmpiOp(nxt, self.loop.ub, "slt"))
        nxt.name_hint, more.name_hint = "next", "more"
        inner = Block()
        copies: dict[object, SSAValue] = {self.iv: nxt}
        groups: dict[tuple[SSAValue, ...], dict[tuple[SSAValue, SSAValue], None]] = {}
        for tensor, index, guards in jobs:
            idx = self.copy(index, inner, copies)
            conds = tuple(dict.fromkeys(self.copy(g, inner, copies) for g in guards))
            groups.setdefault(conds, {})[(tensor, idx)] = None
        added = 0
        for conds, targets in groups.items():
            pfs: list[Operation] = [k.PrefetchOp(tensor, idx, self.level_of(tensor) or self.level) for tensor, idx in targets]
            added += len(pfs)
            if not conds:
                inner.add_ops(pfs)
                continue
            cond = conds[0]
            for c in conds[1:]:
                cond = _append_block(inner, arith.AndIOp(cond, c))
            inner.add_op(scf.IfOp(cond, [], Region(Block([*pfs, scf.YieldOp()]))))
        inner.add_op(scf.YieldOp())
        ops.append(scf.IfOp(more, [], Region(inner)))
        first = self.body.first_op
        assert first is not None
        self.body.insert_ops_before(ops, first)
        return added


def _cannot_fault(op: Operation) -> bool:
    if not isinstance(op, arith.DivSIOp | arith.RemSIOp):
        return True
    rhs = op.rhs.owner
    return isinstance(rhs, arith.ConstantOp) and isinstance(rhs.value, IntegerAttr) and rhs.value.value.data != 0


def _append(ops: list[Operation], op: Operation) -> SSAValue:
    ops.append(op)
    return op.results[0]


def _append_block(block: Block, op: Operation) -> SSAValue:
    block.add_op(op)
    return op.results[0]
