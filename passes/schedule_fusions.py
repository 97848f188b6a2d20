"""``schedule-fusions``: apply each fusion's scheduler parameters as iter-domain transforms.

For every ``fuser.fusion`` that carries a ``fuser.schedule`` attribute (written by
``select-schedulers``), the pass schedules a *reference* tensor the way nvFuser's
schedulers do, then replays the same transforms on every tensor whose axes line up
with the reference's (same axis classes in the domain map, extent-1 axes standing in
as broadcast ids), and binds the loop ids to ``BIDx``/``BIDy``/``TIDx``/``TIDy``,
``vectorize`` and ``unroll``. Reshapes with a static ``#fuser.view`` are written as
``iterdomain.root`` + splits/merges + ``iterdomain.rfactor`` first (seed 003).

* ``pointwise``: reference = the output; all axes merged (or the axes left and right
  of ``break_point`` into two), the inner one split by ``vectorization``, ``block.x``
  and ``unroll``: ``[BIDx, unroll, TIDx, vectorize]`` (2-D: the outer one split by
  ``block.y`` and ``unroll``: ``[BIDy, BIDx, unroll, TIDy, TIDx, vectorize]``).
* ``reduction`` / ``inner_persistent``: reference = the first
  reduction result (its logical domain holds the reduced axes as ``reduction`` ids);
  kept axes merged into rows, reduced axes into one. Inner: the reduced axis split by
  ``vectorization`` and ``threads_per_row`` (``TIDx``), the outer rest is the serial
  (persistent: ``unroll``ed) batch, rows split by ``rows_per_block`` (``TIDy``), rest
  ``BIDx``. Outer: rows split by ``vectorization`` and ``block.x`` (``TIDx``), the
  reduced axis by ``threads_per_row`` (``TIDy``). ``cross_grid``: the reduction rest
  is split into ``grid.y`` parts on ``BIDy`` (inner persistent: a ``clustered``
  ``BIDy``, the row's blocks one thread-block cluster that combines its reductions in
  the kernel; the reductions are placed past it). Inner persistent also places its tensors
  (nvFuser's computeAt and persistent buffers): every reduction at the end of its
  iteration loops (``compute_at``), and the fusion inputs that two stages read held
  there in registers (``memory = "registers"``); the rest is inlined, unless the
  stages would then recompute more than ``RECOMPUTE_FACTOR`` times the fusion's ops
  (chained normalizations, each stage recomputing every earlier block from the
  inputs): then the persistent buffers computed in the fusion are held too, as they
  are whenever the parameters' ``hold_buffers`` asks for it.
* ``outer_persistent``: two loop nests (``OuterPersistentParams``): the reductions, and
  what is computed at their shape, as the reduction kind schedules an outer reduction
  with ``stats``; the tensors at the reduced input's shape (the normalized outputs:
  the apply kernel, which reads the statistics back) as the pointwise kind schedules
  the highest-rank such output with ``apply``, its outermost block id reversed with
  ``reverse_apply`` (``iterdomain.reverse``: the first blocks take the last rows).
* ``inner_outer_persistent``: with ``single_kernel``, one loop nest: the inner
  persistent schedule ``inner`` on a persistent grid (``[BIDx, rows, TIDy | batch,
  TIDx, vec]``), the column reductions replaying it (their rows reduced: ``BIDx``, the
  row loop and ``TIDy``) and placed at the rows' loop with the row reductions, so the
  lowering folds them across its iterations (``_inner_outer_single_kernel``).
  Otherwise the two kernel groups it runs as (a loop nest each, see
  ``codegen/lower/loop_nest_groups.py``): the column reductions scheduled as
  ``cols_kind`` with ``cols`` (the column half's own heuristic), the row reductions and
  every other tensor as ``rows_kind`` with ``rows``, placed as the inner persistent
  kind places them for the row outputs (those computed from no column reduction).
* ``transpose``: the two groups' innermost axes split by ``tile1`` / ``tile2``, the
  outer parts merged into ``BIDx``, the ``tile2 x tile1`` tile (``tile1 x tile2`` for
  group 2) merged and split by the group's vectorization and ``block.x`` (``TIDx``),
  the rest ``unroll``. Group 2's fusion inputs are computed at the tile's loop in
  shared memory (``compute_at = 1, memory = "shared"``): loaded along their own
  innermost axis, read by the outputs along theirs.
* ``no_op``: host work (views of its inputs); the kernels that materialize it when
  the host cannot return views (an expand the caller's array type cannot view): per
  output shape, the ``pointwise`` schedule of its highest-rank output, replayed on
  what those outputs read, with ``vectorization`` = 16 bytes of the widest output of
  that shape, halved until it divides every innermost extent (1 when they are
  symbolic), and ``block.x = 128`` (the lowering runs a kernel per loop nest).
  Nothing for an empty output, nor when every output is an input.
* ``expr_eval``: nothing (scalar host work); ``matmul``: nothing (a library call).

``vectorize`` binds only tensors read or written in global memory (fusion inputs and
returned outputs), on non-reduction ids of at most 16 bytes; other tensors keep that
id serial. Extents stay symbolic (``?``) when the types are: the splits use the
params' static factors. A vectorized axis must be divisible by the vector width, so a
symbolic one must be bound first (``bind-sizes{sizes="0=4x1024,1=1024"}``): the pass
checks the bound extents. A pointwise space with one moving axis is the exception: its
last vector may be partial (``Parallelize.partial``; the lowering predicates it lane
by lane).

Before (after ``select-schedulers``)::

    fuser.fusion @scale(%x : !fuser.tensor<1024x512xf32>) -> !fuser.tensor<1024x512xf32>
        attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 4 : i64,
                    unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 1024, 1, 1>}} {
      %y = fuser.mul %x, %x : ...
      fuser.output %y : !fuser.tensor<1024x512xf32>
    }

After ``schedule-fusions`` (types elided; ``%x`` gets the same ops)::

      %0, %1 = iterdomain.logical %y
      %2 = iterdomain.merge %0, %1                      // 524288
      %3, %4 = iterdomain.split %2 by 4                 // 131072, 4
      %5, %6 = iterdomain.split %3 by 128               // 1024, 128
      %y_bidx = iterdomain.parallelize %5 to BIDx
      %y_tidx = iterdomain.parallelize %6 to TIDx
      %y_vec = iterdomain.parallelize %4 to vectorize
      iterdomain.loop %y [%y_bidx, %y_tidx, %y_vec]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from fuser.codegen.lower.loop_index import MAX_LANES, tensor_name
from fuser.ir.dialects.fuser import FusionOp, ReshapeOp, SizeOp, TensorType, ViewAttr
from fuser.ir.dialects.iterdomain import (
    MAX_VECTOR_BYTES,
    THREAD_TYPES,
    AlignOp,
    IterDomainType,
    IterType,
    LoopOp,
    MemoryType,
    ParallelType,
    RootOp,
    SplitOp,
    logical_domain_types,
    logical_to_tensor_axes,
)
from fuser.ir.reshape_analysis import analyze_reshape
from fuser.ir.schedule import Schedule, emit_reshape_view
from fuser.ir.shapes import DYN, fmt_shape
from fuser.passes.select_schedulers import SCHEDULE_ATTR
from fuser.passes.target_option import resolve_target
from fuser.schedulers.analysis.domain_map import Axis, DomainMap, build_domain_map
from fuser.schedulers.analysis.graph import (
    ancestors,
    body_ops,
    descendants,
    fastest_axis,
    is_elementwise,
    is_reduction,
    reduction_dims,
    reduction_input,
    returned_outputs,
)
from fuser.schedulers.analysis.persistent_buffers import find_persistent_buffers
from fuser.schedulers.analysis.sizes import ConcreteSizes, SizeBindingError, bind_sizes
from fuser.schedulers.analysis.transpose import find_transpose_groups
from fuser.schedulers.base import max_itemsize, vector_width
from fuser.schedulers.params import (
    InnerOuterParams,
    OuterPersistentParams,
    PointwiseParams,
    ReductionParams,
    ScheduleAttrError,
    TransposeParams,
    read_schedule,
)
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget


class ScheduleFusionsError(DiagnosticException):
    """Bad pass options, a missing or garbled ``fuser.schedule``, or parameters that
    do not fit the fusion."""


# =====================================================================================
# Schedules as replayable steps
# =====================================================================================


@dataclass(frozen=True)
class Merge:
    axis: int
    other: int


@dataclass(frozen=True)
class Split:
    axis: int
    factor: int
    inner_split: bool = True


@dataclass(frozen=True)
class Reorder:
    order: tuple[int, ...]


@dataclass(frozen=True)
class Parallelize:
    axis: int
    ptype: ParallelType
    clustered: bool = False
    partial: bool = False
    """``vectorize`` even where the split does not divide the axis: the last vector
    is partial (a 1-D pointwise space; the lowering predicates it lane by lane)."""


@dataclass(frozen=True)
class Reverse:
    axis: int


@dataclass(frozen=True)
class Align:
    axis: int
    factor: int


Step = Merge | Split | Reorder | Parallelize | Reverse | Align


class Steps:
    """Builds a list of steps while tracking the loop axes by name, so that schedules
    are written as ``merge``/``split`` of named axes and replayed by position."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names: list[str] = list(names)
        self.steps: list[Step] = []

    def pos(self, name: str) -> int:
        return self.names.index(name)

    def merge(self, outer: str, inner: str, into: str) -> None:
        a, b = self.pos(outer), self.pos(inner)
        self.steps.append(Merge(a, b))
        self.names[a] = into
        del self.names[b]

    def merge_all(self, names: Sequence[str], into: str) -> bool:
        """Merge ``names`` (outermost first) into one axis; False when empty."""
        if not names:
            return False
        self.rename(names[0], into)
        for n in names[1:]:
            self.merge(into, n, into)
        return True

    def rename(self, old: str, new: str) -> None:
        self.names[self.pos(old)] = new

    def split(
        self, name: str, factor: int, outer: str, inner: str, inner_split: bool = True
    ) -> None:
        """Split ``name`` by ``factor`` (a factor of 1 only renames, when ``inner_split``
        keeps the whole extent outside: no split op is emitted)."""
        a = self.pos(name)
        self.steps.append(Split(a, factor, inner_split))
        self.names[a : a + 1] = [outer, inner]

    def reorder(self, names: Sequence[str]) -> None:
        order = tuple(self.pos(n) for n in names)
        if order != tuple(range(len(self.names))):
            self.steps.append(Reorder(order))
        self.names = list(names)

    def parallelize(self, name: str, ptype: ParallelType, clustered: bool = False, partial: bool = False) -> None:
        self.steps.append(Parallelize(self.pos(name), ptype, clustered, partial))

    def reverse(self, name: str) -> None:
        self.steps.append(Reverse(self.pos(name)))

    def align(self, name: str, factor: int) -> None:
        self.steps.append(Align(self.pos(name), factor))

    def has(self, name: str) -> bool:
        return name in self.names


