"""Lowering of scheduled segments to kernel IR, one module per scheduler kind.

``lower_segment(fusion, in_layouts, target)`` takes the scheduler and parameters
``select-schedulers`` recorded on the segment (``fuser.schedule``: the compiler
driver's segments always have one), or the ones given, or for a fusion without either
asks the scheduler registry which scheduler takes it at these concrete sizes, and hands
the fusion, its concrete shapes and the parameters to the matching lowering:

==========================  =====================================================
scheduler                   lowering
==========================  =====================================================
pointwise                   ``pointwise.lower_pointwise``: one grid-stride kernel
inner reduction,            ``rows.lower_rows``: one block (or warp) per row
inner_persistent
outer reduction,            ``columns.lower_columns``: partial column results,
outer_persistent,           then finish (and apply) kernels
inner_outer_persistent
transpose                   ``transpose.lower_transpose``: shared-memory tiles
                            (``pointwise.lower_pointwise`` when the innermost
                            axes coincide at the actual layouts)
==========================  =====================================================
"""

from __future__ import annotations

from collections.abc import Sequence

from fuser.codegen.lower.common import LoweredFusion, LoweringError, TensorLayout
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
    scheduler: str | None = None,
    params: object = None,
    fallback: bool = False,
) -> LoweredFusion:
    """Kernels for one segment at the given input layouts (see the module docstring).

    ``in_layouts[i]`` is the layout of tensor input ``i`` (None for scalars, whose
    values, when known, are in ``scalar_values`` and only matter for size operands).
    ``out_layouts`` defaults to contiguous outputs (aliased outputs take the layout of
    the input they update). ``params`` overrides the scheduler's heuristic parameters
    (a dataclass of ``schedulers/params.py`` for the scheduler that runs; tuning scripts
    such as ``benchmarks/tune.py`` use it to try variants without editing heuristics).
    ``fallback`` (the runtime's compiles of the driver's segments): a written schedule
    that the loop-nest lowering rejects is lowered from the segment's
    ``fuser.schedule`` by the per-scheduler lowering instead, the reason in the
    result's ``fallback``; without it (``lower-to-kernels``, a hand-written schedule)
    the rejection is the error.
    """
    from fuser.schedulers.analysis.sizes import bind_sizes
    from fuser.schedulers.params import SCHEDULE_ATTR
    from fuser.schedulers.target import H100

    target = target or H100
    if scheduler is None and UNSCHEDULED in fusion.attributes:
        # A user schedule without transforms: its serial loop nest.
        fusion = serial_schedule(fusion)
    shape_args: list[object] = []
    for i, lay in enumerate(in_layouts):
        shape_args.append(lay.shape if lay is not None else (scalar_values[i] if scalar_values else None))
    sizes = bind_sizes(fusion, shape_args)
    shapes = concrete_shapes(fusion, shape_args)
    outs = fusion.output_op.values
    empty = {j for j, v in enumerate(outs) if isinstance(v.type, F.TensorType) and 0 in shapes.get(v, ())}
    if empty:
        # Nothing to store in an empty output: its kernels are those of the others.
        from functools import partial

        from fuser.codegen.lower.inner_outer import half_fusion, lower_output_groups
        from fuser.codegen.lower.loop_index import scheduled_kind
        from fuser.codegen.lower.loop_nest import has_loop_nest
        from fuser.codegen.lower.loop_nest_groups import loop_nest_half

        keep = [j for j in range(len(outs)) if j not in empty]
        kind = scheduled_kind(fusion, scheduler or "pointwise")
        if not keep:
            return LoweredFusion(kind, [])
        if out_layouts is None:
            out_layouts = default_out_layouts(fusion, shapes, in_layouts)
        lower = partial(lower_segment, scheduler=scheduler, params=params, fallback=fallback)
        return lower_output_groups(
            fusion, [(keep, "nonempty")], in_layouts, scalar_values, out_layouts, target,
            name or fusion.sym_name.data, kind, lower, loop_nest_half if has_loop_nest(fusion) else half_fusion,
        )
    from fuser.codegen.lower.loop_nest import has_loop_nest

    if scheduler is None and params is None and has_loop_nest(fusion):
        try:
            return _lower_loop_nest(fusion, shapes, in_layouts, scalar_values, out_layouts, target, name)
        except LoweringError as e:
            if not fallback or SCHEDULE_ATTR not in fusion.attributes:
                raise
            from fuser.ir.schedule import drop_schedule

            template = fusion.clone()
            drop_schedule(template)
            low = lower_segment(template, in_layouts, scalar_values, out_layouts, target, name or fusion.sym_name.data)
            low.fallback = str(e)
            return low
    return _lower_recorded(fusion, sizes, shapes, in_layouts, scalar_values, out_layouts, target, name, scheduler, params)


