"""Lowering of scheduled segments to kernel IR: the segment's loop nest is the kernel.

``lower_segment(fusion, in_layouts, ...)`` reads only the schedule written in the
fusion as ``iterdomain`` ops (``schedule-fusions``, or a schedule written by hand or
by ``fd.sched``) and lowers it at the concrete shapes and layouts of one launch:

==============================  ====================================================
the written schedule            lowering
==============================  ====================================================
no reduction, no placement      ``loop_nest.lower_scheduled``: the loops of the
                                outputs' loop domains, indices replayed from them
tensors placed at a loop        ``loop_nest_compute_at.lower_compute_at``: stages
(``compute_at``)                at their loops, in registers or shared memory
reductions                      ``loop_nest_reduction.lower_scheduled_reduction``:
                                serial, warp, block or grid by the parallel types
                                of the reduced ids (rFactor partials)
reductions with different loop  ``loop_nest_groups``: a kernel group per loop nest
nests, outputs of several nests (the inner-outer persistent halves, a no-op's shapes)
every reduction placed at the    ``lower_compute_at``: one kernel whose row sums fold
shared loops, some reducing them per iteration and whose column sums fold across the
                                iterations into per-block partials, then a finishing
                                kernel (the single-kernel inner-outer persistent kind)
==============================  ====================================================

A fusion without a written schedule is an error naming the pass that writes one
(``select-schedulers`` then ``schedule-fusions``), except host work with nothing to
materialize (a ``no_op`` or ``expr_eval`` schedule without a loop nest: no kernel)
and a user schedule that applied no transforms (``UNSCHEDULED``), whose loop nest is
the serial one nvFuser compiles (``serial_schedule``).
"""

from __future__ import annotations

from collections.abc import Sequence

from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweringError,
    TensorLayout,
    desymbolize_layout,
    extent_symbols,
    symbolize,
    symbolize_layout,
)
from fuser.ir.dialects import fuser as F


def concrete_shapes(fusion: F.FusionOp, inputs: Sequence[object]) -> dict:
    """Concrete shape of every value of ``fusion`` for input shapes/values ``inputs``."""
    from fuser.schedulers.analysis.sizes import bind_sizes

    sizes = bind_sizes(fusion, inputs)
    out = {}
    for op in fusion.walk():
        for r in op.results:
            try:
                out[r] = sizes.shape(r)
            except KeyError:
                pass
    for a in fusion.inputs:
        out[a] = sizes.shape(a)
    return out


