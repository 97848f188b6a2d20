"""``segment{gpu=h100}``: cut each launched fusion into a DAG of segments
that one scheduler each accepts, and emit the ``hir`` program that runs them.

The algorithm is nvFuser's segmenter (seed 000):

1. If one scheduler of the registry (``fuser.schedulers.registry.select``) accepts the
   whole fusion at the concrete sizes, it is one segment.
2. Otherwise every op producing a tensor starts as its own group (scalar ops such
   as ``fuser.constant`` and ``fuser.size`` are not groups: each segment that uses
   one gets a copy of it and of its scalar operands).
3. Neighbouring groups (a producer and its consumer, or two groups reading the
   same tensor) merge while the union is still
   accepted by some scheduler and the group graph stays acyclic (no path from one
   to the other through a third group). The candidate merges are tried in order of
   the bytes of the intermediates they remove (concrete extents x element size),
   most first, ties in program order; the first accepted merge is made and the
   candidates are recomputed, until none is accepted.
4. ``fuser.segment_set`` is a boundary: the group of a ``segment_set`` never merges
   with the group producing its operand.
5. Input forwarding (nvFuser's ``forwardInputs``): when the fusion is segmented, a
   chain of unary ops from a fusion input (``cast(x)`` of a bf16 input, ``neg``,
   ``exp``...) whose results the fusion does not return is not a group: like a scalar
   op, it is recomputed in every segment that reads it, so segments read the input
   itself rather than an intermediate written in f32 (a segmented bf16 softmax reads
   2 bytes an element where it read 4 and wrote 4 more). So are values built from
   small tensors alone (``forwarded_ops``, rule 2: an iota compared with each row's
   target), which cost nothing to recompute and a full write and read to cut at.

Concrete sizes are the static extents of the program inputs (of the fusion's inputs
when the module has no program yet), propagated through the host program (views,
launches): symbolic ones are bound first by ``bind-sizes``
(``bind-sizes{sizes="0=128x1024,1=128x1024"},segment``, what the compiler driver runs).

The emitted program, for each launch of a segmented fusion ``@f``:

* a group made only of views the host can do without a copy becomes host views
  (``hir.reshape``...): reshape- or permute-only fusions launch nothing;
* every other group becomes a ``fuser.fusion @f_seg0``, ``@f_seg1``... (in
  topological order) with the group's external values as inputs and the values
  used outside it as outputs; it is launched into ``hir.allocate``'d buffers when
  the output extents are known on the host (``preallocated`` when the program
  returns them, the caller's buffer for in-place updates);
* each intermediate is dropped by ``hir.deallocate`` right after its last use
  (host views of it included).

Before (seed 000 with nvFuser's cut marked, after ``bind-sizes{sizes="0=128x1024,1=128x1024"}``)::

    fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<128x1024xf32>, %t1 : !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1024xf32> {
      %t2 = fuser.sum %t0 {dims = array<i64: 1>} : ...
      %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : ...
      %t3s = fuser.segment_set %t3 : ...
      %t4 = fuser.add %t1, %t3s : ...
      fuser.output %t4 : !fuser.tensor<128x1024xf32>
    }

After ``segment`` (two segments: the ``segment_set`` is a boundary)::

    fuser.fusion @sum_broadcast_add_seg0(%t0: !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1xf32> {
      %t2 = fuser.sum %t0 ... ; %t3 = fuser.broadcast %t2 ...
      fuser.output %t3 : !fuser.tensor<128x1xf32>
    }
    fuser.fusion @sum_broadcast_add_seg1(%t1: !fuser.tensor<128x1024xf32>, %t3: !fuser.tensor<128x1xf32>) -> !fuser.tensor<128x1024xf32> { ... }
    hir.program @main(%0: !fuser.tensor<128x1024xf32>, %1: !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1024xf32> {
      %2 = hir.allocate : !fuser.tensor<128x1xf32>
      %3 = hir.launch @sum_broadcast_add_seg0(%0) outs(%2 : ...) : ...
      %4 = hir.allocate {preallocated} : !fuser.tensor<128x1024xf32>
      %5 = hir.launch @sum_broadcast_add_seg1(%1, %3) outs(%4 : ...) : ...
      hir.deallocate %2 : !fuser.tensor<128x1xf32>
      hir.return %4 : !fuser.tensor<128x1024xf32>
    }

Extents that only a size operand gives (a reshape to sizes read from scalar inputs)
stay symbolic: their buffers are allocated from ``fuser.size`` values
(``hir.allocate sizes(...)``).

The segment records (``segment_module``) keep, for each segment, its ops, the
original values of its inputs and outputs and its scheduler: the Python side
(``fuser.runtime.segmented``) builds nvFuser's index maps from them.

Restrictions: a fusion output computed by scalar ops only must be accepted whole;
the launches of one fusion are all segmented with the sizes of the first one.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FunctionType, IntegerAttr, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dialects.fuser import slice_extent
from fuser.ir.shapes import DYN
from fuser.passes.host_rewrites import (
    HostPassError,
    drop_outs,
    ensure_programs,
    erase_dead_ops,
    erase_op,
    fusions_by_name,
    host_view_ops_typed,
    input_end_type,
    is_host_viewable,
    laid_out_outputs,
    launches_by_callee,
    programs,
    swap_view_before,
    view_of,
)
from fuser.passes.mark_aliases import (
    alias_target,
    args_sharing,
    guard_inplace_races,
    hoist_view_outputs,
    inplace_to_aliases,
)
from fuser.passes.mark_aliases import preallocate_outputs as _preallocate
from fuser.passes.target_option import resolve_target
from fuser.schedulers.analysis.graph import is_elementwise
from fuser.schedulers.analysis.sizes import ConcreteSizes, SizeBindingError, bind_sizes
from fuser.schedulers.registry import select
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget

__all__ = ["Segment", "SegmentRecord", "find_segments", "forwarded_ops", "segment_module"]

Shape = tuple[int, ...]


# =====================================================================================
# Groups
# =====================================================================================


def is_node(op: Operation) -> bool:
    """Ops that produce a tensor are graph nodes; scalar ops are copied where used."""
    return not isinstance(op, F.OutputOp) and any(
        isinstance(r.type, F.TensorType) for r in op.results
    )


SMALL_FRACTION = 16
"""A tensor is small (``forwarded_ops``, rule 2) when the fusion's largest tensor has
at least this many times its elements."""
MAX_BUILT_DEPTH = 8
"""The longest chain of rule-2 ops a segment recomputes (``forwarded_ops``): every
reader recomputes the chain, so it stays short."""


def forwarded_ops(fusion: F.FusionOp, sizes: ConcreteSizes | None = None) -> frozenset[Operation]:
    """The ops segments recompute instead of reading their result (module docstring,
    step 5), whose result no ``fuser.output`` returns, no ``fuser.segment_set`` cuts
    (nor a ``segment_set`` itself) and no library op (``fuser.matmul``,
    ``fuser.linear``) reads:

    1. unary chains from the fusion's inputs: ops with one operand (``fuser.cast`` and
       the unary elementwise ops) reading a fusion input or another such op;
    2. (with ``sizes``) values built from small tensors alone: elementwise ops,
       views, ``fuser.iota`` and ``fuser.full`` whose tensor operands are small
       fusion inputs (``SMALL_FRACTION``), rule-2 values or, for a result that is
       not small itself, small intermediates; in chains of at most
       ``MAX_BUILT_DEPTH``. A cross entropy's backward compares an iota with each
       row's target, ``where(c == target[n], g, 0)``, and both reduces that
       ``[N, C]`` mask and subtracts it: recomputed, it costs no memory, where a
       segment boundary wrote and read it back in float32 (GPT-2 small: 823 MB
       each way)."""
    out: set[Operation] = set()
    built: dict[Operation, int] = {}
    """Rule-2 ops, with the length of the longest rule-2 chain ending at each."""
    small = _small_values(fusion, sizes)
    for op in fusion.body.block.ops:
        if isinstance(op, F.SegmentSetOp) or len(op.results) != 1 or not isinstance(op.results[0].type, F.TensorType):
            continue
        if any(isinstance(u.operation, F.OutputOp | F.SegmentSetOp) for u in op.results[0].uses):
            continue  # returned, or a boundary the definition asks for
        if any(isinstance(u.operation, F.LIBRARY_OPS + F.COMMUNICATION_OPS) for u in op.results[0].uses):
            continue  # a library call (matmul) runs its op alone: a kernel writes its operand
        tensors = [v for v in op.operands if isinstance(v.type, F.TensorType)]
        if is_elementwise(op) and len(op.operands) == 1 and tensors:
            src = tensors[0]
            if isinstance(src, BlockArgument) or src.owner in out:
                out.add(op)
                continue
        large = op.results[0] not in small
        if (
            small
            and (is_elementwise(op) or isinstance(op, F.VIEW_OPS + (F.IotaOp, F.FullOp)))
            and all(
                v.owner in built or (v in small and (large or isinstance(v, BlockArgument))) for v in tensors
            )
        ):
            depth = 1 + max((built[v.owner] for v in tensors if v.owner in built), default=0)  # type: ignore[index]
            if depth <= MAX_BUILT_DEPTH:
                built[op] = depth
                out.add(op)
    return frozenset(out)


def _small_values(fusion: F.FusionOp, sizes: ConcreteSizes | None) -> frozenset[SSAValue]:
    """The tensors of ``fusion`` (inputs and results) whose elements are at most a
    ``SMALL_FRACTION``th of its largest tensor's (none without sizes)."""
    if sizes is None:
        return frozenset()
    tensors = [v for v in fusion.body.block.args if isinstance(v.type, F.TensorType)]
    tensors += [r for op in fusion.body.block.ops for r in op.results if isinstance(r.type, F.TensorType)]
    try:
        counts = {v: sizes.numel(v) for v in tensors}
    except KeyError:
        return frozenset()
    largest = max(counts.values(), default=0)
    return frozenset(v for v, n in counts.items() if n * SMALL_FRACTION <= largest)


