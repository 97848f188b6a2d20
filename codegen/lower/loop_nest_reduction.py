"""Lower a written reduction schedule: the loop nest of a reduction tensor's
``iterdomain`` IR (``lower_segment`` dispatches here for a written schedule of a
fusion that reduces; pointwise ones go to ``loop_nest.py``).

The reduction result carries the loop domain (what ``schedule-fusions`` writes for the
``reduction`` kind, or a hand-written one); its logical ids are the reduced input's
axes, the reduction ids included, so ``loop_structure`` gives the input's index in
the loop indices. The loops are read as:

* iteration loops (ids that are not reductions) first: ``BID``/``TID`` bound ones are
  block and thread indices, serial ones ``scf.for``; they pick the output element;
* then the reduction loops: serial and unrolled ones are ``scf.for`` loops carrying
  the accumulator; the innermost one, when serial and at most 16 bytes of the input,
  is unrolled into lanes whose loads become one vector load when consecutive and
  aligned; one reduction loop may be bound to ``TIDx``: after the per-thread loops
  the threads of the row combine their partials (``kernel.warp_reduce`` for 32
  threads, ``kernel.block_reduce`` otherwise) and thread 0 writes;
* an element outside the input (a split that does not divide) contributes nothing
  (its load is not issued); the cross-thread combine runs in every thread.

Outputs are the reduction result or values computed from it at its index (an
epilogue such as ``sum * 2``), all of the reduction's shape up to axes of extent 1
(seed 000's sum broadcast back to ``[rows, 1]``)::

    iterdomain.loop %s [%s_bidx, %4, %s_tidx, %3] : !fuser.tensor<256xf32>
        [!iterdomain.id<256, BIDx>, !iterdomain.id<2, reduction>,
         !iterdomain.id<128, reduction, TIDx>, !iterdomain.id<4, reduction>]

is one block per row, 128 threads each summing 2 vectors of 4 floats, a block
reduction, and thread 0 storing the row's sum.

Outputs at the input's size (normalizations) need the reduction placed at a loop
(``compute_at``): ``loop_nest_compute_at.py`` lowers those. Not yet: several
reductions without placements, Welford/variance, reductions bound to ``TIDy``/``BID``
(grid reductions): each is a diagnostic naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from fuser.codegen.lower.common import LoweredFusion, LoweredKernel, LoweringError, TensorLayout
from fuser.codegen.lower.elementwise import Dim, begin_kernel, offset_in
from fuser.codegen.lower.loop_index import (
    MAX_LANES,
    PARALLEL_DIMS,
    all_of,
    bounded_index,
    lane_indices,
    lanes_axis,
    launch_shape,
    parallel_index,
    reindex,
    same_elements,
)
from fuser.codegen.lower.rows import RowReduction
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import IterType, ParallelType
from fuser.ir.schedule import loop_structure

__all__ = ["lower_scheduled_reduction"]



def lower_scheduled_reduction(
    fusion: F.FusionOp,
    reductions: Sequence[Operation],
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
) -> LoweredFusion:
    """One kernel from the loop nest written on the reduction of ``fusion``."""
    fname = f"@{fusion.sym_name.data}"
    if len(reductions) != 1:
        raise LoweringError(
            f"{fname}: {len(reductions)} reductions; a written schedule is lowered for one reduction so far"
        )
    (red,) = reductions
    if not isinstance(red, F.ReductionOp):
        raise LoweringError(f"{fname}: {red.name}: written schedules of Welford/variance reductions are not lowered yet")
    result = red.result
    try:
        ls = loop_structure(fusion, result)
    except ValueError as e:
        raise LoweringError(f"{fname}: the reduction {red.name} has no loop domain: {e}") from None
    outs = list(fusion.output_op.values)
    for j, v in enumerate(outs):
        if not isinstance(v.type, F.TensorType) or not same_elements(shapes[v], shapes[result]):
            raise LoweringError(
                f"{fname}: output #{j} has shape {list(shapes.get(v, ()))}, the reduction "
                f"{list(shapes[result])}; a written reduction schedule writes outputs of the "
                "reduction's shape, up to axes of extent 1; a normalization places the "
                "reduction at a loop (compute_at), as schedule-fusions does for the inner "
                "persistent kind"
            )
    extents: list[int] = []
    for k, a in enumerate(ls.loops):
        if a.static_extent is None:
            raise LoweringError(f"{fname}: loop #{k} of the reduction has symbolic extent {a.extent}; bind the sizes first")
        extents.append(a.static_extent)
    is_red = [a.iter_type == IterType.reduction for a in ls.loops]
    first_red = is_red.index(True) if any(is_red) else len(is_red)
    if any(is_red[:first_red]) or not all(is_red[first_red:]):
        raise LoweringError(f"{fname}: the reduction's loops must be its iteration loops, then its reduction loops")
    tpr = 1
    for k in range(first_red, len(ls.loops)):
        pt = ls.loops[k].parallel_type
        if pt == ParallelType.TIDx:
            tpr = extents[k]
        elif pt not in (ParallelType.serial, ParallelType.unroll):
            raise LoweringError(
                f"{fname}: reduction loop #{k} is bound to {pt}; a written reduction is lowered with "
                "serial loops and TIDx so far"
            )
    grid, block, _ = launch_shape(fname, ls, result)
    b, ev, args, out_args = begin_kernel(fusion, shapes, in_layouts, out_layouts, name, block, math.prod(extents))
    acc = RowReduction(red, ev, math.prod(shapes[red.input][int(d)] for d in red.dims.get_values()))
    src = red.input  # type: ignore[attr-defined]
    in_shape = shapes[src]
    axes = ls.logical  # the input's axes, in order
    out_axes = [a for a in axes if a.tensor_axis is not None]

    last = len(ls.loops) - 1
    # The innermost serial reduction loop, when short, is unrolled into lanes: their
    # loads become one vector where consecutive (of at most 16 bytes of the tensor
    # actually loaded, which may be narrower than the reduction's input: a bf16 input
    # cast to f32).
    lanes_loop = (
        last if last >= first_red and ls.loops[last].parallel_type == ParallelType.serial
        and 1 < extents[last] <= MAX_LANES else None
    )

    def accumulate(env: dict, state: list[SSAValue]) -> list[SSAValue]:
        """Fold the input elements at ``env`` (all lanes of the innermost loop when it
        is unrolled into lanes) into ``state``."""
        lane_var = f"i{lanes_loop}" if lanes_loop is not None else None
        width = extents[lanes_loop] if lanes_loop is not None else 1
        exprs = [(a.index, e) for a, e in zip(axes, in_shape, strict=True)]
        along = lanes_axis([a.index for a in axes], lane_var, width, in_shape)
        together = along is not None
        groups: list[list[int]] = [list(range(width))] if together else [[j] for j in range(width)]
        for group in groups:
            lane_env = dict(env)
            if lane_var is not None:
                lane_env[lane_var] = group[0]
            values, conds = bounded_index(b, exprs, lane_env, extents)
            first = [ev.as_dim(v) for v in values]
            lanes = lane_indices(first, width, along) if along is not None and len(group) > 1 else [tuple(first)]

            def fold(lanes: list = lanes, state: list[SSAValue] = state) -> list[SSAValue]:
                ev.prefetch(src, lanes)
                return acc.update(state, [(ev.value(src, i), None) for i in lanes])

            pred = all_of(b, conds)
            if pred is True:
                state = fold()
            else:
                state = b.if_(pred, ev.in_scope(fold), lambda state=state: state, [v.type for v in state])  # type: ignore[arg-type]
        return state

    def reduce_loops(k: int, env: dict, state: list[SSAValue]) -> list[SSAValue]:
        if k > last or k == lanes_loop:
            return accumulate(env, state)
        a = ls.loops[k]
        if a.parallel_type in PARALLEL_DIMS or extents[k] == 1:
            return reduce_loops(k + 1, {**env, f"i{k}": parallel_index(b, a.parallel_type) if extents[k] > 1 else 0}, state)

        def body(iv: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            return reduce_loops(k + 1, {**env, f"i{k}": iv}, carried)

        return b.for_(0, extents[k], 1, ev.in_scope(body), inits=state,  # type: ignore[arg-type]
                      unroll=a.parallel_type == ParallelType.unroll, iv_name=f"i{k}")

    def finish(env: dict) -> None:
        # Every thread reaches the cross-thread combine (a barrier); the reduction
        # TIDx index is bound in env by the loops below.
        state = reduce_loops(first_red, env, acc.init())
        results = acc.results(acc.cross(state, tpr))
        for r, v in zip(red.results, results, strict=True):
            ev.hooks[r] = lambda _idx, v=v: v
        idx_values, conds = bounded_index(
            b, [(a.index, shapes[result][a.tensor_axis]) for a in out_axes if a.iter_type != IterType.reduction],
            env, extents,
        )
        it = iter(idx_values)
        idx = tuple(Dim.const(0) if a.iter_type == IterType.reduction else ev.as_dim(next(it)) for a in out_axes)
        if tpr > 1:
            conds.append(b.cmp("eq", b.thread_id("x"), 0))

        def store() -> list[SSAValue]:
            for j, v in enumerate(outs):
                lay = out_layouts[j]
                out_idx = reindex(idx, shapes[result], shapes[v])
                val = b.to_storage(ev.value(v, out_idx), F.dtype_of(v.type).to_xdsl())
                b.store(val, out_args[j], [offset_in(ev, lay.shape, lay.strides, out_idx)])
            return []

        b.if_(all_of(b, conds), ev.in_scope(store))

    def iterate(k: int, env: dict) -> None:
        if k == first_red:
            finish(env)
            return
        a = ls.loops[k]
        if a.parallel_type in PARALLEL_DIMS or extents[k] == 1:
            iterate(k + 1, {**env, f"i{k}": parallel_index(b, a.parallel_type) if extents[k] > 1 else 0})
            return

        def body(iv: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            iterate(k + 1, {**env, f"i{k}": iv})
            return []

        b.for_(0, extents[k], 1, ev.in_scope(body), unroll=a.parallel_type == ParallelType.unroll, iv_name=f"i{k}")  # type: ignore[arg-type]

    iterate(0, {})
    module = b.finish()
    return LoweredFusion(red.name.split(".", 1)[1], [LoweredKernel(module, name, block, grid, args)])
