"""Index arithmetic of a written loop nest, shared by the loop-nest lowerings
(``loop_nest.py`` for pointwise fusions, ``loop_nest_reduction.py`` for a reduction).

A schedule's logical indices are ``fuser.ir.schedule.Expr`` trees over the loop
indices ``i0, i1, ...`` (``loop_structure``). Here they become kernel arithmetic
(``emit_index``), and three static facts are read from them: bounds over the
loop ranges (``value_range``, which decides where a predicate is needed), whether an
index moves one-for-one with a vector lane (``lane_form``, which decides vector
loads and stores), and the launch shape the parallel types give (``launch_shape``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.codegen.lower.common import LoweringError
from fuser.codegen.lower.elementwise import Dim, flat_aligned, moving_axis, offset_in, reindex
from fuser.ir.dialects.iterdomain import MAX_THREADS_PER_BLOCK, MAX_VECTOR_BYTES, ParallelType
from fuser.ir.schedule import (
    BinOp,
    Const,
    Expr,
    LoopStructure,
    Var,
    loop_structure,
    row_major_offset,
)
from fuser.ir.shapes import same_elements
from fuser.ir.symbolic import SymInt, as_expr, evaluate, symbols_of
from fuser.ir.symbolic import symbols_of as vars_of

__all__ = [
    "BLOCK_DIMS", "GRID_DIMS", "MAX_LANES", "PARALLEL_DIMS", "SERIAL_TYPES", "all_of", "bounded_index", "emit_index",
    "edge_group", "edge_inside", "lane_form", "lane_indices", "lanes_axis", "shifted_axis", "shifted_lane_indices", "launch_shape", "value_range", "not_vectorizable", "ops_of",
    "parallel_index", "reindex", "same_elements", "scheduled_kind", "store_lanes", "tensor_name", "vars_of",
]

GRID_DIMS = {ParallelType.BIDx: 0, ParallelType.BIDy: 1, ParallelType.BIDz: 2}
BLOCK_DIMS = {ParallelType.TIDx: 0, ParallelType.TIDy: 1, ParallelType.TIDz: 2}
PARALLEL_DIMS = {**GRID_DIMS, **BLOCK_DIMS}
"""The parallel types a loop nest binds to a block or thread index (not loops)."""
SERIAL_TYPES = (ParallelType.serial, ParallelType.unroll, ParallelType.unswitch)
MAX_LANES = 16
"""A serial innermost loop of at most this many iterations is unrolled into lanes
(their accesses become vectors of at most 16 bytes where consecutive)."""


def tensor_name(v: SSAValue) -> str:
    """``%name`` for diagnostics; an unnamed value by what it is."""
    if v.name_hint:
        return f"%{v.name_hint}"
    if isinstance(v, BlockArgument):
        return f"input #{v.index}"
    return f"the result of {v.owner.name}" if isinstance(v.owner, Operation) else "a tensor"


def emit_index(b: Any, e: Expr, env: dict[str, int | SSAValue], memo: dict[Expr, int | SSAValue]) -> int | SSAValue:
    """``e`` as kernel index arithmetic; ``memo`` shares the subexpressions of one index
    (all emitted at the same insertion point)."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    hit = memo.get(e)
    if hit is not None:
        return hit
    assert isinstance(e, BinOp)
    lhs, rhs = emit_index(b, e.lhs, env, memo), emit_index(b, e.rhs, env, memo)
    fn: Callable[..., int | SSAValue] = {
        "+": b.add, "-": b.sub, "*": b.mul, "/": b.div, "%": b.rem, "ceilDiv": b.ceil_div,
    }[e.op]
    out = memo[e] = fn(lhs, rhs)
    return out