def scalar_cone(op: Operation, forwarded: frozenset[Operation] = frozenset()) -> list[Operation]:
    """The non-node ops ``op``'s operands depend on, transitively: scalar ops, and
    the ``forwarded`` ops (``forwarded_ops``: unary chains of inputs, values built
    from small tensors)."""
    cone: list[Operation] = []
    seen: set[Operation] = set()
    stack = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
    while stack:
        o = stack.pop()
        if o in seen or not isinstance(o, Operation) or (is_node(o) and o not in forwarded):
            continue
        seen.add(o)
        cone.append(o)
        stack.extend(v.owner for v in o.operands if isinstance(v.owner, Operation))
    return cone


@dataclass
class Segment:
    """A group of ops of the original fusion, in program order."""

    ops: list[Operation]
    scheduler: str | None = None
    order: dict[Operation, int] | None = field(default=None, compare=False, repr=False)
    """Program order of the fusion's ops (``find_segments`` passes it): the cones are
    sorted by it instead of by a walk of the whole fusion per segment."""
    forwarded: frozenset[Operation] = field(default=frozenset(), compare=False, repr=False)
    """The fusion's forwarded unary chains (``forwarded_ops``): recomputed here."""

    def with_cones(self) -> list[Operation]:
        """The group's ops and the scalar ops (and forwarded chains) they need, in
        program order."""
        found: set[Operation] = set(self.ops)
        for op in self.ops:
            found.update(scalar_cone(op, self.forwarded))
        order = self.order
        if order is not None and all(o in order for o in found):
            return sorted(found, key=order.__getitem__)
        block = self.ops[0].parent_block()
        assert block is not None
        return [o for o in block.ops if o in found]

    def inputs(self) -> list[SSAValue]:
        """Values used by the group defined outside it: fusion inputs first (in
        order), then other values in program order."""
        ops = self.with_cones()
        defined = {r for o in ops for r in o.results}
        used: dict[SSAValue, None] = {}
        for o in ops:
            for v in o.operands:
                if v not in defined:
                    used[v] = None
        args = sorted((v for v in used if isinstance(v, BlockArgument)), key=lambda a: a.index)
        return args + [v for v in used if not isinstance(v, BlockArgument)]

    def outputs(self) -> list[SSAValue]:
        """Tensor results used outside the group (or by ``fuser.output``). A use by a
        forwarded op counts as outside even when this group recomputes that op too:
        other groups may recompute it as well (only ``forwarded_ops``' rule 2 reads
        group results, and only small ones)."""
        mine = set(self.ops)
        cone_of_mine = {c for o in self.ops for c in scalar_cone(o, self.forwarded)}
        outs: list[SSAValue] = []
        for o in self.ops:
            for r in o.results:
                if not isinstance(r.type, F.TensorType):
                    continue
                for use in r.uses:
                    u = use.operation
                    if isinstance(u, F.OutputOp) or (
                        u not in mine and (u not in cone_of_mine or u in self.forwarded)
                    ):
                        outs.append(r)
                        break
        return outs


