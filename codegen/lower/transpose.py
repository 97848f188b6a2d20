"""Lower a transpose segment to one kernel that moves tiles through shared memory.

A transpose segment is pointwise, but its tensors fall in two groups whose memory is
laid out along different axes of the iteration space (``permute(a, [1, 0]) + b``, or
``a.permute(0, 2, 1)`` copied to a contiguous tensor). A pointwise kernel reading
through the permuted strides coalesces one group and scatters the other; here each
block takes one ``T1 x T2`` tile of the two innermost axes and every global access is
coalesced (and 128-bit where the layout allows) along its own tensor's innermost axis.

The iteration space is the outputs' shape (they all have one). *axis 1* is the
innermost axis of output 0 in memory, *axis 2* the innermost axis of the transposed
group (the staged tensors); the other axes are the grid's (one block per tile of
each index of the other axes)::

    kernel.func @f(%a: memref<?xf32>, %b: memref<?xf32>, %out0: memref<?xf32>)
        attributes {block_size = array<i64: 128, 1, 1>} {
      %a_tile = kernel.shared_alloc {padding = 1 : i64} : memref<32x33xf32, 3 : i64>
      ...                                     // tile (g1, g2) of block %bidx
      // phase 1: %a, contiguous along axis 2, loaded coalesced along axis 2
      %a_v = vector.load %a[%off] : memref<?xf32>, vector<4xf32>
      memref.store %a_v0, %a_tile[%l1, %l2] ...          // a_tile[axis-1 pos][axis-2 pos]
      kernel.barrier
      // phase 2: threads along axis 1; %b loaded and out0 stored 128-bit along axis 1,
      // %a read transposed from the tile (padding: no bank conflicts)
      %x0 = memref.load %a_tile[%l1_0, %l2] ...
      %b_v = vector.load %b[...]
      ...   addf on each lane ...
      vector.store %r, %out0[...]
      kernel.return
    }

*Staged inputs* are the tensor inputs whose innermost axis maps to axis 2 and that
span axis 1 through a plain axis mapping (permute, broadcast, expand, squeeze,
elementwise broadcasting); phase 2 evaluates every output with ``ElementEvaluator``
whose hook for a staged input reads its shared tile, so any elementwise expression
(and any other input, loaded directly) is handled. *Staged outputs* (outputs whose
innermost axis is axis 2, when outputs are in both groups) are written into a shared
tile in phase 2, and after a second barrier stored coalesced along axis 2 (phase 3).

Tiles that stick out of the iteration space (extents not multiples of the tile) take
a guarded scalar path; the branch is uniform over the block, so the barriers between
the phases are reached by every thread. ``TransposeParams`` are used as follows:
``tile1``/``vectorization1`` apply to the group of the scheduler's reference (an
output), ``tile2``/``vectorization2`` to the other group; ``block`` gives the thread
count; the grid is flat (``ceil(E1/T1) * ceil(E2/T2) * other extents`` blocks, tile
along axis 1 fastest) instead of the scheduler's 2-D ``grid``, so that no grid
dimension limit applies. When the tiles of all staged tensors would exceed 48 KiB of
static shared memory the tiles are halved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, BlockArgument, SSAValue

from fuser.codegen.kernel_builders import KernelBuilder
from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    TensorLayout,
)
from fuser.codegen.lower.elementwise import (
    Dim,
    ElementEvaluator,
    Index,
    TensorInput,
    begin_kernel,
    offset_in,
)
from fuser.codegen.lower.shared_tile import SHARED_LIMIT
from fuser.ir.dialects import fuser as F
from fuser.schedulers.params import TransposeParams

Value = SSAValue | int

AxisMap = tuple[int | None, ...]
"""For each axis of a tensor input: the iteration axis indexing it (None: index 0)."""


@dataclass(frozen=True)
class TransposePlan:
    """How a transpose segment is tiled (see the module docstring)."""

    shape: tuple[int, ...]
    """The iteration space: the outputs' shape."""
    axis1: int
    """Innermost axis of output 0: phase 2 runs along it."""
    axis2: int
    """Innermost axis of the staged tensors."""
    staged_inputs: dict[int, AxisMap]
    """Fusion input index -> its axis map, for the inputs staged in phase 1."""
    staged_outputs: tuple[int, ...]
    """Output indices written through a shared tile in phase 3."""


def _inner_axis(lay: TensorLayout) -> int | None:
    """The axis with the smallest stride among those of extent > 1."""
    axes = [a for a, e in enumerate(lay.shape) if e > 1]
    if not axes:
        return None
    return min(axes, key=lambda a: (abs(lay.strides[a]), -a))