_PTYPE_NAMES = {
    ParallelType.BIDx: "bidx",
    ParallelType.BIDy: "bidy",
    ParallelType.TIDx: "tidx",
    ParallelType.TIDy: "tidy",
    ParallelType.vectorize: "vec",
    ParallelType.unroll: "unroll",
}


def _aligned_lanes(v: SSAValue) -> bool:
    """Whether loop id ``v`` is the lane loop of aligned rows: the serial inner part
    (at most ``MAX_LANES``) of a split of an ``iterdomain.align`` result, which the
    lowering unrolls into lanes (``reduction_steps``)."""
    t, split = v.type, v.owner
    return (
        isinstance(t, IterDomainType) and t.parallel_type == ParallelType.serial and t.extent <= MAX_LANES
        and isinstance(split, SplitOp) and v is split.inner and isinstance(split.input.owner, AlignOp)
    )


def _vectorizable(
    tensor: SSAValue, sched: Schedule, axis: int, global_io: set[SSAValue], partial: bool = False
) -> bool:
    """Whether ``axis`` of ``tensor``'s loop domain may be vectorized: a tensor in
    global memory, an iteration id of at most 16 bytes, from a split that divides (an
    extent-1 axis standing in for a broadcast, split by the reference's vector width,
    does not); with ``partial``, from a split of a longer axis that need not divide
    (its last vector is partial)."""
    t = sched.types[axis]
    dtype = tensor.type.dtype  # type: ignore[union-attr]
    split = sched.ids[sched._axis(axis)].owner
    if isinstance(split, SplitOp):
        parent = split.input.type.extent  # type: ignore[attr-defined]
        if parent == DYN or (parent % t.extent and not (partial and parent > t.extent)):
            return False
    return (
        tensor in global_io
        and t.iter_type != IterType.reduction
        and t.extent != DYN
        and t.extent * dtype.itemsize <= MAX_VECTOR_BYTES
    )


Through = Sequence[tuple[Sequence[int], ReshapeOp]]
"""Reshapes to replay on a tensor before the reference's steps: for each, the
permutation lining the current loop domain up with the reshape's input, then the
reshape's keep/merge/split transforms."""


def replay(
    tensor: SSAValue,
    perm: Sequence[int],
    steps: Sequence[Step],
    global_io: set[SSAValue],
    through: Through = (),
    verified: set[tuple[object, ...]] | None = None,
) -> LoopOp:
    """Schedule ``tensor``: replay the reshapes ``through`` on its logical ids, reorder
    them by ``perm`` (into the reference's axis order), apply ``steps``, emit and
    verify. Loop ids get readable names.

    ``verified``: the replays known to verify, by what decides the ops' types (the
    types of the tensor's logical ids and whether they are new, ``perm``, ``steps``,
    whether the tensor is in global memory and its element size); such a replay is
    emitted without verifying its ops again (a pointwise chain of 10,000 tensors
    repeats one), and a verified one is added."""
    s = Schedule(tensor)
    key: tuple[object, ...] | None = None
    if verified is not None and not through:
        t = tensor.type
        key = (
            tuple(v.type for v in s.ids),
            len(s.ops),
            tuple(perm),
            tuple(steps),
            tensor in global_io,
            t.dtype.itemsize if isinstance(t, TensorType) else None,
        )
    for p, reshape in through:
        if list(p) != list(range(len(p))):
            s.reorder(p)
        in_t = reshape.input.type
        assert reshape.view is not None and isinstance(in_t, TensorType)
        s.view(reshape.view.resolved_steps(in_t.get_shape()))
    if list(perm) != list(range(len(perm))):
        s.reorder(perm)
    for step in steps:
        if isinstance(step, Merge):
            s.merge(step.axis, step.other)
        elif isinstance(step, Split):
            s.split(step.axis, step.factor, step.inner_split)
        elif isinstance(step, Reorder):
            s.reorder(step.order)
        elif isinstance(step, Reverse):
            s.reverse(step.axis)
        elif isinstance(step, Align):
            t = s.types[step.axis]
            if not (t.iter_type == IterType.broadcast and t.extent == 1):  # an extent-1 broadcast: no row to shift
                s.align(step.axis, step.factor)
        elif step.ptype != ParallelType.vectorize or _vectorizable(tensor, s, step.axis, global_io, step.partial):
            s.parallelize(step.axis, step.ptype, step.clustered)
    loop = s.emit(verify=key is None or key not in verified)  # type: ignore[operator]
    if key is not None:
        verified.add(key)  # type: ignore[union-attr]
    base = tensor.name_hint or "t"
    for v in loop.ids:
        p = v.type.parallel_type  # type: ignore[attr-defined]
        if p in _PTYPE_NAMES and v.name_hint is None:
            v.name_hint = f"{base}_{_PTYPE_NAMES[p]}"
    return loop


# =====================================================================================
# Which tensors share the reference's loop structure
# =====================================================================================


def logical_classes(dmap: DomainMap, v: SSAValue) -> list[Axis]:
    """The domain-map class of each logical id of ``v`` (a reduction result's reduced
    ids, dropped or kept as extent-1 axes, take the reduction input's classes)."""
    owner = v.owner
    if is_reduction(owner if isinstance(owner, Operation) else None):
        x = reduction_input(owner)  # type: ignore[arg-type]
        axes = logical_to_tensor_axes(v)
        types = logical_domain_types(v)
        return [
            dmap.axis_class(x, k) if a is None or t.iter_type == IterType.reduction else dmap.axis_class(v, a)
            for k, (a, t) in enumerate(zip(axes, types, strict=True))
        ]
    return dmap.classes(v)