def build_fusion(
    name: str, seg: Segment, input_types: Sequence[Attribute] | None = None
) -> F.FusionOp:
    """A ``fuser.fusion`` computing ``seg`` (ops cloned, inputs and outputs as
    ``Segment.inputs``/``outputs``)."""
    ins = seg.inputs()
    outs = seg.outputs()
    types = list(input_types) if input_types is not None else [v.type for v in ins]
    out_types = [
        F.TensorType(v.type.get_shape(), v.type.element_type)  # type: ignore[union-attr]
        for v in outs
    ]
    fusion = F.FusionOp(name, types, out_types)
    block = fusion.body.block
    mapper: dict[SSAValue, SSAValue] = dict(zip(ins, block.args, strict=True))
    for arg, v in zip(block.args, ins, strict=True):
        if v.name_hint:
            arg.name_hint = v.name_hint
    for op in seg.with_cones():
        block.add_op(op.clone(value_mapper=mapper))
    block.add_op(F.OutputOp([mapper[v] for v in outs]))
    return fusion


def _bytes(v: SSAValue, sizes: ConcreteSizes) -> int:
    t = v.type
    if not isinstance(t, F.TensorType):
        return 0
    try:
        return sizes.numel(v) * t.dtype.itemsize
    except KeyError:
        return 0


@dataclass
class _Segmenter:
    fusion: F.FusionOp
    sizes: ConcreteSizes
    target: GpuTarget
    cache: dict[frozenset[Operation], str | None] = field(default_factory=dict)
    order: dict[Operation, int] = field(default_factory=dict)
    forwarded: frozenset[Operation] = frozenset()

    def __post_init__(self) -> None:
        if not self.order:
            self.order = {o: i for i, o in enumerate(self.fusion.body.block.ops)}

    def accepts(self, ops: Sequence[Operation]) -> str | None:
        """The scheduler kind that takes the group, or None."""
        key = frozenset(ops)
        if key in self.cache:
            return self.cache[key]
        if any(isinstance(op, F.SegmentSetOp) and op.operands[0].owner in key for op in ops):
            self.cache[key] = None  # segment_set: its operand's producer is elsewhere
            return None
        seg = self.segment(ops)
        kind: str | None = None
        if seg.outputs():
            try:
                f = build_fusion("candidate", seg)
                shapes = [
                    self.sizes.shape(v)
                    if isinstance(v.type, F.TensorType)
                    else self.sizes.scalar(v)
                    for v in seg.inputs()
                ]
                kind = select(f, bind_sizes(f, shapes), self.target).kind
            except (SizeBindingError, KeyError, ValueError):
                kind = None
        self.cache[key] = kind
        return kind

    def segment(self, ops: Sequence[Operation], scheduler: str | None = None) -> Segment:
        return Segment(sorted(ops, key=self.order.__getitem__), scheduler, self.order, self.forwarded)


def find_segments(
    fusion: F.FusionOp,
    sizes: ConcreteSizes,
    target: GpuTarget = DEFAULT_TARGET,
    in_place: Mapping[SSAValue, tuple[int, ...]] | None = None,
) -> list[Segment]:
    """The segments of ``fusion`` in topological order (see the module docstring).

    The merge loop is nvFuser's greedy one (module docstring, step 3), kept
    incremental: the candidate pairs are in a priority queue (bytes removed, most
    first, then program order), a pair is recomputed only when one of its groups
    changes, and a pair found invalid (a cycle, a ``segment_set``, no scheduler)
    stays invalid until then (merging other groups only adds paths, and a group's
    scheduler depends only on its ops). Cycles are found by a search bounded by a
    topological order of the groups, which each merge repairs locally (the nodes
    between the two merged groups that reach or are reached from them move), so
    each merge costs about the size of the groups it touches.

    ``in_place``: the outputs written into an input's buffer (output value -> the
    inputs that are views of that buffer, from the launches' ``hir.alias``). The
    segment writing one runs after every segment that reads those inputs, directly
    or through views and forwarded ops: the buffer holds the old values until then."""
    nodes = [op for op in fusion.body.block.ops if is_node(op)]
    seg = _Segmenter(fusion, sizes, target)
    if not nodes:
        return []
    whole = seg.accepts(nodes)
    if whole is not None:
        return [seg.segment(nodes, whole)]
    forwarded = forwarded_ops(fusion, seg.sizes)
    if forwarded:
        seg = _Segmenter(fusion, sizes, target, forwarded=forwarded)
        nodes = [op for op in nodes if op not in forwarded]
    return _Merger(seg, nodes, in_place or {}).run()