def launch_shape(
    fname: str, ls: LoopStructure, v: SSAValue
) -> tuple[tuple[int, int, int], tuple[int, int, int], int | None]:
    grid, block = [1, 1, 1], [1, 1, 1]
    bound: dict[ParallelType, int] = {}
    vec: int | None = None
    for k, a in enumerate(ls.loops):
        pt, ext = a.parallel_type, a.static_extent
        assert ext is not None
        if pt in GRID_DIMS or pt in BLOCK_DIMS:
            if pt in bound:
                raise LoweringError(
                    f"{fname}: loops #{bound[pt]} and #{k} of {tensor_name(v)} are both bound to {pt}"
                )
            bound[pt] = k
            (grid if pt in GRID_DIMS else block)[(GRID_DIMS | BLOCK_DIMS)[pt]] = ext
        elif pt == ParallelType.vectorize:
            if k != len(ls.loops) - 1:
                raise LoweringError(
                    f"{fname}: loop #{k} of {tensor_name(v)} is vectorized but is not the innermost loop"
                )
            vec = k
        elif pt not in SERIAL_TYPES:
            raise LoweringError(f"{fname}: loop #{k} of {tensor_name(v)} is bound to {pt}, which a kernel cannot run")
    if math.prod(block) > MAX_THREADS_PER_BLOCK:
        raise LoweringError(f"{fname}: block {block} has more than {MAX_THREADS_PER_BLOCK} threads")
    return (grid[0], grid[1], grid[2]), (block[0], block[1], block[2]), vec



def bounded_index(
    b: Any, exprs: Sequence[tuple[Expr, int]], env: dict[str, int | SSAValue], extents: Sequence[int]
) -> tuple[list[int | SSAValue], list[SSAValue | bool]]:
    """The values of index expressions ``(expr, axis extent)`` at ``env`` and the
    predicates that keep them inside their axes: ``< extent`` unless ``value_range``
    proves it over the loop ``extents`` with ``env``'s constant loop indices (an
    unrolled persistent batch: of a 50257-wide row on 1024 threads only the last of
    its 50 steps needs a predicate; for a symbolic extent, at every size:
    ``always_below``), ``>= 0`` after a resize (pad) unless ``value_range`` proves it
    (a reversed loop: ``extent - 1 - i``)."""
    memo: dict[Expr, int | SSAValue] = {}
    values: list[int | SSAValue] = []
    conds: list[SSAValue | bool] = []
    for e, extent in exprs:
        value = emit_index(b, e, env, memo)
        values.append(value)
        low, bound = value_range(e, extents, env)
        if "-" in ops_of(e) and low < 0:
            conds.append(b.cmp("sge", value, 0))
        if bound >= extent or not always_below(bound, extent):
            conds.append(b.cmp("slt", value, extent))
    return values, conds


def parallel_index(b: Any, pt: ParallelType) -> int | SSAValue:
    """The index of a loop bound to ``pt`` (a ``BID``/``TID`` type): the block or
    thread index along its dimension."""
    if pt in GRID_DIMS:
        return b.block_id("xyz"[GRID_DIMS[pt]])
    return b.thread_id("xyz"[BLOCK_DIMS[pt]])


def lanes_axis(
    indices: Sequence[Expr], lane: str | None, width: int, shape: Sequence[int], divisible: bool = True
) -> int | None:
    """The axis along which the ``width`` lanes of loop ``lane`` index consecutive
    elements, all in bounds together (``indices``: a tensor's per-axis index
    expressions, ``shape`` its extents): lane 0's index of that axis is a multiple of
    the width, which divides the axis' extent, and the other axes do not move. None
    when there is no such axis. Usually the innermost axis; a tensor laid out with
    another axis innermost in memory (``stride_order``) is vectorized along that one.
    ``divisible=False``: the width need not divide the extent (the lanes are then in
    bounds together except in the axis' last, partial group)."""
    if lane is None or width <= 1 or not indices:
        return None
    forms = [lane_form(e, lane, width) for e in indices]
    moving = [a for a, f in enumerate(forms) if f is None or f[0] != 0]
    if len(moving) != 1:
        return None
    (a,) = moving
    return a if forms[a] == (1, True) and (shape[a] % width == 0 or not divisible) else None