def _axis_maps(fusion: F.FusionOp, shapes: dict[SSAValue, tuple[int, ...]]) -> dict[int, AxisMap | None]:
    """Run the evaluator once on symbolic indices and record at which index each
    tensor input is read: an input whose every read indexes each of its axes by one
    distinct iteration axis (or by 0 on an extent-1 axis) gets that map, others None
    (reshapes, slices, pads, indexing: loaded directly, never staged)."""
    outs = list(fusion.output_op.values)
    shape = shapes[outs[0]]
    scalar_inputs = [(i, a) for i, a in enumerate(fusion.inputs) if not isinstance(a.type, F.TensorType)]
    args: list[tuple[str, Attribute]] = [(f"i{k}", IndexType()) for k in range(len(shape))]
    args += [(f"s{i}", a.type) for i, a in scalar_inputs]
    b = KernelBuilder("probe", args, (1, 1, 1))
    idx = tuple(Dim(a, 0, 1) for a in b.func.args[: len(shape)])
    axis_of = {id(d.base): k for k, d in enumerate(idx)}
    scalars = {i: b.func.args[len(shape) + n] for n, (i, _) in enumerate(scalar_inputs)}
    ev = ElementEvaluator(b, fusion, shapes, {}, scalars)
    reads: dict[int, list[Index]] = {}

    def hook(i: int, a: BlockArgument) -> Callable[[Index], SSAValue]:
        def read(ix: Index) -> SSAValue:
            reads.setdefault(i, []).append(ix)
            return ev.em.const(0, a.type.dtype)  # type: ignore[attr-defined]

        return read

    for i, a in enumerate(fusion.inputs):
        if isinstance(a.type, F.TensorType):
            ev.hooks[a] = hook(i, a)
    for v in outs:
        ev.value(v, idx)
    maps: dict[int, AxisMap | None] = {}
    for i, ixs in reads.items():
        su = shapes[fusion.inputs[i]]
        found: set[AxisMap | None] = set()
        for ix in ixs:
            m: list[int | None] = []
            for a, d in enumerate(ix):
                if d.base is None and d.offset == 0 and su[a] == 1:
                    m.append(None)
                elif d.base is not None and d.offset == 0 and id(d.base) in axis_of and su[a] == shape[axis_of[id(d.base)]]:
                    m.append(axis_of[id(d.base)])
                else:
                    break
            else:
                axes = [k for k in m if k is not None]
                found.add(tuple(m) if len(set(axes)) == len(axes) else None)
                continue
            found.add(None)
        maps[i] = found.pop() if len(found) == 1 else None
    return maps


def plan_transpose(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
) -> TransposePlan | None:
    """The tiling of a segment whose tensors really have different innermost axes at
    these layouts; None when they share it (a pointwise kernel is coalesced then)."""
    outs = list(fusion.output_op.values)
    if not outs or any(not isinstance(v.type, F.TensorType) for v in outs):
        return None
    shape = shapes[outs[0]]
    if len(shape) < 2 or any(shapes[v] != shape for v in outs) or 0 in shape:
        return None
    axis1 = _inner_axis(out_layouts[0])
    if axis1 is None:
        return None
    maps = _axis_maps(fusion, shapes)
    weight: dict[int, int] = {}
    in_axis: dict[int, int] = {}
    for i, m in maps.items():
        lay = in_layouts[i]
        if m is None or lay is None or axis1 not in m:
            continue
        inner = _inner_axis(lay)
        k = None if inner is None else m[inner]
        if k is None or k == axis1:
            continue
        in_axis[i] = k
        weight[k] = weight.get(k, 0) + math.prod(lay.shape) * fusion.inputs[i].type.dtype.itemsize  # type: ignore[attr-defined]
    out_axis: dict[int, int] = {}
    for j, lay in enumerate(out_layouts):
        k = _inner_axis(lay)
        if k is None or k == axis1:
            continue
        out_axis[j] = k
        weight[k] = weight.get(k, 0) + math.prod(shape) * F.dtype_of(outs[j].type).itemsize
    if not weight:
        return None
    axis2 = max(weight, key=lambda k: (weight[k], k))
    staged_in = {i: maps[i] for i, k in in_axis.items() if k == axis2}
    staged_out = tuple(j for j, k in out_axis.items() if k == axis2)
    return TransposePlan(tuple(shape), axis1, axis2, staged_in, staged_out)  # type: ignore[arg-type]