class _Merger:
    """State of the merge loop of ``find_segments``: groups (by id, ids in node
    order; a merged pair keeps its first group's id), their inputs, the
    producer/consumer graph between them, a topological rank per group, and the
    candidate pairs in a heap."""

    def __init__(
        self, seg: _Segmenter, nodes: list[Operation], in_place: Mapping[SSAValue, tuple[int, ...]]
    ) -> None:
        self.seg = seg
        self.in_place = in_place
        self.writers: set[Operation] = {
            v.owner for v in in_place if isinstance(v.owner, F.SegmentSetOp)
        }
        """The ``segment_set`` copies into inputs updated in place (``mark-aliases``' cut):
        merged with another group they could feed a group that reads the input, which
        must run before them."""
        self.order = seg.order
        self.group_of: dict[Operation, int] = {op: i for i, op in enumerate(nodes)}
        self.groups: dict[int, list[Operation]] = {i: [op] for i, op in enumerate(nodes)}
        self.first: dict[int, int] = {i: self.order[op] for i, op in enumerate(nodes)}
        """Program position of each group's first op (the pairs' tie-break)."""
        self.stamp: dict[int, int] = dict.fromkeys(self.groups, 0)
        self.inputs: dict[int, list[SSAValue]] = {}
        self.producers: dict[int, dict[int, list[SSAValue]]] = {}
        self.consumers: dict[int, set[int]] = {i: set() for i in self.groups}
        self.readers: dict[SSAValue, set[int]] = {}
        self.rank: dict[int, int] = {i: i for i in self.groups}
        """A topological order of the groups (node order to begin with)."""
        self.heap: list[tuple[tuple[int, int, int], int, int, int, int, bool]] = []
        self.bytes: dict[SSAValue, int] = {}
        for g in self.groups:
            self.refresh_inputs(g)
        for g in self.groups:
            for p in self.producers[g]:
                self.consumers[p].add(g)
        # The initial candidates, as every merge pushes the pairs of its group.
        for g in self.groups:
            for p, vals in self.producers[g].items():
                self.push(p, g, vals, True)
        seen: set[tuple[int, int]] = set()
        for g in self.groups:
            for a, b, total in self.sibling_pairs(g):
                if (a, b) not in seen:
                    seen.add((a, b))
                    self.push_bytes(a, b, total, False)

    # ---- bookkeeping --------------------------------------------------------------
    def nbytes(self, v: SSAValue) -> int:
        n = self.bytes.get(v)
        if n is None:
            n = self.bytes[v] = _bytes(v, self.seg.sizes)
        return n

    def refresh_inputs(self, g: int) -> None:
        """Recompute group ``g``'s inputs, producers and reader entries."""
        for v in self.inputs.get(g, ()):
            rs = self.readers.get(v)
            if rs is not None:
                rs.discard(g)
        ins = self.seg.segment(self.groups[g]).inputs()
        self.inputs[g] = ins
        self.producers[g] = self.producers_from(ins)
        for v in ins:
            if isinstance(v.type, F.TensorType):
                self.readers.setdefault(v, set()).add(g)

    def producers_from(self, ins: Sequence[SSAValue]) -> dict[int, list[SSAValue]]:
        out: dict[int, list[SSAValue]] = {}
        for v in ins:
            owner = v.owner
            if isinstance(owner, Operation) and owner in self.group_of:
                out.setdefault(self.group_of[owner], []).append(v)
        return out

    def key(self, a: int, b: int, total: int) -> tuple[int, int, int]:
        return (-total, self.first[a], self.first[b])

    def push(self, a: int, b: int, vals: Sequence[SSAValue], edge: bool) -> None:
        self.push_bytes(a, b, sum(self.nbytes(v) for v in vals), edge)

    def push_bytes(self, a: int, b: int, total: int, edge: bool) -> None:
        heapq.heappush(self.heap, (self.key(a, b, total), a, b, self.stamp[a], self.stamp[b], edge))

    def sibling_pairs(self, g: int) -> list[tuple[int, int, int]]:
        """``g``'s sibling pairs: groups reading a tensor ``g`` reads, with no edge
        between them, as (smaller id, larger id, bytes of the tensors both read)."""
        shared: dict[int, int] = {}
        for v in self.inputs[g]:
            if not isinstance(v.type, F.TensorType):
                continue
            for h in self.readers.get(v, ()):
                if h != g:
                    shared[h] = shared.get(h, 0) + self.nbytes(v)
        out = []
        for h, total in shared.items():
            if h in self.producers[g] or g in self.producers[h]:
                continue
            out.append((min(g, h), max(g, h), total))
        return out

    # ---- the loop -----------------------------------------------------------------
    def run(self) -> list[Segment]:
        heap = self.heap
        while heap:
            _, a, b, sa, sb, edge = heapq.heappop(heap)
            if a not in self.groups or b not in self.groups or self.stamp[a] != sa or self.stamp[b] != sb:
                continue  # a group of the pair changed since: its new pairs were pushed
            if self.blocked(a, b, edge):
                continue
            lo, hi = (a, b) if self.rank[a] < self.rank[b] else (b, a)
            after = self.reachable(lo, hi, skip_direct=edge)
            if after is None:
                continue  # merging would make a cycle
            if self.seg.accepts(self.groups[a] + self.groups[b]) is None:
                continue
            self.merge(a, b, lo, hi, after)
        return self.ordered()

    def blocked(self, a: int, b: int, edge: bool = True) -> bool:
        if any(self.group_of[w] in (a, b) for w in self.writers):
            return True  # the copy into an input updated in place stays alone (``ordered``)
        if not edge:
            return False
        for op in self.groups[b]:
            if isinstance(op, F.SegmentSetOp):
                owner = op.operands[0].owner
                if isinstance(owner, Operation) and self.group_of.get(owner) == a:
                    return True
        return False

    def reachable(self, lo: int, hi: int, skip_direct: bool) -> list[int] | None:
        """The groups reachable from ``lo`` that are before ``hi`` in the topological
        order, or None when ``hi`` is reachable (not counting the direct edge when
        ``skip_direct``): nothing after ``hi`` in the order reaches it."""
        limit = self.rank[hi]
        stack = [s for s in self.consumers[lo] if not (skip_direct and s == hi)]
        seen: set[int] = set()
        while stack:
            n = stack.pop()
            if n == hi:
                return None
            if n in seen or self.rank[n] > limit:
                continue
            seen.add(n)
            stack.extend(self.consumers[n])
        return list(seen)

    def reaching(self, lo: int, hi: int) -> list[int]:
        """The groups that reach ``hi`` and are after ``lo`` in the topological order."""
        limit = self.rank[lo]
        stack = [p for p in self.producers[hi] if p != lo]
        seen: set[int] = set()
        while stack:
            n = stack.pop()
            if n in seen or self.rank[n] < limit:
                continue
            seen.add(n)
            stack.extend(p for p in self.producers[n])
        return list(seen)

    def merge(self, a: int, b: int, lo: int, hi: int, after: list[int]) -> None:
        """Merge group ``b`` into ``a`` and repair the topological order: between
        ``lo`` and ``hi``, the groups reaching ``hi`` move before the merged group and
        those reached from ``lo`` after it (their other edges cannot cross)."""
        before = self.reaching(lo, hi)
        slots = sorted([self.rank[lo], self.rank[hi], *(self.rank[n] for n in before), *(self.rank[n] for n in after)])
        sequence = [*sorted(before, key=self.rank.__getitem__), a, *sorted(after, key=self.rank.__getitem__)]
        for n, r in zip(sequence, [*slots[: len(before) + 1], *slots[len(slots) - len(after):]], strict=True):
            self.rank[n] = r
        del self.rank[b]
        old_consumers = (self.consumers[a] | self.consumers[b]) - {a, b}
        self.groups[a] = self.groups[a] + self.groups[b]
        for op in self.groups.pop(b):
            self.group_of[op] = a
        for v in self.inputs.pop(b):
            rs = self.readers.get(v)
            if rs is not None:
                rs.discard(b)
        for p in self.producers.pop(b):
            self.consumers[p].discard(b)
        for p in self.producers[a]:
            self.consumers[p].discard(a)
        del self.consumers[b], self.stamp[b]
        self.first[a] = min(self.first[a], self.first.pop(b))
        self.stamp[a] += 1
        self.refresh_inputs(a)
        for p in self.producers[a]:
            self.consumers[p].add(a)
        self.consumers[a] = old_consumers
        for c in old_consumers:
            self.producers[c] = self.producers_from(self.inputs[c])
        # the merged group's pairs
        for p, vals in self.producers[a].items():
            self.push(p, a, vals, True)
        for c in old_consumers:
            self.push(a, c, self.producers[c][a], True)
        for x, y, total in self.sibling_pairs(a):
            self.push_bytes(x, y, total, False)

    def readers_of(self, x: SSAValue) -> set[int]:
        """The groups that read input ``x``'s buffer: through its uses, views of it
        and ops recomputed in their consumers (forwarded, scalar cones)."""
        found: set[int] = set()
        todo, seen = [x], {x}
        while todo:
            v = todo.pop()
            for use in v.uses:
                op = use.operation
                g = self.group_of.get(op)
                if g is not None:
                    found.add(g)
                    if not (isinstance(op, F.ViewLikeOp) or is_host_viewable(op)):
                        continue
                for r in op.results:
                    if r not in seen:
                        seen.add(r)
                        todo.append(r)
        return found

    def ordered(self) -> list[Segment]:
        """The groups in topological order, the ready group with the first op first;
        a group writing an input in place (``in_place``) after the groups reading it."""
        indeg = {g: len(self.producers[g]) for g in self.groups}
        after: dict[int, set[int]] = {g: set() for g in self.groups}  # reader -> writers
        for v, inputs in self.in_place.items():
            writer = self.group_of.get(v.owner)  # type: ignore[arg-type]
            if writer is None:
                continue
            readers = set().union(*(self.readers_of(self.seg.fusion.inputs[a]) for a in inputs))
            for r in readers - {writer}:
                if writer not in after[r] and writer not in self.consumers[r]:
                    after[r].add(writer)
                    indeg[writer] += 1
        ready = [(self.first[g], g) for g, d in indeg.items() if d == 0]
        heapq.heapify(ready)
        out: list[Segment] = []
        while ready:
            _, g = heapq.heappop(ready)
            ops = self.groups[g]
            out.append(self.seg.segment(ops, self.seg.accepts(ops)))
            for c in sorted(self.consumers[g] | after[g]):
                indeg[c] -= 1
                if indeg[c] == 0:
                    heapq.heappush(ready, (self.first[c], c))
        if len(out) < len(self.groups):
            updated = sorted({a for ins in self.in_place.values() for a in ins})
            raise HostPassError(
                f"segment: @{self.seg.fusion.sym_name.data}: the segment writing input(s) "
                f"{updated} in place must run after every segment that reads them, and one "
                "of those reads needs the update's own results"
            )
        return out