def alignment(
    dmap: DomainMap,
    ref: SSAValue,
    v: SSAValue,
    identity_only: bool,
    by_extent: bool = False,
    reduce_iterations: bool = False,
) -> list[int] | None:
    """The permutation taking ``v``'s logical ids to the reference's axis order (new
    position k = old ``perm[k]``), or None when ``v`` does not line up: each
    non-broadcast id must be in the class of a distinct reference id, the reduction
    ids of ``v`` only where the reference has reduction ids. With ``by_extent``, an id
    in no reference class lines up with the reference id at its position when their
    static extents are equal (an axis met only through a broadcast of the reduced
    axis, as seed 000's ``add(y, broadcast(sum(x)))``: nvFuser's permissive map). A
    schedule is only a schedule: indices always come from the tensor's own loop
    domain, so a loose match costs speed, never correctness. With
    ``reduce_iterations``, a reduction id of ``v`` may also line up with an iteration
    id of the reference (a column sum on the rows' loops of a row normalization)."""
    ref_types = logical_domain_types(ref)
    v_types = logical_domain_types(v)
    if len(v_types) != len(ref_types):
        return None
    ref_cls, v_cls = logical_classes(dmap, ref), logical_classes(dmap, v)
    perm: list[int | None] = [None] * len(ref_cls)
    unit: list[int] = []
    for i, (c, t) in enumerate(zip(v_cls, v_types, strict=True)):
        if t.extent == 1:  # type: ignore[attr-defined]
            unit.append(i)
            continue
        if c not in ref_cls:
            rt = ref_types[i]
            if by_extent and t.extent != DYN and rt.extent == t.extent and perm[i] is None:  # type: ignore[attr-defined]
                perm[i] = i
                continue
            return None
        k = ref_cls.index(c)
        if perm[k] is not None:
            return None
        perm[k] = i
    free = [k for k in range(len(perm)) if perm[k] is None]
    for k, i in zip(free, unit, strict=True):
        perm[k] = i
    out = [p for p in perm if p is not None]
    if identity_only and out != list(range(len(out))):
        return None
    for k, i in enumerate(out):
        red_v = v_types[i].iter_type == IterType.reduction  # type: ignore[attr-defined]
        red_r = ref_types[k].iter_type == IterType.reduction  # type: ignore[attr-defined]
        if red_v and not red_r and not reduce_iterations:
            return None
    return out


def with_static_view(reshape: ReshapeOp) -> None:
    """Give a static reshape written without ``#fuser.view`` its keep/merge/split view
    (the one ``fuser.reshape``'s builder computes); symbolic ones keep none."""
    t, r = reshape.input.type, reshape.result.type
    if reshape.view is not None or reshape.sizes:
        return
    if not isinstance(t, TensorType) or not isinstance(r, TensorType):
        return
    if DYN in t.get_shape() or DYN in r.get_shape():
        return
    reshape.view = ViewAttr(analyze_reshape(t.get_shape(), r.get_shape()))


def static_reshapes(fusion: FusionOp) -> list[ReshapeOp]:
    """The reshapes written as root -> rfactor transforms (a static ``#fuser.view``)."""
    return [op for op in body_ops(fusion) if isinstance(op, ReshapeOp) and op.view is not None]


def reshape_covered(dmap: DomainMap, out: SSAValue, reshapes: Sequence[ReshapeOp]) -> set[Axis]:
    """The axis classes a loop nest over all of ``out`` visits once the reshapes'
    transforms are replayed: ``out``'s own classes, and the input classes of every
    reshape whose result axes are all visited (its rfactor domain is a split/merge
    of its root domain, so covering one covers the other)."""
    covered = set(logical_classes(dmap, out))
    changed = True
    while changed:
        changed = False
        for r in reshapes:
            shape = r.result.type.get_shape()
            result = [c for c, e in zip(dmap.classes(r.result), shape, strict=True) if e != 1]
            if all(c in covered for c in result):
                new = set(dmap.classes(r.input)) - covered
                if new:
                    covered |= new
                    changed = True
    return covered


def reshape_reference(dmap: DomainMap, fusion: FusionOp) -> SSAValue | None:
    """nvFuser's pointwise reference with reshapes: the returned output of highest rank
    whose loop nest, with the reshapes' transforms replayed, visits every non-broadcast
    axis of every tensor input."""
    reshapes = static_reshapes(fusion)
    inputs = [a for a in fusion.inputs if isinstance(a.type, TensorType)]
    best: SSAValue | None = None
    for out in returned_outputs(fusion):
        t = out.type
        if not isinstance(t, TensorType):
            continue
        covered = reshape_covered(dmap, out, reshapes)
        if not all(
            c in covered
            for x in inputs
            for c, e in zip(dmap.classes(x), x.type.get_shape(), strict=True)  # type: ignore[union-attr]
            if e != 1
        ):
            continue
        if best is None or t.rank > best.type.rank:  # type: ignore[union-attr]
            best = out
    return best


def reshape_path(
    dmap: DomainMap, ref: SSAValue, v: SSAValue, reshapes: Sequence[ReshapeOp]
) -> tuple[list[tuple[list[int], ReshapeOp]], list[int]] | None:
    """The reshapes to replay on ``v`` so that its loop domain lines up with ``ref``
    (each with the permutation into the reshape input's order) and the final
    permutation into ``ref``'s order; None when no chain of reshapes gets there.
    Breadth first: the shortest chain."""
    frontier: list[tuple[SSAValue, list[tuple[list[int], ReshapeOp]]]] = [(v, [])]
    seen: set[SSAValue] = {v}
    while frontier:
        nxt: list[tuple[SSAValue, list[tuple[list[int], ReshapeOp]]]] = []
        for w, path in frontier:
            final = alignment(dmap, ref, w, identity_only=False)
            if final is not None and path:
                return path, final
            for r in reshapes:
                if r.result in seen:
                    continue
                perm = alignment(dmap, r.input, w, identity_only=False)
                if perm is not None:
                    seen.add(r.result)
                    nxt.append((r.result, [*path, (perm, r)]))
        frontier = nxt
    return None


def fusion_tensors(fusion: FusionOp) -> list[SSAValue]:
    vals = [a for a in fusion.inputs if isinstance(a.type, TensorType)]
    for op in body_ops(fusion):
        vals += [r for r in op.results if isinstance(r.type, TensorType)]
    return vals


# =====================================================================================
# The schedulers
# =====================================================================================


def pointwise_steps(rank: int, p: PointwiseParams, reverse_blocks: bool = False, partial: bool = False) -> Steps:
    """The pointwise schedule of a tensor of ``rank`` axes; ``reverse_blocks``: the
    outermost block axis (``BIDy``, else ``BIDx``) walks its range backwards, so the
    first blocks take the last elements; ``partial``: the vector width need not divide
    the (one moving) axis (``Parallelize.partial``)."""
    s = Steps([f"a{i}" for i in range(rank)])
    bp = p.break_point if 0 < p.break_point < rank else 0
    par: dict[str, ParallelType] = {}
    if not s.merge_all(s.names[bp:], "rhs"):
        return s
    _split(s, "rhs", p.vectorization, "rhs", "vec", par, ParallelType.vectorize)
    _split(s, "rhs", p.block[0], "rhs", "tidx", par, ParallelType.TIDx)
    if bp == 0:
        _split(s, "rhs", p.unroll, "bidx", "unroll", par, ParallelType.unroll)
    else:
        s.rename("rhs", "bidx")
        s.merge_all(s.names[:bp], "lhs")
        _split(s, "lhs", p.block[1], "lhs", "tidy", par, ParallelType.TIDy)
        _split(s, "lhs", p.unroll, "bidy", "unroll", par, ParallelType.unroll)
        par["bidy"] = ParallelType.BIDy
    par["bidx"] = ParallelType.BIDx
    order = [n for n in ["bidy", "bidx", "unroll", "tidy", "tidx", "vec"] if s.has(n)]
    s.reorder(order)
    if reverse_blocks:
        s.reverse(order[0])
    for n in order:
        s.parallelize(n, par[n], partial=partial and n == "vec")
    return s


OUTER_ROWS_UNROLL = 4
"""Rows of an outer reduction (``reduction`` kind over a slow axis) each thread loads
per iteration of its serial loop: an ``unroll`` split of the batch."""


