"""Lower outer (column) reductions and outer normalizations to kernels.

A segment whose reductions keep the innermost axis of their input (``col_sum``:
``sum(x[R, C], dims=[0])``; ``outer_norm``: ``var_mean(x, dims=[0], keepdim=True)``
then ``(x - mean) * rsqrt(var + eps)``) is lowered here. The reduced axes (any
subset that keeps the innermost one) are the *rows*, the kept axes the *columns*;
``rows = prod(reduced extents)``, ``cols = prod(kept extents)``. Threads run along
the columns (coalesced, ``V``-wide vector loads of consecutive columns) and loop
over rows, so the reduction is a per-thread accumulation followed by a block
reduction over ``threadIdx.y``. Three kernel shapes, in launch order::

    // 1. partials: grid (ceil(cols / (bx*V)), S), block (bx, by)
    kernel.func @col_sum_partials(%x: memref<?xf32>, %out0: memref<?xf32>,
                                  %partial0: memref<?xf32>) {
      %col0 = (blockIdx.x * bx + threadIdx.x) * V          // V consecutive columns
      %acc:V = scf.if %col_ok {
        scf.for %k = 0 to len/(by*U) iter_args(%acc)       // U rows per iteration:
          vector.load %x[row_u * C + col0] ...             //   every load first,
          arith.addf ...                                    //   then accumulate
        scf.for %r = tail ...                              // the last rows, one at a time
      } else { identities }
      %red = kernel.block_reduce %acc {kind = "add", dims = array<i64: 1>}
      scf.if %ty_is_0_and_col_ok { vector.store %red, %partial0[s * cols + col0] }
    }
    // 2. finish: grid ceil(cols / 32), block (32, Ty): the threads of a column
    //    combine the S partials, Ty chunks then a block reduction over y, in a
    //    fixed order (deterministic); thread y == 0 evaluates the per-column
    //    outputs (col_sum's cast back to bf16) and stores the per-column statistics
    //    that a later kernel needs to scratch
    // 3. apply (outputs of the input's full shape): grid and block as in 1; each
    //    thread loads its columns' statistics once (vector loads), evaluates the
    //    per-column part of the epilogue (``rsqrt(var + eps)``) once, then loops over
    //    its rows: load x, compute, store (vectorized)

With ``S > 1`` a plain reduction's splits interleave (``INTERLEAVE_SPLITS``): split
``s`` takes the groups of ``by * UNROLL`` rows ``s, s + S, s + 2S, ...`` (``for (g = s; g <
rows / group; g += S)``), so the blocks read one band of rows that moves through memory
together; Welford partials (their counts) and apply passes keep contiguous ranges.

When one block covers all rows of its columns (``S == 1``) the three are one
kernel: after the block reduction every thread holds its columns' results, stores
the per-column outputs, and runs the apply loop over the same rows (the second read
mostly hits L2). Otherwise the apply kernel reads the input a second time: an outer
normalization moves 3x the input's bytes instead of 2x; the apply walks each split's
rows from its end (``REVERSE_APPLY``) so that the rows the partials read last come
from L2 (a grid-persistent single-pass version, with the tile kept in registers
across a grid barrier, is not implemented).

Reductions whose input depends on another reduction (``sum((x - mean)^2)``) are
grouped in *levels*; each level is one partials (+ finish) pass whose kernels see
the earlier levels' results as hooks loading per-column statistics.

Semantics follow ``fuser_ir/reference.py``: sum/prod accumulate in
``compute_dtype(result dtype)`` (int64 for integer sums), max/min in the input's
compute dtype (NaN-propagating; bool in int32), var/var_mean/welford by Welford
updates and Chan's combine in float32 (float64 for float64 input), ``var = m2 /
max(0, N - correction)``. The partial results are kept in scratch buffers of the
accumulation dtype, ``[S, cols]``; Welford partials are (mean, M2) with the count of
each split known at compile time.

Deviations from the scheduler's parameters (``ReductionParams``):

* ``vectorization`` is recomputed from the widest *loaded* element (16 bytes: 8
  lanes for bfloat16) rather than the float32 buffer the scheduler sizes; halved
  until it divides the innermost kept extent.
* ``block`` is used with ``bx`` capped to the columns and ``bx * by`` to 256
  threads (outer_persistent asks for 32 x 32); ``grid.y`` (the split
  ``S``) is recomputed to fill the GPU: one full-occupancy wave of blocks
  (``sm_count * max_threads_per_sm / threads``, at least two blocks per SM) while
  each thread keeps at least 8 rows; the SM count is the target's.
* ``persistent_batch``/``use_shared_memory`` of ``outer_persistent`` are ignored:
  the statistics and the apply are separate passes (see above).
* ``inner_outer_persistent`` is not lowered (``LoweringError``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from fuser.codegen.kernel_builders import KernelBuilder
from fuser.codegen.lower import complex_ops
from fuser.codegen.lower.common import (
    ArgRef,
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    ScratchBuffer,
    TensorLayout,
    index_bits_for,
    kernel_arg_types,
    max_offset,
)
from fuser.codegen.lower.elementwise import (
    Dim,
    ElementEvaluator,
    Index,
    TensorInput,
    offset_in,
)
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType, compute_dtype
from fuser.schedulers.analysis.column_kernel import column_kernel_reject, reduction_levels
from fuser.schedulers.analysis.graph import is_elementwise
from fuser.schedulers.params import OuterPersistentParams, ReductionParams
from fuser.schedulers.target import H100, GpuTarget

REDUCTION_TYPES = (F.ReductionOp, F.VarMeanOp, F.VarOp, F.WelfordOp)
UNROLL = 4
"""Rows each thread loads before accumulating (all loads in flight first)."""
REVERSE_APPLY = True
WELFORD_BLOCKS_PER_SM = 4
"""The apply pass walks each split's rows from the end (L2 reuse of the statistics
pass's last reads; see ``benchmarks/TUNING.md``)."""
INTERLEAVE_SPLITS = True
"""Plain column reductions split over ``S`` blocks take interleaved groups of rows
(``_Kernel.interleaved_row_loop``) rather than one contiguous range each. Measured on
the H100 (``benchmarks/TUNING.md``, gaps run): col_sum 32768x2048 partials 60.0 ->
58.9 us bf16, 101.3 -> 100.2 us f32, at every split count and unroll tried."""
MIN_ROWS_PER_THREAD = 8
FINISH_THREADS = 512
"""Threads of a finish block: 32 columns x up to 16 chunks of the splits."""
MAX_THREADS = 256
"""Threads of a partials/apply block (``block.y`` is capped to fit)."""


