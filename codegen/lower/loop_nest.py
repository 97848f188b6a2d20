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

Every output must have a loop domain, all with the same loops (extents and parallel
types) as output #0: the kernel is one loop nest. Schedules with reductions are not
lowered here yet (``lower_segment`` then reports it); the per-scheduler lowerings
(``pointwise.py``, ``rows.py``...) lower fusions that carry only ``fuser.schedule``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from fuser.codegen.lower.common import LoweredFusion, LoweredKernel, LoweringError, TensorLayout
from fuser.codegen.lower.elementwise import Dim, begin_kernel, offset_in
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import (
    MAX_THREADS_PER_BLOCK,
    MAX_VECTOR_BYTES,
    IterType,
    LoopOp,
    ParallelType,
)
from fuser.ir.schedule import BinOp, Const, Expr, LoopStructure, Var, loop_structure

__all__ = ["has_loop_nest", "lower_scheduled"]

_GRID = {ParallelType.BIDx: 0, ParallelType.BIDy: 1, ParallelType.BIDz: 2}
_BLOCK = {ParallelType.TIDx: 0, ParallelType.TIDy: 1, ParallelType.TIDz: 2}
_SERIAL = (ParallelType.serial, ParallelType.unroll, ParallelType.unswitch)


def has_loop_nest(fusion: F.FusionOp) -> bool:
    """Whether ``fusion`` carries a written schedule (``iterdomain.loop`` ops)."""
    return any(isinstance(op, LoopOp) for op in fusion.body.block.ops)