def _pow2_floor(x: int) -> int:
    return 1 << (max(1, x).bit_length() - 1)


def _vector_width(lay: TensorLayout, axis: int, itemsize: int, lanes: int) -> int:
    """Widest vector (a power of two <= ``lanes``, <= 16 bytes) for accesses along
    ``axis`` starting at a multiple of ``lanes``: unit stride there, every other
    stride and the pointer aligned."""
    if lay.strides[axis] != 1:
        return 1
    w = _pow2_floor(min(lanes, max(1, 16 // itemsize)))
    while w > 1 and (
        lay.pointer_align % w
        or any(s % w for a, (e, s) in enumerate(zip(lay.shape, lay.strides, strict=True)) if a != axis and e > 1)
    ):
        w //= 2
    return w


def lower_transpose(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    params: TransposeParams,
    name: str,
    plan: TransposePlan | None = None,
) -> LoweredFusion:
    plan = plan or plan_transpose(fusion, shapes, in_layouts, out_layouts)
    if plan is None:
        raise LoweringError(
            f"@{fusion.sym_name.data}: its inputs and outputs share their innermost axis at these "
            "layouts; it is lowered as a pointwise kernel"
        )
    outs = list(fusion.output_op.values)
    shape, a1, a2 = plan.shape, plan.axis1, plan.axis2
    E1, E2 = shape[a1], shape[a2]
    others = [a for a in range(len(shape)) if a not in (a1, a2)]

    # Tile and vector sizes: params' group 1 is the reference output's group (axis 1).
    T1, T2 = _pow2_floor(params.tile1), _pow2_floor(params.tile2)
    V1 = _pow2_floor(min(params.vectorization1, T1))
    V2 = _pow2_floor(min(params.vectorization2, T2))
    staged_types = [fusion.inputs[i].type.dtype for i in plan.staged_inputs]  # type: ignore[attr-defined]
    staged_types += [F.dtype_of(outs[j].type) for j in plan.staged_outputs]
    while sum(T1 * (T2 + 1) * dt.itemsize for dt in staged_types) > SHARED_LIMIT and max(T1, T2) > 8:
        T1, T2 = max(8, T1 // 2), max(8, T2 // 2)
        V1, V2 = min(V1, T1), min(V2, T2)
    B = _pow2_floor(params.block[0])
    B = min(max(B, T1 // V1, T2 // V2), T1 * T2 // max(V1, V2))
    n1, n2 = -(-E1 // T1), -(-E2 // T2)
    rest = math.prod(shape[a] for a in others)
    grid = n1 * n2 * rest

    b, ev, args, out_args = begin_kernel(fusion, shapes, in_layouts, out_layouts, name, (B, 1, 1), math.prod(shape))
    tensors = ev.tensors

    # Shared tiles: a staged input's is [axis-1 pos][axis-2 pos] (padded along axis 2,
    # its contiguous axis); a staged output's is [axis-2 pos][axis-1 pos].
    in_tiles = {
        i: b.shared([T1, T2], tensors[i].dtype.to_xdsl(), 1, f"{b.func.args[i].name_hint}_tile")
        for i in plan.staged_inputs
    }
    out_tiles = {
        j: b.shared([T2, T1], F.dtype_of(outs[j].type).to_xdsl(), 1, f"out{j}_tile")
        for j in plan.staged_outputs
    }

    # Which tile: axis-1 tile fastest, then axis 2, then the other axes.
    tid = b.thread_id("x")
    bid = b.block_id("x")
    t1 = b.rem(bid, n1, "tile1") if grid > n1 else bid
    t2: Value = 0
    if n2 > 1:
        t2 = b.div(bid, n1, "tile2") if rest == 1 else b.rem(b.div(bid, n1), n2, "tile2")
    g1, g2 = b.mul(t1, T1, "g1"), b.mul(t2, T2, "g2")
    fixed: dict[int, Dim] = {}
    r: int | SSAValue = b.div(bid, n1 * n2, "rest") if rest > 1 else 0
    for k, a in enumerate(reversed(others)):
        e = shape[a]
        last = k == len(others) - 1
        fixed[a] = Dim.const(0) if e == 1 else ev.as_dim(r if last else b.rem(r, e))
        if not last and e > 1:
            r = b.div(r, e)
    partial = E1 % T1 != 0 or E2 % T2 != 0
    lim1 = b.sub(E1, g1, "lim1") if partial else E1
    lim2 = b.sub(E2, g2, "lim2") if partial else E2

    def index(d1: Dim, d2: Dim) -> Index:
        return tuple(d1 if a == a1 else d2 if a == a2 else fixed[a] for a in range(len(shape)))

    def guard(in1: Value, in2: Value) -> SSAValue:
        return b.and_(b.cmp("slt", in1, lim1), b.cmp("slt", in2, lim2))

    def along2(V: int, visit: Callable[[Value, Value, int], None]) -> None:
        """Threads along axis 2: each pass, thread ``tid`` takes ``V`` consecutive axis-2
        positions ``l2..l2+V-1`` at axis-1 position ``l1``."""
        per_row = T2 // V
        l2 = b.mul(b.rem(tid, per_row), V, "l2")
        row = b.div(tid, per_row, "row")
        for p in range(T1 * T2 // (B * V)):
            visit(b.add(row, p * (B // per_row), "l1"), l2, V)

    # ---- phase 1: staged inputs, coalesced along axis 2, into their tiles ---------
    def phase1(fast: bool) -> list[SSAValue]:
        def visit(l1: Value, l2: Value, V: int) -> None:
            d1 = ev.as_dim(b.add(g1, l1, "c1"))
            for i, m in plan.staged_inputs.items():
                t = tensors[i]
                lay = in_layouts[i]
                assert lay is not None
                inner = m.index(a2)
                src = [ev.as_dim(b.add(g2, b.add(l2, j))) for j in range(V)] if not fast else []

                def at(d2: Dim, m: AxisMap = m) -> Index:
                    return tuple(Dim.const(0) if k is None else d1 if k == a1 else d2 if k == a2 else fixed[k] for k in m)

                if fast:
                    base = ev.as_dim(b.add(g2, l2, "c2"), V)
                    w = _vector_width(lay, inner, t.dtype.itemsize, V)
                    for c in range(0, V, w):
                        off = offset_in(ev, t.shape, t.strides, at(base.shifted(c)))
                        vals = b.vload(t.arg, off, w, f"{t.arg.name_hint}_v") if w > 1 else [b.load(t.arg, [off])]
                        for j, v in enumerate(vals):
                            b.store(v, in_tiles[i], [l1, b.add(l2, c + j)])
                    continue
                for j in range(V):
                    l2j = b.add(l2, j)

                    def ld(j: int = j, l2j: Value = l2j, t: TensorInput = t, i: int = i,
                           src: list[Dim] = src) -> list[SSAValue]:
                        off = offset_in(ev, t.shape, t.strides, at(src[j]))
                        b.store(b.load(t.arg, [off]), in_tiles[i], [l1, l2j])
                        return []

                    b.if_(guard(l1, l2j), ld)

        along2(V2, visit)
        return []

    # ---- phase 2: every output along axis 1 (staged inputs read from their tiles) --
    local: dict[tuple, tuple[Value, Value]] = {}

    def tile_hook(i: int, m: AxisMap) -> Callable[[Index], SSAValue]:
        p, q = m.index(a1), m.index(a2)

        def read(ix: Index) -> SSAValue:
            try:
                l1 = local[("1", ix[p].key())]
                l2 = local[("2", ix[q].key())]
            except KeyError as exc:
                raise LoweringError(f"@{fusion.sym_name.data}: input #{i} read outside its staged tile") from exc
            return b.to_compute(b.load(in_tiles[i], [l1, l2]))

        return read

    for i, m in plan.staged_inputs.items():
        ev.hooks[fusion.inputs[i]] = tile_hook(i, m)
    direct = [j for j in range(len(outs)) if j not in plan.staged_outputs]

    def phase2(fast: bool) -> list[SSAValue]:
        per_row = T1 // V1
        l1 = b.mul(b.rem(tid, per_row), V1, "l1")
        row = b.div(tid, per_row, "row")
        c1 = b.add(g1, l1, "c1")
        d1s = [Dim(c1, j, V1) if isinstance(c1, SSAValue) else Dim.const(c1 + j) for j in range(V1)]
        for j, d1 in enumerate(d1s):
            local[("1", d1.key())] = b.add(l1, j)
        groups: list[tuple[Value, list[Index]]] = []
        for p in range(T1 * T2 // (B * V1)):
            l2 = b.add(row, p * (B // per_row), "l2")
            d2 = ev.as_dim(b.add(g2, l2, "c2"))
            lanes = [index(d1, d2) for d1 in d1s]
            local[("2", d2.key())] = l2
            groups.append((l2, lanes))
        if fast:
            for _, lanes in groups:  # every global load of the thread in flight first
                for v in outs:
                    w = V1  # the widest vector loads the layouts allow
                    while w > 1:
                        for c in range(0, V1, w):
                            ev.prefetch(v, lanes[c:c + w])
                        w //= 2
            for l2, lanes in groups:
                for j in direct:
                    store_out(j, [ev.value(outs[j], ix) for ix in lanes], lanes)
                for j in plan.staged_outputs:
                    for ix, d1 in zip(lanes, d1s, strict=True):
                        val = b.to_storage(ev.value(outs[j], ix), F.dtype_of(outs[j].type).to_xdsl())
                        b.store(val, out_tiles[j], [l2, local[("1", d1.key())]])
            return []
        for l2, lanes in groups:
            for ix, d1 in zip(lanes, d1s, strict=True):
                l1j = local[("1", d1.key())]

                def elem(ix: Index = ix, l1j: Value = l1j, l2: Value = l2) -> list[SSAValue]:
                    for j in direct:
                        store_out(j, [ev.value(outs[j], ix)], [ix])
                    for j in plan.staged_outputs:
                        val = b.to_storage(ev.value(outs[j], ix), F.dtype_of(outs[j].type).to_xdsl())
                        b.store(val, out_tiles[j], [l2, l1j])
                    return []

                b.if_(guard(l1j, l2), ev.in_scope(elem))  # type: ignore[arg-type]
        return []

    def store_out(j: int, values: list[SSAValue], lanes: list[Index]) -> None:
        lay = out_layouts[j]
        dt = F.dtype_of(outs[j].type)
        stored = [b.to_storage(v, dt.to_xdsl()) for v in values]
        w = _vector_width(lay, a1, dt.itemsize, len(lanes)) if len(lanes) > 1 else 1
        for c in range(0, len(lanes), w):
            off = offset_in(ev, lay.shape, lay.strides, lanes[c])
            if w > 1:
                b.vstore(stored[c:c + w], out_args[j], off)
            else:
                b.store(stored[c], out_args[j], [off])

    # ---- phase 3: staged outputs, from their tiles, coalesced along axis 2 --------
    def phase3(fast: bool) -> list[SSAValue]:
        def visit(l1: Value, l2: Value, V: int) -> None:
            d1 = ev.as_dim(b.add(g1, l1, "c1"))
            for j in plan.staged_outputs:
                lay = out_layouts[j]
                dt = F.dtype_of(outs[j].type)
                if fast:
                    base = ev.as_dim(b.add(g2, l2, "c2"), V)
                    w = _vector_width(lay, a2, dt.itemsize, V)
                    for c in range(0, V, w):
                        vals = [b.load(out_tiles[j], [b.add(l2, c + jj), l1]) for jj in range(w)]
                        off = offset_in(ev, lay.shape, lay.strides, index(d1, base.shifted(c)))
                        if w > 1:
                            b.vstore(vals, out_args[j], off)
                        else:
                            b.store(vals[0], out_args[j], [off])
                    continue
                for jj in range(V):
                    l2j = b.add(l2, jj)

                    def st(l2j: Value = l2j, lay: TensorLayout = lay, j: int = j) -> list[SSAValue]:
                        off = offset_in(ev, lay.shape, lay.strides, index(d1, ev.as_dim(b.add(g2, l2j))))
                        b.store(b.load(out_tiles[j], [l2j, l1]), out_args[j], [off])
                        return []

                    b.if_(guard(l1, l2j), st)

        along2(V2, visit)
        return []

    full = None
    if partial:
        conds = []
        if E1 % T1:
            conds.append(b.cmp("sle", b.add(g1, T1), E1))
        if E2 % T2:
            conds.append(b.cmp("sle", b.add(g2, T2), E2))
        full = conds[0] if len(conds) == 1 else b.and_(conds[0], conds[1])
        full.name_hint = "full"

    def run(phase: Callable[[bool], list[SSAValue]]) -> None:
        if full is None:
            ev.in_scope(phase)(True)
        else:
            b.if_(full, ev.in_scope(lambda: phase(True)), ev.in_scope(lambda: phase(False)))  # type: ignore[arg-type]

    if plan.staged_inputs:
        run(phase1)
        b.barrier()
    run(phase2)
    if plan.staged_outputs:
        b.barrier()
        run(phase3)
    module = b.finish()
    kernel = LoweredKernel(module, name, (B, 1, 1), (grid, 1, 1), args)
    return LoweredFusion("transpose", [kernel])


__all__ = ["TransposePlan", "lower_transpose", "plan_transpose"]