def hoist_views_through_pointwise(fusion: F.FusionOp) -> bool:
    """Move views toward the inputs through elementwise ops, so that a view in the
    middle of a pointwise chain does not split it: ``view(e(x, y))`` with ``e``
    elementwise, used only by the view, and ``x``, ``y`` of ``e``'s shape becomes
    ``e(view(x), view(y))``. A chain of views then reaches a fusion input, where the
    host does it. Returns whether anything changed."""
    block = fusion.body.block
    changed_any = False
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            if not isinstance(op, F.ReshapeOp | F.PermuteOp | F.SqueezeOp | F.BroadcastOp):
                continue
            if not is_host_viewable(op):
                continue
            src = op.operands[0]
            e = src.owner
            if not isinstance(e, F.ElementwiseOp | F.CastOp) or len(e.results) != 1:
                continue
            if e.name in ("fuser.set", "fuser.segment_set"):
                continue  # a copy materializes the layout the view needs
            if any(u.operation is not op for u in src.uses):
                continue
            et = src.type
            assert isinstance(et, F.TensorType)
            tensors = [x for x in e.operands if isinstance(x.type, F.TensorType)]
            if not tensors or any(
                x.type.get_shape() != et.get_shape()
                for x in tensors  # type: ignore[union-attr]
            ):
                continue
            views: dict[SSAValue, Operation] = {}
            for x in tensors:
                if x not in views:
                    views[x] = view_of(op, x)
            swap_view_before(op, e, views)
            changed = changed_any = True
            break
    return changed_any