def lower_scheduled(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
) -> LoweredFusion:
    """One kernel from the loop nest written on ``fusion`` (module docstring)."""
    fname = f"@{fusion.sym_name.data}"
    outs = list(fusion.output_op.values)
    if not outs:
        raise LoweringError(f"{fname}: a scheduled fusion needs an output")
    for op in fusion.body.block.ops:
        if any(isinstance(r.type, F.TensorType) for r in op.results) and _reduces(op):
            raise LoweringError(
                f"{fname}: {op.name} reduces; lowering a written schedule of a reduction is "
                "not implemented yet (lower the fusion from its fuser.schedule alone: leave "
                "out schedule-fusions)"
            )
    structures = [_structure(fusion, v, j) for j, v in enumerate(outs)]
    ref = structures[0]
    for j, ls in enumerate(structures[1:], 1):
        _check_same_loops(fname, ref, ls, j, outs[j])
    grid, block, vec = _launch_shape(fname, ref, outs[0])
    itemsizes = [F.dtype_of(v.type).itemsize for v in outs]
    if vec is not None and ref.loops[vec].static_extent * max(itemsizes) > MAX_VECTOR_BYTES:  # type: ignore[operator]
        raise LoweringError(
            f"{fname}: loop #{vec} of {_name(outs[0])} vectorizes {ref.loops[vec].static_extent} elements of "
            f"{max(itemsizes)} bytes: more than {MAX_VECTOR_BYTES} bytes"
        )
    iterations = math.prod(a.static_extent or 1 for a in ref.loops)
    b, ev, args, out_args = begin_kernel(fusion, shapes, in_layouts, out_layouts, name, block, iterations)
    extents = [a.static_extent or 1 for a in ref.loops]

    def emit(e: Expr, env: dict[str, int | SSAValue], memo: dict[Expr, int | SSAValue]) -> int | SSAValue:
        """``e`` as kernel index arithmetic; ``memo`` shares the subexpressions of one
        index (all emitted at the same insertion point)."""
        if isinstance(e, Const):
            return e.value
        if isinstance(e, Var):
            return env[e.name]
        hit = memo.get(e)
        if hit is not None:
            return hit
        assert isinstance(e, BinOp)
        lhs, rhs = emit(e.lhs, env, memo), emit(e.rhs, env, memo)
        fn: Callable[..., int | SSAValue] = {
            "+": b.add, "-": b.sub, "*": b.mul, "/": b.div, "%": b.rem, "ceilDiv": b.ceil_div,
        }[e.op]
        out = memo[e] = fn(lhs, rhs)
        return out

    def store_output(j: int, env: dict[str, int | SSAValue]) -> None:
        v, ls, lay, mem = outs[j], structures[j], out_layouts[j], out_args[j]
        dt = F.dtype_of(v.type)
        axes = sorted((a for a in ls.logical if a.tensor_axis is not None), key=lambda a: a.tensor_axis)  # type: ignore[arg-type, return-value]
        lanes = range(extents[vec]) if vec is not None else range(1)
        lane_var = f"i{vec}" if vec is not None else None
        width = len(lanes)
        inner = axes[-1] if axes else None
        # Lanes of one vector: consecutive along the innermost axis, all in bounds
        # together, contiguous and aligned in the output.
        together = (
            width > 1 and inner is not None
            and _lane_form(inner.index, lane_var, width) == (1, True)  # type: ignore[arg-type]
            and all(_lane_form(a.index, lane_var, width) in ((0, True), (0, False)) for a in axes[:-1])  # type: ignore[arg-type]
            and shapes[v][-1] % width == 0
        )
        contiguous = (
            together and lay.strides[-1] == 1 and lay.pointer_align % width == 0
            and all(s % width == 0 for s in lay.strides[:-1])
        )

        def index_at(lane: int) -> tuple[tuple[Dim, ...], list[SSAValue | bool]]:
            lane_env = dict(env)
            if lane_var is not None:
                lane_env[lane_var] = lane
            idx: list[Dim] = []
            conds: list[SSAValue | bool] = []
            memo: dict[Expr, int | SSAValue] = {}
            for a, extent in zip(axes, shapes[v], strict=True):
                value = emit(a.index, lane_env, memo)
                idx.append(ev.as_dim(value))
                if "-" in _ops(a.index):  # a resize (pad): the index may be negative
                    conds.append(b.cmp("sge", value, 0))
                if _max_value(a.index, extents) >= extent:
                    conds.append(b.cmp("slt", value, extent))
            return tuple(idx), conds

        if together:
            # Lane 0's predicate holds for every lane: the base is a multiple of the
            # width, which divides the innermost extent.
            first, conds = index_at(0)
            base = first[-1]
            base = Dim(base.base, base.offset, width) if base.base is not None else base
            lane_idx = [(*first[:-1], base.shifted(j)) for j in range(width)]

            def body() -> list[SSAValue]:
                ev.prefetch(v, lane_idx)
                values = [b.to_storage(ev.value(v, i), dt.to_xdsl()) for i in lane_idx]
                if contiguous:
                    b.vstore(values, mem, offset_in(ev, lay.shape, lay.strides, lane_idx[0]))
                else:
                    for val, i in zip(values, lane_idx, strict=True):
                        b.store(val, mem, [offset_in(ev, lay.shape, lay.strides, i)])
                return []

            b.if_(_all(b, conds), ev.in_scope(body))
            return
        for lane in lanes:
            idx, conds = index_at(lane)

            def one(idx: tuple[Dim, ...] = idx) -> list[SSAValue]:
                val = b.to_storage(ev.value(v, idx), dt.to_xdsl())
                b.store(val, mem, [offset_in(ev, lay.shape, lay.strides, idx)])
                return []

            b.if_(_all(b, conds), ev.in_scope(one))

    def nest(k: int, env: dict[str, int | SSAValue]) -> None:
        if k == len(ref.loops) or k == vec:
            for j in range(len(outs)):
                store_output(j, env)
            return
        axis = ref.loops[k]
        pt = axis.parallel_type
        if pt in _GRID:
            nest(k + 1, {**env, f"i{k}": b.block_id("xyz"[_GRID[pt]])})
        elif pt in _BLOCK:
            nest(k + 1, {**env, f"i{k}": b.thread_id("xyz"[_BLOCK[pt]])})
        elif extents[k] == 1:
            nest(k + 1, {**env, f"i{k}": 0})
        else:
            def body(iv: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                nest(k + 1, {**env, f"i{k}": iv})
                return []

            b.for_(0, extents[k], 1, ev.in_scope(body), unroll=pt == ParallelType.unroll, iv_name=f"i{k}")  # type: ignore[arg-type]

    nest(0, {})
    module = b.finish()
    recorded = fusion.attributes.get("fuser.schedule")
    kind = "scheduled"
    if recorded is not None and "kind" in getattr(recorded, "data", {}):
        kind = recorded.data["kind"].data  # type: ignore[attr-defined]
    return LoweredFusion(kind, [LoweredKernel(module, name, block, grid, args)])


# ---- checks -----------------------------------------------------------------------


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "the output"


def _reduces(op: object) -> bool:
    from fuser.schedulers.analysis.graph import is_reduction

    return is_reduction(op)  # type: ignore[arg-type]


def _structure(fusion: F.FusionOp, v: SSAValue, j: int) -> LoopStructure:
    try:
        ls = loop_structure(fusion, v)
    except ValueError as e:
        raise LoweringError(f"@{fusion.sym_name.data}: output #{j} ({_name(v)}): {e}") from None
    for k, a in enumerate(ls.loops):
        if a.static_extent is None:
            raise LoweringError(
                f"@{fusion.sym_name.data}: loop #{k} of {_name(v)} has symbolic extent {a.extent}; "
                "bind the sizes first (bind-sizes)"
            )
        if a.iter_type == IterType.reduction:
            raise LoweringError(f"@{fusion.sym_name.data}: loop #{k} of {_name(v)} is a reduction id")
    return ls


def _check_same_loops(fname: str, ref: LoopStructure, ls: LoopStructure, j: int, v: SSAValue) -> None:
    if len(ls.loops) != len(ref.loops):
        raise LoweringError(
            f"{fname}: output #{j} ({_name(v)}) has {len(ls.loops)} loops, output #0 {len(ref.loops)}; "
            "a scheduled kernel is one loop nest"
        )
    for k, (a, r) in enumerate(zip(ls.loops, ref.loops, strict=True)):
        if (a.static_extent, a.parallel_type) != (r.static_extent, r.parallel_type):
            raise LoweringError(
                f"{fname}: loop #{k} of output #{j} ({_name(v)}) is [{a.static_extent}, "
                f"{a.parallel_type}], output #0's is [{r.static_extent}, {r.parallel_type}]; "
                "a scheduled kernel is one loop nest"
            )


def _launch_shape(
    fname: str, ls: LoopStructure, v: SSAValue
) -> tuple[tuple[int, int, int], tuple[int, int, int], int | None]:
    grid, block = [1, 1, 1], [1, 1, 1]
    bound: dict[ParallelType, int] = {}
    vec: int | None = None
    for k, a in enumerate(ls.loops):
        pt, ext = a.parallel_type, a.static_extent
        assert ext is not None
        if pt in _GRID or pt in _BLOCK:
            if pt in bound:
                raise LoweringError(
                    f"{fname}: loops #{bound[pt]} and #{k} of {_name(v)} are both bound to {pt}"
                )
            bound[pt] = k
            (grid if pt in _GRID else block)[(_GRID | _BLOCK)[pt]] = ext
        elif pt == ParallelType.vectorize:
            if k != len(ls.loops) - 1:
                raise LoweringError(
                    f"{fname}: loop #{k} of {_name(v)} is vectorized but is not the innermost loop"
                )
            vec = k
        elif pt not in _SERIAL:
            raise LoweringError(f"{fname}: loop #{k} of {_name(v)} is bound to {pt}, which a kernel cannot run")
    if math.prod(block) > MAX_THREADS_PER_BLOCK:
        raise LoweringError(f"{fname}: block {block} has more than {MAX_THREADS_PER_BLOCK} threads")
    return (grid[0], grid[1], grid[2]), (block[0], block[1], block[2]), vec


# ---- index expressions -------------------------------------------------------------


def _vars(e: Expr) -> set[str]:
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, BinOp):
        return _vars(e.lhs) | _vars(e.rhs)
    return set()