@dataclass
class _Red:
    """One reduction op and how it accumulates."""

    op: Operation
    kind: str  # add, mul, max, min, welford
    in_dt: DType
    acc_dt: DType
    keepdim: bool
    level: int = 1

    @property
    def welford(self) -> bool:
        return self.kind == "welford"

    @property
    def parts(self) -> int:
        """Partial buffers per column: (mean, M2) for Welford, else one."""
        return 2 if self.welford else 1


def _describe(op: Operation) -> _Red:
    in_dt = F.dtype_of(op.operands[0].type)
    if isinstance(op, F.ReductionOp):
        kind = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}[op.name.split(".")[1]]
        out_dt = F.dtype_of(op.result.type)
        if kind in ("add", "mul"):
            acc = compute_dtype(out_dt)
        else:
            acc = DType.int32 if in_dt.is_bool else compute_dtype(in_dt)
        return _Red(op, kind, in_dt, acc, op.is_keepdim)
    acc = DType.float64 if in_dt == DType.float64 else DType.float32
    keep = False if isinstance(op, F.WelfordOp) else F._bool(op.keepdim)
    return _Red(op, "welford", in_dt, acc, keep)


@dataclass
class _Plan:
    """What the kernels compute, derived from the fusion and its concrete shapes."""

    fusion: F.FusionOp
    shapes: dict[SSAValue, tuple[int, ...]]
    reds: list[_Red]
    in_shape: tuple[int, ...]
    rdims: tuple[int, ...]
    full_outs: list[int]
    direct_outs: list[int]
    stored: list[SSAValue]
    """Reduction results a later kernel reads from scratch (one ``[cols]`` buffer each)."""

    @property
    def kdims(self) -> tuple[int, ...]:
        return tuple(a for a in range(len(self.in_shape)) if a not in self.rdims)

    @property
    def kept_shape(self) -> tuple[int, ...]:
        return tuple(self.in_shape[a] for a in self.kdims)

    @property
    def red_shape(self) -> tuple[int, ...]:
        return tuple(self.in_shape[a] for a in self.rdims)

    @property
    def keep_shape(self) -> tuple[int, ...]:
        return tuple(1 if a in self.rdims else e for a, e in enumerate(self.in_shape))

    @property
    def rows(self) -> int:
        return math.prod(self.red_shape)

    @property
    def cols(self) -> int:
        return math.prod(self.kept_shape)

    @property
    def levels(self) -> int:
        return max(r.level for r in self.reds)

    def results(self) -> list[SSAValue]:
        return [v for r in self.reds for v in r.op.results]