def lane_indices(first: Sequence[Dim], width: int, axis: int = -1) -> list[tuple[Dim, ...]]:
    """The indices of lanes ``0 .. width-1`` from lane 0's (``lanes_axis``): the index
    of ``axis`` shifted by the lane, its base known to be aligned to the width (so the
    evaluator recognises the accesses as one vector)."""
    axis %= len(first)
    base = first[axis]
    if base.base is not None:
        base = Dim(base.base, base.offset, width)
    return [(*first[:axis], base.shifted(j), *first[axis + 1 :]) for j in range(width)]


def shifted_axis(indices: Sequence[Expr], lane: str | None, width: int, shape: Sequence[int]) -> int | None:
    """The innermost axis when the ``width`` lanes of loop ``lane`` walk an aligned
    group of a row (``iterdomain.align``): its index is ``P - O % m`` with ``P``
    moving one-for-one with the lane from a multiple of the width, ``m`` a multiple
    of the width and ``O`` the row-major offset of the other axes' indices (which do
    not move with the lane) in a tensor of ``shape``. Then lane 0's row-major
    position ``O + P - O % m`` is a multiple of the width: the group is one vector
    in a contiguous tensor, and its lanes leave the row only at the row's edges.
    None otherwise."""
    if lane is None or width <= 1 or not indices:
        return None
    a = len(indices) - 1
    e = indices[a]
    if not (isinstance(e, BinOp) and e.op == "-" and isinstance(e.rhs, BinOp) and e.rhs.op == "%"):
        return None
    m = e.rhs.rhs
    if not isinstance(m, Const) or m.value % width or lane_form(e.lhs, lane, width) != (1, True):
        return None
    if any((f := lane_form(x, lane, width)) is None or f[0] != 0 for x in indices[:a]):
        return None
    if e.rhs.lhs != row_major_offset(indices[:a], [Const(int(s)) for s in shape]):
        return None
    return a


def shifted_lane_indices(first: Sequence[Dim], width: int, axis: int, shape: Sequence[int]) -> list[tuple[Dim, ...]]:
    """The indices of lanes ``0 .. width-1`` of an aligned group (``shifted_axis``)
    from lane 0's: the group's alignment is claimed for lane 0's row-major position
    in a tensor of ``shape`` (``Dim.flat``), which a vector access checks against the
    tensor's layout (``flat_aligned``)."""
    keys = tuple(d.key() for k, d in enumerate(first) if k != axis)
    base = first[axis]
    base = Dim(base.base, base.offset, base.align, (width, tuple(int(s) for s in shape), keys))
    return [(*first[:axis], base.shifted(j), *first[axis + 1 :]) for j in range(width)]


def edge_group(
    b: Any,
    ev: Any,
    exprs: Sequence[tuple[Expr, int]],
    env: dict[str, int | SSAValue],
    lane: str,
    width: int,
    shape: Sequence[int],
    shifted: int | None,
    along: int | None,
) -> tuple[list[dict[str, int | SSAValue]], list[tuple[Dim, ...]]]:
    """A group of lanes with an edge: an aligned group of a row (``shifted``, from
    ``shifted_axis``) or consecutive lanes along an axis the width does not divide
    (``along``, from ``lanes_axis(divisible=False)``). Returns each lane's loop
    environment and each lane's index (one vector access when the layout allows);
    ``edge_inside`` is the predicate under which the group is one access."""
    envs: list[dict[str, int | SSAValue]] = [{**env, lane: j} for j in range(width)]
    memo: dict[Expr, int | SSAValue] = {}
    first = tuple(ev.as_dim(emit_index(b, e, envs[0], memo)) for e, _ in exprs)
    if shifted is not None:
        return envs, shifted_lane_indices(first, width, shifted, shape)
    assert along is not None
    return envs, lane_indices(first, width, along)


