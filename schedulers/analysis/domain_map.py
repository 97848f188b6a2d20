"""Domain map: which axes of which tensors are the same iteration axis, and the
reference tensor a pointwise or transpose schedule is derived from.

Axes are joined through ops: elementwise operands with their result (numpy
alignment, on the right), reductions on their kept axes, ``broadcast`` /
``broadcast_in_dim`` / ``expand`` / ``permute`` / ``squeeze`` / ``slice`` / ``pad``
/ ``cat`` on the axes they carry over, ``reshape`` on its ``keep`` steps. Axes of
extent 1 are broadcast axes: they join classes but need not be covered.

The *reference* is the output whose axes cover every non-broadcast axis of every
tensor input (the most complete iteration domain); among several, the one of
highest rank (then the first). ``permute(a) + b`` has reference ``out``: its two
axes are ``a``'s two axes and ``b``'s two axes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects.fuser import (
    BroadcastInDimOp,
    BroadcastOp,
    CatOp,
    ExpandOp,
    FusionOp,
    PadOp,
    PermuteOp,
    ReshapeOp,
    SliceOp,
    SqueezeOp,
    TensorType,
)
from fuser.ir.shapes import DYN

from .graph import body_ops, is_elementwise, is_reduction, reduction_dims, returned_outputs

Axis = tuple[SSAValue, int]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Axis, Axis] = {}

    def find(self, a: Axis) -> Axis:
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: Axis, b: Axis) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


@dataclass
class DomainMap:
    fusion: FusionOp
    _uf: _UnionFind

    def axis_class(self, v: SSAValue, axis: int) -> Axis:
        return self._uf.find((v, axis))

    def classes(self, v: SSAValue) -> list[Axis]:
        t = v.type
        assert isinstance(t, TensorType)
        return [self.axis_class(v, i) for i in range(t.rank)]

    def covers(self, ref: SSAValue, v: SSAValue) -> bool:
        """Whether every non-broadcast axis of ``v`` maps to an axis of ``ref``."""
        t = v.type
        if not isinstance(t, TensorType):
            return True
        ref_classes = set(self.classes(ref))
        return all(
            self.axis_class(v, i) in ref_classes for i, e in enumerate(t.get_shape()) if e != 1
        )

    def reference(self) -> SSAValue | None:
        """The reference tensor: an output covering every tensor input."""
        inputs = [a for a in self.fusion.inputs if isinstance(a.type, TensorType)]
        best: SSAValue | None = None
        for out in returned_outputs(self.fusion):
            t = out.type
            if not isinstance(t, TensorType):
                continue
            if not all(self.covers(out, i) for i in inputs):
                continue
            if best is None or t.rank > best.type.rank:  # type: ignore[union-attr]
                best = out
        return best


def build_domain_map(fusion: FusionOp) -> DomainMap:
    uf = _UnionFind()
    for op in body_ops(fusion):
        _join(op, uf)
    return DomainMap(fusion, uf)


def _rank(v: SSAValue) -> int:
    t = v.type
    return t.rank if isinstance(t, TensorType) else -1


def _join(op: Operation, uf: _UnionFind) -> None:
    if not op.results or _rank(op.results[0]) < 0:
        return
    out = op.results[0]
    out_rank = _rank(out)
    if is_elementwise(op) or isinstance(op, PadOp | SliceOp | CatOp):
        for x in op.operands:
            r = _rank(x)
            for i in range(r):
                uf.union((x, i), (out, out_rank - r + i))
    elif is_reduction(op):
        x = op.operands[0]
        dims = reduction_dims(op)
        keep = [i for i in range(_rank(x)) if i not in dims]
        for res in op.results:
            if _rank(res) == _rank(x):  # keepdim
                for i in keep:
                    uf.union((x, i), (res, i))
            else:
                for j, i in enumerate(keep):
                    uf.union((x, i), (res, j))
    elif isinstance(op, BroadcastOp):
        kept = [j for j, f in enumerate(op.get_flags()) if not f]
        for i, j in enumerate(kept):
            uf.union((op.input, i), (out, j))
    elif isinstance(op, BroadcastInDimOp):
        for i, j in enumerate(int(d) for d in op.broadcast_dims.get_values()):
            uf.union((op.input, i), (out, j))
    elif isinstance(op, ExpandOp):
        for i in range(out_rank):
            uf.union((op.input, i), (out, i))
    elif isinstance(op, PermuteOp):
        for j, i in enumerate(op.get_dims()):
            uf.union((op.input, i), (out, j))
    elif isinstance(op, SqueezeOp):
        dims = op.get_dims()
        kept = [i for i in range(_rank(op.input)) if i not in dims]
        for j, i in enumerate(kept):
            uf.union((op.input, i), (out, j))
    elif isinstance(op, ReshapeOp) and op.view is not None:
        i = j = 0
        t = op.input.type
        assert isinstance(t, TensorType)
        for step in op.view.resolved_steps(t.get_shape()):
            if step.kind == "keep":
                uf.union((op.input, i), (out, j))
            i += step.num_inputs
            j += len(step.out_sizes)


def innermost_extent(shape: tuple[int, ...]) -> int:
    """The extent of the innermost axis that is not 1 (1 for all-broadcast)."""
    for e in reversed(shape):
        if e != 1:
            return e
    return 1


__all__ = ["DYN", "DomainMap", "build_domain_map", "innermost_extent"]