# =====================================================================================
# Sizes on the host
# =====================================================================================


def host_shapes(program: H.ProgramOp, given: dict[int, Shape] | None) -> dict[SSAValue, object]:
    """Concrete shapes (tensors) and values (host ints) of the program's top-level
    values, as far as they can be derived."""
    env: dict[SSAValue, object] = {}
    args = program.inputs
    extra = sorted(i for i in (given or {}) if i >= len(args))
    if extra:
        raise HostPassError(
            f"segment: sizes name input #{extra[0]} but hir.program "
            f"@{program.sym_name.data} has {len(args)} inputs"
        )
    for i, a in enumerate(args):
        t = a.type
        if not isinstance(t, F.TensorType):
            continue
        shape = (given or {}).get(i)
        if shape is None:
            if DYN in t.get_shape():
                continue
            shape = t.get_shape()
        if len(shape) != t.rank or any(
            d != DYN and d != s for d, s in zip(t.get_shape(), shape, strict=True)
        ):
            raise HostPassError(
                f"segment: sizes gives [{', '.join(map(str, shape))}] for input #{i} of type {t}"
            )
        env[a] = tuple(shape)
    for op in program.body.block.ops:
        try:
            _host_shape_op(op, env)
        except (KeyError, TypeError, ValueError, SizeBindingError):
            continue
    return env


def _host_shape_op(op: Operation, env: dict[SSAValue, object]) -> None:
    def ints(attr: object) -> list[int]:
        return [int(v) for v in attr.get_values()]  # type: ignore[attr-defined]

    def mixed(static: list[int], sizes: Sequence[SSAValue]) -> tuple[int, ...]:
        it = iter(int(env[s]) for s in sizes)  # type: ignore[call-overload]
        return tuple(next(it) if d == DYN else d for d in static)

    if isinstance(op, F.SizeOp):
        shape = env[op.input]
        env[op.results[0]] = shape[op.dim.value.data % len(shape)]  # type: ignore[index,arg-type]
    elif isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        env[op.result] = op.value.value.data
    elif isinstance(op, H.ReshapeOp):
        env[op.result] = mixed(ints(op.new_shape), op.sizes)
    elif isinstance(op, H.PermuteOp):
        s = env[op.input]
        env[op.result] = tuple(s[d] for d in op.get_dims())  # type: ignore[index]
    elif isinstance(op, H.SqueezeOp):
        s = env[op.input]
        env[op.result] = tuple(e for i, e in enumerate(s) if i not in op.get_dims())  # type: ignore[arg-type]
    elif isinstance(op, H.BroadcastOp):
        env[op.result] = mixed(ints(op.shape), op.sizes)
    elif isinstance(op, H.SliceOp):
        s = env[op.input]
        env[op.result] = tuple(
            slice_extent(e, a, b, k)
            for e, a, b, k in zip(s, ints(op.starts), ints(op.ends), ints(op.strides), strict=True)  # type: ignore[call-overload]
        )
    elif isinstance(op, H.AllocateOp):
        env[op.result] = mixed(list(op.result.type.get_shape()), op.sizes)  # type: ignore[union-attr]
    elif isinstance(op, H.LaunchOp):
        fusion = op.callee_fusion()
        if fusion is None:
            return
        shapes = [env.get(a) for a in op.args]
        bound = bind_sizes(fusion, shapes)
        for r, v in zip(op.res, fusion.output_op.returned_values(), strict=True):
            if isinstance(v.type, F.TensorType):
                env[r] = bound.shape(v)


# =====================================================================================
# Emission
# =====================================================================================


@dataclass
class SegmentRecord:
    """One segment of a fusion as emitted: ``fusion`` is None for host views."""

    segment: Segment
    inputs: list[SSAValue]
    """Original values (of the unsegmented fusion) that the segment reads."""
    outputs: list[SSAValue]
    """Original values that the segment produces for others."""
    fusion: F.FusionOp | None
    scheduler: str | None