def edge_inside(
    b: Any, exprs: Sequence[tuple[Expr, int]], envs: Sequence[dict[str, int | SSAValue]], loop_extents: Sequence[int]
) -> SSAValue | bool:
    """Whether the first and last lanes of an ``edge_group`` are inside the tensor
    (then every lane is; else the caller goes lane by lane, each under its own
    predicate); ``loop_extents`` as ``bounded_index``'s."""
    _, conds = bounded_index(b, exprs, envs[0], loop_extents)
    _, last = bounded_index(b, exprs, envs[-1], loop_extents)
    return all_of(b, [*conds, *last])


def not_vectorizable(k: int, v: SSAValue, width: int, shape: Sequence[int]) -> str:
    """The diagnostic for a ``vectorize`` loop ``k`` of ``v`` whose lanes are not
    together (``lanes_axis``)."""
    return (
        f"loop #{k} of {tensor_name(v)} is vectorized, but its {width} lanes are not {width} consecutive "
        f"elements of one axis (extents {list(shape)}) that are in bounds together: "
        "vectorize an innermost split that divides the axis"
    )


def store_lanes(b: Any, ev: Any, lay: Any, mem: SSAValue, values: Sequence[SSAValue], lanes: Sequence[Any], itemsize: int) -> None:
    """Store ``values`` at the indices ``lanes`` of an output of layout ``lay``: one
    vector store when there are several lanes (``lane_indices``, consecutive along one
    axis) that are contiguous and aligned in memory and fit a vector, else one store
    each."""
    width = len(lanes)
    axis = moving_axis(lanes) if width > 1 else None
    contiguous = (
        axis is not None and width & (width - 1) == 0 and width * itemsize <= MAX_VECTOR_BYTES
        and lay.strides[axis] == 1 and lay.pointer_align % width == 0
        and (
            flat_aligned(lanes[0], axis, width, lay.shape, lay.strides) if lanes[0][axis].flat is not None
            else all(s % width == 0 for a, s in enumerate(lay.strides) if a != axis and lay.shape[a] != 1)
        )
    )
    if contiguous:
        b.vstore(list(values), mem, offset_in(ev, lay.shape, lay.strides, lanes[0]))
        return
    for val, i in zip(values, lanes, strict=True):
        b.store(val, mem, [offset_in(ev, lay.shape, lay.strides, i)])


# ---- static facts ------------------------------------------------------------------


def ops_of(e: Expr) -> set[str]:
    if isinstance(e, BinOp):
        return {e.op} | ops_of(e.lhs) | ops_of(e.rhs)
    return set()


def lane_form(e: Expr, lane: str, width: int) -> tuple[int, bool] | None:
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
    a, b = lane_form(e.lhs, lane, width), lane_form(e.rhs, lane, width)
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


SAMPLE_EXTENTS = (2, 3, 5, 7, 8, 13, 16, 31, 33, 64, 100, 127, 128, 255, 1000, 1023, 4096, 4097, 65537)
"""Values a symbolic extent is tried at by ``always_below``."""


def always_below(bound: int, extent: int) -> bool:
    """Whether ``bound < extent`` holds at every size of the symbolic extents their
    formulas read (``fuser.ir.symbolic``; tried at ``SAMPLE_EXTENTS``), not only at
    this launch's values. A predicate is dropped only when this holds too, so that
    whether it is needed at this launch's sizes does not change the kernel text:
    the rows of a block over a batch that its rows-per-block divides are checked
    all the same. (Dropping it at this launch is sound either way: it holds here.)"""
    if not isinstance(bound, SymInt) and not isinstance(extent, SymInt):
        return True
    if isinstance(bound, float):
        return False
    hi, ext = as_expr(bound), as_expr(extent)
    names = sorted(symbols_of(hi) | symbols_of(ext))
    for k, v in enumerate(SAMPLE_EXTENTS):
        env = {n: SAMPLE_EXTENTS[(k + 7 * j) % len(SAMPLE_EXTENTS)] if j else v for j, n in enumerate(names)}
        if evaluate(hi, env) >= evaluate(ext, env):
            return False
    return True


