"""What a row schedule (the loop nest ``schedule-fusions`` writes for an inner
reduction or inner persistent kind) can compute, as a pure analysis.

A row kernel (inner reduction, inner persistent normalization) puts one row per
``threadIdx.y``: the fusion's reductions all reduce the same trailing axes of tensors of
one shape ``[R..., C...]``, every output is *full* (``[R..., C...]``) or *per-row*
(``[R...]`` / ``[R..., 1...]``), and every value computed from a reduction result keeps
its row index (elementwise ops, broadcasts along the reduced axes, per-row reshapes).

``row_kernel_reject(fusion, shape_of)`` returns why a fusion does not fit, or None. The
schedulers whose kernels are row kernels ask it in their run-time check, so a fusion it
rejects is segmented.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects import fuser as F

if TYPE_CHECKING:
    from .sizes import ConcreteSizes

from .graph import (
    body_ops,
    is_elementwise,
    is_reduction,
    reduction_dims,
    reduction_input,
    reductions,
)

ShapeOf = Callable[[SSAValue], tuple[int, ...]]
"""The concrete shape of a value (``ConcreteSizes.shape``, or a lowering's shape table)."""


@dataclass(frozen=True)
class RowGeometry:
    """The common ``[R..., C...]`` shape of the reductions and its per-row forms."""

    full: tuple[int, ...]
    k: int
    """Number of kept (leading) axes."""

    @property
    def row_shape(self) -> tuple[int, ...]:
        return self.full[: self.k]

    @property
    def col_shape(self) -> tuple[int, ...]:
        return self.full[self.k :]

    @property
    def keep_shape(self) -> tuple[int, ...]:
        return self.row_shape + (1,) * (len(self.full) - self.k)

    @property
    def rows(self) -> int:
        return math.prod(self.row_shape)

    @property
    def cols(self) -> int:
        return math.prod(self.col_shape)

    def form(self, shape: tuple[int, ...]) -> str | None:
        """``full``, ``row`` (``[R...]`` or ``[R..., 1...]``) or None."""
        if shape == self.full:
            return "full"
        if shape in (self.row_shape, self.keep_shape):
            return "row"
        return None


def row_geometry(fusion: F.FusionOp, shape_of: ShapeOf) -> RowGeometry:
    """The geometry of the first reduction (the fusion must have one)."""
    first = reductions(fusion)[0]
    full = tuple(shape_of(first.operands[0]))
    return RowGeometry(full, len(full) - len(reduction_dims(first)))


def row_kernel_reject(fusion: F.FusionOp, shape_of: ShapeOf) -> str | None:
    """Why one row kernel cannot compute ``fusion`` at these shapes, or None."""
    fname = f"@{fusion.sym_name.data}"
    reds = reductions(fusion)
    if not reds:
        return f"{fname}: a row reduction kernel needs a reduction"
    first = reds[0]
    full = tuple(shape_of(first.operands[0]))
    dims = reduction_dims(first)
    k = len(full) - len(dims)
    if dims != list(range(k, len(full))):
        return (
            f"{fname}: {first.name} reduces axes {dims} of shape {list(full)}; a row kernel "
            "reduces trailing axes"
        )
    for red in reds[1:]:
        shape = tuple(shape_of(red.operands[0]))
        if shape != full or reduction_dims(red) != dims:
            return (
                f"{fname}: {red.name} reduces axes {reduction_dims(red)} of shape {list(shape)}, "
                f"{first.name} axes {dims} of {list(full)}; a row kernel needs one row shape"
            )
    geo = RowGeometry(full, k)
    if geo.cols == 0 or geo.rows == 0:
        return f"{fname}: empty reduction shape {list(full)} (nothing to launch)"
    if why := _epilogue_reject(fusion, shape_of, geo):
        return why
    for i, v in enumerate(fusion.output_op.values):
        if not isinstance(v.type, F.TensorType) or geo.form(tuple(shape_of(v))) is None:
            what = list(shape_of(v)) if isinstance(v.type, F.TensorType) else "a scalar"
            return (
                f"{fname}: output #{i} ({_producer_name(v)}) is {what}; a row kernel writes "
                f"full {list(full)} or per-row {list(geo.row_shape)} / {list(geo.keep_shape)} "
                "tensors"
            )
    return None


def _producer_name(v: SSAValue) -> str:
    return v.owner.name if isinstance(v.owner, Operation) else "an input"


def _epilogue_reject(fusion: F.FusionOp, shape_of: ShapeOf, geo: RowGeometry) -> str | None:
    """Every value computed from a reduction result must keep the row index: the
    lowering hands a reduction's result an index that must name the current row."""
    if geo.rows == 1:
        return None  # every index names row 0
    dependent: set[SSAValue] = set()
    fname = f"@{fusion.sym_name.data}"
    n, k = len(geo.full), geo.k
    reds = set(reductions(fusion))
    for op in body_ops(fusion):
        if op in reds:
            dependent.update(op.results)
            continue
        deps = [u for u in op.operands if u in dependent and isinstance(u.type, F.TensorType)]
        if not deps:
            continue
        dependent.update(op.results)
        out = tuple(shape_of(op.results[0])) if op.results else ()

        def bad(why: str, op: Operation = op, out: tuple[int, ...] = out) -> str:
            return (
                f"{fname}: {op.name} (result {list(out)}) uses a reduction result {why}; a row "
                f"kernel supports per-row values {list(geo.row_shape)} / {list(geo.keep_shape)} "
                f"broadcast to {list(geo.full)}"
            )

        if geo.form(out) is None:
            return bad("with a shape that is neither per-row nor full")
        for u in deps:
            su = tuple(shape_of(u))
            if geo.form(su) is None:
                return bad(f"of shape {list(su)}")
            if is_elementwise(op) or isinstance(op, F.ExpandOp):
                if len(su) != len(out):
                    return bad(f"of shape {list(su)} broadcast against trailing axes")
            elif isinstance(op, F.BroadcastOp):
                flags = list(op.get_flags())
                if len(su) != k or flags != [False] * k + [True] * (n - k):
                    return bad(f"broadcast along {flags}, not along the reduced axes")
            elif isinstance(op, F.BroadcastInDimOp):
                bdims = F._ints(op.broadcast_dims)  # type: ignore[attr-defined]
                if list(bdims) != list(range(len(su))) or len(su) not in (k, n):
                    return bad(f"broadcast into axes {list(bdims)}")
            elif isinstance(op, F.ReshapeOp | F.SqueezeOp):
                if not (su == out or (geo.form(su) == "row" and geo.form(out) == "row")):
                    return bad(f"reshaped from {list(su)}")
            else:
                return bad("through an op that moves it off its row")
    return None


def aligned_rows(fusion: F.FusionOp, sizes: ConcreteSizes) -> bool:
    """Whether the rows of ``fusion`` are worth walking in aligned groups
    (``iterdomain.align`` on every tensor's innermost axis): each reduction reduces
    the innermost axis of its input alone; every other op is elementwise or a
    broadcast or computes a scalar (no op that moves an axis: reshape, permute, slice,
    pad); and every tensor input is a whole row (the reduced input's shape) or one
    value a row (innermost extent 1). An input read by column (a norm's weight) is
    not a vector in a shifted group: its lanes are loaded one by one."""
    reds = reductions(fusion)
    if not reds:
        return False
    full = list(sizes.shape(reduction_input(reds[0])))
    for a in fusion.inputs:
        if isinstance(a.type, F.TensorType):
            shape = list(sizes.shape(a))
            if shape != full and (not shape or shape[-1] != 1):
                return False
    for op in body_ops(fusion):
        if not any(isinstance(r.type, F.TensorType) for r in op.results):
            continue  # a scalar (a constant, a size)
        if is_reduction(op):
            t = reduction_input(op).type
            if not isinstance(t, F.TensorType) or reduction_dims(op) != [t.rank - 1]:
                return False
        elif not (is_elementwise(op) or isinstance(op, F.BroadcastInDimOp | F.BroadcastOp | F.ExpandOp)):
            return False
    return True