def lower_segment(
    fusion: F.FusionOp,
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None = None,
    out_layouts: Sequence[TensorLayout] | None = None,
    target: object = None,
    name: str | None = None,
) -> LoweredFusion:
    """Kernels for one scheduled segment at the given input layouts (see the module
    docstring).

    ``in_layouts[i]`` is the layout of tensor input ``i`` (None for scalars, whose
    values, when known, are in ``scalar_values`` and only matter for size operands).
    ``out_layouts`` defaults to contiguous outputs (aliased outputs take the layout of
    the input they update). Extents given as ``SymInt``s (``symbolic_layouts``) are
    kernel parameters: launches that differ only in them get the same kernel text
    (``fuser.ir.symbolic``). ``target`` names the GPU (kept for the callers' symmetry
    with the schedulers: the loop nest already holds every target-dependent choice).
    """
    from fuser.codegen.lower.loop_index import scheduled_kind
    from fuser.codegen.lower.loop_nest import has_loop_nest
    from fuser.codegen.lower.loop_nest_groups import lower_output_groups

    del target
    if UNSCHEDULED in fusion.attributes:
        # A user schedule without transforms: its serial loop nest.
        fusion = serial_schedule(fusion)
    if not has_loop_nest(fusion):
        if scheduled_kind(fusion, "") in ("no_op", "expr_eval", "matmul", "communication"):
            # Host work with nothing to materialize (schedule-fusions wrote no loop
            # nest: every output is an input, or a scalar), or a library call (a
            # matrix product): no generated kernel.
            return LoweredFusion(scheduled_kind(fusion), [])
        raise LoweringError(_no_loop_nest(fusion))
    name = name or fusion.sym_name.data
    shape_args: list[object] = []
    for i, lay in enumerate(in_layouts):
        plain = tuple(int(d) for d in lay.shape) if lay is not None else None
        shape_args.append(plain if lay is not None else (scalar_values[i] if scalar_values else None))
    shapes = concrete_shapes(fusion, shape_args)
    table = extent_symbols(in_layouts)
    reduced = _reduced_extents(fusion, shapes) & table.keys()
    if reduced:
        # A reduction over a symbolic extent would loop a runtime number of times
        # (no unrolled partial sums): reductions are specialized on their extent.
        in_layouts = [desymbolize_layout(lay, reduced) for lay in in_layouts]
        table = {v: e for v, e in table.items() if v not in reduced}
    if table:
        # Symbolic extents: every extent of this launch with a symbol's value is that
        # symbol (it is that value here: the kernel stays exact for this launch).
        shapes = {v: symbolize(s, table) for v, s in shapes.items()}
        in_layouts = [symbolize_layout(lay, table) for lay in in_layouts]
        if out_layouts is not None:
            out_layouts = [symbolize_layout(lay, table) for lay in out_layouts]  # type: ignore[misc]
    if out_layouts is None:
        out_layouts = default_out_layouts(fusion, shapes, in_layouts)
    outs = fusion.output_op.values
    empty = {j for j, v in enumerate(outs) if isinstance(v.type, F.TensorType) and 0 in shapes.get(v, ())}
    if empty:
        # Nothing to store in an empty output: its kernels are those of the others.
        keep = [j for j in range(len(outs)) if j not in empty]
        if not keep:
            return LoweredFusion(scheduled_kind(fusion), [])
        return lower_output_groups(
            fusion, [(keep, "nonempty")], in_layouts, scalar_values, out_layouts, None, name,
            scheduled_kind(fusion), lower_segment,
        )
    return _lower_loop_nest(fusion, shapes, in_layouts, scalar_values, out_layouts, name)


def _reduced_extents(fusion: F.FusionOp, shapes: dict) -> set[int]:
    """The extents of the axes the fusion's reductions reduce."""
    from fuser.codegen.lower.loop_nest import reductions_of
    from fuser.schedulers.analysis.graph import reduction_dims, reduction_input

    out: set[int] = set()
    for op in reductions_of(fusion):
        shape = shapes.get(reduction_input(op), ())
        out.update(int(shape[d]) for d in reduction_dims(op) if d < len(shape))
    return out


def _no_loop_nest(fusion: F.FusionOp) -> str:
    """Why ``fusion`` cannot be lowered: the pass that would have written its loop nest."""
    from fuser.codegen.lower.loop_index import scheduled_kind

    head = f"@{fusion.sym_name.data} has no loop nest (no iterdomain.loop op)"
    kind = scheduled_kind(fusion, "")
    if kind:
        return f"{head}: run schedule-fusions after select-schedulers to write its {kind} schedule"
    return f"{head}: run select-schedulers and schedule-fusions first, or write its loop nest"