def value_range(
    e: Expr, extents: Sequence[int], fixed: Mapping[str, int | SSAValue] | None = None
) -> tuple[int, int]:
    """Bounds ``(lo, hi)`` of ``e`` over loop indices ``i<k>`` in ``[0, extents[k])``
    (other variables unbounded; a variable that ``fixed`` maps to an int is that
    constant): sums and differences add the bounds (a reversed loop
    ``extent - 1 - i`` is in ``[0, extent - 1]``); a product, quotient or remainder of
    non-negative operands is non-negative, its upper bound the product, the quotient
    by a constant, or the constant less one."""
    if isinstance(e, Const):
        return e.value, e.value
    if isinstance(e, Var):
        known = fixed.get(e.name) if fixed is not None else None
        if isinstance(known, int):
            return known, known
        if e.name.startswith("i"):
            return 0, extents[int(e.name[1:])] - 1
        return -math.inf, math.inf  # type: ignore[return-value]
    assert isinstance(e, BinOp)
    lo_a, hi_a = value_range(e.lhs, extents, fixed)
    lo_b, hi_b = value_range(e.rhs, extents, fixed)
    if e.op == "+":
        return lo_a + lo_b, hi_a + hi_b
    if e.op == "-":
        return lo_a - hi_b, hi_a - lo_b
    lo = -math.inf
    if e.op in ("*", "/", "%") and lo_a >= 0 and lo_b >= 0:
        lo = lo_a * lo_b if e.op == "*" else 0
    hi = math.inf
    if e.op == "*":
        hi = hi_a * hi_b
    elif e.op == "/" and isinstance(e.rhs, Const):
        hi = hi_a // e.rhs.value
    elif e.op == "%" and isinstance(e.rhs, Const):
        hi = min(hi_a, e.rhs.value - 1)
    return lo, hi  # type: ignore[return-value]


def reduction_nest(fusion: Any, red: Operation, shapes: dict[SSAValue, tuple[int, ...]] | None = None) -> LoopStructure:
    """The loop structure written on reduction ``red``'s (first) result; a
    ``LoweringError`` naming the reduction when it has none."""
    try:
        return loop_structure(fusion, red.results[0], shapes)
    except ValueError as e:
        raise LoweringError(f"@{fusion.sym_name.data}: the reduction {red.name} has no loop domain: {e}") from None


def when(
    b: Any, ev: Any, pred: SSAValue | bool, then: Callable[[], list[SSAValue]], otherwise: list[SSAValue]
) -> list[SSAValue]:
    """``then()`` where ``pred`` holds (an ``scf.if`` in the evaluator's scope), else
    ``otherwise``; no branch when ``pred`` is proven (``True``)."""
    if pred is True:
        return then()
    return b.if_(pred, ev.in_scope(then), lambda: otherwise, [v.type for v in otherwise])


def all_of(b: object, conds: Sequence[SSAValue | bool]) -> SSAValue | bool:
    out: SSAValue | bool = True
    for c in conds:
        out = c if out is True else b.and_(out, c)  # type: ignore[attr-defined, arg-type]
    return out


def scheduled_kind(fusion: Any, default: str = "scheduled") -> str:
    """The scheduler kind recorded on ``fusion`` (``fuser.schedule``), for the lowered
    fusion's name; ``default`` when none is recorded."""
    recorded = fusion.attributes.get("fuser.schedule")
    if recorded is not None and "kind" in getattr(recorded, "data", {}):
        return recorded.data["kind"].data  # type: ignore[no-any-return]
    return default