def _host_view_types(seg: Segment, types: dict[SSAValue, Attribute]) -> bool:
    """Whether ``seg`` is all views the host does without a copy, given the host
    types (layouts) of its inputs; records the types of its results."""
    local: dict[SSAValue, Attribute] = {}
    for op in seg.ops:
        if not is_host_viewable(op) or len(op.operands) != 1:
            return False
        t = local.get(op.operands[0], types.get(op.operands[0]))
        if not isinstance(t, F.TensorType):
            return False
        nt = input_end_type(op, t)
        if nt is None:
            return False
        local[op.results[0]] = nt
    types.update(local)
    return True


def _host_view_group(seg: Segment, host: dict[SSAValue, SSAValue]) -> list[Operation] | None:
    """Host ops computing an all-view group, or None when a copy is needed."""
    out: list[Operation] = []
    local = dict(host)
    for op in seg.ops:
        if not is_host_viewable(op) or len(op.operands) != 1:
            return None
        x = local.get(op.operands[0])
        if x is None or not isinstance(x.type, F.TensorType):
            return None
        t = input_end_type(op, x.type)
        if t is None:
            return None
        vops = host_view_ops_typed(op, x, t)
        out += vops
        local[op.results[0]] = vops[-1].results[0]
    for k, v in local.items():
        host[k] = v
    return out


def _deallocate_intermediates(
    program: H.ProgramOp, buffers: Sequence[tuple[SSAValue, SSAValue]]
) -> None:
    """``hir.deallocate buffer`` after the last top-level use of ``value`` or of a
    host view of it."""
    block = program.body.block
    index = {op: i for i, op in enumerate(block.ops)}
    for buffer, value in buffers:
        family = [value]
        i = 0
        while i < len(family):
            for use in family[i].uses:
                u = use.operation
                if isinstance(u, H.HostViewOp):
                    family.append(u.results[0])
            i += 1
        last: Operation | None = None
        for v in family:
            for use in v.uses:
                u = use.operation
                while u.parent_op() is not program and u.parent_op() is not None:
                    u = u.parent_op()  # type: ignore[assignment]
                if u in index and (last is None or index[u] > index[last]):
                    last = u
        if last is None or isinstance(last, H.ReturnOp):
            continue
        if any(isinstance(u.operation, H.ReturnOp) for v in family for u in v.uses):
            continue
        block.insert_op_after(H.DeallocateOp(buffer), last)
        index = {op: i for i, op in enumerate(block.ops)}


def in_place_inputs(fusion: F.FusionOp, launches: Sequence[H.LaunchOp]) -> dict[SSAValue, tuple[int, ...]]:
    """The outputs ``launches`` write into an input's buffer (``hir.alias`` of a
    result, after ``inplace_to_aliases``), each with the fusion inputs that some launch
    passes a view of that buffer: what ``find_segments`` orders the writer after."""
    out: dict[SSAValue, set[int]] = {}
    values = fusion.output_op.values
    for launch in launches:
        for v, r in zip(values, launch.res, strict=False):
            target = alias_target(r)
            if target is not None:
                out.setdefault(v, set()).update(args_sharing(launch, target))
    return {v: tuple(sorted(js)) for v, js in out.items()}


def segment_fusion_launches(
    module: ModuleOp,
    fusion: F.FusionOp,
    launches: list[H.LaunchOp],
    given: dict[int, Shape] | None,
    target: GpuTarget,
    preallocate: bool = True,
) -> list[SegmentRecord]:
    """Segment ``fusion`` and rewrite its launches; returns the segment records."""
    name = fusion.sym_name.data
    copy_outputs_with_other_layouts(fusion)
    guard_inplace_races(fusion, launches)
    launches = hoist_view_outputs(fusion, launches)
    if not launches:
        return []
    launches = inplace_to_aliases(fusion, launches)
    in_place = in_place_inputs(fusion, launches)
    erase_dead_ops(fusion.body.block)  # an unused op must not become a segment
    first = launches[0]
    program = first.parent_op()
    if not isinstance(program, H.ProgramOp):
        raise HostPassError(
            f"segment: the launch of @{name} must be at the top level of a hir.program"
        )
    env = host_shapes(program, given)
    shapes: list[object] = []
    for i, a in enumerate(first.args):
        if isinstance(a.type, F.TensorType):
            if a not in env:
                raise HostPassError(
                    f"segment: input #{i} of @{name} has symbolic extents ({a.type}); bind "
                    'the program\'s input shapes first with bind-sizes{sizes="0=..."}'
                )
            shapes.append(env[a])
        else:
            shapes.append(None)
    try:
        sizes = bind_sizes(fusion, shapes)
    except SizeBindingError as e:
        raise HostPassError(f"segment: {e}") from e
    segments = find_segments(fusion, sizes, target, in_place)
    if len(segments) > 1 and hoist_views_through_pointwise(fusion):
        sizes = bind_sizes(fusion, shapes)
        segments = find_segments(fusion, sizes, target, in_place)
    term = fusion.output_op
    for v in term.values:
        owner = v.owner
        if isinstance(owner, Operation) and not is_node(owner):
            raise HostPassError(
                f"segment: output of @{name} is computed by scalar ops ({owner.name}); only a "
                "fusion accepted whole can return it"
            )
    laid_out = laid_out_outputs(fusion)
    records: list[SegmentRecord] = []
    built: list[tuple[Segment, F.FusionOp | None]] = []
    module_block = module.body.block
    anchor: Operation = fusion
    n = 0
    host_types: dict[SSAValue, Attribute] = {
        a: la.type for a, la in zip(fusion.inputs, first.args, strict=True)
    }
    for seg in segments:
        if not any(v in laid_out for v in seg.outputs()) and _host_view_types(seg, host_types):
            built.append((seg, None))
            continue
        f = build_fusion(f"{name}_seg{n}", seg)
        declare_output_layouts(f, seg.outputs(), laid_out)
        n += 1
        module_block.insert_op_after(f, anchor)
        anchor = f
        built.append((seg, f))
        for v in seg.outputs():
            host_types[v] = F.TensorType(v.type.get_shape(), v.type.element_type)  # type: ignore[union-attr]
    new_launches: list[tuple[H.ProgramOp, H.LaunchOp, F.FusionOp]] = []
    intermediates: list[tuple[H.ProgramOp, SSAValue]] = []
    for li, launch in enumerate(launches):
        prog = launch.parent_op()
        if not isinstance(prog, H.ProgramOp):
            raise HostPassError(
                f"segment: the launch of @{name} must be at the top level of a hir.program"
            )
        block = prog.body.block
        host: dict[SSAValue, SSAValue] = dict(zip(fusion.inputs, launch.args, strict=True))
        final = set(term.values)
        for seg, f in built:
            if f is None:
                ops = _host_view_group(seg, host)
                if ops is None:
                    raise HostPassError(
                        f"segment: the launches of @{name} disagree on the layout of a view"
                    )
                block.insert_ops_before(ops, launch)
                if li == 0:
                    records.append(SegmentRecord(seg, seg.inputs(), seg.outputs(), None, "host"))
                continue
            ins = seg.inputs()
            outs = seg.outputs()
            new = H.LaunchOp(f, [host[v] for v in ins])
            block.insert_op_before(new, launch)
            for v, r in zip(outs, new.res, strict=True):
                host[v] = r
                if v not in final:
                    intermediates.append((prog, r))
            new_launches.append((prog, new, f))
            if li == 0:
                records.append(SegmentRecord(seg, ins, outs, f, seg.scheduler))
        for old, v in zip(launch.res, term.returned_values(), strict=True):
            old.replace_all_uses_with(host[v])
        erase_op(launch)
    fusion.detach()  # kept alive (not erased): the records refer to its values
    # destination passing, then deallocation of the intermediates
    replaced: dict[SSAValue, SSAValue] = {}
    allocs: dict[SSAValue, SSAValue] = {}
    for _prog, la, f in new_launches:
        old_res = list(la.res)
        new = _preallocate(f, la, allow_preallocated=preallocate)
        for o, r in zip(old_res, new.res, strict=True):
            replaced[o] = r
            if new.outs:
                allocs[r] = new.outs[list(new.res).index(r)]
    by_prog: dict[H.ProgramOp, list[tuple[SSAValue, SSAValue]]] = {}
    for prog, r in intermediates:
        r2 = replaced.get(r, r)
        buf = allocs.get(r2, r2)
        if isinstance(buf.owner, H.AllocateOp) or buf is r2:
            by_prog.setdefault(prog, []).append((buf, r2))
    for prog, bufs in by_prog.items():
        _deallocate_intermediates(prog, bufs)
    return records


