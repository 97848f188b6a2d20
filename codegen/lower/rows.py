"""Lower inner reductions and inner-persistent normalizations: one row per ``threadIdx.y``.

The fusion's reductions all reduce the same trailing axes of tensors of one shape
``[R..., C...]``: ``rows = prod(R)``, ``cols = prod(C)``. Every other value is *full*
(``[R..., C...]``, or broadcast along the rows like a weight ``[C]``), *per-row* (a
reduction result ``[R...]`` / ``[R..., 1...]`` and what is computed from it), or a
scalar; anything else (a reduction result permuted, sliced, reduced along other axes...)
is a ``LoweringError`` naming the op.

Launch: block ``(threads_per_row, rows_per_block)``, grid ``ceil(rows /
rows_per_block)``; ``row = blockIdx.x * rows_per_block + threadIdx.y``. A thread owns
the vectors of ``V`` columns starting at ``(k * threads_per_row + threadIdx.x) * V``
(``V`` = 16 bytes / widest loaded or stored element, halved until it divides ``cols`` and the
innermost extent), so each ``k`` is one coalesced, 128-bit access per thread. The
element at (row, col) is evaluated by ``ElementEvaluator`` at the multi-index
``unravel(row, R) + unravel(col, C)``, so views and broadcast inputs map correctly.

**inner_persistent** (``batch * V * threads_per_row >= cols``): straight-line code.
Every load of the thread (reduction inputs and the epilogue's other inputs, e.g. the
weight and bias of a layer norm, unless holding those across the reductions would cost
registers: ``_defer_epilogue``, then they are loaded after the reductions) is issued first; then, in body order, each reduction
folds its input over the thread's elements (memoized: the row stays in registers and
global memory is read once), reduces across the row (``kernel.warp_reduce`` when
``threads_per_row == 32``, else ``kernel.block_reduce`` over ``x``) and is installed as
an evaluator hook, so the ops after it (``exp(x - max)``, ``(x - mean) * rsqrt(var +
eps)``) are evaluated by the same code; finally the full outputs are stored with
vector stores and the per-row outputs by ``threadIdx.x == 0``. Layer norm (f32, 5x70,
block 64x2, V = 2, one vector per thread) becomes::

    kernel.func @ln(%x: memref<?xf32>, %w: memref<?xf32>, %b: memref<?xf32>, %out0: memref<?xf32>)
        attributes {block_size = array<i32: 64, 2, 1>, index_bits = 32} {
      %row  = bid.x * 2 + tid.y ;  %rowc = min(%row, 4)        // rows past the end: clamped
      %c    = tid.x * 2 ; %ok0 = %c < 70 ; %cc = min(%c, 68)   // masked tail vector, clamped
      %x_v  = vector.load %x[%rowc * 70 + %cc] : vector<2xf32>  // every load first
      %w_v  = vector.load %w[%cc] ...   %b_v = vector.load %b[%cc] ...
      // var_mean: per-thread two-pass over registers, then Chan's combine across the row
      %n = select %ok0, 2.0, 0.0 ; %mean_t = (x0 + x1) / %n ; %m2_t = (x0-mean_t)^2 + ...
      %mean, %m2, %cnt = kernel.block_reduce %mean_t, %m2_t, %n {kind = "welford", dims = [0]}
      %var = %m2 / 70.0 ; ... (x - mean) * rsqrt(var + 1e-5) * w + b ...
      scf.if (%row < 5 && %ok0) { vector.store %y_v, %out0[%rowc * 70 + %cc] }
    }

in CUDA (abridged)::

    Vec<float, 2> x_v = *reinterpret_cast<const Vec<float, 2>*>(&x[rowc * 70 + cc]);
    FuserWelford<float> wf = fuser_block_reduce<true, false, false>(
        FuserWelford<float>{mean_t, m2_t, n}, FuserWelfordOp(), fuser_red_smem);
    if (row < 5 && ok0) { *reinterpret_cast<Vec<float, 2>*>(&out0[...]) = y_v; }

**reduction** (or a persistent schedule whose row does not fit): the row is streamed in
chunks of ``threads_per_row * V * U`` columns (an ``scf.for`` over the full chunks with
every load of a chunk issued first, then straight-line code for the partial last
chunk). Reductions that depend on others' results take one pass each (levels); full
outputs that depend on a reduction take a final pass that re-reads the inputs.

Semantics follow ``fuser_ir/reference.py``: sum/prod accumulate in
``compute_dtype(result dtype)`` (f32 for half/bfloat16, rounded once at the end; int64
for integer sums), max/min in ``compute_dtype(input dtype)`` and propagate NaN,
``var``/``var_mean``/``welford`` accumulate in f32 (f64 for f64) with a per-chunk
two-pass (mean, then ``sum((x - mean)^2)`` over the registers) merged by Chan's formula
(Welford-stable), ``var = M2 / max(0, cols - correction)``, welford's ``n`` is int64.
Masked elements contribute the identity to sums, products and variances
(``select(in_bounds, v, identity)``); loads are never out of bounds (masked vectors and
rows past the end read clamped addresses, elements of the same row), so max/min take
the clamped duplicates unmasked.
Rows past the end still reach every block reduction (a barrier) and do not store.

Deviations from the schedulers' parameters (documented here, correctness first):

* ``cross_grid`` (a row split across ``grid.y`` blocks) is lowered with one block per
  row (``grid.y = 1``): each block streams its whole rows. A two-kernel split (partials
  to scratch, then a finishing kernel) is not implemented yet.
* ``use_shared_memory`` persistent schedules (the row does not fit in registers) are
  lowered as streaming multi-pass kernels (the inputs are re-read per pass) rather than
  staged through shared memory.
* ``V`` is 16 bytes of the widest tensor the kernel reads or writes (the scheduler's
  ``vectorization`` counts the reduction input, often an f32 cast of a bf16 input),
  halved until it divides ``cols`` and the innermost extent; ``persistent_batch`` is
  recomputed for that ``V``.
* Empty rows (``cols == 0``) or no rows are rejected (the runtime does not launch).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.codegen.lower.accumulators import RowReduction
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
    begin_kernel,
    offset_in,
)
from fuser.ir.dialects import fuser as F
from fuser.schedulers.analysis.graph import ancestors
from fuser.schedulers.analysis.row_kernel import RowGeometry, row_geometry, row_kernel_reject
from fuser.schedulers.params import ReductionParams

REDUCTION_TYPES = (F.ReductionOp, F.VarMeanOp, F.VarOp, F.WelfordOp)
STREAM_UNROLL = 4
"""Vectors per thread and chunk in a streaming (non-persistent) pass."""
EPILOGUE_PREFETCH_MAX = 4096
"""Most epilogue-only values (weights, biases) the threads of a persistent kernel's
block load with their rows, before the reductions; more are loaded after them
(``_defer_epilogue``)."""


# ---- analysis --------------------------------------------------------------------------


def analyze(fusion: F.FusionOp, shapes: dict[SSAValue, tuple[int, ...]]) -> tuple[RowGeometry, list[Operation]]:
    """The row geometry and the reductions, or a ``LoweringError`` naming the op that
    does not fit the row model (``fuser.schedulers.analysis.row_kernel``, the constraints the
    schedulers check before accepting a fusion for a row kernel)."""
    if why := row_kernel_reject(fusion, shapes.__getitem__):
        raise LoweringError(why)
    reds = [op for op in fusion.body.block.ops if isinstance(op, REDUCTION_TYPES)]
    return row_geometry(fusion, shapes.__getitem__), reds


# ---- the kernel ---------------------------------------------------------------------------


@dataclass
class Group:
    """One vector of ``V`` columns of a thread: lane indices and in-bounds predicate."""

    lanes: list[Index]
    pred: SSAValue | None


def _vector_width(geo: RowGeometry, itemsizes: Sequence[int]) -> int:
    """16 bytes of the widest tensor the kernel loads or stores, halved until it
    divides ``cols`` and the innermost extent."""
    widest = max(itemsizes, default=4)
    v = max(1, 16 // widest)
    inner = geo.full[-1] if geo.full else 1
    while v > 1 and (geo.cols % v or inner % v):
        v //= 2
    return v


def _inputs_under(values: Sequence[SSAValue]) -> set[int]:
    """Indices of the fusion inputs that ``values`` are computed from."""
    return {v.index for v in ancestors(values) if isinstance(v, BlockArgument)}


def _defer_epilogue(fusion: F.FusionOp, reds: list[Operation], full_outs: list[int], per_thread: int,
                    threads: int) -> bool:
    """Whether a persistent kernel issues the epilogue-only loads after the reductions:
    when holding them from the start would keep more than ``EPILOGUE_PREFETCH_MAX``
    extra values per block live across the reductions. Measured on the H100
    (``benchmarks/TUNING.md``): a layer norm's weight and bias held from the start take
    64 more registers a thread at 32 values each (125 instead of 64: one 512-thread
    block per SM instead of two, 0.58 of copy instead of 0.91); for small blocks and
    few values, loading them early is as fast or slightly faster."""
    row_inputs = _inputs_under([op.operands[0] for op in reds])
    outs = fusion.output_op.values
    extra = [i for i in _inputs_under([outs[j] for j in full_outs]) - row_inputs
             if isinstance(fusion.inputs[i].type, F.TensorType)]
    return len(extra) * per_thread * threads > EPILOGUE_PREFETCH_MAX


def _levels(reds: list[Operation]) -> list[list[Operation]]:
    """Reductions grouped so that each depends only on results of earlier groups."""
    level: dict[Operation, int] = {}
    red_results = {r: op for op in reds for r in op.results}
    for op in reds:
        seen: set[SSAValue] = set()
        stack = [op.operands[0]]
        lvl = 0
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in red_results:
                lvl = max(lvl, level[red_results[v]] + 1)
                continue
            if isinstance(v.owner, Operation):
                stack.extend(v.owner.operands)
        level[op] = lvl
    out: list[list[Operation]] = [[] for _ in range(max(level.values()) + 1)]
    for op in reds:
        out[level[op]].append(op)
    return out


def lower_rows(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    params: ReductionParams,
    name: str,
    kind: str,
    defer_epilogue_loads: bool | None = None,
    stream_unroll: int | None = None,
) -> LoweredFusion:
    """One kernel for an inner reduction or inner persistent segment (see the module
    docstring). ``defer_epilogue_loads`` (persistent kernels): issue the loads that only
    the epilogue needs (a layer norm's weight and bias) after the reductions instead of
    with the row's loads; None decides by register pressure (``_defer_epilogue``).
    ``stream_unroll`` (streaming kernels): vectors a thread loads per chunk (default
    ``STREAM_UNROLL``; a tuning override, ``benchmarks/tune_gaps.py``)."""
    geo, reds = analyze(fusion, shapes)
    fname = f"@{fusion.sym_name.data}"
    outs = list(fusion.output_op.values)
    rows, cols = geo.rows, geo.cols
    TPR = max(1, params.threads_per_row)
    RPB = max(1, params.rows_per_block)
    if TPR * RPB > 1024:
        raise LoweringError(f"{fname}: block {TPR}x{RPB} exceeds 1024 threads")
    full_outs = [j for j, v in enumerate(outs) if geo.form(tuple(shapes[v])) == "full"]
    row_outs = [j for j in range(len(outs)) if j not in full_outs]
    itemsizes = [a.type.dtype.itemsize for a in fusion.inputs if isinstance(a.type, F.TensorType)]
    itemsizes += [F.dtype_of(outs[j].type).itemsize for j in full_outs]
    V = _vector_width(geo, itemsizes)
    vecs = -(-cols // V)
    batch = -(-vecs // TPR)
    persistent = kind == "inner_persistent" and not params.use_shared_memory
    levels = _levels(reds)
    if not persistent and len(levels) + bool(full_outs) > 1:
        aliased = [a for a in fusion.output_op.get_alias_inputs() if a >= 0]
        if aliased:
            raise LoweringError(
                f"{fname}: a multi-pass row kernel cannot update input #{aliased[0]} in place"
            )

    b, ev, args, out_args = begin_kernel(fusion, shapes, in_layouts, out_layouts, name, (TPR, RPB, 1), rows * cols)
    accs = {op: RowReduction(op, ev, cols) for op in reds}

    tx = b.thread_id("x")
    ty = b.thread_id("y")
    row = b.add(b.mul(b.block_id("x"), RPB), ty, "row")
    row_ok: SSAValue | None = None
    rowc: int | SSAValue = row
    if rows % RPB:
        row_ok = b.cmp("slt", row, rows, "row_ok")
        rowc = b.val(arith.MinSIOp(b.index(row), b.index(rows - 1)), "rowc")
    row_idx = ev.unravel(ev.as_dim(rowc), geo.row_shape) if geo.row_shape else ()
    step = TPR * V

    def groups_at(start: int | SSAValue, lo: int, count: int) -> list[Group]:
        """Vectors ``u < count`` at column ``start + u * TPR * V`` (``start`` includes
        ``tx * V``); ``lo`` is the smallest column ``start`` can be (for ``tx = 0``)."""
        out: list[Group] = []
        for u in range(count):
            first = lo + u * step
            if first >= cols:
                break
            col = b.add(start, u * step, "col")
            pred: SSAValue | None = None
            if first + step > cols:  # some threads of the row are past the end
                pred = b.cmp("slt", col, cols, "in_row")
                col = b.val(arith.MinSIOp(b.index(col), b.index(cols - V)), "colc")
            base = ev.as_dim(col, V)
            lanes = [row_idx + ev.unravel(base.shifted(j), geo.col_shape) for j in range(V)]
            out.append(Group(lanes, pred))
        return out

    def fold(level: list[Operation], groups: list[Group], state: dict[Operation, list[SSAValue] | None]) -> None:
        for g in groups:
            for op in level:
                ev.prefetch(op.operands[0], g.lanes)
        for op in level:
            items = [(ev.value(op.operands[0], lane), g.pred) for g in groups for lane in g.lanes]
            state[op] = accs[op].update(state[op], items)

    def finish(level: list[Operation], state: dict[Operation, list[SSAValue] | None]) -> None:
        for op in level:
            st = state[op]
            assert st is not None
            res = accs[op].results(accs[op].cross(st, TPR))
            for r, v in zip(op.results, res, strict=True):
                ev.hooks[r] = lambda _idx, v=v: v

    def store_full(groups: list[Group], which: list[int]) -> None:
        for g in groups:  # the epilogue's loads (memo hits when prefetched) first
            for j in which:
                ev.prefetch(outs[j], g.lanes)
        for g in groups:
            vals = {j: [ev.value(outs[j], lane) for lane in g.lanes] for j in which}

            def st(g: Group = g, vals: dict[int, list[SSAValue]] = vals) -> list[SSAValue]:
                for j in which:
                    _store(ev, out_layouts[j], outs[j], out_args[j], vals[j], g.lanes)
                return []

            conds = [c for c in (row_ok, g.pred) if c is not None]
            if conds:
                cond = conds[0] if len(conds) == 1 else b.and_(conds[0], conds[1])
                b.if_(cond, ev.in_scope(st))  # type: ignore[arg-type]
            else:
                st()

    def stream(body: Callable[[list[Group], list[SSAValue]], list[SSAValue]], inits: list[SSAValue]) -> tuple[list[SSAValue], list[Group]]:
        """Run ``body`` over the full chunks in an ``scf.for``; return the carried
        values and the groups of the partial last chunk (straight-line)."""
        U = max(1, min(stream_unroll or STREAM_UNROLL, batch))
        chunk = step * U
        nfull = cols // chunk
        carried = inits
        if nfull:
            def loop(c0: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                return body(groups_at(c0, 0, U), acc)

            start = b.mul(tx, V)
            carried = b.for_(start, b.add(start, nfull * chunk), chunk, ev.in_scope(loop), inits,  # type: ignore[arg-type]
                             iv_name="c0")
        rest = cols - nfull * chunk
        tail = groups_at(b.add(nfull * chunk, b.mul(tx, V)), nfull * chunk, -(-rest // step)) if rest else []
        return carried, tail

    if persistent:
        groups = groups_at(b.mul(tx, V), 0, batch)
        if defer_epilogue_loads is None:
            defer_epilogue_loads = _defer_epilogue(fusion, reds, full_outs, batch * V, TPR * RPB)
        for g in groups:  # every load of the thread in flight first
            for op in reds:
                ev.prefetch(op.operands[0], g.lanes)
            if not defer_epilogue_loads:
                for j in full_outs:
                    ev.prefetch(outs[j], g.lanes)
        for level in levels:
            state: dict[Operation, list[SSAValue] | None] = {op: None for op in level}
            fold(level, groups, state)
            finish(level, state)
        if full_outs:
            store_full(groups, full_outs)
    else:
        for level in levels:
            inits = [v for op in level for v in accs[op].init()]
            widths = [len(accs[op].init()) for op in level]
            for v in inits:
                v.name_hint = "acc"

            def unpack(flat: list[SSAValue], level: list[Operation] = level, widths: list[int] = widths) -> dict[Operation, list[SSAValue] | None]:
                out: dict[Operation, list[SSAValue] | None] = {}
                i = 0
                for op, w in zip(level, widths, strict=True):
                    out[op] = flat[i:i + w]
                    i += w
                return out

            def body(groups: list[Group], flat: list[SSAValue], level: list[Operation] = level, unpack: Callable = unpack) -> list[SSAValue]:
                state = unpack(flat)
                fold(level, groups, state)
                return [v for op in level for v in state[op]]  # type: ignore[union-attr]

            carried, tail = stream(body, inits)
            state = unpack(carried)
            if tail:
                fold(level, tail, state)
            finish(level, state)
        if full_outs:
            def store_body(groups: list[Group], _: list[SSAValue]) -> list[SSAValue]:
                store_full(groups, full_outs)
                return []

            _, tail = stream(store_body, [])
            if tail:
                store_full(tail, full_outs)

    if row_outs:
        vals = {}
        for j in row_outs:
            shape = tuple(shapes[outs[j]])
            idx = row_idx + (Dim.const(0),) * (len(shape) - len(row_idx))
            vals[j] = (idx, ev.value(outs[j], idx))

        def st_rows() -> list[SSAValue]:
            for j in row_outs:
                idx, v = vals[j]
                _store(ev, out_layouts[j], outs[j], out_args[j], [v], [idx])
            return []

        conds = [c for c in (row_ok, b.cmp("eq", tx, 0) if TPR > 1 else None) if c is not None]
        if conds:
            cond = conds[0] if len(conds) == 1 else b.and_(conds[0], conds[1], "store_row")
            b.if_(cond, ev.in_scope(st_rows))  # type: ignore[arg-type]
        else:
            st_rows()
    module = b.finish()
    grid = (-(-rows // RPB), 1, 1)
    return LoweredFusion(kind, [LoweredKernel(module, name, (TPR, RPB, 1), grid, args)])


def _store(ev: ElementEvaluator, lay: TensorLayout, v: SSAValue, mem: SSAValue, values: list[SSAValue], lanes: list[Index]) -> None:
    """Store ``values`` at ``lanes`` of an output: 128-bit (or narrower) vector stores
    when the lanes are consecutive and aligned in memory, else element by element."""
    b = ev.b
    dt = F.dtype_of(v.type)
    stored = [b.to_storage(x, dt.to_xdsl()) for x in values]
    n = len(lanes)
    width = min(n, max(1, 16 // dt.itemsize))
    vectorizable = (
        n > 1 and lay.strides and lay.strides[-1] == 1 and lay.shape[-1] % width == 0
        and lay.pointer_align % width == 0 and all(s % width == 0 for s in lay.strides[:-1])
    )
    if vectorizable:
        for s in range(0, n, width):
            b.vstore(stored[s:s + width], mem, offset_in(ev, lay.shape, lay.strides, lanes[s]))
        return
    for x, idx in zip(stored, lanes, strict=True):
        b.store(x, mem, [offset_in(ev, lay.shape, lay.strides, idx)])


__all__ = ["RowGeometry", "analyze", "lower_rows"]