def _plan(fusion: F.FusionOp, shapes: dict[SSAValue, tuple[int, ...]]) -> _Plan:
    """What the kernels compute, or a ``LoweringError`` when the fusion does not fit the
    column model (``fuser.schedulers.analysis.column_kernel``, the constraints the schedulers
    check before accepting a fusion for column kernels)."""
    if why := column_kernel_reject(fusion, shapes.__getitem__):
        raise LoweringError(why)
    ops = [op for op in fusion.walk() if isinstance(op, REDUCTION_TYPES)]
    reds = [_describe(op) for op in ops]
    in_shape = shapes[ops[0].operands[0]]
    rdims = tuple(sorted({d % len(in_shape) for d in F._ints(ops[0].dims)}))
    results = {v: r for r in reds for v in r.op.results}
    levels = reduction_levels(fusion)
    for r in reds:
        r.level = levels[r.op.results[0]]
    full: list[int] = []
    per_col: list[int] = []
    term = fusion.output_op
    for j, v in enumerate(term.values):
        (full if shapes[v] == in_shape else per_col).append(j)

    # Results read back from scratch: those of earlier levels, and those the full
    # outputs (the apply pass) use.
    last = max(r.level for r in reds)
    used_by_full: set[SSAValue] = set()
    seen: set[SSAValue] = set()
    stack = [term.values[j] for j in full]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in results:
            used_by_full.add(v)
            continue
        if isinstance(v, BlockArgument):
            continue
        owner = v.owner
        assert isinstance(owner, Operation)
        stack.extend(owner.operands)
    stored = [v for r in reds for v in r.op.results if r.level < last or v in used_by_full]
    return _Plan(fusion, shapes, reds, in_shape, rdims, full, per_col, stored)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _vector_width(plan: _Plan, in_layouts: Sequence[TensorLayout | None]) -> int:
    rank = len(plan.in_shape)
    if rank - 1 in plan.rdims:
        return 1
    items = [
        lay_dt.itemsize
        for lay_dt in (a.type.dtype for a in plan.fusion.inputs if isinstance(a.type, F.TensorType))
    ]
    items += [F.dtype_of(plan.fusion.output_op.values[j].type).itemsize for j in plan.full_outs]
    v = max(1, 16 // max(items, default=4))
    while v > 1 and plan.in_shape[-1] % v:
        v //= 2
    return v


def _splits(
    rows: int, col_tiles: int, threads: int, by: int, target: GpuTarget, welford: bool = False
) -> tuple[int, int]:
    """(S, rows per split): blocks for one full-occupancy wave, >= 8 rows a thread.
    Welford partials (``welford``) keep two accumulators a lane and run at 40-60
    registers, so a wave is ``WELFORD_BLOCKS_PER_SM`` blocks of 256 threads per SM, not
    8 (measured: outer_norm 16384x1024 f32 S = 132 -> 64, 90 -> 82 us)."""
    if rows == 0:
        return 1, 0
    per_sm = max(2, target.max_threads_per_sm // threads)
    if welford:
        per_sm = min(per_sm, WELFORD_BLOCKS_PER_SM)
    want = -(-target.sm_count * per_sm // col_tiles)
    cap = max(1, rows // (by * MIN_ROWS_PER_THREAD))
    s = max(1, min(want, cap))
    rps = -(-rows // s)
    return -(-rows // rps), rps


class _Kernel:
    """One kernel being built: the builder, the evaluator and the column lanes."""

    def __init__(self, low: _Lowering, name: str, block: tuple[int, int]) -> None:
        self.low = low
        plan = low.plan
        fusion = plan.fusion
        self.args = [ArgRef("input", i) for i in range(len(fusion.inputs))]
        self.args += [ArgRef("output", j) for j in range(len(fusion.output_op.values))]
        self.args += [ArgRef("scratch", k) for k in range(len(low.scratch))]
        names = low.arg_names()
        types = kernel_arg_types(fusion, self.args, low.scratch)
        self.block = block
        self.b = b = KernelBuilder(
            name, list(zip(names, types, strict=True)), (block[0], block[1], 1), low.index_bits
        )
        tensors: dict[int, TensorInput] = {}
        scalars: dict[int, SSAValue] = {}
        for i, (a, lay) in enumerate(zip(fusion.inputs, low.in_layouts, strict=True)):
            arg = b.func.args[i]
            if isinstance(a.type, F.TensorType):
                assert lay is not None
                tensors[i] = TensorInput(
                    arg, a.type.dtype, lay.shape, lay.strides, lay.pointer_align
                )
            else:
                scalars[i] = arg
        n_in, n_out = len(fusion.inputs), len(fusion.output_op.values)
        self.outs = list(b.func.args[n_in : n_in + n_out])
        self.scratch = list(b.func.args[n_in + n_out :])
        self.ev = ElementEvaluator(b, fusion, plan.shapes, tensors, scalars)
        self.em = self.ev.em
        self.table: dict[tuple, dict[SSAValue, SSAValue]] = {}
        """Reduction results by (kept index key) -> value, for the hooks."""
        for r in plan.reds:
            for res in r.op.results:
                self.ev.hooks[res] = self._hook(res, r.keepdim)

    def key(self, kidx: Index) -> tuple:
        """The hook table's key of the kept-axes index ``kidx``: an axis of extent 1
        holds 0 however its index was computed (``unravel`` gives ``col % 1`` or
        ``col / n``, a view of the result gives the constant 0: seed 3201's identity
        ``broadcast_in_dim`` of a keepdim sum)."""
        shape = self.low.plan.kept_shape
        return tuple((0, 0) if e == 1 else d.key() for d, e in zip(kidx, shape, strict=True))

    def _hook(self, res: SSAValue, keepdim: bool) -> Callable[[Index], SSAValue]:
        plan = self.low.plan

        def hook(idx: Index) -> SSAValue:
            kept = tuple(idx[a] for a in plan.kdims) if keepdim else tuple(idx)
            hit = self.table.get(self.key(kept), {}).get(res)
            if hit is not None:
                return hit
            if res in self.low.stats_index:  # a scalar load of the statistic
                col = self.ev.materialize(self.ev.ravel(kept, plan.kept_shape))
                return self.b.load(self.scratch[self.low.stats_index[res]], [col])
            owner = res.owner
            what = owner.name if isinstance(owner, Operation) else "reduction"
            raise LoweringError(
                f"@{plan.fusion.sym_name.data}: a {what} result is needed at an index this kernel "
                "does not hold (a view between the reduction and a per-column output)"
            )

        return hook

    # ---- indices -----------------------------------------------------------------------
    def lanes(self, col0: Dim, width: int) -> list[Index]:
        """Kept-axes indices of the columns ``col0 .. col0 + width - 1``."""
        return [self.ev.unravel(col0.shifted(j), self.low.plan.kept_shape) for j in range(width)]

    def full(self, row: SSAValue | int, kidx: Index) -> Index:
        plan = self.low.plan
        ridx = iter(self.ev.unravel(row, plan.red_shape))
        kit = iter(kidx)
        return tuple(
            next(ridx) if a in plan.rdims else next(kit) for a in range(len(plan.in_shape))
        )

    def out_index(self, j: int, kidx: Index) -> Index:
        plan = self.low.plan
        if self.low.plan.shapes[plan.fusion.output_op.values[j]] == plan.kept_shape:
            return kidx
        kit = iter(kidx)
        return tuple(
            Dim.const(0) if a in plan.rdims else next(kit) for a in range(len(plan.in_shape))
        )

    # ---- memory ------------------------------------------------------------------------
    def store_lanes(
        self,
        mem: SSAValue,
        dt: DType,
        values: Sequence[SSAValue],
        offsets: Sequence[int | SSAValue],
        vector_ok: bool,
    ) -> None:
        b = self.b
        stored = [b.to_storage(v, dt.to_xdsl()) for v in values]
        chunk = max(1, min(len(stored), 16 // dt.itemsize)) if vector_ok and not dt.is_bool else 1
        for c in range(0, len(stored), chunk):
            if chunk > 1:
                b.vstore(stored[c : c + chunk], mem, offsets[c])
            else:
                b.store(stored[c], mem, [offsets[c]])

    def load_lanes(
        self, mem: SSAValue, dt: DType, offset0: int | SSAValue, width: int
    ) -> list[SSAValue]:
        """``width`` consecutive elements at an offset aligned to ``width``."""
        b = self.b
        chunk = max(1, min(width, 16 // dt.itemsize)) if not dt.is_bool else 1
        out: list[SSAValue] = []
        for c in range(0, width, chunk):
            if chunk > 1:
                out += b.vload(mem, b.add(offset0, c), chunk)
            else:
                out.append(b.load(mem, [b.add(offset0, c)]))
        return out

    def load_stats(self, col0: int | SSAValue, kidx: list[Index], below: int | None = None) -> None:
        """Per-column statistics of the stored results (of the levels below ``below``)
        into the hook table."""
        level = {v: r.level for r in self.low.plan.reds for v in r.op.results}
        for res in self.low.plan.stored:
            if below is not None and level[res] >= below:
                continue
            dt = compute_dtype(F.dtype_of(res.type))
            vals = self.load_lanes(self.scratch[self.low.stats_index[res]], dt, col0, len(kidx))
            for idx, v in zip(kidx, vals, strict=True):
                self.table.setdefault(self.key(idx), {})[res] = v

    def store_stats(
        self, col0: int | SSAValue, kidx: list[Index], results: Sequence[SSAValue]
    ) -> None:
        b = self.b
        for res in results:
            if res not in self.low.stats_index:
                continue
            dt = compute_dtype(F.dtype_of(res.type))
            vals = [self.table[self.key(i)][res] for i in kidx]
            self.store_lanes(
                self.scratch[self.low.stats_index[res]],
                dt,
                vals,
                [b.add(col0, j) for j in range(len(kidx))],
                True,
            )

    def store_direct_outputs(self, kidx: list[Index]) -> None:
        plan = self.low.plan
        for j in plan.direct_outs:
            v = plan.fusion.output_op.values[j]
            lay = self.low.out_layouts[j]
            idxs = [self.out_index(j, k) for k in kidx]
            vals = [self.ev.value(v, i) for i in idxs]
            offs = [offset_in(self.ev, lay.shape, lay.strides, i) for i in idxs]
            self.store_lanes(self.outs[j], F.dtype_of(v.type), vals, offs, _consecutive(lay, idxs))

    # ---- control flow ------------------------------------------------------------------
    def scoped(self, fn: Callable[..., list[SSAValue]]) -> Callable[..., list[SSAValue]]:
        """``fn`` in a fresh evaluator scope that also restores the hook table."""

        def run(*args: object) -> list[SSAValue]:
            saved = {k: dict(v) for k, v in self.table.items()}
            self.ev.push_scope()
            try:
                return fn(*args)
            finally:
                self.ev.pop_scope()
                self.table = saved

        return run

    def row_loop(
        self,
        start: int | SSAValue,
        length: int | SSAValue,
        inits: list[SSAValue],
        step: Callable[[list[int | SSAValue], list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """Rows ``start + ty + k * by`` below ``start + length``: ``UNROLL`` rows per
        iteration of a main loop (``step`` gets them all, to issue every load first),
        then the remaining rows one at a time."""
        b = self.b
        by = self.block[1]
        ty = b.thread_id("y")
        unroll = self.low.unroll
        group = by * unroll
        nmain = b.div(length, group)
        state = list(inits)
        if nmain != 0:

            def main(k: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                base = b.add(b.add(start, ty), b.mul(k, group), "row")
                return step([b.add(base, u * by) for u in range(unroll)], carried)

            state = b.for_(0, nmain, 1, self.scoped(main), state, iv_name="k")
        if not (isinstance(length, int) and length % group == 0):

            def tail(r: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                return step([r], carried)

            lb = b.add(b.add(start, b.mul(nmain, group)), ty)
            state = b.for_(lb, b.add(start, length), by, self.scoped(tail), state, iv_name="r")
        return state

    def interleaved_row_loop(
        self,
        s: int | SSAValue,
        splits: int,
        inits: list[SSAValue],
        step: Callable[[list[int | SSAValue], list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """Rows of split ``s`` of ``splits`` when the splits interleave: the rows are
        cut in groups of ``by * unroll`` consecutive rows and split ``s`` takes groups
        ``s, s + splits, ...`` (``UNROLL`` rows a thread per group, every load first),
        then the rows past the last whole group, ``by`` at a time, strided the same way.
        All blocks then read one band of rows that moves through memory together,
        instead of ``splits`` bands far apart."""
        b = self.b
        by = self.block[1]
        ty = b.thread_id("y")
        unroll = self.low.unroll
        group = by * unroll
        rows = self.low.plan.rows
        ngroups = rows // group
        state = list(inits)
        if ngroups:

            def main(g: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                base = b.add(b.mul(g, group), ty, "row")
                return step([b.add(base, u * by) for u in range(unroll)], carried)

            state = b.for_(s, ngroups, splits, self.scoped(main), state, iv_name="g")
        if rows % group:

            def tail(r: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
                return step([r], carried)

            lb = b.add(b.add(ngroups * group, b.mul(s, by)), ty)
            state = b.for_(lb, rows, splits * by, self.scoped(tail), state, iv_name="r")
        return state


def _consecutive(lay: TensorLayout, idxs: list[Index]) -> bool:
    """Lanes at consecutive, ``len(idxs)``-aligned offsets of a tensor (vector store)."""
    n = len(idxs)
    if n == 1 or not idxs[0] or lay.strides[-1] != 1 or lay.pointer_align % n:
        return False
    if any(s % n for s, e in zip(lay.strides[:-1], lay.shape[:-1], strict=True) if e != 1):
        return False
    first = idxs[0]
    for j, idx in enumerate(idxs):
        if any(d.key() != f.key() for d, f in zip(idx[:-1], first[:-1], strict=True)):
            return False
        if idx[-1].base is not first[-1].base or idx[-1].offset != first[-1].offset + j:
            return False
    last = first[-1]
    return last.offset % n == 0 and (last.base is None or last.align % n == 0)


class _Lowering:
    """Builds the kernels of one column-reduction segment."""

    def __init__(
        self,
        plan: _Plan,
        in_layouts: Sequence[TensorLayout | None],
        out_layouts: Sequence[TensorLayout],
        params: ReductionParams,
        name: str,
        target: GpuTarget,
        splits: int | None = None,
        unroll: int | None = None,
        reverse_apply: bool | None = None,
        interleave: bool | None = None,
    ) -> None:
        self.plan = plan
        self.unroll = unroll or UNROLL
        self.reverse_apply = REVERSE_APPLY if reverse_apply is None else reverse_apply
        self.in_layouts = list(in_layouts)
        self.out_layouts = list(out_layouts)
        self.name = name
        self.V = _vector_width(plan, in_layouts)
        bx0, by0 = (params.block[0], params.block[1]) if params.block[0] > 0 else (32, 8)
        bx = max(1, min(bx0, _next_pow2(-(-plan.cols // self.V))))
        # At most 256 threads a block: a persistent schedule's tall block (32 x 32)
        # would leave few rows per thread and a long serial block reduction.
        by = max(1, min(by0, MAX_THREADS // bx))
        self.block = (bx, by)
        self.col_tiles = max(1, -(-plan.cols // (bx * self.V)))
        self.S, self.rps = _splits(
            plan.rows, self.col_tiles, bx * by, by, target, any(r.welford for r in plan.reds)
        )
        if splits is not None and plan.rows:
            self.rps = -(-plan.rows // max(1, min(splits, plan.rows)))
            self.S = -(-plan.rows // self.rps)
        # Interleaved splits: only where nothing needs a split's row count or row range
        # (Welford partials carry per-split counts; the apply pass walks split ranges).
        self.interleave = bool(INTERLEAVE_SPLITS if interleave is None else interleave) and (
            self.S > 1
            and plan.levels == 1
            and not plan.full_outs
            and not any(r.welford for r in plan.reds)
        )
        self.scratch: list[ScratchBuffer] = []
        self.partial_index: dict[tuple[int, int], int] = {}  # (red, part) -> scratch
        self.stats_index: dict[SSAValue, int] = {}
        if self.S > 1:
            for ri, r in enumerate(plan.reds):
                for p in range(r.parts):
                    self.partial_index[(ri, p)] = len(self.scratch)
                    self.scratch.append(ScratchBuffer(self.S * plan.cols, r.acc_dt))
        if self.S > 1 or plan.levels > 1 or plan.full_outs:
            # With S == 1 one kernel holds every result in registers: nothing stored.
            stored = plan.stored if self.S > 1 else []
            for res in stored:
                self.stats_index[res] = len(self.scratch)
                self.scratch.append(ScratchBuffer(plan.cols, compute_dtype(F.dtype_of(res.type))))
        extents = [plan.rows * plan.cols, self.S * plan.cols + self.V]
        extents += [max_offset(lay) for lay in in_layouts if lay is not None]
        extents += [max_offset(lay) for lay in out_layouts]
        self.index_bits = index_bits_for(extents)

    def arg_names(self) -> list[str]:
        fusion = self.plan.fusion
        names = []
        for i, a in enumerate(fusion.inputs):
            hint = "".join(c if c.isalnum() or c == "_" else "_" for c in (a.name_hint or ""))
            names.append(hint if hint and hint[0].isalpha() else f"in{i}")
        names += [f"out{j}" for j in range(len(fusion.output_op.values))]
        names += [
            f"partial{k}" if k < len(self.partial_index) else f"stats{k}"
            for k in range(len(self.scratch))
        ]
        seen: set[str] = set()
        out = []
        for n in names:
            base, c = n, 1
            while n in seen:
                n, c = f"{base}_{c}", c + 1
            seen.add(n)
            out.append(n)
        return out

    # ---- accumulation ------------------------------------------------------------------
    def identity(self, kern: _Kernel, r: _Red) -> list[SSAValue]:
        em = kern.em
        if r.welford:
            return [em.const(0.0, r.acc_dt)]
        dt = r.acc_dt
        if dt.is_float:
            val: float | int = {"add": 0.0, "mul": 1.0, "max": -math.inf, "min": math.inf}[r.kind]
        else:
            bits = 64 if dt == DType.int64 else 32
            val = {"add": 0, "mul": 1, "max": -(2 ** (bits - 1)), "min": 2 ** (bits - 1) - 1}[
                r.kind
            ]
        return [em.const(val, dt)]

    def combine(self, kern: _Kernel, r: _Red, a: SSAValue, x: SSAValue) -> SSAValue:
        b = kern.b
        if r.acc_dt.is_complex:
            return complex_ops.combine(b, r.kind, a, x)
        if r.acc_dt.is_float:
            return b.combine(r.kind, a, x)
        cls = {
            "add": arith.AddiOp,
            "mul": arith.MuliOp,
            "max": arith.MaxSIOp,
            "min": arith.MinSIOp,
        }[r.kind]
        return b.val(cls(a, x))

    def init_state(self, kern: _Kernel, reds: list[_Red], width: int) -> list[SSAValue]:
        """Per thread: for each reduction, per lane its accumulator, or for Welford
        the count then per lane (mean, M2)."""
        state: list[SSAValue] = []
        for r in reds:
            if r.welford:
                zero = kern.em.const(0.0, r.acc_dt)
                state += [zero] + [zero, zero] * width
            else:
                state += self.identity(kern, r) * width
        return state

    def update(
        self,
        kern: _Kernel,
        reds: list[_Red],
        kidx: list[Index],
        rows: list[int | SSAValue],
        state: list[SSAValue],
    ) -> list[SSAValue]:
        b, ev, em = kern.b, kern.ev, kern.em
        fulls = [[kern.full(row, k) for k in kidx] for row in rows]
        for r in reds:  # every load of the iteration first
            for lanes in fulls:
                ev.prefetch(r.op.operands[0], lanes)
        out: list[SSAValue] = []
        pos = 0
        W = len(kidx)
        for r in reds:
            x_of = [
                [em.convert(ev.value(r.op.operands[0], i), r.in_dt, r.acc_dt) for i in lanes]
                for lanes in fulls
            ]
            if r.welford:
                n = state[pos]
                acc = state[pos + 1 : pos + 1 + 2 * W]
                one = em.const(1.0, r.acc_dt)
                for xs in x_of:
                    n = b.addf(n, one, "count")
                    inv = b.divf(one, n, "inv_count")
                    for j, x in enumerate(xs):
                        mean, m2 = acc[2 * j], acc[2 * j + 1]
                        delta = b.subf(x, mean, "delta")
                        mean = b.addf(mean, b.mulf(delta, inv), "mean")
                        m2 = b.addf(m2, b.mulf(delta, b.subf(x, mean)), "m2")
                        acc[2 * j], acc[2 * j + 1] = mean, m2
                out += [n] + acc
                pos += 1 + 2 * W
            else:
                acc = state[pos : pos + W]
                for xs in x_of:
                    acc = [self.combine(kern, r, a, x) for a, x in zip(acc, xs, strict=True)]
                out += acc
                pos += W
        return out

    def accumulate(
        self,
        kern: _Kernel,
        reds: list[_Red],
        col0: SSAValue | int,
        col_ok: SSAValue | bool,
        kidx: list[Index],
        start: int | SSAValue,
        length: int | SSAValue,
        load_stats: bool,
        split: int | SSAValue | None = None,
    ) -> list[SSAValue]:
        """The thread's accumulators over its rows, block-reduced over ``threadIdx.y``
        (``split``: this block's split index, when the splits interleave)."""
        b = kern.b
        W = len(kidx)

        def body() -> list[SSAValue]:
            if load_stats:
                kern.load_stats(col0, kidx, below=reds[0].level)
            inits = self.init_state(kern, reds, W)

            def step(rows: list[int | SSAValue], st: list[SSAValue]) -> list[SSAValue]:
                return self.update(kern, reds, kidx, rows, st)

            if split is not None:
                return kern.interleaved_row_loop(split, self.S, inits, step)
            return kern.row_loop(start, length, inits, step)

        if col_ok is True:
            state = kern.scoped(body)()
        else:

            def idle() -> list[SSAValue]:
                return self.init_state(kern, reds, W)

            types: list[Attribute] = [v.type for v in self.init_state(kern, reds, W)]
            state = b.if_(col_ok, kern.scoped(body), kern.scoped(idle), types)  # type: ignore[arg-type]
        if self.block[1] == 1:
            return state
        out: list[SSAValue] = []
        pos = 0
        for r in reds:
            if r.welford:
                n = state[pos]
                lanes: list[SSAValue] = []
                count = n
                for j in range(W):
                    mean, m2, count = b.block_reduce(
                        [state[pos + 1 + 2 * j], state[pos + 2 + 2 * j], n], "welford", (1,)
                    )
                    lanes += [mean, m2]
                out += [count, *lanes]
                pos += 1 + 2 * W
            else:
                for j in range(W):
                    out += b.block_reduce([state[pos + j]], r.kind, (1,))
                pos += W
        return out

    def finalize(self, kern: _Kernel, r: _Red, acc: list[SSAValue], kidx: Index) -> None:
        """Install ``r``'s results for the column ``kidx`` in the hook table (``acc``:
        the accumulator, or the Welford mean and M2 over all rows)."""
        em, b = kern.em, kern.b
        entry = kern.table.setdefault(kern.key(kidx), {})
        op = r.op
        rows = self.plan.rows
        if not r.welford:
            entry[op.results[0]] = em.convert(acc[0], r.acc_dt, F.dtype_of(op.results[0].type))
            return
        mean, m2 = acc
        if rows == 0:
            mean = em.const(math.nan, r.acc_dt)
        if isinstance(op, F.WelfordOp):
            dt = F.dtype_of(op.avg.type)
            entry[op.avg] = em.convert(mean, r.acc_dt, dt)
            entry[op.var_sum] = em.convert(m2, r.acc_dt, dt)
            entry[op.n] = em.const(rows, DType.int64)
            return
        denom = max(rows - float(op.correction.value.data), 0.0)
        var = b.divf(m2, em.const(denom, r.acc_dt), "var")
        dt = F.dtype_of(op.results[0].type)
        entry[op.results[0]] = em.convert(var, r.acc_dt, dt)
        if isinstance(op, F.VarMeanOp):
            entry[op.mean] = em.convert(mean, r.acc_dt, dt)

    def finalize_lanes(
        self, kern: _Kernel, reds: list[_Red], state: list[SSAValue], kidx: list[Index]
    ) -> None:
        W = len(kidx)
        pos = 0
        for r in reds:
            if r.welford:
                for j, k in enumerate(kidx):
                    self.finalize(kern, r, [state[pos + 1 + 2 * j], state[pos + 2 + 2 * j]], k)
                pos += 1 + 2 * W
            else:
                for j, k in enumerate(kidx):
                    self.finalize(kern, r, [state[pos + j]], k)
                pos += W

    # ---- kernels -----------------------------------------------------------------------
    def column_setup(self, kern: _Kernel) -> tuple[SSAValue, SSAValue | bool, list[Index]]:
        b = kern.b
        bx = self.block[0]
        col0 = b.mul(b.add(b.mul(b.block_id("x"), bx), b.thread_id("x")), self.V, "col0")
        assert not isinstance(col0, int)
        kidx = kern.lanes(Dim(col0, 0, self.V), self.V)
        covered = self.col_tiles * bx * self.V == self.plan.cols
        col_ok: SSAValue | bool = True if covered else b.cmp("slt", col0, self.plan.cols, "col_ok")
        return col0, col_ok, kidx

    def split_range(self, kern: _Kernel) -> tuple[int | SSAValue, int | SSAValue, int | SSAValue]:
        """(split index, first row, rows) of this block's split."""
        b = kern.b
        if self.S == 1:
            return 0, 0, self.plan.rows
        s = b.block_id("y")
        start = b.mul(s, self.rps, "row_start")
        last = self.plan.rows - (self.S - 1) * self.rps
        if last == self.rps:
            return s, start, self.rps
        length = b.select(b.cmp("eq", s, self.S - 1), last, self.rps, "split_rows")
        return s, start, length

    def apply_rows(
        self,
        kern: _Kernel,
        col_ok: SSAValue | bool,
        kidx: list[Index],
        start: int | SSAValue,
        length: int | SSAValue,
        col0: SSAValue | None,
    ) -> None:
        """Evaluate and store the full-shape outputs for the thread's columns."""
        plan, b, ev = self.plan, kern.b, kern.ev
        outs = [plan.fusion.output_op.values[j] for j in plan.full_outs]

        mirror: int | SSAValue | None = None
        if self.reverse_apply:
            # Rows of the split from its end: the rows the statistics pass read last
            # are the likeliest to still be in L2.
            mirror = b.add(b.add(start, start), b.sub(length, 1))

        def step(rows: list[int | SSAValue], st: list[SSAValue]) -> list[SSAValue]:
            if mirror is not None:
                rows = [b.sub(mirror, r) for r in rows]
            fulls = [[kern.full(r, k) for k in kidx] for r in rows]
            for lanes in fulls:
                for v in outs:
                    ev.prefetch(v, lanes)
            for lanes in fulls:
                for j, v in zip(plan.full_outs, outs, strict=True):
                    lay = self.out_layouts[j]
                    vals = [ev.value(v, i) for i in lanes]
                    offs = [offset_in(ev, lay.shape, lay.strides, i) for i in lanes]
                    kern.store_lanes(
                        kern.outs[j], F.dtype_of(v.type), vals, offs, _consecutive(lay, lanes)
                    )
            return []

        def body() -> list[SSAValue]:
            if col0 is not None:
                kern.load_stats(col0, kidx)
            self.hoist_per_column(kern, kidx)
            kern.row_loop(start, length, [], step)
            return []

        if col_ok is True:
            kern.scoped(body)()
        else:
            b.if_(col_ok, kern.scoped(body))  # type: ignore[arg-type]

    def hoist_per_column(self, kern: _Kernel, kidx: list[Index]) -> None:
        """Evaluate the per-column part of the epilogue (``rsqrt(var + eps)``) once,
        before the row loop; the loop's evaluations hit the memo."""
        plan = self.plan
        results = set(plan.results())
        shapes = plan.shapes
        for op in plan.fusion.walk():
            if not is_elementwise(op):
                continue
            v = op.results[0]
            shape = shapes.get(v)
            if shape not in (plan.kept_shape, plan.keep_shape) or shape == plan.in_shape:
                continue
            if not any(u in results or _depends(u, results) for u in op.operands):
                continue
            for k in kidx:
                idx = (
                    k
                    if shape == plan.kept_shape
                    else tuple(
                        Dim.const(0) if a in plan.rdims else k[plan.kdims.index(a)]
                        for a in range(len(shape))
                    )
                )
                try:
                    kern.ev.value(v, idx)
                except LoweringError:
                    return

    def partials_kernel(self, level: int, fused: bool) -> LoweredKernel:
        """Accumulate this level's reductions. ``fused`` (S == 1): also finalize, store
        per-column outputs and run the apply pass (every later level too)."""
        plan = self.plan
        suffix = "" if fused else f"_partials{level}"
        kern = _Kernel(self, f"{self.name}{suffix}", self.block)
        b = kern.b
        col0, col_ok, kidx = self.column_setup(kern)
        s, start, length = self.split_range(kern)
        ty = b.thread_id("y")
        levels = range(1, plan.levels + 1) if fused else [level]
        for lvl in levels:
            reds = [r for r in plan.reds if r.level == lvl]
            state = self.accumulate(
                kern,
                reds,
                col0,
                col_ok,
                kidx,
                start,
                length,
                load_stats=not fused and lvl > 1,
                split=s if self.interleave and not fused else None,
            )
            if fused:
                self.finalize_lanes(kern, reds, state, kidx)
        store_ok: SSAValue | bool = col_ok
        if self.block[1] > 1:
            is0 = b.cmp("eq", ty, 0, "is_ty0")
            store_ok = is0 if col_ok is True else b.and_(is0, col_ok)  # type: ignore[arg-type]
        if fused:
            if plan.direct_outs:
                b.if_(store_ok, kern.scoped(lambda: (kern.store_direct_outputs(kidx), [])[1]))  # type: ignore[arg-type]
            if plan.full_outs:
                self.apply_rows(kern, col_ok, kidx, start, length, None)
        else:

            def write() -> list[SSAValue]:
                pos = 0
                W = len(kidx)
                for ri, r in enumerate(plan.reds):
                    if r.level != level:
                        continue
                    base = b.add(b.mul(s, plan.cols), col0)
                    if r.welford:
                        parts = [[state[pos + 1 + 2 * j + p] for j in range(W)] for p in range(2)]
                        pos += 1 + 2 * W
                    else:
                        parts = [state[pos : pos + W]]
                        pos += W
                    for p, vals in enumerate(parts):
                        kern.store_lanes(
                            kern.scratch[self.partial_index[(ri, p)]],
                            r.acc_dt,
                            vals,
                            [b.add(base, j) for j in range(W)],
                            True,
                        )
                return []

            if store_ok is True:
                write()
            else:
                b.if_(store_ok, write)  # type: ignore[arg-type]
        module = b.finish()
        return LoweredKernel(
            module,
            kern.b.func.sym_name.data,
            (*self.block, 1),
            (self.col_tiles, self.S, 1),
            kern.args,
        )

    def finish_kernel(self, level: int) -> LoweredKernel:
        """Combine the S partials of each column; finalize; store statistics (and, at
        the last level, the per-column outputs). Block ``(32, Ty)``: ``threadIdx.y``
        takes a contiguous chunk of the splits, then a block reduction over ``y``
        combines the chunks; the order is fixed, so the result is deterministic."""
        plan = self.plan
        T = min(32, max(1, _next_pow2(plan.cols)))
        Ty = max(1, min(FINISH_THREADS // T, _next_pow2(-(-self.S // 4))))
        chunk = -(-self.S // Ty)
        kern = _Kernel(self, f"{self.name}_finish{level}", (T, Ty))
        b, em = kern.b, kern.em
        col = b.add(b.mul(b.block_id("x"), T), b.thread_id("x"), "col")
        assert not isinstance(col, int)
        kidx = kern.lanes(Dim(col, 0, 1), 1)
        ntiles = -(-plan.cols // T)
        col_ok: SSAValue | bool = (
            True if ntiles * T == plan.cols else b.cmp("slt", col, plan.cols, "col_ok")
        )
        ty = b.thread_id("y")
        lo = b.mul(ty, chunk, "s_lo")
        hi: int | SSAValue = (
            self.S if Ty == 1 else b.val(arith.MinSIOp(b.index(b.add(lo, chunk)), b.index(self.S)))
        )
        if col_ok is not True:
            hi = b.select(col_ok, hi, lo, "s_hi")  # type: ignore[arg-type]
        reds = [(ri, r) for ri, r in enumerate(plan.reds) if r.level == level]
        states: list[list[SSAValue]] = []
        for ri, r in reds:
            if r.welford:

                def chan(
                    s: SSAValue, acc: list[SSAValue], ri: int = ri, r: _Red = r
                ) -> list[SSAValue]:
                    ma, m2a, na = acc
                    off = b.add(b.mul(s, plan.cols), col)
                    mb = b.load(kern.scratch[self.partial_index[(ri, 0)]], [off])
                    m2b = b.load(kern.scratch[self.partial_index[(ri, 1)]], [off])
                    cnt = b.val(
                        arith.MinSIOp(
                            b.index(self.rps), b.index(b.sub(plan.rows, b.mul(s, self.rps)))
                        )
                    )
                    nb = em.convert(
                        b.val(arith.IndexCastOp(cnt, IntegerType(64))), DType.int64, r.acc_dt
                    )
                    n = b.addf(na, nb, "count")
                    ratio = b.divf(nb, n, "ratio")  # every split has rows: n > 0
                    delta = b.subf(mb, ma, "delta")
                    mean = b.addf(ma, b.mulf(delta, ratio), "mean")
                    m2 = b.addf(
                        b.addf(m2a, m2b), b.mulf(b.mulf(b.mulf(delta, delta), na), ratio), "m2"
                    )
                    return [mean, m2, n]

                zero = em.const(0.0, r.acc_dt)
                st = b.for_(lo, hi, 1, chan, [zero, zero, zero], unroll=True, iv_name="s")
                if Ty > 1:
                    st = b.block_reduce(st, "welford", (1,))
            else:

                def comb(
                    s: SSAValue, acc: list[SSAValue], ri: int = ri, r: _Red = r
                ) -> list[SSAValue]:
                    v = b.load(
                        kern.scratch[self.partial_index[(ri, 0)]], [b.add(b.mul(s, plan.cols), col)]
                    )
                    return [self.combine(kern, r, acc[0], v)]

                st = b.for_(lo, hi, 1, comb, self.identity(kern, r), unroll=True, iv_name="s")
                if Ty > 1:
                    st = b.block_reduce(st, r.kind, (1,))
            states.append(st)

        def body() -> list[SSAValue]:
            if level > 1:
                kern.load_stats(col, kidx, below=level)
            for (_, r), st in zip(reds, states, strict=True):
                self.finalize(kern, r, st[:2] if r.welford else st, kidx[0])
            kern.store_stats(col, kidx, [v for _, r in reds for v in r.op.results])
            if level == plan.levels:
                kern.store_direct_outputs(kidx)
            return []

        ok: SSAValue | bool = col_ok
        if Ty > 1:
            is0 = b.cmp("eq", ty, 0, "is_ty0")
            ok = is0 if col_ok is True else b.and_(is0, col_ok)  # type: ignore[arg-type]
        if ok is True:
            kern.scoped(body)()
        else:
            b.if_(ok, kern.scoped(body))  # type: ignore[arg-type]
        module = b.finish()
        return LoweredKernel(module, b.func.sym_name.data, (T, Ty, 1), (ntiles, 1, 1), kern.args)

    def apply_kernel(self) -> LoweredKernel:
        kern = _Kernel(self, f"{self.name}_apply", self.block)
        col0, col_ok, kidx = self.column_setup(kern)
        _, start, length = self.split_range(kern)
        self.apply_rows(kern, col_ok, kidx, start, length, col0)
        module = kern.b.finish()
        return LoweredKernel(
            module,
            kern.b.func.sym_name.data,
            (*self.block, 1),
            (self.col_tiles, self.S, 1),
            kern.args,
        )

    def kernels(self) -> list[LoweredKernel]:
        if self.S == 1:
            return [self.partials_kernel(1, fused=True)]
        out: list[LoweredKernel] = []
        for lvl in range(1, self.plan.levels + 1):
            out.append(self.partials_kernel(lvl, fused=False))
            out.append(self.finish_kernel(lvl))
        if self.plan.full_outs:
            out.append(self.apply_kernel())
        return out


def _depends(v: SSAValue, results: set[SSAValue]) -> bool:
    stack, seen = [v], set()
    while stack:
        u = stack.pop()
        if u in results:
            return True
        if u in seen or isinstance(u, BlockArgument):
            continue
        seen.add(u)
        owner = u.owner
        if isinstance(owner, Operation):
            stack.extend(owner.operands)
    return False


def lower_columns(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    params: object,
    name: str,
    kind: str,
    splits: int | None = None,
    unroll: int | None = None,
    reverse_apply: bool | None = None,
    interleave: bool | None = None,
    target: GpuTarget = H100,
) -> LoweredFusion:
    """Kernels for an outer reduction / outer persistent segment (module docstring),
    for ``target`` (its SM count and threads per SM size the row splits).
    ``splits`` forces the number of row splits ``S`` (tests use it to exercise the
    partials/finish/apply kernels on small shapes); ``unroll`` (rows loaded per loop
    iteration, default ``UNROLL``), ``reverse_apply`` (default ``REVERSE_APPLY``) and
    ``interleave`` (default ``INTERLEAVE_SPLITS``) are tuning overrides
    (``benchmarks/tune.py``, ``benchmarks/tune_gaps.py``)."""
    if kind == "inner_outer_persistent":
        raise LoweringError(
            f"@{fusion.sym_name.data}: inner_outer_persistent lowering not implemented: a row "
            "reduction and a column reduction of the same input in one kernel (layer-norm backward) "
            "needs a per-row persistent pass inside the column partials kernel"
        )
    if isinstance(params, OuterPersistentParams):
        params = params.stats  # this lowering shapes its apply pass itself
    if not isinstance(params, ReductionParams):
        raise LoweringError(f"@{fusion.sym_name.data}: the {kind} lowering needs ReductionParams")
    plan = _plan(fusion, shapes)
    low = _Lowering(
        plan, in_layouts, out_layouts, params, name, target, splits, unroll, reverse_apply, interleave
    )
    return LoweredFusion(kind, low.kernels(), low.scratch)


__all__ = ["lower_columns"]
