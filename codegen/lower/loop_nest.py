"""Lower a fusion from its written schedule: the loop nest of its ``iterdomain`` IR.

``lower_scheduled`` is what ``lower_segment`` runs for a fusion that carries
``iterdomain.loop`` ops (written by ``schedule-fusions`` or by hand): it reads only
the IR. For each returned output, ``fuser.schedule.loop_structure`` replays the
splits, merges and resizes between the output's logical ids and its loop ids, giving
every logical index as an expression of the loop indices ``i0, i1, ...``. Then:

* a loop bound to ``BIDx/y/z`` or ``TIDx/y/z`` is ``blockIdx``/``threadIdx``; its
  extent is the grid or block extent of that dimension;
* a ``serial`` loop is an ``scf.for`` (``unroll``: one marked for unrolling);
* the innermost loop may be ``vectorize``: its lanes are consecutive elements, stored
  with one vector store where the output is contiguous and aligned;
* an iteration whose logical index falls outside the tensor (a split that does not
  divide, a partial tile) is predicated off; the predicate is left out where interval
  arithmetic proves the index in bounds;
* each output element is computed at its index by ``elementwise.ElementEvaluator``
  (views between ops are index arithmetic, inputs are loaded where they are read).

For example the schedule of ``docs/examples/scale_bias.mlir`` at 64x1024::

    iterdomain.loop %y [%y_bidy, %y_bidx, %y_tidx, %y_vec] : !fuser.tensor<64x1024xf32>
        [!iterdomain.id<64, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>,
         !iterdomain.id<4, vectorize>]

becomes one kernel of grid (2, 64, 1) and block (128, 1, 1) whose thread stores
``y[bid.y, (bid.x * 128 + tid.x) * 4 + 0..3]`` with one 16-byte store.

Every output must have a loop domain; outputs with the same loops (extents and
parallel types) are one kernel, one loop nest (``loop_nest_classes``; outputs with other
loops are another kernel, run after it). A fusion that reduces is lowered
from its reduction's loop nest by ``loop_nest_reduction.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    ScratchBuffer,
    TensorLayout,
)
from fuser.codegen.lower.elementwise import (
    Dim,
    ElementEvaluator,
    begin_kernel,
    is_trivial_reduction,
)
from fuser.codegen.lower.loop_index import (
    PARALLEL_DIMS,
    all_of,
    bounded_index,
    lane_indices,
    lanes_axis,
    launch_shape,
    not_vectorizable,
    parallel_index,
    scheduled_kind,
    store_lanes,
    tensor_name,
)
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import (
    MAX_VECTOR_BYTES,
    IterType,
    LoopOp,
    ParallelType,
)
from fuser.ir.schedule import DomainAxis, LoopStructure, loop_structure
from fuser.schedulers.analysis.graph import ancestors, is_reduction, reduction_input

__all__ = ["has_loop_nest", "lower_scheduled", "pointwise_kernel", "reductions_of"]


def has_loop_nest(fusion: F.FusionOp) -> bool:
    """Whether ``fusion`` carries a written schedule (``iterdomain.loop`` ops)."""
    return any(isinstance(op, LoopOp) for op in fusion.body.block.ops)


def reductions_of(
    fusion: F.FusionOp, shapes: dict[SSAValue, tuple[int, ...]] | None = None
) -> list[Operation]:
    """The ops of ``fusion`` that reduce a tensor (a written schedule of a fusion with
    any is lowered by ``loop_nest_reduction``).

    With ``shapes``, a reduction whose reduced axes all have extent 1 (one element per
    result, which the element evaluator computes where it is read) is left out when the
    fusion has a real reduction, or when it reads another reduction's result: the loop
    nest folds the others, and a chain of reductions is not one nest."""
    reds = [
        op for op in fusion.body.block.ops
        if any(isinstance(r.type, F.TensorType) for r in op.results) and is_reduction(op)
    ]
    if shapes is None:
        return reds
    real = [op for op in reds if not is_trivial_reduction(op, shapes.__getitem__)]
    if real:
        return real
    return [op for op in reds if not any(is_reduction(a.owner) for a in ancestors([reduction_input(op)]))]


def lower_scheduled(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
) -> LoweredFusion:
    """One kernel from the loop nest written on ``fusion`` (module docstring)."""
    fname = f"@{fusion.sym_name.data}"
    if not fusion.output_op.values:
        raise LoweringError(f"{fname}: a scheduled fusion needs an output")
    if reductions_of(fusion, shapes):
        raise LoweringError(f"{fname}: the fusion reduces; loop_nest_reduction lowers it")
    kernel = pointwise_kernel(fusion, shapes, in_layouts, out_layouts, name, range(len(fusion.output_op.values)))
    return LoweredFusion(scheduled_kind(fusion), [kernel])


def pointwise_kernel(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
    stores: Sequence[int],
    scratch: Sequence[ScratchBuffer] = (),
    hook: Callable[[ElementEvaluator, list[SSAValue]], None] | None = None,
) -> LoweredKernel:
    """The kernel of the outputs ``stores`` (positions in ``fuser.output``) over their
    common loop nest. ``scratch``: the segment's scratch buffers, passed last;
    ``hook(evaluator, scratch arguments)`` may provide values (an outer
    normalization's statistics, computed by an earlier kernel)."""
    fname = f"@{fusion.sym_name.data}"
    all_outs = list(fusion.output_op.values)
    outs = [all_outs[j] for j in stores]
    structures = [_structure(fusion, v, j, shapes) for j, v in zip(stores, outs, strict=True)]
    ref = structures[0]
    for j, ls in enumerate(structures[1:], 1):
        _check_same_loops(fname, ref, ls, j, outs[j])
    # The lane loop: the innermost loop where any output vectorizes. Outputs whose id
    # there is serial (a wider dtype than the vector width allows) store lane by lane.
    launches = [launch_shape(fname, ls, v) for ls, v in zip(structures, outs, strict=True)]
    grid, block, _ = launches[0]
    vectorized = [lane is not None for _, _, lane in launches]
    vec = next((lane for _, _, lane in launches if lane is not None), None)
    for j, v in enumerate(outs):
        size = F.dtype_of(v.type).itemsize
        if vectorized[j] and ref.loops[vec].static_extent * size > MAX_VECTOR_BYTES:  # type: ignore[index, operator]
            raise LoweringError(
                f"{fname}: loop #{vec} of {tensor_name(v)} vectorizes {ref.loops[vec].static_extent} elements of "  # type: ignore[index]
                f"{size} bytes: more than {MAX_VECTOR_BYTES} bytes"
            )
    iterations = math.prod(a.static_extent or 1 for a in ref.loops)
    b, ev, args, out_args = begin_kernel(fusion, shapes, in_layouts, out_layouts, name, block, iterations, scratch)
    if hook is not None:
        hook(ev, list(b.func.args[len(b.func.args) - len(scratch) :]))
    extents = [a.static_extent or 1 for a in ref.loops]

    lanes = range(extents[vec]) if vec is not None else range(1)
    lane_var = f"i{vec}" if vec is not None else None
    width = len(lanes)
    # Outputs of one shape and one index (usually all of them) are one store group:
    # one predicate, every value computed, then every store. So a load serves every
    # output that reads it, and no output loads an element after the group stored
    # it (an output written in place into an input the others read: an optimizer's
    # moments).
    groups: dict[tuple[object, ...], list[int]] = {}
    plans: list[tuple[list[DomainAxis], int | None, int | None]] = []
    for j, (v, ls) in enumerate(zip(outs, structures, strict=True)):
        axes = sorted((a for a in ls.logical if a.tensor_axis is not None), key=lambda a: a.tensor_axis)  # type: ignore[arg-type, return-value]
        # Lanes of one vector: consecutive along the innermost axis, all in bounds
        # together, and (for one vector store) contiguous and aligned in the output.
        # Or in bounds together but in the axis' last group, whose extent the width
        # does not divide (``edge``): a vector body and a predicated edge.
        indices = [a.index for a in axes]
        axis = lanes_axis(indices, lane_var, width, shapes[v], divisible=False) if axes else None
        along = axis if axis is not None and shapes[v][axis] % width == 0 else None
        edge = axis if along is None else None
        if vectorized[j] and width > 1 and along is None and edge is None:
            raise LoweringError(f"{fname}: {not_vectorizable(vec, v, width, shapes[v])}")
        plans.append((axes, along, edge))
        groups.setdefault((tuple(shapes[v]), tuple(indices)), []).append(j)

    def store_group(members: list[int], env: dict[str, int | SSAValue]) -> None:
        axes, along, edge = plans[members[0]]
        shape = shapes[outs[members[0]]]

        def index_at(lane: int) -> tuple[tuple[Dim, ...], list[SSAValue | bool]]:
            lane_env = dict(env)
            if lane_var is not None:
                lane_env[lane_var] = lane
            values, conds = bounded_index(b, [(a.index, e) for a, e in zip(axes, shape, strict=True)], lane_env, extents)
            return tuple(ev.as_dim(x) for x in values), conds

        def compute_then_store(lane_idx: list[tuple[Dim, ...]]) -> list[SSAValue]:
            for j in members:
                ev.prefetch(outs[j], lane_idx)
            values = {
                j: [b.to_storage(ev.value(outs[j], i), F.dtype_of(outs[j].type).to_xdsl()) for i in lane_idx]
                for j in members
            }
            for j in members:
                lay, mem = out_layouts[stores[j]], out_args[stores[j]]
                store_lanes(b, ev, lay, mem, values[j], lane_idx, F.dtype_of(outs[j].type).itemsize)
            return []

        if along is not None:
            # Lane 0's predicate holds for every lane: the base is a multiple of the
            # width, which divides the innermost extent.
            first, conds = index_at(0)
            lane_idx = lane_indices(first, width, along)
            b.if_(all_of(b, conds), ev.in_scope(lambda: compute_then_store(lane_idx)))
            return

        def lane_by_lane() -> list[SSAValue]:
            for lane in lanes:
                idx, conds = index_at(lane)
                b.if_(all_of(b, conds), ev.in_scope(lambda idx=idx: compute_then_store([idx])))
            return []

        if edge is not None and any(vectorized[j] for j in members):
            # The lanes move one for one along ``edge`` from a multiple of the width:
            # when the first and the last lane are in bounds, every lane is (one
            # vector); the axis' last, partial group goes lane by lane.
            first, conds = index_at(0)
            _, last = index_at(width - 1)
            lane_idx = lane_indices(first, width, edge)
            b.if_(
                all_of(b, [*conds, *last]),
                ev.in_scope(lambda: compute_then_store(lane_idx)),
                ev.in_scope(lane_by_lane),
            )
            return
        lane_by_lane()

    def nest(k: int, env: dict[str, int | SSAValue]) -> None:
        if k == len(ref.loops) or k == vec:
            for members in groups.values():
                store_group(members, env)
            return
        axis = ref.loops[k]
        pt = axis.parallel_type
        if pt in PARALLEL_DIMS:
            nest(k + 1, {**env, f"i{k}": parallel_index(b, pt)})
        elif extents[k] == 1:
            nest(k + 1, {**env, f"i{k}": 0})
        else:
            def body(iv: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                nest(k + 1, {**env, f"i{k}": iv})
                return []

            b.for_(0, extents[k], 1, ev.in_scope(body), unroll=pt == ParallelType.unroll, iv_name=f"i{k}")  # type: ignore[arg-type]

    nest(0, {})
    return LoweredKernel(b.finish(), name, block, grid, args)


# ---- checks -----------------------------------------------------------------------


def loop_nest_classes(fusion: F.FusionOp, shapes: dict[SSAValue, tuple[int, ...]]) -> list[list[int]]:
    """The ``fuser.output`` operands of a fusion that does not reduce, by loop nest:
    outputs whose loops agree (extents and parallel types; a vectorized lane loop and a
    serial one of the same extent agree) are one kernel, in the order of their first
    output (a no-op segment materialized per output shape is a kernel per shape)."""
    fname = f"@{fusion.sym_name.data}"
    classes: list[tuple[LoopStructure, list[int]]] = []
    for j, v in enumerate(fusion.output_op.values):
        ls = _structure(fusion, v, j, shapes)
        for ref, members in classes:
            try:
                _check_same_loops(fname, ref, ls, j, v)
            except LoweringError:
                continue
            members.append(j)
            break
        else:
            classes.append((ls, [j]))
    return [members for _, members in classes]


def _structure(
    fusion: F.FusionOp, v: SSAValue, j: int, shapes: dict[SSAValue, tuple[int, ...]]
) -> LoopStructure:
    try:
        ls = loop_structure(fusion, v, shapes)
    except ValueError as e:
        raise LoweringError(f"@{fusion.sym_name.data}: output #{j} ({tensor_name(v)}): {e}") from None
    for k, a in enumerate(ls.loops):
        if a.static_extent is None:
            raise LoweringError(
                f"@{fusion.sym_name.data}: loop #{k} of {tensor_name(v)} has symbolic extent {a.extent}; "
                "bind the sizes first (bind-sizes)"
            )
        if a.iter_type == IterType.reduction:
            raise LoweringError(f"@{fusion.sym_name.data}: loop #{k} of {tensor_name(v)} is a reduction id")
    return ls


def _lane_kind(pt: ParallelType) -> ParallelType:
    return ParallelType.serial if pt == ParallelType.vectorize else pt


def _check_same_loops(fname: str, ref: LoopStructure, ls: LoopStructure, j: int, v: SSAValue) -> None:
    if len(ls.loops) != len(ref.loops):
        raise LoweringError(
            f"{fname}: output #{j} ({tensor_name(v)}) has {len(ls.loops)} loops, output #0 {len(ref.loops)}; "
            "a scheduled kernel is one loop nest"
        )
    for k, (a, r) in enumerate(zip(ls.loops, ref.loops, strict=True)):
        # A vectorized loop and a serial one of the same extent are one lane loop: each
        # output stores its lanes as one vector or one by one.
        if (a.static_extent, _lane_kind(a.parallel_type)) != (r.static_extent, _lane_kind(r.parallel_type)):
            raise LoweringError(
                f"{fname}: loop #{k} of output #{j} ({tensor_name(v)}) is [{a.static_extent}, "
                f"{a.parallel_type}], output #0's is [{r.static_extent}, {r.parallel_type}]; "
                "a scheduled kernel is one loop nest"
            )


