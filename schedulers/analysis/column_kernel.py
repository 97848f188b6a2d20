"""What a column schedule (the loop nests ``schedule-fusions`` writes for an outer
reduction or outer persistent kind) can compute, as a pure analysis.

Column kernels (outer reduction, outer persistent normalization) accumulate partial
column results over the reduced axes: the fusion's reductions all reduce the same axes
of one input shape, keeping some axes and reducing others; every output has the
reduced input's shape (written by the apply pass) or is a per-column result (the kept
shape, or the input's shape with the reduced axes at extent 1) computed elementwise
from the reduction results.

``column_kernel_reject(fusion, shape_of)`` returns why a fusion does not fit, or None.
The schedulers whose kernels are column kernels ask it in their run-time check, and the
lowering asks it again before building the kernels (a ``LoweringError`` with the same
message, which a plan the registry accepted never raises).
"""

from __future__ import annotations

from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.ir.dialects import fuser as F

from .graph import body_ops, is_elementwise, reduction_dims, reductions
from .row_kernel import ShapeOf

_KEEPS_COLUMNS = (F.BroadcastOp, F.BroadcastInDimOp, F.ExpandOp)
"""Views of a reduction result that keep its columns where the apply pass reads them."""


def reduction_levels(fusion: F.FusionOp) -> dict[SSAValue, int]:
    """For every value of the fusion: the number of reductions chained on its way from
    the inputs (0: it does not depend on a reduction result; a reduction of a value of
    level ``n`` gives results of level ``n + 1``)."""
    level: dict[SSAValue, int] = {a: 0 for a in fusion.inputs}
    reds = set(reductions(fusion))
    for op in body_ops(fusion):
        lvl = max((level.get(u, 0) for u in op.operands), default=0)
        if op in reds:
            lvl += 1
        for r in op.results:
            level[r] = lvl
    return level


def column_kernel_reject(fusion: F.FusionOp, shape_of: ShapeOf) -> str | None:
    """Why the column kernels cannot compute ``fusion`` at these shapes, or None."""
    name = f"@{fusion.sym_name.data}"
    reds = reductions(fusion)
    if not reds:
        return f"{name}: a column reduction segment needs a reduction"
    in_shape = tuple(shape_of(reds[0].operands[0]))
    rdims = reduction_dims(reds[0])
    for op in reds[1:]:
        shape, dims = tuple(shape_of(op.operands[0])), reduction_dims(op)
        if shape != in_shape or dims != rdims:
            return (
                f"{name}: {op.name} reduces dims {dims} of shape {list(shape)}, "
                f"{reds[0].name} dims {rdims} of {list(in_shape)}; a column lowering needs one "
                "reduction domain"
            )
    if not rdims or len(rdims) == len(in_shape):
        return f"{name}: a column reduction must keep some axes and reduce others"
    if any(in_shape[d] == 0 for d in rdims):
        for op in reds:
            if op.name in ("fuser.max", "fuser.min"):
                return f"{name}: {op.name} over an empty axis"
    levels = reduction_levels(fusion)
    results = {r for op in reds for r in op.results}
    kept = tuple(e for a, e in enumerate(in_shape) if a not in rdims)
    keep_shape = tuple(1 if a in rdims else e for a, e in enumerate(in_shape))

    def direct(v: SSAValue, shape: tuple[int, ...]) -> bool:
        """``v`` is computed elementwise, at ``shape``, from the reduction results."""
        if v in results:
            return tuple(shape_of(v)) == shape
        if isinstance(v, BlockArgument) or not levels.get(v, 0):
            return True
        op = v.owner
        assert isinstance(op, Operation)
        if not is_elementwise(op) or tuple(shape_of(v)) != shape:
            return False
        return all(direct(u, shape) for u in op.operands if levels.get(u, 0))

    red_ops = set(reds)
    for op in body_ops(fusion):
        if op in red_ops or not any(levels.get(u, 0) for u in op.operands):
            continue
        if not (is_elementwise(op) or isinstance(op, _KEEPS_COLUMNS)):
            return (
                f"{name}: {op.name} uses a reduction result; a column kernel reads reduction "
                "results at their column (elementwise ops and broadcasts), not through other views"
            )
    for j, v in enumerate(fusion.output_op.values):
        if not isinstance(v.type, F.TensorType):
            return f"{name}: output #{j} is a scalar; column kernels write tensors"
        shape = tuple(shape_of(v))
        if shape == in_shape:
            continue
        if shape in (kept, keep_shape) and direct(v, shape):
            continue
        return (
            f"{name}: output #{j} has shape {list(shape)}: a column lowering writes outputs of "
            f"the reduced input's shape {list(in_shape)} or per-column results of shape "
            f"{list(kept)} (or {list(keep_shape)}) computed elementwise from the reductions"
        )
    return None
