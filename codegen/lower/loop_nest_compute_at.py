"""Lower a written schedule whose tensors are computed at a loop (``compute_at``).

nvFuser's ``computeAt``: a tensor whose ``iterdomain.loop`` carries ``compute_at = q``
is computed once per iteration of the kernel's first ``q`` loops, in its own loop nest
over its loops ``q..``, and held (``memory``, registers) until its consumers, which run
later in the same iteration, read it. Tensors without ``compute_at`` are inlined: each
consumer recomputes them at its own index. This is how a normalization is one kernel::

    iterdomain.loop %x [%x_bidx, %x_unroll, %x_tidx, %x_vec] {compute_at = 1 : i64, memory = "registers"}
        : !fuser.tensor<512x4096xf16> [!iterdomain.id<512, BIDx>, !iterdomain.id<4, unroll>,
                                       !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]
    iterdomain.loop %m [%m_bidx, %m_unroll, %m_tidx, %3] {compute_at = 1 : i64}
        : !fuser.tensor<512xf16> [!iterdomain.id<512, BIDx>, !iterdomain.id<4, reduction, unroll>,
                                  !iterdomain.id<128, reduction, TIDx>, !iterdomain.id<8, reduction>]
    iterdomain.loop %y [%y_bidx, %y_unroll, %y_tidx, %y_vec] : ...

becomes, in the block of row ``blockIdx.x``: the thread's 4 x 8 elements of ``%x``
loaded (vectorized) into registers; ``%m``, their max, combined across the 128
threads (a block reduction every thread receives); then ``%y`` computed from the
registers and ``%m`` and stored. ``%x`` is read from global memory once.

The lowering reads only the IR:

* the kernel's loop nest is the outputs' loop domain (every output that is not
  computed at a loop has the same loops); loops ``0..q-1`` are shared by every tensor
  computed at ``q`` and must be the same loops (extent, parallel type) in each;
* after them, in the fusion's order, each computed-at tensor runs its inner loops:
  a reduction folds its input into a per-thread accumulator (an inner loop bound to
  ``TIDx`` is a cross-thread combine, whose result every thread receives) and, when
  it is an output, thread 0 stores it; another tensor is computed and kept in
  registers, one value per iteration of its inner loops that are unrolled in the
  kernel (``unroll``, ``vectorize``, extent 1; a serial innermost loop of at most 16
  bytes is unrolled into vector lanes); a tensor placed in shared memory is written
  into its tile (``shared_tile``: the elements of this iteration, allocated at the
  kernel's start, padded by one element per row when it has two axes and rows of a
  multiple of 32) by its own thread mapping, followed by a barrier; then the outputs'
  inner loops compute and store every output (and, when a shared loop is serial, a
  barrier before the next iteration writes the tiles again);
* a consumer reads a tensor held in registers at its own loop indices, which is only
  right when it asks for the element those indices hold: the lowering checks that the
  consumer's index of every axis is the same expression of the same loops (the
  transforms were replayed, nvFuser's ``TransformReplay``), and reports the tensor,
  the consumer and the axis otherwise; a consumer of a shared tile may use other
  loops (a transposed output reads the tile down its columns), but its index of
  each axis must have the tile's corner, and the places it reads must be ones the
  producer writes (enumerated);
* an element outside a tensor (a split that does not divide) is not loaded, folded or
  stored; the cross-thread combine runs in every thread.
* an input whose ``iterdomain.loop`` carries ``prefetch = "L2"`` (or ``"L1"``) has the
  elements the next iteration of the shared serial loops loads prefetched at the top
  of each iteration (``KernelBuilder.prefetched``, ``codegen/prefetch_loads.py``).

Reductions are sum, prod, max, min and Welford/variance (``var_mean``: mean, M2 and
count per thread, merged across threads by Chan's formula).

A reduction placed at the position whose reduced ids are loops *before* it (the column
sums of an inner-outer fusion on the rows' persistent loop) is folded across the
iterations of the shared loops (``accumulates_across``)::

    iterdomain.loop %dw [%dw_bidx, %r, %dw_tidy, %dw_unroll, %dw_tidx, %dw_vec] {compute_at = 3 : i64}
        : !fuser.tensor<1024xf32> [!iterdomain.id<264, reduction, BIDx>, !iterdomain.id<16, reduction>,
                                   !iterdomain.id<4, reduction, TIDy>, !iterdomain.id<4, unroll>,
                                   !iterdomain.id<64, TIDx>, !iterdomain.id<4, vectorize>]

keeps one accumulator per element a thread holds (its unrolled loops after the
position), carried through the shared ``scf.for`` loops; each iteration folds its rows
into them, reading the tensors held in registers (``across_stage``). After the loops
the block combines them over ``TIDy`` (one shared tile ``[TIDy][slot][TIDx]``, one
barrier) and stores one partial result per block and element (``BIDx`` reduces); a
finishing kernel adds the partial results up (``store_partials``,
``loop_nest_reduction.finish_partials_kernel``). Sibling reductions (dw and db) share
the loop nest and the partial buffers.

A row split over a thread-block cluster: the reduction's loops before the position
include ``clustered`` block loops (``!iterdomain.id<8, reduction, BIDy, clustered>``),
the blocks of one cluster (``check_launch`` gives the kernel its ``cluster_size``). Each
thread folds its part of the row; then ``kernel.cluster_reduce`` combines every
thread of the cluster (warps, then the warps' results through distributed shared
memory: no block reduction), every thread gets the row's result, and the kernel ends
with a ``kernel.cluster_barrier``. The block must hold that one row (its threads all
on the reduction's ``TIDx``, whole warps), and the reduction must reduce every
clustered loop of the kernel.

Not yet (diagnostics naming them): tensors computed at different positions, a
reduction in shared memory, a row reduction's loops bound to ``TIDy``/``BID`` after
its position, a reduction that reduces loops both before and after its position.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.codegen.lower.accumulators import RowReduction
from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    ScratchBuffer,
    TensorLayout,
)
from fuser.codegen.lower.elementwise import Dim, Index, begin_kernel, flat_aligned, offset_in
from fuser.codegen.lower.loop_index import (
    BLOCK_DIMS,
    GRID_DIMS,
    MAX_LANES,
    PARALLEL_DIMS,
    SERIAL_TYPES,
    all_of,
    bounded_index,
    edge_group,
    edge_inside,
    emit_index,
    lane_form,
    lane_indices,
    lanes_axis,
    not_vectorizable,
    parallel_index,
    reindex,
    same_elements,
    scheduled_kind,
    shifted_axis,
    store_lanes,
    tensor_name,
    vars_of,
    when,
)
from fuser.codegen.lower.loop_nest_reduction import (
    SiblingAccumulators,
    accumulator_dtypes,
    combine_tile_slot,
    finish_partials_kernel,
    fold_slots,
    sibling_items,
    slot_tile,
    stage_slots_in_shared,
)
from fuser.codegen.lower.shared_tile import SHARED_LIMIT, Split, places, split_at
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import (
    MAX_CLUSTER_SIZE,
    MAX_THREADS_PER_BLOCK,
    IterType,
    LoopOp,
    MemoryType,
    ParallelType,
)
from fuser.ir.dialects.kernel import WARP_SIZE
from fuser.ir.schedule import Const, Expr, LoopStructure, loop_structure
from fuser.schedulers.analysis.graph import ancestors, descendants, is_reduction, reduction_dims

__all__ = ["computed_at", "lower_compute_at"]

UNROLLED = (ParallelType.unroll, ParallelType.vectorize)
"""Loops the kernel unrolls: a tensor in registers is indexed by their indices."""


def computed_at(fusion: F.FusionOp) -> list[LoopOp]:
    """The ``iterdomain.loop`` ops of ``fusion`` that carry ``compute_at``."""
    return [op for op in fusion.body.block.ops if isinstance(op, LoopOp) and op.compute_at is not None]


@dataclass
class _Consumer:
    """Who is reading, at which index: a consumer's loop structure, its loop indices
    and its index (per axis of its logical domain: the expression and the value)."""

    name: str
    ls: LoopStructure
    env: dict[str, int | SSAValue]
    exprs: list[Expr]
    dims: Sequence[Dim]


@dataclass
class _Held:
    """A tensor computed at the shared position and held in registers."""

    value: SSAValue
    ls: LoopStructure
    keys: list[int]
    """Its loop positions the registers are indexed by (the unrolled inner loops)."""
    regs: dict[tuple[int, ...], SSAValue] = field(default_factory=dict)


@dataclass
class _Tile:
    """A tensor computed at the shared position into a shared-memory tile."""

    value: SSAValue
    ls: LoopStructure
    axes: list[Any]
    """Its logical axes, in tensor order (the tile's axes)."""
    splits: list[Split]
    written: set[tuple[int, ...]]
    """The places (per axis) one iteration writes."""
    lo: list[int]
    buf: SSAValue
    bytes: int
    proven: set[tuple] = field(default_factory=set)
    """Consumers whose reads were proven inside ``written``."""

    def offsets(
        self, b: Any, where: Sequence[Expr], env: dict[str, int | SSAValue], lane: tuple[str, int] | None
    ) -> list[int | SSAValue]:
        """The tile element at places ``where`` (expressions of the loops in ``env``).
        A place that moves one-for-one with the vector ``lane`` (loop variable,
        width) is lane 0's place plus the lane: one add, the same arithmetic for
        every lane before it."""
        memo: dict[Expr, int | SSAValue] = {}
        j = env.get(lane[0]) if lane is not None else None
        if lane is None or not isinstance(j, int) or j == 0:
            return [emit_index(b, e - lo, env, memo) for e, lo in zip(where, self.lo, strict=True)]
        var, width = lane
        lane0 = {**env, var: 0}
        out = []
        for e, lo in zip(where, self.lo, strict=True):
            form = lane_form(e, var, width)
            if form is None:
                out.append(emit_index(b, e - lo, env, memo))
            else:
                out.append(b.add(emit_index(b, e - lo, lane0, memo), form[0] * j))
        return out


@dataclass
class _Group:
    """Lanes accessed together (``_Lowering.lanes``): each lane's loop indices and
    index, the predicate under which all of them are inside the tensor (``pred``;
    for an aligned group emitted where first asked for, since masked accesses do not
    need it), and for an aligned group, ``edge``: the lanes one by one with their own
    predicates."""

    envs: list[dict[str, int | SSAValue]]
    idx: list[Index]
    inside: SSAValue | bool | Callable[[], SSAValue | bool]
    edge: Callable[[], list[_Group]] | None = None

    @property
    def pred(self) -> SSAValue | bool:
        if callable(self.inside):
            self.inside = self.inside()
        return self.inside


def lower_compute_at(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
) -> LoweredFusion:
    """One kernel from the loop nests of ``fusion``'s tensors (module docstring)."""
    return _Lowering(fusion, shapes, in_layouts, out_layouts, name).run()


class _Lowering:
    def __init__(
        self,
        fusion: F.FusionOp,
        shapes: dict[SSAValue, tuple[int, ...]],
        in_layouts: Sequence[TensorLayout | None],
        out_layouts: Sequence[TensorLayout],
        name: str,
    ) -> None:
        self.fusion, self.shapes, self.name = fusion, shapes, name
        self.in_layouts, self.out_layouts = in_layouts, out_layouts
        self.fname = f"@{fusion.sym_name.data}"
        self.outs = list(fusion.output_op.values)
        self.order = _definition_order(fusion)
        self.staged = sorted(computed_at(fusion), key=lambda op: _defined_at(self.order, op.tensor))
        self.consumer: _Consumer | None = None
        self.ls: dict[SSAValue, LoopStructure] = {}

    def error(self, msg: str) -> LoweringError:
        return LoweringError(f"{self.fname}: {msg}")

    # ---- checks -------------------------------------------------------------------
    def structure(self, v: SSAValue) -> LoopStructure:
        """``v``'s loop structure, every extent static."""
        try:
            ls = loop_structure(self.fusion, v, self.shapes)
        except ValueError as e:
            raise self.error(f"{tensor_name(v)}: {e}") from None
        for k, a in enumerate(ls.loops):
            if a.static_extent is None:
                raise self.error(
                    f"loop #{k} of {tensor_name(v)} has symbolic extent {a.extent}; bind the sizes first (bind-sizes)"
                )
        return ls

    def check_positions(self) -> int:
        """The one compute-at position of the placed tensors (consumers inside their
        producers' loops, registers only)."""
        pos = {op.tensor: op.compute_at for op in self.staged}
        for op in self.staged:
            c = op.tensor
            for p in sorted(_producers_through_inlined(c, set(pos)), key=lambda u: _defined_at(self.order, u)):
                if pos[p] > pos[c]:  # type: ignore[operator]
                    raise self.error(
                        f"{tensor_name(c)} is computed at loop {pos[c]}, outside loop #{pos[p] - 1} "  # type: ignore[operator]
                        f"of its producer {tensor_name(p)} (computed at {pos[p]}): a consumer must be "
                        "computed inside its producers' loops"
                    )
        qs = sorted({q for q in pos.values() if q is not None})
        if len(qs) != 1:
            raise self.error(
                f"tensors are computed at loops {qs}; one shared compute-at position is lowered so far"
            )
        for op in self.staged:
            owner = op.tensor.owner
            if op.memory == MemoryType.shared and isinstance(owner, Operation) and is_reduction(owner):
                raise self.error(
                    f"{tensor_name(op.tensor)} is a reduction placed in shared memory; a reduction's result "
                    "is combined into every thread's registers"
                )
        return qs[0]

    def check_launch(self, structures: Sequence[tuple[SSAValue, LoopStructure]], q: int) -> None:
        """One grid and one block for every loop nest: a parallel type has one extent."""
        bound: dict[ParallelType, tuple[int, SSAValue, int]] = {}
        clustered: dict[ParallelType, tuple[bool, SSAValue, int]] = {}
        for v, ls in structures:
            for k, a in enumerate(ls.loops):
                pt, ext = a.parallel_type, a.static_extent
                assert ext is not None
                if pt in GRID_DIMS:
                    seen_c = clustered.setdefault(pt, (a.clustered, v, k))
                    if seen_c[0] != a.clustered:
                        raise self.error(
                            f"loop #{seen_c[2]} of {tensor_name(seen_c[1])} binds {pt} "
                            f"{'as' if seen_c[0] else 'not as'} a cluster, loop #{k} of {tensor_name(v)} "
                            f"{'as' if a.clustered else 'not as'} one: a kernel's blocks are clustered or not"
                        )
                if pt in GRID_DIMS and k >= q:
                    raise self.error(
                        f"loop #{k} of {tensor_name(v)} is bound to {pt} but is inside the compute-at "
                        f"position {q}: blocks do not share registers"
                    )
                if pt not in PARALLEL_DIMS:
                    if pt not in (*SERIAL_TYPES, ParallelType.vectorize):
                        raise self.error(f"loop #{k} of {tensor_name(v)} is bound to {pt}, which a kernel cannot run")
                    continue
                seen = bound.get(pt)
                if seen is not None and seen[0] != ext:
                    raise self.error(
                        f"loop #{seen[2]} of {tensor_name(seen[1])} binds {pt} to extent {seen[0]}, loop #{k} of "
                        f"{tensor_name(v)} to extent {ext}: a kernel has one {pt} extent"
                    )
                bound.setdefault(pt, (ext, v, k))
        self.grid = tuple(bound[p][0] if p in bound else 1 for p in GRID_DIMS)
        self.block = tuple(bound[p][0] if p in bound else 1 for p in BLOCK_DIMS)
        self.cluster: tuple[int, ...] | None = None
        """The thread-block cluster: the extents of the clustered block loops."""
        if any(c for c, _, _ in clustered.values()):
            self.cluster = tuple(
                bound[p][0] if p in bound and clustered.get(p, (False,))[0] else 1 for p in GRID_DIMS
            )
            if math.prod(self.cluster) > MAX_CLUSTER_SIZE:
                raise self.error(
                    f"the clustered block loops make clusters of {list(self.cluster)}, more than the "
                    f"{MAX_CLUSTER_SIZE} blocks of a thread-block cluster"
                )
        if math.prod(self.block) > MAX_THREADS_PER_BLOCK:
            raise self.error(f"block {list(self.block)} has more than {MAX_THREADS_PER_BLOCK} threads")

    def check_shared(self, v: SSAValue, ls: LoopStructure, q: int) -> None:
        """``v``'s loops before the compute-at position ``q`` are the kernel's."""
        for k in range(q):
            a, r = ls.loops[k], self.ref.loops[k]
            if (a.static_extent, a.parallel_type) != (r.static_extent, r.parallel_type):
                raise self.error(
                    f"{tensor_name(v)} is computed at loop {q}, but its loop #{k} is [{a.static_extent}, "
                    f"{a.parallel_type}] and the kernel's is [{r.static_extent}, {r.parallel_type}]: "
                    "the loops before the compute-at position are shared"
                )

    # ---- the kernel ---------------------------------------------------------------
    def run(self) -> LoweredFusion:
        q = self.check_positions()
        self.q = q
        staged_values = [op.tensor for op in self.staged]
        for v in staged_values:
            self.ls[v] = self.structure(v)
        reductions = [v for v in staged_values if isinstance(v.owner, Operation) and is_reduction(v.owner)]
        self.across = [v for v in reductions if self.accumulates_across(v)]
        """Reductions folded across iterations of the shared loops (an inner-outer
        kernel's column sums): ``across_stage``, ``store_partials``."""
        reductions = [v for v in reductions if v not in self.across]
        after = descendants(r for v in self.across for r in v.owner.results)  # type: ignore[union-attr]  # a Welford's mean too
        self.across_outs = [j for j, v in enumerate(self.outs) if v in after]
        """Outputs computed from them: stored by the finishing kernel."""
        for j in self.across_outs:
            v, r = self.outs[j], self.across[0]
            if not same_elements(self.shapes[v], self.shapes[r]):
                raise self.error(
                    f"output {tensor_name(v)} (shape {list(self.shapes[v])}) is computed from {tensor_name(r)}, "
                    f"a reduction folded across the shared loops, at another shape than its {list(self.shapes[r])}: "
                    "the finishing kernel stores outputs at the reduction's index only"
                )
        self.row_outs: dict[SSAValue, SSAValue] = {}
        """Outputs of a reduction's shape (up to extent-1 axes): stored once per row
        after the stages, at the reduction's index."""
        staged_set = set(staged_values)
        for j, v in enumerate(self.outs):
            if j in self.across_outs:
                continue
            staged_v = v in staged_set
            rows = [r for r in reductions if r is v or (
                not staged_v and same_elements(self.shapes[v], self.shapes[r])
            )]
            if rows:
                self.row_outs[v] = rows[0]
            elif staged_v:
                raise self.error(
                    f"output {tensor_name(v)} is computed at a loop; outputs computed at a loop are "
                    "reductions (stored by their stage) so far"
                )
        self.full = [v for j, v in enumerate(self.outs) if v not in self.row_outs and j not in self.across_outs]
        for v in self.full:
            self.ls[v] = self.structure(v)
        self.ref = self.ls[self.full[0]] if self.full else self.ls[reductions[-1] if reductions else staged_values[-1]]
        if len(self.ref.loops) < q:
            raise self.error(f"the kernel's loop nest has {len(self.ref.loops)} loops, fewer than the compute-at position {q}")
        for v in [*staged_values, *self.full]:
            self.check_shared(v, self.ls[v], q)
        for j, v in enumerate(self.full[1:], 1):
            a, r = self.ls[v].loops, self.ref.loops
            if [(x.static_extent, x.parallel_type) for x in a] != [(x.static_extent, x.parallel_type) for x in r]:
                raise self.error(
                    f"output {tensor_name(v)} has other loops than output {tensor_name(self.full[0])}; the outputs "
                    f"that are not computed at a loop share the kernel's loop nest (#{j})"
                )
        self.check_launch(list(self.ls.items()), q)
        scratch = self.plan_across()
        iterations = math.prod(a.static_extent or 1 for a in self.ref.loops)
        if self.across:
            iterations = max(iterations, self.groups * self.n_across)
        self.b, self.ev, args, self.out_args = begin_kernel(
            self.fusion, self.shapes, self.in_layouts, self.out_layouts, self.name, self.block, iterations, scratch,  # type: ignore[arg-type]
            self.cluster,  # type: ignore[arg-type]
        )
        self.tiles = {op.tensor: self.plan_tile(op.tensor) for op in self.staged if op.memory == MemoryType.shared}
        size = sum(t.bytes for t in self.tiles.values())
        if size > SHARED_LIMIT:
            raise self.error(
                f"the shared tiles of {', '.join(tensor_name(v) for v in self.tiles)} take {size} bytes, more than "
                f"the {SHARED_LIMIT} bytes of static shared memory: compute them at a deeper loop"
            )
        state: list[SSAValue] = []
        if self.across:
            self.acc = SiblingAccumulators([v.owner for v in self.across], self.ev, self.shapes)  # type: ignore[misc]
            self.partial_bufs = list(self.b.func.args[len(self.b.func.args) - len(scratch) :])
            # Room beside the tiles for the row reductions' block-reduction workspace
            # (at most one partial of all their accumulators a thread).
            rows = accumulator_dtypes([v.owner for v in reductions])  # type: ignore[misc]
            workspace = math.prod(self.block) * len(rows) * max((d.itemsize for d in rows), default=0)
            self.slot_tile = slot_tile(self.b, self.block, self.across_threads, self.n_slots, self.acc_dtypes, "across_tile", size + workspace)  # type: ignore[arg-type]
            state = self.acc.init() * self.n_slots
        state = self.outer(0, {}, state)
        if self.across:
            self.store_partials(state)
        if self.cluster is not None:
            self.b.cluster_barrier()  # no block leaves while another reads its shared memory
        inputs = list(self.fusion.inputs)
        self.b.prefetched = {
            self.b.func.args[inputs.index(op.tensor)]: op.prefetch for op in self.staged
            if op.prefetch is not None and op.tensor in inputs
        }
        module = self.b.finish()
        kernels = [LoweredKernel(module, self.name, self.block, self.grid, args)]  # type: ignore[arg-type]
        if self.across:
            kernels.append(finish_partials_kernel(
                self.fusion, [v.owner for v in self.across], self.shapes, self.in_layouts,  # type: ignore[misc]
                self.out_layouts, self.name, self.across_outs, self.groups, scratch,
            ))
        return LoweredFusion(scheduled_kind(self.fusion), kernels, scratch)

    def outer(self, k: int, env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
        """The shared loops ``k..q-1`` (block/thread indices or ``scf.for``), carrying
        ``state`` (the accumulators of the reductions folded across them)."""
        b, ev = self.b, self.ev
        if k == self.q:
            return self.iteration(env, state)
        a = self.ref.loops[k]
        if a.parallel_type in PARALLEL_DIMS:
            return self.outer(k + 1, {**env, f"i{k}": parallel_index(b, a.parallel_type)}, state)
        if a.static_extent == 1:
            return self.outer(k + 1, {**env, f"i{k}": 0}, state)

        def body(iv: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            return self.outer(k + 1, {**env, f"i{k}": iv}, carried)

        return b.for_(0, a.static_extent, 1, ev.in_scope(body), inits=state,  # type: ignore[arg-type]
                      unroll=a.parallel_type == ParallelType.unroll, iv_name=f"i{k}")

    def iteration(self, env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
        """One iteration of the shared loops: every stage, then the outputs."""
        saved = dict(self.ev.hooks)
        for op in self.staged:
            v = op.tensor
            owner = v.owner
            if v in self.across:
                if v is self.across[0]:  # one fold for all the siblings
                    state = self.across_stage(env, state)
            elif isinstance(owner, Operation) and is_reduction(owner):
                self.reduction_stage(owner, env)
            elif v in self.tiles:
                self.shared_stage(self.tiles[v], env)
            else:
                self.register_stage(v, env)
        for v, r in self.row_outs.items():
            self.store_row(v, r, env)
        if self.full:
            self.output_nest(env)
        repeats = any(
            a.parallel_type not in PARALLEL_DIMS and (a.static_extent or 1) > 1 for a in self.ref.loops[: self.q]
        )
        if self.tiles and repeats:
            self.b.barrier()  # the next iteration writes the tiles again: every read of this one first
        if self.cluster is not None and repeats:
            self.b.cluster_barrier()  # and the cluster reductions' slots: every block's reads first
        self.ev.hooks = saved
        return state

    # ---- walking inner loops ------------------------------------------------------
    def lanes_loop(self, ls: LoopStructure) -> int | None:
        """The innermost loop when it is unrolled into vector lanes."""
        k = len(ls.loops) - 1
        if k < self.q:
            return None
        a = ls.loops[k]
        ext = a.static_extent or 1
        if ext > 1 and (
            a.parallel_type == ParallelType.vectorize
            or (a.parallel_type in SERIAL_TYPES and ext <= MAX_LANES)
        ):
            return k
        return None

    @staticmethod
    def lane_var(ls: LoopStructure, lane: int | None) -> tuple[str, int] | None:
        """The lane loop's variable and width."""
        return None if lane is None else (f"i{lane}", ls.loops[lane].static_extent or 1)

    def walk(
        self,
        ls: LoopStructure,
        env: dict[str, int | SSAValue],
        lane: int | None,
        visit: Callable[[dict[str, int | SSAValue], list[SSAValue]], list[SSAValue]],
        state: list[SSAValue],
        serial_ok: bool,
        who: SSAValue,
    ) -> list[SSAValue]:
        """Run ``visit`` for every iteration of ``ls``'s inner loops (``q..``, the lane
        loop excluded), threading ``state`` (an accumulator) through them."""
        b, ev = self.b, self.ev

        def go(k: int, env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
            if k == len(ls.loops) or k == lane:
                return visit(env, state)
            a = ls.loops[k]
            ext = a.static_extent or 1
            if a.parallel_type in PARALLEL_DIMS:
                return go(k + 1, {**env, f"i{k}": parallel_index(b, a.parallel_type)}, state)
            if ext == 1 or a.parallel_type in UNROLLED:
                for i in range(ext):
                    state = go(k + 1, {**env, f"i{k}": i}, state)
                return state
            if not serial_ok:
                raise self.error(
                    f"loop #{k} of {tensor_name(who)} is a serial loop of {ext}, but {tensor_name(who)} is held "
                    "in registers, indexed at compile time: unroll the loop"
                )

            def body(iv: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                return go(k + 1, {**env, f"i{k}": iv}, carried)

            return b.for_(0, ext, 1, ev.in_scope(body), inits=state, iv_name=f"i{k}")  # type: ignore[arg-type]

        return go(self.q, env, state)

    def lanes(
        self,
        ls: LoopStructure,
        axes: Sequence[Any],
        shape: Sequence[int],
        env: dict[str, int | SSAValue],
        lane: int | None,
        who: SSAValue,
    ) -> list[_Group]:
        """The groups of elements at ``env`` across the lane loop: (each lane's loop
        indices, each lane's index, the group's in-bounds predicate, its edge). Lanes
        that are consecutive elements of one row are one group (one vector access).
        The lanes of an aligned group (``shifted_axis``, ``iterdomain.align``) are one
        group whose predicate holds when all of them are inside the row, and whose
        edge gives the lanes one by one with their own predicates, for the group
        that straddles the row's start or end (``guard``)."""
        b, ev = self.b, self.ev
        extents = [a.static_extent or 1 for a in ls.loops]
        width = extents[lane] if lane is not None else 1
        var = f"i{lane}" if lane is not None else None
        exprs = [(a.index, e) for a, e in zip(axes, shape, strict=True)]
        along = lanes_axis([a.index for a in axes], var, width, shape)
        together = along is not None
        shifted = None if together else shifted_axis([a.index for a in axes], var, width, shape)
        # Consecutive lanes of an axis the width does not divide (an aligned group of
        # a row that starts on the vectors, a 1-D one): a group with an edge too.
        partial = None if together or shifted is not None else lanes_axis(
            [a.index for a in axes], var, width, shape, divisible=False
        )
        if (
            lane is not None and not together and shifted is None and partial is None
            and ls.loops[lane].parallel_type == ParallelType.vectorize
        ):
            raise self.error(not_vectorizable(lane, who, width, shape))

        def one_by_one() -> list[_Group]:
            out = []
            for j in range(width):
                envs = [{**env, var: j} if var is not None else dict(env)]
                values, conds = bounded_index(b, exprs, envs[0], extents)
                out.append(_Group(envs, [tuple(ev.as_dim(x) for x in values)], all_of(b, conds)))
            return out

        if shifted is not None or partial is not None:
            envs, idx = edge_group(b, ev, exprs, env, var, width, shape, shifted, partial)  # type: ignore[arg-type]

            def inside() -> SSAValue | bool:  # lanes 0 and width-1 inside the tensor
                return edge_inside(b, exprs, envs, extents)

            return [_Group(envs, idx, inside, one_by_one)]
        if not together:
            return one_by_one()
        envs = [{**env, var: j} if var is not None else dict(env) for j in range(width)]
        values, conds = bounded_index(b, exprs, envs[0], extents)
        first = tuple(ev.as_dim(x) for x in values)
        idx = lane_indices(first, width, along) if width > 1 else [first]
        return [_Group(envs, idx, all_of(b, conds))]

    def guard(
        self, g: _Group, run: Callable[[list, list], list[SSAValue]], fill: Sequence[SSAValue]
    ) -> list[SSAValue]:
        """``run(envs, idx)`` for the lanes of ``g`` where its predicate holds, else
        ``fill`` for each lane (``run`` returns ``len(fill)`` values a lane; none: an
        ``if`` without ``else``, a store); an aligned group's edge runs its lanes one by
        one, each under its own predicate."""
        b, ev = self.b, self.ev

        def whole() -> list[SSAValue]:
            return run(g.envs, g.idx)

        if g.edge is None:
            if not fill:
                return b.if_(g.pred, ev.in_scope(whole))
            return whole() if g.pred is True else when(b, ev, g.pred, whole, list(fill) * len(g.envs))
        edge = g.edge
        types = [v.type for v in list(fill) * len(g.envs)]
        return b.if_(g.pred, ev.in_scope(whole), ev.in_scope(lambda: self.lane_by_lane(edge(), run, fill)), types)

    def lane_by_lane(
        self, edge: Sequence[_Group], run: Callable[[list, list], list[SSAValue]], fill: Sequence[SSAValue]
    ) -> list[SSAValue]:
        """``run`` for each lane of ``edge`` (an aligned group's ``edge()``) under its
        own predicate, ``fill`` where it does not hold."""
        out: list[SSAValue] = []
        for one in edge:
            out += when(self.b, self.ev, one.pred, lambda one=one: run(one.envs, one.idx), list(fill))
        return out

    def whole_vector(self, v: SSAValue, g: _Group) -> SSAValue | None:
        """For an aligned group (``g.edge``) of the fusion input ``v`` laid out so that
        the group is one aligned vector in memory (``flat_aligned``): the predicate
        that the whole vector is inside the tensor (its lanes outside the row are
        other rows' elements, read and dropped). None otherwise."""
        if g.edge is None or not isinstance(v, BlockArgument):
            return None
        t = self.ev.tensors.get(v.index)
        width = len(g.idx)
        axis = len(g.idx[0]) - 1
        if t is None or t.pointer_align % width or not flat_aligned(g.idx[0], axis, width, t.shape, t.strides):
            return None
        b = self.b
        start = offset_in(self.ev, t.shape, t.strides, g.idx[0])
        return b.cmp("sle", b.add(start, width), math.prod(t.shape))

    def masked(
        self, g: _Group, inside: SSAValue, run: Callable[[list, list], list[SSAValue]], fill: SSAValue
    ) -> list[SSAValue]:
        """``run`` over all lanes of ``g`` where ``inside`` holds (``whole_vector``),
        else lane by lane under each lane's predicate (the tensor's last group); then
        each lane outside the row is ``fill``. No branch diverges at a row's edges."""
        b, ev = self.b, self.ev
        edge = g.edge()  # type: ignore[misc]
        vals = b.if_(
            inside, ev.in_scope(lambda: run(g.envs, g.idx)), ev.in_scope(lambda: self.lane_by_lane(edge, run, [fill])),
            [fill.type] * len(edge),
        )
        return [val if one.pred is True else b.select(one.pred, val, fill) for one, val in zip(edge, vals, strict=True)]

    def reads_memory(self, v: SSAValue) -> bool:
        """Whether computing ``v`` loads a tensor (a fusion input that is not held in
        registers or a tile) rather than only reading held values and scalars."""
        seen: set[SSAValue] = set()
        stack = [v]
        while stack:
            u = stack.pop()
            if u in seen or u in self.ev.hooks:
                continue
            seen.add(u)
            if isinstance(u, BlockArgument):
                if isinstance(u.type, F.TensorType):
                    return True
                continue
            if isinstance(u.owner, Operation):
                stack.extend(u.owner.operands)
        return False

    def guard_fold(
        self, g: _Group, fold: Callable[[list, list, list[SSAValue]], list[SSAValue]], state: list[SSAValue]
    ) -> list[SSAValue]:
        """``fold(envs, idx, state)`` of the lanes of ``g`` where its predicate holds
        (``guard``'s edges, threading the accumulators lane by lane)."""
        b, ev = self.b, self.ev

        def whole() -> list[SSAValue]:
            return fold(g.envs, g.idx, state)

        if g.edge is None:
            return when(b, ev, g.pred, whole, state)

        def lane_by_lane() -> list[SSAValue]:
            st = state
            for one in g.edge():  # type: ignore[misc]
                st = when(b, ev, one.pred, lambda one=one, st=st: fold(one.envs, one.idx, st), st)
            return st

        return b.if_(g.pred, ev.in_scope(whole), ev.in_scope(lane_by_lane), [v.type for v in state])

    # ---- reading held tensors -----------------------------------------------------
    def hold(self, held: _Held) -> None:
        """Consumers from now on (in this iteration) read ``held.value`` from ``held``."""
        self.ev.hooks[held.value] = lambda idx, h=held: self.read_held(h, idx)

    def read_held(self, h: _Held, idx: Index) -> SSAValue:
        c = self.consumer
        assert c is not None
        producer_axes = [a for a in h.ls.logical if a.tensor_axis is not None and a.iter_type != IterType.reduction]
        shape = self.shapes[h.value]
        for a in producer_axes:
            if shape[a.tensor_axis] == 1:  # type: ignore[index]
                continue
            matches = [j for j, e in enumerate(c.exprs) if e == a.index]
            if not any(c.dims[j].key() == idx[a.tensor_axis].key() for j in matches):  # type: ignore[index]
                raise self.error(
                    f"{c.name} reads {tensor_name(h.value)} (held in registers) at another index than its "
                    f"loops hold on axis {a.tensor_axis}: schedule both with the same transforms, or inline "
                    f"{tensor_name(h.value)}"
                )
            for var in vars_of(a.index):
                k = int(var[1:])
                pa, ca = h.ls.loops[k], c.ls.loops[k]
                if pa.static_extent != ca.static_extent or (
                    (pa.parallel_type in PARALLEL_DIMS or ca.parallel_type in PARALLEL_DIMS)
                    and pa.parallel_type != ca.parallel_type
                ):
                    raise self.error(
                        f"{c.name} reads {tensor_name(h.value)} (held in registers) through its loop #{k} "
                        f"[{ca.static_extent}, {ca.parallel_type}], where {tensor_name(h.value)} has "
                        f"[{pa.static_extent}, {pa.parallel_type}]"
                    )
        # Loops of the held tensor that the consumer does not have (a row's store
        # reading it) only move axes of extent 1: the element is at index 0 of them.
        flat = {
            var for a in h.ls.logical if a.tensor_axis is not None and shape[a.tensor_axis] != 1  # type: ignore[index]
            for var in vars_of(a.index)
        }
        key = []
        for k in h.keys:
            i = c.env.get(f"i{k}")
            if i is None and f"i{k}" not in flat:
                i = 0
            if i is None:
                raise self.error(
                    f"{c.name} reads {tensor_name(h.value)} (held in registers) outside its loop #{k}, "
                    f"which indexes {tensor_name(h.value)}: compute the consumer inside that loop"
                )
            if not isinstance(i, int):
                raise self.error(
                    f"{c.name} reads {tensor_name(h.value)} (held in registers) inside its serial loop #{k}: "
                    "registers are indexed at compile time: unroll the loop"
                )
            key.append(i)
        return h.regs[tuple(key)]

    def reading(self, name: str, ls: LoopStructure, env: dict[str, int | SSAValue], axes: Sequence[Any], idx: Index) -> None:
        """The consumer whose values are computed next (what ``read_held`` checks)."""
        self.consumer = _Consumer(name, ls, env, [a.index for a in axes], idx)

    # ---- stages -------------------------------------------------------------------
    def register_stage(self, v: SSAValue, env: dict[str, int | SSAValue]) -> None:
        """Compute ``v``'s elements of this iteration into registers."""
        ev = self.ev
        ls = self.ls[v]
        for k in range(self.q, len(ls.loops)):
            if ls.loops[k].iter_type == IterType.reduction:
                raise self.error(f"loop #{k} of {tensor_name(v)} is a reduction id, but {tensor_name(v)} does not reduce")
        dt = F.dtype_of(v.type)
        lane = self.lanes_loop(ls)
        held = _Held(v, ls, [k for k in range(self.q, len(ls.loops)) if ls.loops[k].parallel_type not in PARALLEL_DIMS])
        shape = self.shapes[v]
        # A broadcast id (an extent-1 axis standing in for the reference's, e.g. a
        # weight [1, cols] on the rows' loops) is index 0 in every iteration of its loops.
        axes = sorted(
            (
                replace(a, index=Const(0)) if a.iter_type == IterType.broadcast and shape[a.tensor_axis] == 1 else a  # type: ignore[index]
                for a in ls.logical if a.tensor_axis is not None
            ),
            key=lambda a: a.tensor_axis,  # type: ignore[arg-type, return-value]
        )

        def compute(envs: list, idx: list) -> list[SSAValue]:
            vals = []
            self.reading(tensor_name(v), ls, envs[0], axes, idx[0])
            ev.prefetch(v, idx)
            for e, i in zip(envs, idx, strict=True):
                self.reading(tensor_name(v), ls, e, axes, i)
                vals.append(ev.value(v, i))
            return vals

        def visit(env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
            for g in self.lanes(ls, axes, shape, env, lane, v):
                fill = [ev.em.const(0, dt)] if g.edge is not None or g.pred is not True else []
                whole = self.whole_vector(v, g)
                if whole is not None:  # an aligned group of an input: one vector, lanes masked
                    vals = self.masked(g, whole, compute, fill[0])
                else:
                    vals = self.guard(g, compute, fill)
                for e, val in zip(g.envs, vals, strict=True):
                    held.regs[tuple(e[f"i{k}"] for k in held.keys)] = val  # type: ignore[misc]
            return state

        self.walk(ls, env, lane, visit, [], serial_ok=False, who=v)
        self.hold(held)

    # ---- shared memory --------------------------------------------------------------
    def plan_tile(self, v: SSAValue) -> _Tile:
        """The tile of ``v`` (placed in shared memory): the elements one iteration of
        the shared loops writes (``shared_tile``), allocated at the kernel's start."""
        ls = self.ls[v]
        for k in range(self.q, len(ls.loops)):
            if ls.loops[k].iter_type == IterType.reduction:
                raise self.error(f"loop #{k} of {tensor_name(v)} is a reduction id, but {tensor_name(v)} does not reduce")
        axes = sorted((a for a in ls.logical if a.tensor_axis is not None), key=lambda a: a.tensor_axis)  # type: ignore[arg-type, return-value]
        splits = []
        for a in axes:
            sp = split_at(a.index, self.q)
            if sp is None:
                raise self.error(
                    f"axis {a.tensor_axis} of {tensor_name(v)} is indexed by {a.index}, which mixes loops before and "
                    f"after its compute-at position {self.q}: a shared tile holds the elements of one iteration of "
                    "the loops before it (split the axes before merging them)"
                )
            splits.append(sp)
        extents = [a.static_extent or 1 for a in ls.loops]
        written = places([sp.place for sp in splits], extents)
        if written is None:
            raise self.error(f"the shared tile of {tensor_name(v)} has more elements than shared memory holds")
        lo = [min(p[d] for p in written) for d in range(len(axes))]
        shape = [max(p[d] for p in written) - lo[d] + 1 for d in range(len(axes))] or [1]
        # A tile read along its columns: one element of padding per row keeps the
        # rows of a 32-wide tile in different banks.
        padding = 1 if sum(e > 1 for e in shape) >= 2 and shape[-1] % 32 == 0 else 0
        dt = F.dtype_of(v.type)
        buf = self.b.shared(shape, dt.to_xdsl(), padding, f"{tensor_name(v)[1:] if v.name_hint else 'in'}_tile")
        nbytes = math.prod(shape[:-1]) * (shape[-1] + padding) * dt.itemsize
        return _Tile(v, ls, axes, splits, written, lo, buf, nbytes)

    def shared_stage(self, t: _Tile, env: dict[str, int | SSAValue]) -> None:
        """Every thread computes its elements of ``t``'s tile of this iteration into
        shared memory; after a barrier, consumers read any element of it."""
        b, ev = self.b, self.ev
        v, ls = t.value, t.ls
        shape = self.shapes[v]
        dt = F.dtype_of(v.type).to_xdsl()
        lane = self.lanes_loop(ls)
        where, lane_var = [sp.place for sp in t.splits], self.lane_var(ls, lane)

        def write(envs: list, idx: list) -> list[SSAValue]:
            self.reading(tensor_name(v), ls, envs[0], t.axes, idx[0])
            ev.prefetch(v, idx)
            for e, i in zip(envs, idx, strict=True):
                self.reading(tensor_name(v), ls, e, t.axes, i)
                val = b.to_storage(ev.value(v, i), dt)
                b.store(val, t.buf, t.offsets(b, where, e, lane_var))
            return []

        def visit(env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
            for g in self.lanes(ls, t.axes, shape, env, lane, v):
                self.guard(g, write, [])
            return state

        self.walk(ls, env, lane, visit, [], serial_ok=True, who=v)
        b.barrier()
        self.ev.hooks[v] = lambda idx, t=t: self.read_tile(t, idx)

    def read_tile(self, t: _Tile, idx: Index) -> SSAValue:
        """``t``'s element at ``idx``, read by the current consumer: its index of each
        axis of the tile must have the producer's corner (the same iteration), and
        the places it reads must be ones the producer writes."""
        c = self.consumer
        assert c is not None
        shape = self.shapes[t.value]
        where: list[Expr] = []
        for d, (a, sp) in enumerate(zip(t.axes, t.splits, strict=True)):
            if shape[a.tensor_axis] == 1:  # type: ignore[index]
                where.append(Const(t.lo[d]))
                continue
            found = None
            for j, e in enumerate(c.exprs):
                if c.dims[j].key() != idx[a.tensor_axis].key():  # type: ignore[index]
                    continue
                csp = split_at(e, self.q)
                if csp is not None and csp.corner == sp.corner:
                    found = csp.place
                    break
            if found is None:
                raise self.error(
                    f"{c.name} reads {tensor_name(t.value)} (a shared tile computed at loop {self.q}) on axis "
                    f"{a.tensor_axis} at an index that is not its tile's: index the axis with the same loops "
                    f"before loop {self.q} as {tensor_name(t.value)} does, {a.index}"
                )
            where.append(found)
        key = (id(c.ls), tuple(where))
        if key not in t.proven:
            read = places(where, [x.static_extent or 1 for x in c.ls.loops])
            if read is None or not read <= t.written:
                raise self.error(
                    f"{c.name} reads elements of {tensor_name(t.value)} (a shared tile computed at loop {self.q}) "
                    "that its iteration does not compute: give the consumer's loops after the position the "
                    f"extents of {tensor_name(t.value)}'s"
                )
            t.proven.add(key)
        lane = self.lane_var(c.ls, self.lanes_loop(c.ls))
        return self.b.to_compute(self.b.load(t.buf, t.offsets(self.b, where, c.env, lane)))

    def reduction_stage(self, red: Operation, env: dict[str, int | SSAValue]) -> None:
        """Fold ``red``'s input over its inner loops (a Welford/variance reduction:
        mean, M2 and count, merged by Chan's formula); combine across threads."""
        ev = self.ev
        result = red.results[0]
        ls = self.ls[result]
        tpr = 1
        for k in range(self.q, len(ls.loops)):
            a = ls.loops[k]
            if a.iter_type != IterType.reduction:
                raise self.error(
                    f"loop #{k} of {tensor_name(result)} is an iteration loop inside its compute-at position {self.q}; "
                    "a reduction computed at a loop has only reduction loops after it"
                )
            if a.parallel_type == ParallelType.TIDx:
                tpr = a.static_extent or 1
            elif a.parallel_type in PARALLEL_DIMS:
                raise self.error(
                    f"reduction loop #{k} of {tensor_name(result)} is bound to {a.parallel_type}; reductions across "
                    "TIDx (and serial loops) are lowered so far"
                )
        cluster_loops = []
        for k in range(self.q):
            a = ls.loops[k]
            if a.iter_type != IterType.reduction:
                continue
            if not a.clustered:
                raise self.error(f"loop #{k} of {tensor_name(result)} is a reduction id outside its compute-at position {self.q}")
            cluster_loops.append(a.parallel_type)
        if cluster_loops:
            assert self.cluster is not None
            spans = [p for p, n in zip(GRID_DIMS, self.cluster, strict=True) if n > 1]
            if sorted(spans) != sorted(cluster_loops):
                raise self.error(
                    f"{tensor_name(result)} reduces the clustered block loops {', '.join(cluster_loops)}, "
                    f"but the kernel's clusters span {', '.join(spans)}: a reduction across a cluster "
                    "reduces every block of it"
                )
            if math.prod(self.block) != tpr:
                raise self.error(
                    f"{tensor_name(result)} reduces across a cluster, but its block {list(self.block)} holds other "
                    f"rows than its {tpr} threads on TIDx: every thread of the cluster is combined (one row a block)"
                )
            if tpr % WARP_SIZE:
                raise self.error(
                    f"{tensor_name(result)} reduces across a cluster with {tpr} threads on TIDx, not a multiple of "
                    f"{WARP_SIZE}: the cluster's threads are combined by whole warps"
                )
        src = red.operands[0]
        in_shape = self.shapes[src]
        acc = RowReduction(red, ev, math.prod(in_shape[d] for d in reduction_dims(red)))
        lane = self.lanes_loop(ls)
        axes = ls.logical  # the input's axes, in order
        partials = self.partials(red, ls, lane, acc)
        width = len(acc.init())
        slots = math.prod(ls.loops[k].static_extent or 1 for k in partials)

        def slot(e: dict[str, int | SSAValue]) -> int:
            """The partial result the element at loop indices ``e`` folds into."""
            n = 0
            for k in partials:
                n = n * (ls.loops[k].static_extent or 1) + e[f"i{k}"]  # type: ignore[operator]
            return n

        def fold(envs: list, idx: list, state: list[SSAValue], preds: Sequence[SSAValue | None] = ()) -> list[SSAValue]:
            self.reading(tensor_name(result), ls, envs[0], axes, idx[0])
            ev.prefetch(src, idx)
            items: dict[int, list] = {}
            for j, (e, i) in enumerate(zip(envs, idx, strict=True)):
                self.reading(tensor_name(result), ls, e, axes, i)
                items.setdefault(slot(e), []).append((ev.value(src, i), preds[j] if preds else None))
            # A masked lane is outside the row (not a clamped duplicate): max/min select too.
            return fold_slots(acc, state, items, width, duplicates=not preds)

        # An aligned group's lanes outside the row are folded as the identity
        # (selects, no branch) when computing them reads no memory.
        pure = not self.reads_memory(src)

        def visit(env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
            for g in self.lanes(ls, axes, in_shape, env, lane, result):
                if g.edge is not None and pure:
                    preds = [None if one.pred is True else one.pred for one in g.edge()]  # type: ignore[misc]
                    state = fold(g.envs, g.idx, state, preds)
                else:
                    state = self.guard_fold(g, fold, state)
            return state

        state = self.walk(ls, env, lane, visit, acc.init() * slots, serial_ok=True, who=result)
        total = state[:width]
        for n in range(1, slots):
            total = acc.merge(total, state[n * width : (n + 1) * width])
        total = acc.cross_cluster(total) if cluster_loops else acc.cross(total, tpr)
        values = acc.results(total)
        for r, val in zip(red.results, values, strict=True):
            self.hold(_Held(r, ls, [], {(): val}))

    def partials(self, red: Operation, ls: LoopStructure, lane: int | None, acc: RowReduction) -> list[int]:
        """The loop positions ``red`` keeps partial results over (``partials``,
        nvFuser's rFactor): inner reduction loops the kernel unrolls."""
        result = red.results[0]
        loop = next(op for op in self.staged if op.tensor is result)
        out = list(loop.partials)
        for k in out:
            a = ls.loops[k]
            if k < self.q:
                raise self.error(
                    f"partials of {tensor_name(result)} name loop #{k}, outside its reduction loops (after the "
                    f"compute-at position {self.q})"
                )
            if k != lane and a.parallel_type not in UNROLLED and (a.static_extent or 1) > 1:
                raise self.error(
                    f"partials of {tensor_name(result)} name loop #{k}, a serial loop of {a.static_extent}: each "
                    "partial result is a register, indexed at compile time: unroll the loop"
                )
        return sorted(out)

    # ---- reductions across the shared loops ---------------------------------------
    def accumulates_across(self, v: SSAValue) -> bool:
        """Whether the reduction ``v`` reduces loops before the compute-at position
        (folded across iterations of the shared loops): then every loop after it is an
        iteration loop the kernel unrolls or binds to a thread, and every loop before
        it that is not a reduction is a block or thread index."""
        ls, q = self.ls[v], self.q
        if not any(ls.loops[k].iter_type == IterType.reduction and not ls.loops[k].clustered for k in range(q)):
            return False  # a row reduction (its clustered block loops: reduction_stage)
        for k, a in enumerate(ls.loops):
            ext = a.static_extent or 1
            if k >= q and a.iter_type == IterType.reduction:
                raise self.error(
                    f"{tensor_name(v)} reduces loop #{k}, after its compute-at position {q}, and loops before it: "
                    "a reduction computed at a loop folds either the loops after it (a row) or the shared loops "
                    "before it (across iterations), not both"
                )
            if k < q and a.iter_type != IterType.reduction and a.parallel_type not in PARALLEL_DIMS and ext > 1:
                raise self.error(
                    f"loop #{k} of {tensor_name(v)} is a serial iteration loop before its compute-at position {q}; "
                    "a reduction across the shared loops keeps one accumulator per result element of a thread"
                )
            if k < q and a.iter_type == IterType.reduction and a.parallel_type == ParallelType.TIDx:
                raise self.error(
                    f"reduction loop #{k} of {tensor_name(v)} is bound to TIDx; a reduction across the shared "
                    "loops combines its threads along TIDy and TIDz"
                )
            if k >= q and a.parallel_type not in PARALLEL_DIMS and a.parallel_type not in UNROLLED and ext > 1 and not (
                k == len(ls.loops) - 1 and ext <= MAX_LANES
            ):
                raise self.error(
                    f"loop #{k} of {tensor_name(v)} is a serial loop of {ext}; its accumulators are registers, "
                    "indexed at compile time: unroll the loop"
                )
        return True

    def plan_across(self) -> list[ScratchBuffer]:
        """The partial-result buffers of the reductions across the shared loops (one
        per accumulator value, ``[blocks][result elements]``), after checking they
        are siblings (the same loops, the same index of their inputs)."""
        if not self.across:
            return []
        first = self.across[0]
        ls = self.ls[first]
        for v in self.across[1:]:
            if self.ls[v].loops != ls.loops or self.ls[v].logical != ls.logical:
                raise self.error(
                    f"the reductions {tensor_name(first)} and {tensor_name(v)}, folded across the shared loops, have "
                    "different loop nests; they are folded together and must be scheduled alike"
                )
        self.groups = math.prod(
            a.static_extent or 1 for a in ls.loops[: self.q]
            if a.iter_type == IterType.reduction and a.parallel_type in GRID_DIMS
        )
        self.n_across = math.prod(self.shapes[first])
        self.slots = [k for k in range(self.q, len(ls.loops)) if ls.loops[k].parallel_type not in PARALLEL_DIMS]
        self.n_slots = math.prod(ls.loops[k].static_extent or 1 for k in self.slots)
        self.across_threads = sorted(
            BLOCK_DIMS[a.parallel_type] for a in ls.loops[: self.q]
            if a.iter_type == IterType.reduction and a.parallel_type in BLOCK_DIMS
        )
        self.acc_dtypes = accumulator_dtypes([v.owner for v in self.across])  # type: ignore[misc]
        return [ScratchBuffer(self.groups * self.n_across, dt) for dt in self.acc_dtypes]

    def slot(self, e: dict[str, int | SSAValue]) -> int:
        """The accumulator slot of the element at loop indices ``e``."""
        ls, n = self.ls[self.across[0]], 0
        for k in self.slots:
            n = n * (ls.loops[k].static_extent or 1) + e[f"i{k}"]  # type: ignore[operator]
        return n

    def across_stage(self, env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
        """Fold this iteration's elements of the reductions across the shared loops
        into their accumulators (an element outside the input folds nothing)."""
        ev, acc = self.ev, self.acc
        result = self.across[0]
        ls = self.ls[result]
        srcs = [v.owner.operands[0] for v in self.across]  # type: ignore[union-attr]
        in_shape = self.shapes[srcs[0]]
        axes = ls.logical
        lane = self.lanes_loop(ls)
        w = acc.width
        name = tensor_name(result)

        def fold(envs: list, idx: list, st: list[SSAValue]) -> list[SSAValue]:
            items = sibling_items(ev, srcs, envs, idx, self.slot, lambda e, i: self.reading(name, ls, e, axes, i))
            return fold_slots(acc, st, items, w)

        def visit(env: dict[str, int | SSAValue], st: list[SSAValue]) -> list[SSAValue]:
            for g in self.lanes(ls, axes, in_shape, env, lane, result):
                st = self.guard_fold(g, fold, st)
            return st

        return self.walk(ls, env, lane, visit, state, serial_ok=False, who=result)

    def store_partials(self, state: list[SSAValue]) -> None:
        """After the shared loops: combine each slot across the block's reducing
        threads and store the block's partial results (``[block][element]`` per
        accumulator value) for the finishing kernel."""
        b, ev, acc = self.b, self.ev, self.acc
        ls = self.ls[self.across[0]]
        shape = self.shapes[self.across[0]]
        w = acc.width
        env: dict[str, int | SSAValue] = {}
        for k, a in enumerate(ls.loops):
            if a.parallel_type in PARALLEL_DIMS:
                env[f"i{k}"] = parallel_index(b, a.parallel_type) if (a.static_extent or 1) > 1 else 0
        if self.slot_tile is not None:
            stage_slots_in_shared(b, self.slot_tile, state)
            part_of: Callable[[int], list[SSAValue]] = lambda n: combine_tile_slot(  # noqa: E731
                b, ev, acc, self.slot_tile, self.block[1], w, n  # type: ignore[arg-type]
            )
        else:
            threads = math.prod(self.block[d] for d in self.across_threads)
            state = [
                v for n in range(self.n_slots)
                for v in acc.cross(state[n * w : (n + 1) * w], threads, self.across_threads)
            ]
            part_of = lambda n: state[n * w : (n + 1) * w]  # noqa: E731
        g: int | SSAValue = 0
        for k, a in enumerate(ls.loops[: self.q]):
            if a.iter_type == IterType.reduction and a.parallel_type in GRID_DIMS:
                g = b.add(b.mul(g, a.static_extent or 1), env[f"i{k}"])
        slot_envs: list[dict[str, int]] = [{}]
        for k in self.slots:
            slot_envs = [{**e, f"i{k}": i} for e in slot_envs for i in range(ls.loops[k].static_extent or 1)]
        axes = [a for a in ls.logical if a.tensor_axis is not None]
        kept = [a for a in axes if a.iter_type != IterType.reduction]
        extents = [a.static_extent or 1 for a in ls.loops]
        for n, slot_env in enumerate(slot_envs):
            senv = {**env, **slot_env}
            values, conds = bounded_index(b, [(a.index, shape[a.tensor_axis]) for a in kept], senv, extents)  # type: ignore[index]
            it = iter(values)
            idx = tuple(Dim.const(0) if a.iter_type == IterType.reduction else ev.as_dim(next(it)) for a in axes)
            if self.slot_tile is not None:  # slot n was combined by the threads of row n % TIDy
                conds.append(b.cmp("eq", b.thread_id("y"), n % self.block[1]))
            else:
                for d in self.across_threads:
                    conds.append(b.cmp("eq", b.thread_id("xyz"[d]), 0))

            def write(idx: tuple = idx, n: int = n) -> list[SSAValue]:
                off = b.add(b.mul(g, self.n_across), ev.materialize(ev.ravel(idx, shape)))
                for v, buf in zip(part_of(n), self.partial_bufs, strict=True):
                    b.store(v, buf, [off])
                return []

            b.if_(all_of(b, conds), ev.in_scope(write))

    def store_row(self, v: SSAValue, red: SSAValue, env: dict[str, int | SSAValue]) -> None:
        """Store output ``v`` (of reduction ``red``'s shape up to extent-1 axes) at
        ``red``'s index; one thread per row: the thread indices that do not index
        the row are 0."""
        b, ev = self.b, self.ev
        j = self.outs.index(v)
        lay = self.out_layouts[j]
        ls = self.ls[red]
        axes = [a for a in ls.logical if a.tensor_axis is not None and a.iter_type != IterType.reduction]
        shape = self.shapes[red]
        values, conds = bounded_index(b, [(a.index, shape[a.tensor_axis]) for a in axes], env, [x.static_extent or 1 for x in ls.loops])  # type: ignore[index]
        dims = [Dim.const(0)] * len(shape)
        for a, x in zip(axes, values, strict=True):
            dims[a.tensor_axis] = ev.as_dim(x)  # type: ignore[index]
        idx = reindex(tuple(dims), shape, self.shapes[v])
        row_threads = {ls.loops[k].parallel_type for k in range(self.q)}
        for pt, dim in BLOCK_DIMS.items():
            if self.block[dim] > 1 and pt not in row_threads:
                conds.append(b.cmp("eq", b.thread_id("xyz"[dim]), 0))

        def store() -> list[SSAValue]:
            self.reading(tensor_name(v), ls, env, axes, tuple(dims))
            val = b.to_storage(ev.value(v, idx), F.dtype_of(v.type).to_xdsl())
            b.store(val, self.out_args[j], [offset_in(ev, lay.shape, lay.strides, idx)])
            return []

        b.if_(all_of(b, conds), ev.in_scope(store))

    def output_nest(self, env: dict[str, int | SSAValue]) -> None:
        """The inner loops of the kernel's nest: compute and store every output."""
        ls = self.ref
        lane = self.lanes_loop(ls)

        def visit(env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
            for v in self.full:
                self.store_output(v, self.ls[v], env, lane)
            return state

        self.walk(ls, env, lane, visit, [], serial_ok=True, who=self.full[0])

    def store_output(self, v: SSAValue, ls: LoopStructure, env: dict[str, int | SSAValue], lane: int | None) -> None:
        b, ev = self.b, self.ev
        j = self.outs.index(v)
        lay, mem = self.out_layouts[j], self.out_args[j]
        dt = F.dtype_of(v.type)
        axes = sorted((a for a in ls.logical if a.tensor_axis is not None), key=lambda a: a.tensor_axis)  # type: ignore[arg-type, return-value]
        def body(envs: list, idx: list) -> list[SSAValue]:
            self.reading(tensor_name(v), ls, envs[0], axes, idx[0])
            ev.prefetch(v, idx)
            values = []
            for e, i in zip(envs, idx, strict=True):
                self.reading(tensor_name(v), ls, e, axes, i)
                values.append(b.to_storage(ev.value(v, i), dt.to_xdsl()))
            store_lanes(b, ev, lay, mem, values, idx, dt.itemsize)
            return []

        for g in self.lanes(ls, axes, self.shapes[v], env, lane, v):
            self.guard(g, body, [])






def _definition_order(fusion: F.FusionOp) -> dict[Operation, int]:
    """Each op's position in the fusion body, after the inputs (``_defined_at``)."""
    n = len(fusion.inputs)
    return {op: n + i for i, op in enumerate(fusion.body.block.ops)}


def _defined_at(order: dict[Operation, int], v: SSAValue) -> int:
    """Where ``v`` is defined in the fusion (``_definition_order``): inputs first,
    then ops in order."""
    owner = v.owner
    if isinstance(owner, Operation):
        return order[owner]
    return v.index  # type: ignore[attr-defined]


def _producers_through_inlined(v: SSAValue, staged: set[SSAValue]) -> set[SSAValue]:
    """The tensors computed at a loop that ``v``'s op reads, directly or through
    inlined tensors."""
    owner = v.owner
    start = list(owner.operands) if isinstance(owner, Operation) else []
    return ancestors(start, stop=staged) & staged