def _lower_loop_nest(
    fusion: F.FusionOp,
    shapes: dict,
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout] | None,
    target: object,
    name: str | None,
) -> LoweredFusion:
    """A written schedule (iterdomain ops): the loop nest is the kernel."""
    from fuser.codegen.lower.loop_nest import loop_nest_classes, lower_scheduled, reductions_of
    from fuser.codegen.lower.loop_nest_compute_at import computed_at, lower_compute_at
    from fuser.codegen.lower.loop_nest_groups import loop_nest_groups, loop_nest_half

    if out_layouts is None:
        out_layouts = default_out_layouts(fusion, shapes, in_layouts)

    def by_groups(groups: list[tuple[list[int], str]]) -> LoweredFusion:
        """A kernel group per loop nest: each group of outputs lowered as a sub-fusion."""
        from fuser.codegen.lower.inner_outer import lower_output_groups
        from fuser.codegen.lower.loop_index import scheduled_kind

        return lower_output_groups(
            fusion, groups, in_layouts, scalar_values, out_layouts, target, name or fusion.sym_name.data,
            scheduled_kind(fusion), lower_segment, loop_nest_half,
        )

    reductions = reductions_of(fusion, shapes)
    groups = loop_nest_groups(fusion, reductions)
    if groups is not None:
        # Reductions with different loop nests (inner-outer): a kernel group each.
        return by_groups(groups)
    if computed_at(fusion):
        return lower_compute_at(fusion, shapes, in_layouts, out_layouts, name or fusion.sym_name.data)
    if reductions:
        from fuser.codegen.lower.loop_nest_reduction import lower_scheduled_reduction

        return lower_scheduled_reduction(
            fusion, reductions, shapes, in_layouts, out_layouts, name or fusion.sym_name.data
        )
    classes = loop_nest_classes(fusion, shapes)
    if len(classes) > 1:
        # Outputs with different loop nests (a no-op segment's outputs of several
        # shapes): a kernel each.
        return by_groups([(c, f"nest{k}") for k, c in enumerate(classes)])
    return lower_scheduled(fusion, shapes, in_layouts, out_layouts, name or fusion.sym_name.data)


def _lower_recorded(
    fusion: F.FusionOp,
    sizes: object,
    shapes: dict,
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout] | None,
    target: object,
    name: str | None,
    scheduler: str | None,
    params: object,
) -> LoweredFusion:
    """The per-scheduler lowering of the recorded (or given, or selected) scheduler."""
    from fuser.schedulers.params import SCHEDULE_ATTR, ScheduleAttrError, read_schedule
    from fuser.schedulers.registry import select

    recorded = fusion.attributes.get(SCHEDULE_ATTR)
    if scheduler is None and recorded is not None:
        # What select-schedulers chose (the compiler driver's segments): the registry
        # is not asked again.
        try:
            scheduler, chosen = read_schedule(recorded)
        except ScheduleAttrError as e:
            raise LoweringError(f"@{fusion.sym_name.data}: {SCHEDULE_ATTR}: {e}") from None
        params = chosen if params is None else params
    if scheduler is None or params is None:
        selection = select(fusion, sizes, target)
        if selection.scheduler is None:
            raise LoweringError(
                f"no scheduler accepts @{fusion.sym_name.data} for these sizes:\n{selection.explain()}"
            )
        scheduler = scheduler or selection.kind
        if params is None:
            params = selection.params
    kind = scheduler
    name = name or fusion.sym_name.data
    if out_layouts is None:
        out_layouts = default_out_layouts(fusion, shapes, in_layouts)
    if kind in ("pointwise", "transpose"):
        from fuser.codegen.lower.pointwise import lower_pointwise
        from fuser.schedulers.params import PointwiseParams, TransposeParams

        if isinstance(params, TransposeParams):
            # Shared-memory tiles when the tensors' innermost axes really differ at
            # these layouts; otherwise (seed 002's bookend transpose, where the groups
            # share their innermost axis) a pointwise kernel reading through the
            # permuted strides is coalesced on both sides.
            from fuser.codegen.lower.transpose import lower_transpose, plan_transpose

            plan = plan_transpose(fusion, shapes, in_layouts, out_layouts)
            if plan is not None:
                return lower_transpose(fusion, shapes, in_layouts, out_layouts, params, name, plan)
            params = PointwiseParams(0, min(params.vectorization1, params.vectorization2), 1, (128, 1, 1), (0, 1, 1))
        return lower_pointwise(fusion, shapes, in_layouts, out_layouts, params, name)  # type: ignore[arg-type]
    fastest = getattr(params, "fastest_dim", True)
    if kind == "inner_persistent" or (kind == "reduction" and fastest):
        from fuser.codegen.lower.rows import lower_rows

        return lower_rows(fusion, shapes, in_layouts, out_layouts, params, name, kind)  # type: ignore[arg-type]
    if kind == "inner_outer_persistent":
        from fuser.codegen.lower.inner_outer import lower_inner_outer

        return lower_inner_outer(fusion, in_layouts, scalar_values, out_layouts, target, name, lower_segment)
    if kind in ("no_op", "expr_eval"):
        # Host work only (views of inputs, scalar math): the host runs it when it
        # can; otherwise (an expand the caller's array type cannot view, a scalar
        # output) one pointwise kernel materializes it.
        from fuser.codegen.lower.pointwise import lower_pointwise
        from fuser.schedulers.params import PointwiseParams

        outs = list(fusion.output_op.values)
        by_shape: dict[tuple[int, ...], list[int]] = {}
        for i, v in enumerate(outs):
            by_shape.setdefault(shapes[v], []).append(i)
        if len(by_shape) > 1:  # one kernel per output shape
            from fuser.codegen.lower.inner_outer import lower_output_groups

            groups = [(idx, f"out{k}") for k, idx in enumerate(by_shape.values())]
            return lower_output_groups(
                fusion, groups, in_layouts, scalar_values, out_layouts, target, name, kind, lower_segment
            )
        widest = max((F.dtype_of(v.type).itemsize for v in outs), default=4)
        params = PointwiseParams(0, max(1, 16 // widest), 1, (128, 1, 1), (0, 1, 1))
        return lower_pointwise(fusion, shapes, in_layouts, out_layouts, params, name)
    if kind in ("reduction", "outer_persistent"):
        from fuser.codegen.lower.columns import lower_columns

        return lower_columns(fusion, shapes, in_layouts, out_layouts, params, name, kind, target=target)  # type: ignore[arg-type]
    raise LoweringError(f"@{fusion.sym_name.data}: no kernel lowering for the {kind} scheduler")


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