def reduction_steps(
    types: Sequence[Any], p: ReductionParams, kind: str, persistent_grid: bool
) -> Steps:
    """Steps for a tensor whose logical ids ``types`` hold the reduced axes as
    reduction ids."""
    s = Steps([f"a{i}" for i in range(len(types))])
    red = [f"a{i}" for i, t in enumerate(types) if t.iter_type == IterType.reduction]
    rows = [f"a{i}" for i, t in enumerate(types) if t.iter_type != IterType.reduction]
    has_r = s.merge_all(red, "r")
    has_i = s.merge_all(rows, "i")
    persistent = kind != "reduction"
    batch_type = ParallelType.unroll if persistent else ParallelType.serial
    clustered = False
    order: list[str] = []
    par: dict[str, ParallelType] = {}
    gy = p.grid[1]
    if p.fastest_dim:
        if has_r and p.aligned_vectors and len(red) == 1 and p.vectorization > 1:
            # Rows whose width the vector does not divide: the row's places shifted
            # to aligned groups of ``vectorization`` (iterdomain.align), a serial
            # lane loop each that the lowering unrolls into lanes (vector accesses
            # where a group is inside the row, element by element at its edges).
            s.align("r", p.vectorization)
            _split(s, "r", p.vectorization, "r", "vec", par, ParallelType.serial)
        elif has_r:
            _split(s, "r", p.vectorization, "r", "vec", par, ParallelType.vectorize)
        if has_r:
            _split(s, "r", p.threads_per_row, "batch", "tidx", par, ParallelType.TIDx)
            if p.cross_grid and gy > 1 and not persistent_grid:
                s.split("batch", gy, "bidy", "batch", inner_split=False)
                par["bidy"] = ParallelType.BIDy
                # A persistent row split over blocks: they are one thread-block
                # cluster, which combines the row's reductions in the kernel.
                clustered = kind == "inner_persistent"
            par["batch"] = batch_type
        if has_i:
            _split(s, "i", p.rows_per_block, "bidx", "tidy", par, ParallelType.TIDy)
            if persistent_grid:
                s.split("bidx", p.grid[0], "bidx", "rows", inner_split=False)
            par["bidx"] = ParallelType.BIDx
        order = ["bidx", "rows", "bidy", "tidy", "batch", "tidx", "vec"]
    else:
        if has_i:
            _split(s, "i", p.vectorization, "i", "vec", par, ParallelType.vectorize)
            _split(s, "i", p.block[0], "bidx", "tidx", par, ParallelType.TIDx)
            par["bidx"] = ParallelType.BIDx
        if has_r:
            _split(s, "r", p.threads_per_row, "batch", "tidy", par, ParallelType.TIDy)
            if not persistent:
                # OUTER_ROWS_UNROLL rows a thread per iteration, every load first.
                _split(s, "batch", OUTER_ROWS_UNROLL, "batch", "unroll", par, ParallelType.unroll)
            if p.cross_grid and gy > 1:
                if persistent:
                    s.split("batch", gy, "bidy", "batch", inner_split=False)
                else:
                    # The blocks of a column interleave: block y takes the row groups
                    # y, y + gy, ..., so all of them read one band of rows that moves
                    # through memory together.
                    s.split("batch", gy, "batch", "bidy")
                par["bidy"] = ParallelType.BIDy
            par["batch"] = batch_type
        order = ["bidx", "bidy", "batch", "unroll", "tidy", "tidx", "vec"]
    order = [n for n in order if s.has(n)]
    s.reorder(order)
    for n in order:
        if par.get(n, ParallelType.serial) != ParallelType.serial:
            s.parallelize(n, par[n], clustered and n == "bidy")
    return s


def _split(
    s: Steps,
    name: str,
    factor: int,
    outer: str,
    inner: str,
    par: dict[str, ParallelType],
    ptype: ParallelType,
) -> None:
    """``split(name, factor)`` binding the inner part to ``ptype``; a factor of 1
    emits nothing and only renames ``name`` to ``outer``."""
    if factor > 1:
        s.split(name, factor, outer, inner)
        par[inner] = ptype
    else:
        s.rename(name, outer)


def transpose_steps(rank: int, inner1: int, inner2: int, p: TransposeParams, group: int) -> Steps:
    s = Steps([f"a{i}" for i in range(rank)])
    s.split(f"a{inner1}", p.tile1, "o1", "t1")
    s.split(f"a{inner2}", p.tile2, "o2", "t2")
    outer = [n for n in s.names if n not in ("t1", "t2")]
    tile = ["t2", "t1"] if group == 1 else ["t1", "t2"]
    s.reorder(outer + tile)
    s.merge_all(outer, "bidx")
    s.merge_all(tile, "tile")
    par: dict[str, ParallelType] = {"bidx": ParallelType.BIDx}
    vec = p.vectorization1 if group == 1 else p.vectorization2
    _split(s, "tile", vec, "tile", "vec", par, ParallelType.vectorize)
    _split(s, "tile", p.block[0], "serial", "tidx", par, ParallelType.TIDx)
    par["serial"] = ParallelType.unroll
    for n in ["bidx", "serial", "tidx", "vec"]:
        if s.has(n) and n in par:
            s.parallelize(n, par[n])
    return s


# =====================================================================================
# The pass
# =====================================================================================


def read_params(fusion: FusionOp) -> tuple[str, object] | None:
    """``(kind, params)`` of the fusion's ``fuser.schedule`` (``read_schedule``); None
    when absent."""
    attr = fusion.attributes.get(SCHEDULE_ATTR)
    if attr is None:
        return None
    try:
        return read_schedule(attr)
    except ScheduleAttrError as e:
        raise ScheduleFusionsError(
            f"schedule-fusions: @{fusion.sym_name.data}: {SCHEDULE_ATTR}: {e}"
        ) from None


def concrete_sizes(fusion: FusionOp, need: bool) -> ConcreteSizes | None:
    """Concrete sizes of every value from the static types of the inputs (``bind-sizes``
    writes them); None when some input is symbolic and ``need`` is False."""
    name = f"@{fusion.sym_name.data}"
    inputs: list[object] = []
    for i, a in enumerate(fusion.inputs):
        if isinstance(a.type, TensorType):
            if DYN in a.type.get_shape():
                if not need:
                    return None
                raise ScheduleFusionsError(
                    f"schedule-fusions: {name}: input #{i} has symbolic extents "
                    f"{fmt_shape(a.type.get_shape())} and the schedule vectorizes; bind them "
                    f'first (bind-sizes{{sizes="{i}=..."}}) so that the vector width can be checked'
                )
            inputs.append(a.type.get_shape())
        else:
            inputs.append(None)
    try:
        return bind_sizes(fusion, inputs)
    except SizeBindingError as e:
        raise ScheduleFusionsError(f"schedule-fusions: {e}") from None


def _check_vector(
    fusion: FusionOp, tensors: Sequence[SSAValue], sizes: ConcreteSizes, vec: int, what: str
) -> None:
    """The vectorized axis (innermost of each global tensor) must divide by ``vec``."""
    for v in tensors:
        t = v.type
        if not isinstance(t, TensorType) or vec <= 1:
            continue
        shape = sizes.shape(v)
        axis = fastest_axis(t, shape)
        if axis is None:
            continue
        if shape[axis] % vec:
            raise ScheduleFusionsError(
                f"schedule-fusions: @{fusion.sym_name.data}: {what} = {vec} does not divide "
                f"the innermost extent {shape[axis]} of {v.name_hint or 'a tensor'} "
                f"(shape {list(shape)})"
            )


_VECTOR_FIELDS = ("vectorization", "vectorization1", "vectorization2", "outer_vectorization")