def _ops(e: Expr) -> set[str]:
    if isinstance(e, BinOp):
        return {e.op} | _ops(e.lhs) | _ops(e.rhs)
    return set()


def _lane_form(e: Expr, lane: str, width: int) -> tuple[int, bool] | None:
    """How ``e`` moves with the vector lane ``lane`` in ``[0, width)``: ``(c, m)`` when
    ``e(lane) = e(0) + c * lane`` for every lane, ``m`` telling that ``e(0)`` is a
    multiple of ``width``; None when neither is proven. A flat index split by the
    width and then unravelled (``(x * 4 + lane) % 3072``, ``... / 3072``) keeps its
    lanes in one row when the row length is a multiple of the width."""
    if isinstance(e, Const):
        return 0, e.value % width == 0
    if isinstance(e, Var):
        return (1, True) if e.name == lane else (0, False)
    assert isinstance(e, BinOp)
    a, b = _lane_form(e.lhs, lane, width), _lane_form(e.rhs, lane, width)
    if a is None or b is None:
        return None
    (ca, ma), (cb, mb) = a, b
    if e.op in ("+", "-"):
        return (ca + cb if e.op == "+" else ca - cb), ma and mb
    if e.op == "*":
        if isinstance(e.rhs, Const):
            return ca * e.rhs.value, ma or e.rhs.value % width == 0
        if isinstance(e.lhs, Const):
            return cb * e.lhs.value, mb or e.lhs.value % width == 0
        return (0, ma or mb) if ca == cb == 0 else None
    if cb != 0 or not isinstance(e.rhs, Const):
        return None
    if ca == 0:
        return 0, False
    if ca == 1 and ma and e.rhs.value % width == 0:
        # e.lhs = base + lane with base a multiple of the width, as is the divisor:
        # the lanes share the quotient, and the remainder moves with the lane.
        if e.op == "/":
            return 0, False
        if e.op == "%":
            return 1, True
    return None


def _max_value(e: Expr, extents: Sequence[int]) -> int:
    """An upper bound of ``e`` over loop indices ``i<k>`` in ``[0, extents[k])``
    (indices are non-negative; a subtraction gives no useful bound)."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return extents[int(e.name[1:])] - 1 if e.name.startswith("i") else math.inf  # type: ignore[return-value]
    assert isinstance(e, BinOp)
    a = _max_value(e.lhs, extents)
    if e.op == "+":
        return a + _max_value(e.rhs, extents)
    if e.op == "*":
        return a * _max_value(e.rhs, extents)
    if e.op == "/" and isinstance(e.rhs, Const):
        return a // e.rhs.value
    if e.op == "%" and isinstance(e.rhs, Const):
        return min(a, e.rhs.value - 1)
    return math.inf  # type: ignore[return-value]


def _all(b: object, conds: Sequence[SSAValue | bool]) -> SSAValue | bool:
    out: SSAValue | bool = True
    for c in conds:
        out = c if out is True else b.and_(out, c)  # type: ignore[attr-defined, arg-type]
    return out