def segment_module(
    module: ModuleOp,
    sizes: dict[int, Shape] | Sequence[Shape | None] | None = None,
    target: GpuTarget = DEFAULT_TARGET,
    preallocate: bool = True,
) -> dict[str, list[SegmentRecord]]:
    """Segment every launched fusion of ``module``; the records by fusion name."""
    ensure_programs(module)
    if sizes is not None and len(programs(module)) != 1:
        raise HostPassError("segment: sizes needs a module with exactly one hir.program")
    if sizes is not None and not isinstance(sizes, dict):
        sizes = {i: tuple(s) for i, s in enumerate(sizes) if s is not None}
    table = launches_by_callee(module)
    out: dict[str, list[SegmentRecord]] = {}
    for name, fusion in fusions_by_name(module).items():
        launches = [drop_outs(la) for la in table.get(name, [])]
        if not launches:
            continue
        out[name] = segment_fusion_launches(module, fusion, launches, sizes, target, preallocate)
    return out


def declare_output_layouts(
    segment: F.FusionOp, outputs: Sequence[SSAValue], laid_out: dict[SSAValue, F.TensorType]
) -> None:
    """A segment output that the fusion returns in a declared layout
    (``add_output(t, stride_order=...)``) is declared in that layout by the segment
    too: its buffer is then allocated in it (``mark_aliases.preallocate_outputs``) and
    the kernel writes it."""
    types = list(segment.function_type.outputs.data)
    for k, v in enumerate(outputs):
        t = laid_out.get(v)
        if t is not None:
            old = types[k]
            assert isinstance(old, F.TensorType)
            types[k] = F.TensorType(old.get_shape(), old.element_type, None, list(t.get_stride_order()))
    segment.function_type = FunctionType.from_lists(list(segment.function_type.inputs.data), types)


def copy_outputs_with_other_layouts(fusion: F.FusionOp) -> None:
    """A value returned more than once in different declared layouts
    (``add_output(t)`` and ``add_output(t, stride_order=[0, 1])``) needs a buffer per
    layout: each later return whose stride order differs from the value's first one
    returns a ``fuser.set`` copy, so that segmentation gives it its own output (and
    ``declare_output_layouts`` its layout)."""
    term = fusion.output_op
    first: dict[SSAValue, tuple[int, ...]] = {}
    returned = iter(fusion.function_type.outputs.data)
    operands = list(term.values)
    for i, (v, alias) in enumerate(zip(operands, term.get_alias_inputs(), strict=True)):
        if alias >= 0:
            continue
        declared = next(returned)
        if not isinstance(declared, F.TensorType):
            continue
        order = declared.get_stride_order()
        if first.setdefault(v, order) != order:
            copy = F.SetOp(v)
            fusion.body.block.insert_op_before(copy, term)
            term.operands[i] = copy.result


@dataclass(frozen=True)
class SegmentPass(ModulePass):
    """Cut fusions into scheduler-accepted segments and emit the host program."""

    name = "segment"

    gpu: str = ""
    preallocate: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(op, self.gpu, self.name)
        segment_module(op, None, target, self.preallocate)