@dataclass
class _FusionScheduler:
    fusion: FusionOp
    kind: str
    params: Any
    target: GpuTarget = DEFAULT_TARGET

    def __post_init__(self) -> None:
        self.name = f"@{self.fusion.sym_name.data}"
        self.global_io = {a for a in self.fusion.inputs if isinstance(a.type, TensorType)}
        self.global_io |= {
            v for v in returned_outputs(self.fusion) if isinstance(v.type, TensorType)
        }
        self.done: set[SSAValue] = set()
        self.verified: set[tuple[object, ...]] = set()
        """Replays that verified (``replay``)."""
        self.materialize: list[tuple[SSAValue, PointwiseParams, set[SSAValue]]] = []
        """A no-op segment's materializing loop nests (``_materialization``)."""

    def fail(self, msg: str) -> ScheduleFusionsError:
        return ScheduleFusionsError(f"schedule-fusions: {self.name}: {msg}")

    def run(self) -> None:
        if self.kind in ("expr_eval", "matmul", "communication"):
            return  # host scalars; a library call
        if self.kind == "no_op":
            if not self._materialization():
                return
        if any(isinstance(op, LoopOp) for op in self.fusion.body.block.ops):
            return  # already scheduled (the driver's pipeline schedules some kinds)
        if any(isinstance(op, RootOp) for op in self.fusion.body.block.ops):
            raise self.fail("the fusion has iterdomain.root ops but no loop domains (a partial schedule)")
        p = self.params
        self.check_prefetch(p)
        vecs = [getattr(p, f, 1) for f in _VECTOR_FIELDS] + [
            getattr(getattr(p, sub, None), "vectorization", 1) for sub in ("inner", "stats", "apply")
        ] + [q.vectorization for _, q, _ in self.materialize]
        # Bound before the iterdomain ops exist (size binding replays fuser ops only).
        self.concrete = concrete_sizes(self.fusion, need=max(vecs) > 1)
        for op in body_ops(self.fusion):
            if isinstance(op, ReshapeOp):
                with_static_view(op)
                if op.view is not None:
                    emit_reshape_view(op)
        self.dmap = build_domain_map(self.fusion)
        getattr(self, f"_{self.kind}")()

    def check_prefetch(self, p: object) -> None:
        """A ``prefetch`` only where a schedule places it: the held inputs of the
        one-kernel inner-outer kind (its ``inner`` row schedule, which the two kernel
        groups of ``single_kernel = false`` do not use at all); anywhere else it would
        be dropped without a word."""
        allowed = self.kind == "inner_outer_persistent"
        for sub in ("", "inner", "rows", "cols", "stats"):
            q = getattr(p, sub, None) if sub else p
            if getattr(q, "prefetch", "") and not (allowed and sub == "inner"):
                where = f"{sub}.prefetch" if sub else "prefetch"
                raise self.fail(
                    f"{where} = '{q.prefetch}' in the {self.kind} schedule: only the one-kernel "  # type: ignore[union-attr]
                    "inner_outer_persistent schedule's inner.prefetch is lowered (its held inputs)"
                )

    def _materialization(self) -> bool:
        """A no-op segment's kernels, for when the host cannot return its outputs as
        views of its inputs (an expand the caller's array type cannot view): a
        pointwise loop nest per output shape (outputs of several shapes are a kernel
        each), vectors of 16 bytes of the widest output where the innermost extents
        divide. False when every output is an input or empty (nothing to compute)."""
        outs = [v for v in returned_outputs(self.fusion) if isinstance(v.type, TensorType)]
        if all(isinstance(v, BlockArgument) for v in outs) or not outs:
            return False
        sizes = concrete_sizes(self.fusion, need=False)
        by_shape: dict[tuple[int, ...], list[SSAValue]] = {}
        for v in outs:
            shape = tuple(sizes.shape(v)) if sizes is not None else tuple(v.type.get_shape())  # type: ignore[union-attr]
            if 0 not in shape:  # an empty output has nothing to store
                by_shape.setdefault(shape, []).append(v)
        if not by_shape:
            return False
        for group in by_shape.values():
            reads = ancestors(group) | set(group)
            vec = 1
            if sizes is not None:
                io = [v for v in self.global_io if v in reads]
                inner = [sizes.shape(v)[-1] for v in io if sizes.shape(v)]
                # a broadcast input's extent-1 innermost axis is not vectorized
                vec = vector_width(max_itemsize(group), [e for e in inner if e != 1], self.target)
            ref = max(group, key=lambda v: v.type.rank)  # type: ignore[union-attr]
            self.materialize.append((ref, PointwiseParams(0, vec, 1, (128, 1, 1), (0, 1, 1)), reads))
        return True

    def _no_op(self) -> None:
        """The materializing kernels' loop nests (``_materialization``): each output
        shape's pointwise schedule, replayed on what those outputs read."""
        for ref, p, reads in self.materialize:
            if ref not in self.done:
                self._pointwise_from(ref, p, only=[v for v in fusion_tensors(self.fusion) if v in reads])

    # ---- helpers ------------------------------------------------------------------
    def sizes(self, vec: int) -> ConcreteSizes | None:
        """The concrete sizes (None when symbolic: then ``vec`` is 1)."""
        return self.concrete

    def emit_ref(self, ref: SSAValue, steps: Steps) -> None:
        try:
            replay(ref, range(len(logical_domain_types(ref))), steps.steps, self.global_io)
        except (VerifyException, ValueError) as e:
            raise self.fail(
                f"the {self.kind} schedule of the reference does not verify: {e}"
            ) from None
        self.done.add(ref)

    def take(self, v: SSAValue, perm: Sequence[int], steps: Steps, through: Through = ()) -> None:
        """Schedule ``v`` with the reference's ``steps`` (``replay``) unless it cannot
        take them (then codegen indexes it from its consumers)."""
        try:
            replay(v, perm, steps.steps, self.global_io, through, self.verified)
        except (VerifyException, ValueError):
            return
        self.done.add(v)

    def propagate(
        self,
        ref: SSAValue,
        steps: Steps,
        identity_only: bool = True,
        only: Sequence[SSAValue] | None = None,
        by_extent: bool = False,
    ) -> None:
        for v in only if only is not None else fusion_tensors(self.fusion):
            if v in self.done:
                continue
            perm = alignment(self.dmap, ref, v, identity_only, by_extent)
            if perm is not None:
                self.take(v, perm, steps)

    # ---- kinds --------------------------------------------------------------------
    def propagate_through_reshapes(
        self, ref: SSAValue, steps: Steps, only: Sequence[SSAValue] | None = None
    ) -> None:
        """Schedule the tensors (of ``only``, if given) that line up with ``ref`` only
        through reshapes: the reshapes' transforms are replayed on them first
        (nvFuser's replay through a view), so producers and consumers of a reshape
        share the loop structure."""
        reshapes = static_reshapes(self.fusion)
        for v in only if only is not None else fusion_tensors(self.fusion):
            if v in self.done:
                continue
            found = reshape_path(self.dmap, ref, v, reshapes)
            if found is None:
                continue
            through, perm = found
            self.take(v, perm, steps, through)

    def shape_of(self, v: SSAValue) -> tuple[int, ...]:
        """``v``'s shape: bound (``bind-sizes``) when the types are symbolic."""
        if self.concrete is not None:
            try:
                return tuple(self.concrete.shape(v))
            except KeyError:
                pass
        return tuple(v.type.get_shape())  # type: ignore[union-attr]

    @staticmethod
    def last_axis_fastest(v: SSAValue, sizes: ConcreteSizes) -> bool:
        """Whether ``v``'s last axis is its fastest in memory (or it has none)."""
        shape = sizes.shape(v)
        return not shape or fastest_axis(v.type, shape) in (None, len(shape) - 1)  # type: ignore[arg-type]

    def vectors_along_last_axis(self, sizes: ConcreteSizes) -> None:
        """Vectors run along the last logical axis (the pointwise and reduction
        schedules split it by the vector width): a tensor laid out with another axis
        fastest (``stride_order``) is read element by element, so it is no longer a
        candidate for ``vectorize``."""
        self.global_io = {v for v in self.global_io if self.last_axis_fastest(v, sizes)}

    def reduced_domain(self, red: Operation) -> list[tuple[int, IterType]]:
        """A reduction result's logical domain at the bound sizes: (extent, type) per id."""
        shape = self.shape_of(reduction_input(red))
        types = logical_domain_types(red.results[0])
        return [(e, t.iter_type) for e, t in zip(shape, types, strict=True)]

    def outputs_reference(self) -> SSAValue | None:
        """When no output covers every input axis (an input read through an index:
        index_select's or gather's table, a select, a cumsum's scan axis): the outputs'
        loop nest is still the kernel, every input read at the index the outputs ask
        for, so the reference is the highest-rank returned output, provided every
        returned tensor has its shape up to extent-1 axes (one loop nest for all)."""
        outs = [v for v in returned_outputs(self.fusion) if isinstance(v.type, TensorType)]
        if not outs:
            return None
        shapes = {tuple(e for e in self.shape_of(v) if e != 1) for v in outs}
        if len(shapes) != 1 or DYN in next(iter(shapes)):
            return None
        return max(outs, key=lambda v: v.type.rank)  # type: ignore[union-attr]

    def cover_outputs(self, ref: SSAValue, steps: Steps, shape: Sequence[int] | None = None) -> None:
        """Returned outputs of the reference's logical shape (``shape``; the
        reference's own by default) that no domain-map class lines up with it (a
        ``broadcast_in_dim`` result, an output computed through an index) take the
        reference's transforms as they are: the kernel's loop nest is the outputs',
        and each tensor's indices come from its own loop domain, so an identity
        alignment of equal shapes is always correct."""
        shape = tuple(shape) if shape is not None else self.shape_of(ref)
        for v in returned_outputs(self.fusion):
            if v not in self.done and isinstance(v.type, TensorType) and self.shape_of(v) == shape:
                self.take(v, list(range(len(shape))), steps)

    def _pointwise(self) -> None:
        p: PointwiseParams = self.params
        ref = self.dmap.reference() or reshape_reference(self.dmap, self.fusion) or self.outputs_reference()
        if ref is None:
            symbolic = [
                op for op in body_ops(self.fusion) if isinstance(op, ReshapeOp) and op.view is None
            ]
            why = (
                f"; the reshape of {symbolic[0].input.name_hint or 'a tensor'} has symbolic extents (no "
                "static view to replay)"
                if symbolic
                else ""
            )
            raise self.fail(
                "no output covers every input axis, even with the reshapes' transforms "
                f"replayed, and the outputs differ in shape (no pointwise reference){why}"
            )
        self._pointwise_from(ref, p)

    def _pointwise_from(
        self, ref: SSAValue, p: PointwiseParams, only: Sequence[SSAValue] | None = None, reverse_blocks: bool = False
    ) -> None:
        """The pointwise schedule ``p`` on ``ref``, replayed on every tensor (of
        ``only``, if given) that lines up with it (directly, through reshapes, or a
        returned output of its shape)."""
        sizes = self.sizes(p.vectorization)
        partial = False
        if sizes is not None and not self.last_axis_fastest(ref, sizes):
            # The reference (the loop nest) is laid out with another axis fastest: no
            # vectors along its last axis.
            p = replace(p, vectorization=1)
        if sizes is not None:
            self.vectors_along_last_axis(sizes)
            inner = sizes.shape(ref)[-1] if sizes.shape(ref) else 1
            aligned = [
                v
                for v in self.global_io
                if alignment(self.dmap, ref, v, True) is not None
                and sizes.shape(v)
                and sizes.shape(v)[-1] == inner
            ]
            # One moving axis may end in a partial vector (the lowering predicates it
            # lane by lane); rows may not.
            partial = math.prod(sizes.shape(ref)[:-1]) == 1
            if not partial:
                _check_vector(self.fusion, [ref, *aligned], sizes, p.vectorization, "vectorization")
        rank = ref.type.rank  # type: ignore[union-attr]
        steps = pointwise_steps(rank, p, reverse_blocks, partial)
        self.emit_ref(ref, steps)
        self.propagate(ref, steps, only=only)
        self.propagate_through_reshapes(ref, steps, only=only)
        self.cover_outputs(ref, steps)

    def _reduction_like(self) -> None:
        p: ReductionParams = self.params
        reds = [op for op in body_ops(self.fusion) if is_reduction(op)]
        if not reds:
            raise self.fail(f"a {self.kind} schedule needs a reduction; the fusion has none")
        self._schedule_reductions(reds, p, persistent_grid=False)

    def _outer_persistent(self) -> None:
        """Two loop nests (``OuterPersistentParams``): the reductions, and what is
        computed at their shape, as the reduction kind schedules an outer reduction
        with ``stats``; the tensors at the reduced input's shape (the normalized
        outputs, the apply kernel's loop nest: it reads the statistics back) with the
        pointwise schedule ``apply``."""
        p: OuterPersistentParams = self.params
        reds = [op for op in body_ops(self.fusion) if is_reduction(op)]
        if not reds:
            raise self.fail("an outer_persistent schedule needs a reduction; the fusion has none")
        self.kind = "reduction"
        ref, steps = self._schedule_reductions(reds, p.stats, persistent_grid=False, others=False)
        shape = self.shape_of(reduction_input(reds[0]))
        self.propagate(ref, steps, only=[v for v in fusion_tensors(self.fusion) if self.shape_of(v) != shape])
        self.kind = "outer_persistent"
        outs = [v for v in returned_outputs(self.fusion) if v not in self.done and self.shape_of(v) == shape]
        apply_ref = max(outs, key=lambda v: v.type.rank) if outs else reduction_input(reds[0])  # type: ignore[union-attr]
        if apply_ref not in self.done:
            self._pointwise_from(apply_ref, p.apply, reverse_blocks=p.reverse_apply)

    def _reduction(self) -> None:
        self._reduction_like()
        if places_persistent(self.kind, self.params):
            self.place_persistent(hold=self.params.hold_buffers)

    _inner_persistent = _reduction

    def place_persistent(
        self, reds: Sequence[Operation] | None = None, outputs: Sequence[SSAValue] | None = None, hold: bool = False
    ) -> None:
        """Where the tensors of an inner persistent (or inner reduction) kernel are
        computed (nvFuser's computeAt and persistent buffers): every reduction at the
        end of its iteration loops ``q`` (one per row of the block), every fusion input
        that two stages read (two reductions, or a reduction and the outputs) at ``q``
        in registers, read from global memory once; other tensors are inlined into
        their consumers. Nothing is placed unless the reductions share the reference's
        first ``q`` loops; an input that does not share them is inlined. When the
        stages would recompute too much (``_recomputes_too_much``), the persistent
        buffers are held at ``q`` as well (``hold_buffers``), and so they are when
        ``hold`` (the parameters' ``hold_buffers``). ``reds`` and ``outputs``: the
        kernel's reductions and outputs (all of the fusion's by default; an
        inner-outer fusion's row kernel has only its row ones)."""
        if reds is None:
            reds = [op for op in body_ops(self.fusion) if is_reduction(op)]
        loops = {op.tensor: op for op in self.fusion.body.block.ops if isinstance(op, LoopOp)}
        ref = loops.get(reds[0].results[0])
        if ref is None:
            return
        types = [v.type for v in ref.ids]
        # The first reduction loop, past the clustered block loops (blocks of a cluster
        # combine a row's reductions: they are shared loops of the kernel).
        q = next(
            (k for k, t in enumerate(types) if t.iter_type == IterType.reduction and not t.clustered),  # type: ignore[attr-defined]
            len(types),
        )
        staged = [r.results[0] for r in reds]
        shared = _loop_shape(ref)[:q]

        def shares_loops(loop: LoopOp) -> bool:
            """The loop's first ``q`` ids are the reference's (one kernel loop nest)."""
            return _loop_shape(loop)[:q] == shared

        if any(v not in loops or not shares_loops(loops[v]) for v in staged):
            return
        for v in staged:
            loops[v].set_compute_at(q)
        if outputs is None:
            outputs = returned_outputs(self.fusion)
        stages = [*staged, *(v for v in outputs if v not in staged)]
        stop = set(staged)
        if hold or _recomputes_too_much(stages, stop, len(body_ops(self.fusion))):
            held = self.hold_buffers(reds, loops, shares_loops, stop, asked=hold)
            stop |= set(held)
            stages = [*staged, *held, *(v for v in outputs if v not in stop)]
        readers: dict[SSAValue, int] = {}
        for st in stages:
            for a in _inputs_read_inlined(st, stop):
                readers[a] = readers.get(a, 0) + 1
        unrolled = (ParallelType.unroll, ParallelType.vectorize)
        for a, n in readers.items():
            loop = loops.get(a)
            if n < 2 or loop is None or not shares_loops(loop) or not self.read_in_place(a, stop):
                continue
            inner = [t for t in (v.type for v in loop.ids[q:]) if isinstance(t, IterDomainType)]
            lanes = inner[-1:] if _aligned_lanes(loop.ids[-1]) else []  # unrolled into lanes by the lowering
            if all(
                t.parallel_type in unrolled or t.parallel_type in THREAD_TYPES or t.extent == 1 or t in lanes
                for t in inner
            ):
                loop.set_compute_at(q, MemoryType.registers)

    def hold_buffers(
        self,
        reds: Sequence[Operation],
        loops: dict[SSAValue, LoopOp],
        shares_loops: Callable[[LoopOp], bool],
        staged: set[SSAValue],
        asked: bool = False,
    ) -> list[SSAValue]:
        """The persistent buffers computed inside the fusion (not inputs, not
        reductions) computed at the reductions' position ``q`` in registers, when
        inlining them would recompute too much (``_recomputes_too_much``: chained
        normalizations, each stage recomputing every earlier one from the inputs).
        Each is then computed once per row, and the stages after it read it (nvFuser's
        persistent buffers that are not projected to the inputs). A returned output (the
        loop nest stores it), a buffer whose loops are not the reference's, that is read
        at another index, or whose inner loops are not unrolled (registers are indexed
        at compile time) stays inlined. Its
        innermost serial loop (unrolled into lanes) is at most 16 bytes, or at most
        ``MAX_LANES`` iterations when ``asked`` (``hold_buffers``: a bf16 row's 8-lane
        vectors held in float32)."""
        q = loops[reds[0].results[0]].compute_at if reds else None
        if q is None:
            return []
        mine = set(reds)
        # An output is stored by the kernel's loop nest, not by a stage at ``q``: one
        # held there would have no store (the lowering rejects it), so it is inlined.
        outputs = set(returned_outputs(self.fusion))
        held: list[SSAValue] = []
        for b in find_persistent_buffers(self.fusion).buffers:
            v = b.value
            owner = v.owner
            if b.reduction not in mine or not isinstance(owner, Operation) or is_reduction(owner) or v in outputs:
                continue
            loop = loops.get(v)
            if loop is None or loop.compute_at is not None or not shares_loops(loop):
                continue
            inner = [t for t in (w.type for w in loop.ids[q:]) if isinstance(t, IterDomainType)]
            if any(t.iter_type == IterType.reduction for t in inner):
                continue
            lanes = inner[-1:] if inner and inner[-1].parallel_type == ParallelType.serial else []
            if lanes and (
                lanes[0].extent > MAX_LANES if asked
                else lanes[0].extent * v.type.dtype.itemsize > MAX_VECTOR_BYTES  # type: ignore[union-attr]
            ):
                continue
            kept = (ParallelType.unroll, ParallelType.vectorize, *THREAD_TYPES)
            if not all(t.parallel_type in kept or t.extent == 1 for t in inner[: len(inner) - len(lanes)]):
                continue
            held.append(v)
        # Each held buffer is read at its own index up to the next held (or staged)
        # tensor; one that is not drops out, and the others are checked again.
        changed = True
        while changed:
            stop = staged | set(held)
            keep = [v for v in held if self.read_in_place(v, stop - {v})]
            changed = len(keep) != len(held)
            held = keep
        for v in held:
            loops[v].set_compute_at(q, MemoryType.registers)
        return held

    def read_in_place(self, a: SSAValue, staged: set[SSAValue]) -> bool:
        """Whether every read of ``a`` (through inlined tensors, up to the staged ones)
        is at ``a``'s own index: elementwise ops whose result has ``a``'s shape and
        reductions of a tensor of that shape. A register tensor is read at the loop
        indices that hold it; a slice, a broadcast or a permute reads elsewhere. A
        ``fuser.size`` reads no element."""
        shape = self.shape_of(a)
        todo, seen = [a], set()
        while todo:
            v = todo.pop()
            for use in v.uses:
                op = use.operation
                if op in seen or op.dialect_name() == "iterdomain" or op is self.fusion.output_op:
                    continue
                seen.add(op)
                if isinstance(op, SizeOp):
                    continue  # reads the extent, not the elements
                if is_reduction(op):
                    if self.shape_of(reduction_input(op)) != shape:
                        return False
                    continue
                res = [r for r in op.results if isinstance(r.type, TensorType)]
                if not is_elementwise(op) or any(self.shape_of(r) != shape for r in res):
                    return False
                todo.extend(r for r in res if r not in staged)
        return True

    def _schedule_reductions(
        self,
        reds: list[Operation],
        p: ReductionParams,
        persistent_grid: bool,
        others: bool = True,
    ) -> tuple[SSAValue, Steps]:
        """Schedule ``reds`` (siblings) with ``p``, and every other tensor that lines up
        with the first (unless ``others`` is false); the reference and its steps."""
        ref = reds[0].results[0]
        if p.aligned_vectors:
            types = logical_domain_types(ref)
            reduced = [k for k, t in enumerate(types) if t.iter_type == IterType.reduction]
            if not p.fastest_dim or reduced != [len(types) - 1]:
                raise self.fail(
                    "aligned_vectors needs rows reduced over their innermost axis alone (fastest_dim, one reduced "
                    f"axis, the last); %{ref.name_hint or 'the reduction'} reduces axes {reduced} of {len(types)}"
                )
        sizes = self.sizes(p.vectorization)
        if sizes is not None and not p.aligned_vectors:  # aligned groups need not divide the rows
            self.vectors_along_last_axis(sizes)
            _check_vector(
                self.fusion,
                [t for t in (reduction_input(r) for r in reds) if self.last_axis_fastest(t, sizes)],
                sizes,
                p.vectorization,
                "vectorization",
            )
        # Siblings fold in one loop nest, so they take one vectorization: when one is
        # stored (an output's vectors), the others' lanes are vectors too, not a serial
        # loop the lowering would find different from the stored one's.
        results = {r.results[0] for r in reds}
        if results & self.global_io:
            self.global_io |= results
        steps = reduction_steps(logical_domain_types(ref), p, self.kind, persistent_grid)
        self.emit_ref(ref, steps)
        others_list = [r.results[0] for r in reds[1:]]
        self.propagate(ref, steps, only=others_list)
        # Reductions of other tensors of the same shape over the same axes (no
        # domain-map class joins two fusion inputs) are siblings all the same.
        ref_domain = self.reduced_domain(reds[0])
        for r in reds[1:]:
            v = r.results[0]
            if v not in self.done and self.reduced_domain(r) == ref_domain:
                self.take(v, list(range(len(ref_domain))), steps)
        if others:
            self.propagate(ref, steps, by_extent=self.kind == "inner_persistent")
            self.cover_outputs(ref, steps, self.shape_of(reduction_input(reds[0])))
        return ref, steps

    def _inner_outer_persistent(self) -> None:
        p: InnerOuterParams = self.params
        reds = [op for op in body_ops(self.fusion) if is_reduction(op)]
        inner_reds, outer_reds = [], []
        for r in reds:
            t = reduction_input(r).type
            axis = fastest_axis(t) if isinstance(t, TensorType) else None
            (inner_reds if axis is None or axis in reduction_dims(r) else outer_reds).append(r)
        if not inner_reds or not outer_reds:
            raise self.fail("an inner_outer_persistent schedule needs inner and outer reductions")
        if p.single_kernel:
            self._inner_outer_single_kernel(inner_reds, outer_reds)
            return
        # The column half: its reductions as the cols_kind schedules them (nothing
        # else of the fusion is in its loop nest).
        self.kind = p.cols_kind
        sizes = self.sizes(p.cols.vectorization)
        if sizes is not None:
            _check_vector(self.fusion, [reduction_input(r) for r in outer_reds], sizes, p.cols.vectorization,
                          "cols.vectorization")
        oref = outer_reds[0].results[0]
        osteps = reduction_steps(logical_domain_types(oref), p.cols, p.cols_kind, False)
        self.emit_ref(oref, osteps)
        self.propagate(oref, osteps, only=[r.results[0] for r in outer_reds[1:]])
        # The row half: its reductions and every other tensor as rows_kind schedules
        # them, placed as the inner persistent kind places its tensors.
        self.kind = p.rows_kind
        self._schedule_reductions(inner_reds, p.rows, persistent_grid=False)
        rows = self.row_outputs(outer_reds)
        if places_persistent(p.rows_kind, p.rows):
            self.place_persistent(inner_reds, rows, hold=p.rows.hold_buffers)
        self.kind = "inner_outer_persistent"

    def row_outputs(self, outer_reds: Sequence[Operation]) -> list[SSAValue]:
        """The returned outputs of an inner-outer fusion computed from no column
        reduction (one forward walk from the column reductions' results)."""
        after = descendants(r for op in outer_reds for r in op.results)
        return [v for v in returned_outputs(self.fusion) if v not in after]

    def _inner_outer_single_kernel(self, inner_reds: list[Operation], outer_reds: list[Operation]) -> None:
        """One loop nest for the whole fusion (``single_kernel``): the row reductions
        and every tensor as the inner persistent kind schedules them with ``inner`` on
        a persistent grid (``[BIDx, rows, TIDy | batch, TIDx, vec]``: each block loops
        over its rows), placed at the rows' loop; the column reductions replay the
        same transforms (their rows are the reduced ids, so ``BIDx``, the row loop and
        ``TIDy`` reduce) and are placed at the same loop: folded across its
        iterations."""
        p: InnerOuterParams = self.params
        self.kind = "inner_persistent"
        ref, steps = self._schedule_reductions(inner_reds, p.inner, persistent_grid=True)
        outer = [op.results[0] for op in outer_reds]
        for v in outer:
            # by_extent: a column reduction of an input that meets the rows' reduced
            # axis only through a broadcast (no op maps its columns to theirs) lines
            # up by equal static extents (the lowering checks every index it reads).
            perm = alignment(self.dmap, ref, v, identity_only=True, by_extent=True, reduce_iterations=True)
            if perm is not None:
                self.take(v, perm, steps)
        missing = [v for v in outer if v not in self.done]
        if missing:
            def ids(t: SSAValue) -> str:
                return ", ".join(f"{d.extent} {d.iter_type}" for d in logical_domain_types(t))  # type: ignore[attr-defined]

            raise self.fail(
                f"the column reduction {tensor_name(missing[0])} (ids [{ids(missing[0])}]) does not line up with the row reductions' "
                f"loop nest (ids [{ids(ref)}]); a single-kernel inner-outer schedule replays one nest on both"
            )
        self.place_persistent(inner_reds, [*self.row_outputs(outer_reds), *outer], hold=p.inner.hold_buffers)
        loops = {op.tensor: op for op in self.fusion.body.block.ops if isinstance(op, LoopOp)}
        q = loops[inner_reds[0].results[0]].compute_at
        if q is None:
            raise self.fail("the row reductions could not be placed at the rows' loop")
        for v in outer:
            loops[v].set_compute_at(q)
        if p.inner.prefetch:
            for v in self.fusion.inputs:
                if v in loops and loops[v].compute_at is not None:
                    loops[v].set_prefetch(p.inner.prefetch)
        self.kind = "inner_outer_persistent"

    def _transpose(self) -> None:
        p: TransposeParams = self.params
        groups = find_transpose_groups(self.fusion, self.dmap)
        if groups is None:
            raise self.fail("no two transpose groups (the fusion does not transpose)")
        sizes = self.sizes(max(p.vectorization1, p.vectorization2))
        if sizes is not None:
            _check_vector(self.fusion, groups.group1, sizes, p.vectorization1, "vectorization1")
            _check_vector(self.fusion, groups.group2, sizes, p.vectorization2, "vectorization2")
        ref = groups.reference
        rank = ref.type.rank  # type: ignore[union-attr]
        s1 = transpose_steps(rank, groups.inner1, groups.inner2, p, 1)
        s2 = transpose_steps(rank, groups.inner1, groups.inner2, p, 2)
        self.emit_ref(ref, s1)
        self.propagate(ref, s2, identity_only=False, only=list(groups.group2))
        self.propagate(ref, s1, identity_only=False)
        self.place_transpose(groups.group2)

    def place_transpose(self, group2: Sequence[SSAValue]) -> None:
        """The transposed group's inputs computed at the tile's loop (``BIDx``) in
        shared memory: each is loaded along its own innermost axis (its ``TIDx`` and
        ``vectorize`` ids), and the outputs read the tile along theirs. Nothing is
        placed when a transposed output's loops differ from the reference's (the
        outputs share the kernel's loop nest), and an input whose tile loop (``BIDx``)
        is not the kernel's is read in place: one broadcast along a tiled axis has one
        tile there where the output has many (random fusion seed 13013: 2 tiles against
        66), and the loops before a compute-at position are the kernel's."""
        loops = {op.tensor: op for op in self.fusion.body.block.ops if isinstance(op, LoopOp)}
        outs = returned_outputs(self.fusion)
        extents = {_loop_shape(loops[o]) for o in outs if o in loops}
        if len(extents) != 1:
            return
        (kernel,) = extents
        for v in group2:
            if isinstance(v, BlockArgument) and v in loops and _loop_shape(loops[v])[:1] == kernel[:1]:
                loops[v].set_compute_at(1, MemoryType.shared)