def _lower_loop_nest(
    fusion: F.FusionOp,
    shapes: dict,
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout],
    name: str,
) -> LoweredFusion:
    """A written schedule (iterdomain ops): the loop nest is the kernel."""
    from fuser.codegen.lower.loop_index import scheduled_kind
    from fuser.codegen.lower.loop_nest import loop_nest_classes, lower_scheduled, reductions_of
    from fuser.codegen.lower.loop_nest_compute_at import computed_at, lower_compute_at
    from fuser.codegen.lower.loop_nest_groups import loop_nest_groups, lower_output_groups

    def by_groups(groups: list[tuple[list[int], str]]) -> LoweredFusion:
        """A kernel group per loop nest: each group of outputs lowered as a sub-fusion."""
        return lower_output_groups(
            fusion, groups, in_layouts, scalar_values, out_layouts, None, name, scheduled_kind(fusion), lower_segment
        )

    reductions = reductions_of(fusion, shapes)
    placed = {op.tensor for op in computed_at(fusion)}
    groups = None if reductions and all(r.results[0] in placed for r in reductions) else (
        loop_nest_groups(fusion, reductions)
    )
    if groups is not None:
        # Reductions with different loop nests (inner-outer): a kernel group each.
        return by_groups(groups)
    if computed_at(fusion):
        return lower_compute_at(fusion, shapes, in_layouts, out_layouts, name)
    if reductions:
        from fuser.codegen.lower.loop_nest_reduction import lower_scheduled_reduction

        return lower_scheduled_reduction(fusion, reductions, shapes, in_layouts, out_layouts, name)
    classes = loop_nest_classes(fusion, shapes)
    if len(classes) > 1:
        # Outputs with different loop nests (a no-op segment's outputs of several
        # shapes): a kernel each.
        return by_groups([(c, f"nest{k}") for k, c in enumerate(classes)])
    return lower_scheduled(fusion, shapes, in_layouts, out_layouts, name)


UNSCHEDULED = "fuser.unscheduled"
"""Attribute of a fusion that a user ``schedule()`` left without transforms (the frontend's
``fd.sched``): ``lower_segment`` lowers it from its serial loop nest (``serial_schedule``)."""


def serial_schedule(fusion: F.FusionOp) -> F.FusionOp:
    """A copy of a fusion without a schedule, scheduled as nvFuser compiles a user
    schedule that applied no transforms: one thread of one block computes every
    element in order. Each reduction result's loop domain is its kept axes merged into
    one serial loop, then its reduced axes merged into one (a serial fold); each other
    returned tensor's is its axes merged into one serial loop::

        %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
        iterdomain.loop %s [%rows, %cols] : !fuser.tensor<?xf32> [!iterdomain.id<?>, !iterdomain.id<?, reduction>]

    Extents stay symbolic: the lowering resolves them from the concrete shapes, so
    one user schedule serves every size of its layout."""
    from fuser.codegen.lower.loop_nest import reductions_of
    from fuser.ir.dialects.iterdomain import IterType
    from fuser.ir.schedule import Schedule

    out = fusion.clone()
    out.attributes.pop(UNSCHEDULED, None)
    scheduled: set = set()

    def serial(v: object) -> None:
        s = Schedule(v)  # type: ignore[arg-type]
        kinds = [t.iter_type == IterType.reduction for t in s.types]
        s.reorder([k for k, r in enumerate(kinds) if not r] + [k for k, r in enumerate(kinds) if r])
        kept = kinds.count(False)
        for _ in range(kept - 1):
            s.merge(0)
        for _ in range(len(kinds) - kept - 1):
            s.merge(min(1, kept))
        s.emit()
        scheduled.add(v)

    for op in reductions_of(out):
        for r in op.results:
            if isinstance(r.type, F.TensorType):
                serial(r)
    for v in out.output_op.values:
        if isinstance(v.type, F.TensorType) and v not in scheduled:
            serial(v)
    return out


def default_out_layouts(
    fusion: F.FusionOp, shapes: dict, in_layouts: Sequence[TensorLayout | None]
) -> list[TensorLayout]:
    """Returned outputs: dense in their declared stride order; aliased outputs: the
    layout of the input they are written into."""
    term = fusion.output_op
    types = iter(fusion.function_type.outputs.data)
    outs: list[TensorLayout] = []
    for v, alias in zip(term.values, term.get_alias_inputs(), strict=True):
        if alias >= 0:
            lay = in_layouts[alias]
            assert lay is not None
            outs.append(lay)
            continue
        t = next(types)
        shape = shapes[v]
        if isinstance(t, F.TensorType) and not t.has_default_layout:
            outs.append(TensorLayout.with_stride_order(shape, t.get_stride_order()))
        else:
            outs.append(TensorLayout.contiguous(shape))
    return outs