def _loop_shape(loop: LoopOp) -> tuple[tuple[object, object], ...]:
    """The (extent, parallel type) of each id of ``loop``: what two tensors whose loops
    are shared up to a compute-at position have in common there."""
    return tuple((t.extent, t.parallel_type) for t in (v.type for v in loop.ids))  # type: ignore[attr-defined]


def places_persistent(kind: str, p: ReductionParams) -> bool:
    """Whether a reduction kernel of ``kind`` computes its tensors at the rows' loop
    (``place_persistent``): the inner persistent kind, and the reduction kind over the
    fastest axis within a block (no ``cross_grid``)."""
    return kind == "inner_persistent" or (kind == "reduction" and p.fastest_dim and not p.cross_grid)


RECOMPUTE_FACTOR = 4
RECOMPUTE_SLACK = 256
"""An inner persistent kernel inlines every tensor but the reductions and the inputs
it holds: each stage (a reduction, an output) recomputes what it reads from them.
When that is more than ``RECOMPUTE_FACTOR`` times the fusion's ops plus
``RECOMPUTE_SLACK`` (chained normalizations: each stage recomputing every earlier
block from the inputs, a kernel quadratic in the fusion's length), the persistent
buffers are held in registers instead (``hold_buffers``)."""


def _recomputes_too_much(stages: Sequence[SSAValue], staged: set[SSAValue], n_ops: int) -> bool:
    """Whether computing ``stages``, each through its inlined producers up to the
    ``staged`` tensors and the inputs, evaluates more than the recompute budget of a
    fusion of ``n_ops`` ops (see ``RECOMPUTE_FACTOR``). Stops counting at the budget."""
    budget = RECOMPUTE_FACTOR * n_ops + RECOMPUTE_SLACK
    for st in stages:
        owner = st.owner
        todo = list(owner.operands) if isinstance(owner, Operation) else []
        seen: set[Operation] = set()
        while todo:
            v = todo.pop()
            op = v.owner
            if v in staged or not isinstance(op, Operation) or op in seen:
                continue
            seen.add(op)
            budget -= 1
            if budget < 0:
                return True
            todo.extend(op.operands)
    return False


def _inputs_read_inlined(v: SSAValue, staged: set[SSAValue]) -> set[SSAValue]:
    """The fusion inputs that computing ``v`` reads, through inlined tensors (not
    through the tensors in ``staged``, computed before)."""
    owner = v.owner
    start = list(owner.operands) if isinstance(owner, Operation) else [v]
    return {
        u for u in ancestors(start, stop=staged)
        if isinstance(u, BlockArgument) and isinstance(u.type, TensorType)
    }


def schedule_fusion(fusion: FusionOp, target: GpuTarget = DEFAULT_TARGET) -> bool:
    """Schedule one fusion from its ``fuser.schedule``; False when it has none."""
    read = read_params(fusion)
    if read is None:
        return False
    kind, params = read
    _FusionScheduler(fusion, kind, params, target).run()
    return True


@dataclass(frozen=True)
class ScheduleFusions(ModulePass):
    """Write every scheduled fusion's loop domains (see the module docstring).

    Option ``strict`` (default true): a fusion without ``fuser.schedule`` is an error
    (false: it is left as it is). A schedule that cannot be written is an error naming
    the fusion and the reason: nothing else lowers a fusion to kernels.
    """

    name = "schedule-fusions"

    strict: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(op, "", self.name)
        for fusion in [f for f in op.walk() if isinstance(f, FusionOp)]:
            if not schedule_fusion(fusion, target=target) and self.strict:
                raise ScheduleFusionsError(
                    f"{self.name}: @{fusion.sym_name.data} has no {SCHEDULE_ATTR} attribute; "
                    "run select-schedulers first"
                )
