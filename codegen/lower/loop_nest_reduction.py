"""Lower a written reduction schedule: the loop nest of a reduction tensor's
``iterdomain`` IR (``lower_segment`` dispatches here for a written schedule of a
fusion that reduces; pointwise ones go to ``loop_nest.py``).

The reduction result carries the loop domain (what ``schedule-fusions`` writes for the
``reduction`` kind, or a hand-written one); its logical ids are the reduced input's
axes, the reduction ids included, so ``loop_structure`` gives the input's index in
the loop indices. Reduction and iteration loops may interleave; they are read as:

* ``BID``/``TID`` bound loops are block and thread indices, wherever they are;
* serial loops before the first serial reduction loop run around the whole
  reduction (``scf.for``), each iteration a separate result;
* from the first serial reduction loop on, serial and unrolled reduction loops are
  ``scf.for`` loops carrying the accumulators, and iteration loops are unrolled into
  *slots*: one accumulator per iteration (a column sum's vector lanes, each its own
  column); the innermost loop, when at most 16 iterations, is unrolled into lanes
  whose loads become one vector load when consecutive and aligned;
* reduction loops bound to ``TIDx``/``TIDy``/``TIDz`` combine the threads' partial
  results (``kernel.warp_reduce`` for 32 threads of x, ``kernel.block_reduce`` over
  those axes otherwise; several slots reduced across ``TIDy`` alone go through one
  shared tile ``[TIDy][slot][TIDx]``, one barrier for all of them, folded by a loop
  over its rows); threads whose
  reduction thread indices are 0 store;
* reduction loops bound to ``BIDx``/``BIDy``/``BIDz`` make it a grid reduction: each
  block writes its partial result to a scratch buffer ``[splits][result elements]``
  and a finishing kernel (8 to 32 results a block along ``TIDx``, enough blocks to
  fill the GPU, up to 32 threads along ``TIDy``, at least 4 splits each, each
  combining every ``TIDy``-th split in an unrolled loop, then a block reduction)
  stores the outputs;
* an element outside the input (a split that does not divide) contributes nothing
  (its load is not issued); the cross-thread combine runs in every thread.

Outputs are the reduction result or values computed from it at its index (an
epilogue such as ``sum * 2``), all of the reduction's shape up to axes of extent 1
(seed 000's sum broadcast back to ``[rows, 1]``)::

    iterdomain.loop %s [%s_bidx, %4, %s_tidx, %3] : !fuser.tensor<256xf32>
        [!iterdomain.id<256, BIDx>, !iterdomain.id<2, reduction>,
         !iterdomain.id<128, reduction, TIDx>, !iterdomain.id<4, reduction>]

is one block per row, 128 threads each summing 2 vectors of 4 floats, a block
reduction, and thread 0 storing the row's sum. A column sum::

    iterdomain.loop %s [%s_bidx, %s_bidy, %10, %s_unroll, %s_tidy, %s_tidx, %s_vec] : !fuser.tensor<1024xf32>
        [!iterdomain.id<8, BIDx>, !iterdomain.id<132, reduction, BIDy>, !iterdomain.id<4, reduction>,
         !iterdomain.id<4, reduction, unroll>, !iterdomain.id<8, reduction, TIDy>,
         !iterdomain.id<32, TIDx>, !iterdomain.id<4, vectorize>]

is 8 x 132 blocks, each thread folding 4 x 4 rows of a 4-wide vector into 4
accumulators, combined over the 8 rows of threads, one partial result per block
and column; then the finishing kernel.

The reduction may be sum, prod, max, min or Welford/variance (``var_mean``,
``welford``: mean, M2 and count per accumulator, merged by Chan's formula across
threads and in the finishing kernel; a grid reduction keeps three partial buffers).

Outputs at another shape (an outer normalization, ``(x - mean) * rsqrt(var)``) get
an *apply* kernel after the reduction kernels: the reduction kernels also write the
reduction's results to scratch buffers (one per result, ``[result elements]``), and
the apply kernel runs those outputs' own loop nest (``loop_nest.pointwise_kernel``),
reading the results from the buffers; the input is read a second time. An inner
normalization is better placed at a loop (``compute_at``: one kernel, the input read
once), as ``schedule-fusions`` does for the inner persistent kind.

Several reductions with the same loop nest (the same loops, and the same index of the
reduced input: a sum and a max of one input, layer-norm backward's dw and db) are
siblings folded by one nest: their accumulators side by side in every slot, one shared
tile and one set of partial buffers for all of them. Reductions with different loop
nests are different kernels (``loop_nest_groups``); when an output needs two nests,
a diagnostic names the reductions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation, SSAValue

from fuser.codegen.kernel_builders import KernelBuilder
from fuser.codegen.lower.accumulators import RowReduction, accumulator_dtype
from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweredKernel,
    LoweringError,
    ScratchBuffer,
    TensorLayout,
)
from fuser.codegen.lower.elementwise import (
    Dim,
    ElementEvaluator,
    TensorInput,
    begin_kernel,
    offset_in,
)
from fuser.codegen.lower.loop_index import (
    BLOCK_DIMS,
    GRID_DIMS,
    MAX_LANES,
    PARALLEL_DIMS,
    SERIAL_TYPES,
    all_of,
    bounded_index,
    edge_group,
    edge_inside,
    lane_indices,
    lanes_axis,
    launch_shape,
    parallel_index,
    reduction_nest,
    reindex,
    same_elements,
    scheduled_kind,
    shifted_axis,
    when,
)
from fuser.codegen.lower.loop_nest import pointwise_kernel
from fuser.codegen.lower.shared_tile import SHARED_LIMIT
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects.iterdomain import IterType, ParallelType
from fuser.ir.dtypes import DType, compute_dtype
from fuser.ir.schedule import LoopStructure

__all__ = [
    "SiblingAccumulators",
    "accumulator_dtypes",
    "combine_tile_slot",
    "finish_partials_kernel",
    "fold_slots",
    "sibling_items",
    "slot_tile",
    "lower_scheduled_reduction",
    "stage_slots_in_shared",
]

UNROLLED_COMBINE_ROWS = 16
"""The shared tile's combine over ``TIDy`` is an unrolled loop up to this many rows
(a plain loop beyond)."""
FINISH_ROWS = 32
"""Threads along ``TIDy`` of a grid reduction's finishing kernel, at most ..."""
FINISH_MIN_BLOCKS = 128
"""Blocks of the finishing kernel below which it takes fewer result elements a block
(down to 8): layer-norm backward's 1024 columns were 32 blocks of 32 x 32 threads,
7-9 us on the H100 for 264 partial results a column."""
FINISH_UNROLL = 32
"""The finishing kernel's loop over a thread's partial results is unrolled up to this
many steps."""
FINISH_PER_THREAD = 4
"""... and fewer when each would merge fewer than this many partial results (the
merges of one thread are a serial chain: 528 partials of a 65536 x 256 outer
normalization's Welford, 33 a thread on 16 rows of threads, took 17.4 us on the
H100)."""


def lower_scheduled_reduction(
    fusion: F.FusionOp,
    reductions: Sequence[Operation],
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
) -> LoweredFusion:
    """The kernels of the loop nest written on the reduction of ``fusion``: one, or a
    partials kernel and a finishing kernel for a grid reduction."""
    fname = f"@{fusion.sym_name.data}"
    nests = [reduction_nest(fusion, red, shapes) for red in reductions]
    first = reductions[0]
    for red, ls in zip(reductions[1:], nests[1:], strict=True):
        # Siblings: one loop nest folds them all, so their loops and the way their
        # inputs are indexed must be the same.
        if ls.loops != nests[0].loops or ls.logical != nests[0].logical:
            raise LoweringError(
                f"{fname}: the reductions {first.name} and {red.name} have different loop nests; one kernel "
                "folds sibling reductions over the same loops (place them with compute_at, or give them the "
                "same schedule)"
            )
        if shapes[red.input] != shapes[first.input]:  # type: ignore[attr-defined]
            raise LoweringError(
                f"{fname}: the inputs of the sibling reductions {first.name} and {red.name} have different "
                f"shapes {list(shapes[first.input])} and {list(shapes[red.input])}"  # type: ignore[attr-defined]
            )
    return _ReductionNest(fusion, list(reductions), nests[0], shapes, in_layouts, out_layouts, name).run()


def _width(red: Operation) -> int:
    """Accumulator values per result element: 3 for Welford (mean, M2, count)."""
    return 1 if isinstance(red, F.ReductionOp) else 3


def accumulator_dtypes(reds: Sequence[Operation]) -> list[DType]:
    """The dtype of each value of the sibling reductions' state (``SiblingAccumulators``)."""
    return [accumulator_dtype(r) for r in reds for _ in range(_width(r))]


class SiblingAccumulators:
    """The accumulators of sibling reductions (one loop nest folds them all), side by
    side in one state list: ``widths[r]`` values for reduction ``r`` (3 for Welford:
    mean, M2, count), the same interface as one ``RowReduction``."""

    def __init__(self, reds: Sequence[Operation], ev: ElementEvaluator, shapes: dict[SSAValue, tuple[int, ...]]) -> None:
        self.parts = [
            RowReduction(r, ev, math.prod(shapes[r.input][int(d)] for d in r.dims.get_values()))  # type: ignore[attr-defined]
            for r in reds
        ]
        self.widths = [_width(r) for r in reds]
        self.width = sum(self.widths)

    def split(self, state: Sequence[SSAValue]) -> list[list[SSAValue]]:
        out, o = [], 0
        for w in self.widths:
            out.append(list(state[o : o + w]))
            o += w
        return out

    def init(self) -> list[SSAValue]:
        return [v for p in self.parts for v in p.init()]

    def count_positions(self) -> list[int]:
        out, o = [], 0
        for p, w in zip(self.parts, self.widths, strict=True):
            out += [o + c for c in p.count_positions()]
            o += w
        return out

    def merge(self, a: list[SSAValue], b: list[SSAValue]) -> list[SSAValue]:
        return [v for p, x, y in zip(self.parts, self.split(a), self.split(b), strict=True) for v in p.merge(x, y)]

    def cross(self, state: list[SSAValue], threads: int, dims: Sequence[int]) -> list[SSAValue]:
        return [v for p, x in zip(self.parts, self.split(state), strict=True) for v in p.cross(x, threads, dims)]

    def update(
        self, state: list[SSAValue], items: Sequence[Sequence[tuple[SSAValue, None]]], duplicates: bool = True
    ) -> list[SSAValue]:
        """``items[r]``: the chunk of reduction ``r``'s input values (``duplicates``:
        ``RowReduction.update``'s)."""
        return [
            v for p, x, chunk in zip(self.parts, self.split(state), items, strict=True)
            for v in p.update(x, chunk, duplicates)
        ]

    def results(self, state: list[SSAValue]) -> list[tuple[Operation, list[SSAValue]]]:
        """Each reduction and its results."""
        return [(p.op, p.results(x)) for p, x in zip(self.parts, self.split(state), strict=True)]


class _ReductionNest:
    """The lowering of one written reduction schedule (module docstring)."""

    def __init__(
        self,
        fusion: F.FusionOp,
        reds: list[Operation],
        ls: LoopStructure,
        shapes: dict[SSAValue, tuple[int, ...]],
        in_layouts: Sequence[TensorLayout | None],
        out_layouts: Sequence[TensorLayout],
        name: str,
    ) -> None:
        self.fusion, self.reds, self.ls, self.shapes, self.name = fusion, reds, ls, shapes, name
        self.red = reds[0]
        self.in_layouts, self.out_layouts = in_layouts, out_layouts
        self.fname = f"@{fusion.sym_name.data}"
        self.result = reds[0].results[0]
        """The result whose loop domain is the schedule (a Welford/var_mean's first;
        its siblings' are the same)."""
        self.outs = list(fusion.output_op.values)

    def error(self, msg: str) -> LoweringError:
        return LoweringError(f"{self.fname}: {msg}")

    # ---- reading the loops --------------------------------------------------------
    def classify(self) -> None:
        ls, shapes = self.ls, self.shapes
        self.row_outs: list[int] = []
        """Outputs of the reduction's shape (up to extent-1 axes): stored with it."""
        self.full_outs: list[int] = []
        """Other outputs (an outer normalization's): an apply kernel over their loop
        nest, reading the reduction's result from a scratch buffer."""
        for j, v in enumerate(self.outs):
            if not isinstance(v.type, F.TensorType):
                raise self.error(f"output #{j} is not a tensor")
            (self.row_outs if same_elements(shapes[v], shapes[self.result]) else self.full_outs).append(j)
        self.extents: list[int] = []
        for k, a in enumerate(ls.loops):
            if a.static_extent is None:
                raise self.error(f"loop #{k} of the reduction has symbolic extent {a.extent}; bind the sizes first")
            self.extents.append(a.static_extent)
        is_red = [a.iter_type == IterType.reduction for a in ls.loops]
        serial = [a.parallel_type not in PARALLEL_DIMS for a in ls.loops]
        folds = [k for k in range(len(ls.loops)) if is_red[k] and serial[k]]
        self.first_fold = folds[0] if folds else len(ls.loops)
        # Iteration loops inside a folded reduction loop: each of their iterations is
        # a separate result, an accumulator slot indexed at compile time.
        self.slots = [k for k in range(self.first_fold, len(ls.loops)) if serial[k] and not is_red[k]]
        self.n_slots = math.prod(self.extents[k] for k in self.slots)
        for k in self.slots:
            a = ls.loops[k]
            if a.parallel_type not in (ParallelType.unroll, ParallelType.vectorize) and self.extents[k] > MAX_LANES:
                raise self.error(
                    f"iteration loop #{k} of the reduction is a serial loop of {self.extents[k]} inside its reduction "
                    f"loop #{self.first_fold}: its results are registers, indexed at compile time: unroll it or "
                    "move it outside the reduction loops"
                )
        self.red_threads = sorted(
            BLOCK_DIMS[a.parallel_type] for a, r in zip(ls.loops, is_red, strict=True) if r and a.parallel_type in BLOCK_DIMS
        )
        self.red_blocks = [k for k, a in enumerate(ls.loops) if is_red[k] and a.parallel_type in GRID_DIMS]
        last = len(ls.loops) - 1
        # The innermost loop inside the reduction, when short, is unrolled into lanes:
        # their loads become one vector where consecutive (of at most 16 bytes of the
        # tensor actually loaded, which may be narrower than the reduction's input: a
        # bf16 input cast to f32). Lanes of a reduction loop fold into one
        # accumulator, lanes of an iteration loop into their slots.
        self.lane = (
            last if last >= self.first_fold and ls.loops[last].parallel_type in (*SERIAL_TYPES, ParallelType.vectorize)
            and 1 < self.extents[last] <= MAX_LANES else None
        )

    def slot(self, env: dict[str, int | SSAValue]) -> int:
        n = 0
        for k in self.slots:
            n = n * self.extents[k] + env[f"i{k}"]  # type: ignore[operator]
        return n

    def slot_envs(self) -> list[dict[str, int]]:
        """The slot loops' indices of each slot, in slot order."""
        envs: list[dict[str, int]] = [{}]
        for k in self.slots:
            envs = [{**e, f"i{k}": i} for e in envs for i in range(self.extents[k])]
        return envs

    # ---- the kernels ----------------------------------------------------------------
    def run(self) -> LoweredFusion:
        self.classify()
        shapes = self.shapes
        grid, block, _ = launch_shape(self.fname, self.ls, self.result)
        self.n_out = math.prod(shapes[self.result])
        self.groups = math.prod(self.extents[k] for k in self.red_blocks)
        dtypes = accumulator_dtypes(self.reds)
        self.width = len(dtypes)
        """Accumulators per result element: one per sibling reduction, 3 for Welford
        (mean, M2, count)."""
        scratch: list[ScratchBuffer] = []
        if self.red_blocks:  # the blocks' partial results, one buffer per accumulator
            scratch += [ScratchBuffer(self.groups * self.n_out, dt) for dt in dtypes]
        if self.full_outs:  # the results, for the apply kernel
            scratch += [ScratchBuffer(self.n_out, compute_dtype(F.dtype_of(r.type))) for r in self.stat_results()]
        iterations = max(math.prod(self.extents), self.groups * self.n_out)
        b, ev, args, out_args = begin_kernel(
            self.fusion, shapes, self.in_layouts, self.out_layouts, self.name, block, iterations, scratch
        )
        self.b, self.ev, self.out_args = b, ev, out_args
        self.partials, self.stats = self.scratch_args(b, scratch)
        self.acc = SiblingAccumulators(self.reds, ev, shapes)
        self.block = block
        # Several slots reduced across TIDy only: one shared tile for all of them (of
        # one dtype).
        self.tile = (
            slot_tile(b, block, self.red_threads, self.n_slots, dtypes, "slots_tile")
            if self.n_slots > 1 or len(self.reds) > 1 else None
        )
        self.iterate(0, {})
        kernels = [LoweredKernel(b.finish(), self.name, block, grid, args)]
        if self.red_blocks:
            kernels.append(self.finish_kernel(scratch))
        if self.full_outs:
            kernels.append(self.apply_kernel(scratch))
        return LoweredFusion(scheduled_kind(self.fusion, self.red.name.split(".", 1)[1]), kernels, scratch)

    def scratch_args(self, b: KernelBuilder, scratch: list[ScratchBuffer]) -> tuple[list[SSAValue], list[SSAValue]]:
        """A kernel's scratch arguments (its last ones), split by ``split_scratch``."""
        return self.split_scratch(list(b.func.args[len(b.func.args) - len(scratch) :]))

    def split_scratch(self, args: list[SSAValue]) -> tuple[list[SSAValue], list[SSAValue]]:
        """The scratch arguments ``args`` as the blocks' partial results (``width``
        buffers, for a grid reduction) and the results for the apply kernel (one per
        ``stat_results``)."""
        n = self.width if self.red_blocks else 0
        return args[:n], args[n:]

    def stat_results(self) -> list[SSAValue]:
        """The reduction's tensor results (a Welford's count is a scalar per
        element too: all of them)."""
        return [r for red in self.reds for r in red.results if isinstance(r.type, F.TensorType)]

    def apply_kernel(self, scratch: list[ScratchBuffer]) -> LoweredKernel:
        """The outputs that are not of the reduction's shape, over their own loop nest,
        the reduction's result read from the scratch buffer the reduction kernels
        wrote (an outer normalization's statistics)."""
        shape = self.shapes[self.result]
        results = self.stat_results()

        def hook(ev: ElementEvaluator, args: list[SSAValue]) -> None:
            # Each statistic is a dense row-major buffer of the reduction's shape (a
            # device allocation of its own: 16-byte aligned), read as an input is, so
            # a vector of columns loads its statistics as vectors too (one load for
            # 4 columns instead of one a column: the bf16 16384 x 1024 apply kernel
            # was bound by L1 requests, 23.0 -> 16.3 us on the H200).
            strides = TensorLayout.contiguous(shape).strides
            for r, buf, s in zip(results, self.split_scratch(args)[1], scratch[-len(results) :], strict=True):
                ev.buffers[r] = TensorInput(buf, s.dtype, shape, strides, max(1, 16 // s.dtype.itemsize))

        try:
            return pointwise_kernel(
                self.fusion, self.shapes, self.in_layouts, self.out_layouts, f"{self.name}_apply", self.full_outs,
                scratch, hook,
            )
        except LoweringError as e:
            raise self.error(f"the outputs after {self.red.name}: {str(e).removeprefix(self.fname + ': ')}") from None

    def iterate(self, k: int, env: dict[str, int | SSAValue]) -> None:
        """The loops before the first folded reduction loop: indices and loops around
        the whole reduction."""
        b, ev = self.b, self.ev
        if k == self.first_fold:
            self.reduce(env)
            return
        a = self.ls.loops[k]
        if a.parallel_type in PARALLEL_DIMS or self.extents[k] == 1:
            self.iterate(k + 1, {**env, f"i{k}": parallel_index(b, a.parallel_type) if self.extents[k] > 1 else 0})
            return

        def body(iv: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            self.iterate(k + 1, {**env, f"i{k}": iv})
            return []

        b.for_(0, self.extents[k], 1, ev.in_scope(body), unroll=a.parallel_type == ParallelType.unroll, iv_name=f"i{k}")  # type: ignore[arg-type]

    def reduce(self, env: dict[str, int | SSAValue]) -> None:
        """Fold every slot's elements, combine across the reduction's threads, then
        store the results (or, for a grid reduction, each block's partial result)."""
        b, ev = self.b, self.ev
        acc, width, n_slots = self.acc, self.width, self.n_slots
        for k in range(self.first_fold, len(self.ls.loops)):  # thread and block indices
            a = self.ls.loops[k]
            if a.parallel_type in PARALLEL_DIMS:
                env = {**env, f"i{k}": parallel_index(b, a.parallel_type) if self.extents[k] > 1 else 0}
        state = self.fold_loops(self.first_fold, env, acc.init() * n_slots)
        # Every thread reaches the combine (a barrier): only elements are predicated.
        threads = math.prod(
            self.extents[k] for k, a in enumerate(self.ls.loops)
            if a.iter_type == IterType.reduction and a.parallel_type in BLOCK_DIMS
        )
        if self.tile is not None:
            self.stage_in_shared(state)
            part_of: Callable[[int], list[SSAValue]] = self.combine_slot
        else:
            state = [v for n in range(n_slots) for v in acc.cross(state[n * width : (n + 1) * width], threads, self.red_threads)]
            part_of = lambda n: state[n * width : (n + 1) * width]  # noqa: E731
        g: int | SSAValue = 0  # the block's split of a grid reduction
        for k in self.red_blocks:
            g = b.add(b.mul(g, self.extents[k]), env[f"i{k}"])
        for n, slot_env in enumerate(self.slot_envs()):
            senv = {**env, **slot_env}
            idx, conds = self.out_index(senv)
            if self.tile is not None:  # slot n was combined by the threads of row n % TIDy
                conds.append(b.cmp("eq", b.thread_id("y"), n % self.block[1]))
            else:
                for d in self.red_threads:
                    conds.append(b.cmp("eq", b.thread_id("xyz"[d]), 0))
            if self.red_blocks:

                def write(idx: tuple = idx, n: int = n, g: int | SSAValue = g) -> list[SSAValue]:
                    off = b.add(b.mul(g, self.n_out), ev.materialize(ev.ravel(idx, self.shapes[self.result])))
                    for v, buf in zip(part_of(n), self.partials, strict=True):
                        b.store(v, buf, [off])
                    return []

                b.if_(all_of(b, conds), ev.in_scope(write))
            else:
                b.if_(all_of(b, conds), ev.in_scope(lambda idx=idx, n=n: self.store(idx, part_of(n))))

    def stage_in_shared(self, state: list[SSAValue]) -> None:
        """The slots' accumulators into the shared tile (``stage_slots_in_shared``)."""
        assert self.tile is not None
        stage_slots_in_shared(self.b, self.tile, state)

    def combine_slot(self, n: int) -> list[SSAValue]:
        """Slot ``n`` folded over the tile's rows (``combine_tile_slot``)."""
        assert self.tile is not None
        return combine_tile_slot(self.b, self.ev, self.acc, self.tile, self.block[1], self.width, n)

    def out_index(self, env: dict[str, int | SSAValue]) -> tuple[tuple[Dim, ...], list[SSAValue | bool]]:
        """The reduction result's index at ``env`` (iteration loops) and its bounds."""
        b, ev = self.b, self.ev
        axes = [a for a in self.ls.logical if a.tensor_axis is not None]
        shape = self.shapes[self.result]
        values, conds = bounded_index(
            b, [(a.index, shape[a.tensor_axis]) for a in axes if a.iter_type != IterType.reduction], env, self.extents,  # type: ignore[index]
        )
        it = iter(values)
        idx = tuple(Dim.const(0) if a.iter_type == IterType.reduction else ev.as_dim(next(it)) for a in axes)
        return idx, conds

    def store(self, idx: tuple[Dim, ...], state: list[SSAValue]) -> list[SSAValue]:
        """Every output (the result or an epilogue at its index) at ``idx``."""
        b, ev = self.b, self.ev
        saved = dict(ev.hooks)
        for red, values in self.acc.results(state):
            for r, v in zip(red.results, values, strict=True):
                ev.hooks[r] = lambda _idx, v=v: v
        for j in self.row_outs:
            v = self.outs[j]
            lay = self.out_layouts[j]
            out_idx = reindex(idx, self.shapes[self.result], self.shapes[v])
            val = b.to_storage(ev.value(v, out_idx), F.dtype_of(v.type).to_xdsl())
            b.store(val, self.out_args[j], [offset_in(ev, lay.shape, lay.strides, out_idx)])
        if self.full_outs:
            off = ev.materialize(ev.ravel(idx, self.shapes[self.result]))
            for r, buf in zip(self.stat_results(), self.stats, strict=True):
                b.store(ev.value(r, idx), buf, [off])
        ev.hooks = saved
        return []

    def fold_loops(self, k: int, env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
        """The loops from the first folded one: reduction loops carry the slots'
        accumulators, slot loops are unrolled, the lane loop is the leaf."""
        b, ev = self.b, self.ev
        if k == len(self.ls.loops) or k == self.lane:
            return self.accumulate(env, state)
        a = self.ls.loops[k]
        ext = self.extents[k]
        if a.parallel_type in PARALLEL_DIMS:  # bound in ``reduce``
            return self.fold_loops(k + 1, env, state)
        if ext == 1:
            return self.fold_loops(k + 1, {**env, f"i{k}": 0}, state)
        if k in self.slots:
            for i in range(ext):
                state = self.fold_loops(k + 1, {**env, f"i{k}": i}, state)
            return state

        def body(iv: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            return self.fold_loops(k + 1, {**env, f"i{k}": iv}, carried)

        return b.for_(0, ext, 1, ev.in_scope(body), inits=state,  # type: ignore[arg-type]
                      unroll=a.parallel_type == ParallelType.unroll, iv_name=f"i{k}")

    def accumulate(self, env: dict[str, int | SSAValue], state: list[SSAValue]) -> list[SSAValue]:
        """Fold the input elements at ``env`` (all lanes of the lane loop) into their
        slots of ``state``."""
        b, ev, acc = self.b, self.ev, self.acc
        srcs = [r.input for r in self.reds]  # type: ignore[attr-defined]
        in_shape = self.shapes[srcs[0]]
        axes = self.ls.logical  # the input's axes, in order
        lane_var = f"i{self.lane}" if self.lane is not None else None
        width = self.extents[self.lane] if self.lane is not None else 1
        exprs = [(a.index, e) for a, e in zip(axes, in_shape, strict=True)]
        along = lanes_axis([a.index for a in axes], lane_var, width, in_shape, divisible=False)
        partial = along is not None and in_shape[along] % width != 0
        shifted = None if along is not None else shifted_axis([a.index for a in axes], lane_var, width, in_shape)
        w = self.width

        def fold(envs: list, lanes: list, state: list[SSAValue]) -> list[SSAValue]:
            # The lanes of an iteration loop are slots folded only here, together.
            items = sibling_items(ev, srcs, envs, lanes, self.slot)
            return fold_slots(acc, state, items, w, together=self.lane in self.slots)

        def lane_by_lane(state: list[SSAValue]) -> list[SSAValue]:
            for j in range(width):
                one = [{**env, lane_var: j} if lane_var is not None else dict(env)]
                values, conds = bounded_index(b, exprs, one[0], self.extents)
                idx = [tuple(ev.as_dim(v) for v in values)]
                state = when(b, ev, all_of(b, conds), lambda one=one, idx=idx, st=state: fold(one, idx, st), state)
            return state

        if shifted is not None or partial:
            # An aligned group of a row (``iterdomain.align``), or of an axis the
            # width does not divide: one vector where its first and last lanes are
            # inside the row, else lane by lane (the group that straddles the row's
            # start or end).
            assert lane_var is not None
            envs, lanes = edge_group(b, ev, exprs, env, lane_var, width, in_shape, shifted, along)
            inside = edge_inside(b, exprs, envs, self.extents)
            if inside is True:
                return fold(envs, lanes, state)
            return b.if_(
                inside,
                ev.in_scope(lambda: fold(envs, lanes, state)),
                ev.in_scope(lambda: lane_by_lane(state)),
                [v.type for v in state],
            )
        if along is None:
            return lane_by_lane(state)
        envs = [{**env, lane_var: j} if lane_var is not None else dict(env) for j in range(width)]
        values, conds = bounded_index(b, exprs, envs[0], self.extents)
        first = [ev.as_dim(v) for v in values]
        lanes = lane_indices(first, width, along) if width > 1 else [tuple(first)]
        return when(b, ev, all_of(b, conds), lambda: fold(envs, lanes, state), state)

    def finish_kernel(self, scratch: list[ScratchBuffer]) -> LoweredKernel:
        """The grid reduction's second kernel: ``tx`` result elements a block along
        ``TIDx`` (32, halved down to 8 while that leaves fewer than
        ``FINISH_MIN_BLOCKS`` blocks); the threads along ``TIDy`` each combine every
        ``TIDy``-th block's partial result (a loop of a static trip count, unrolled:
        the loads are independent), then a block reduction over ``TIDy``; row 0
        stores the outputs."""
        tx = 32
        while tx > 8 and -(-self.n_out // tx) < FINISH_MIN_BLOCKS:
            tx //= 2
        ty = min(FINISH_ROWS, 1 << max(0, (-(-self.groups // FINISH_PER_THREAD) - 1).bit_length()))
        grid = (-(-self.n_out // tx), 1, 1)
        name = f"{self.name}_finish"
        b, ev, args, out_args = begin_kernel(
            self.fusion, self.shapes, self.in_layouts, self.out_layouts, name, (tx, ty, 1),
            self.groups * self.n_out, scratch,
        )
        self.b, self.ev, self.out_args = b, ev, out_args
        self.acc = acc = SiblingAccumulators(self.reds, ev, self.shapes)
        partials, self.stats = self.scratch_args(b, scratch)
        o = b.add(b.mul(b.block_id("x"), tx), b.thread_id("x"))
        inside = b.cmp("slt", o, self.n_out)
        tidy = b.thread_id("y")
        steps = -(-self.groups // ty)

        def step(j: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            g = b.add(tidy, b.mul(j, ty))

            def load() -> list[SSAValue]:
                off = b.add(b.mul(g, self.n_out), o)
                return acc.merge(carried, [b.load(p, [off]) for p in partials])

            cond = inside if self.groups % ty == 0 else b.and_(inside, b.cmp("slt", g, self.groups))
            return b.if_(cond, ev.in_scope(load), lambda: carried, [v.type for v in carried])

        state = b.for_(0, steps, 1, ev.in_scope(step), inits=acc.init(), unroll=steps <= FINISH_UNROLL, iv_name="j")
        state = acc.cross(state, ty, (1,))

        def store() -> list[SSAValue]:
            return self.store(ev.unravel(o, self.shapes[self.result]), state)

        b.if_(b.and_(inside, b.cmp("eq", tidy, 0)), ev.in_scope(store))
        return LoweredKernel(b.finish(), name, (tx, ty, 1), grid, args)


def slot_tile(
    b: KernelBuilder,
    block: tuple[int, int, int],
    red_threads: Sequence[int],
    slots: int,
    dtypes: Sequence[DType],
    name: str,
    used: int = 0,
) -> SSAValue | None:
    """The shared tile ``[TIDy][slot x accumulator][TIDx]`` that combines ``slots``
    slots of accumulators (of ``dtypes``) across ``TIDy`` with one barrier
    (``stage_slots_in_shared``, ``combine_tile_slot``): when ``TIDy`` is the only
    thread axis they reduce (``red_threads``, block dimensions), the accumulators share
    one dtype and the tile fits beside ``used`` bytes of shared memory; else None."""
    bx, by, bz = block
    nbytes = bx * by * slots * len(dtypes) * dtypes[0].itemsize
    if list(red_threads) != [1] or bz != 1 or len(set(dtypes)) != 1 or used + nbytes > SHARED_LIMIT:
        return None
    return b.shared([by, slots * len(dtypes), bx], dtypes[0].to_xdsl(), 0, name)


def stage_slots_in_shared(b: KernelBuilder, tile: SSAValue, state: Sequence[SSAValue]) -> None:
    """Accumulators to be combined across ``TIDy`` (several slots, each of one or more
    values) into one shared tile ``[TIDy][slot x accumulator][TIDx]``: one barrier for
    every slot, where a block reduction per slot would take two each."""
    tidy, tidx = b.thread_id("y"), b.thread_id("x")
    b.barrier()  # an earlier combine may still read the tile
    for n, v in enumerate(state):
        b.store(v, tile, [tidy, n, tidx])
    b.barrier()


def combine_tile_slot(
    b: KernelBuilder, ev: ElementEvaluator, acc: SiblingAccumulators, tile: SSAValue, rows: int, width: int, n: int
) -> list[SSAValue]:
    """Slot ``n`` of the tile (``stage_slots_in_shared``) folded over its ``rows`` rows
    of threads (run by the threads that store it, those of row ``n % rows``): a loop
    over the rows, unrolled up to ``UNROLLED_COMBINE_ROWS`` of them (128 rows of five
    accumulators unrolled in every slot made a 9600-line kernel that NVRTC compiled in
    23 s)."""
    tidx = b.thread_id("x")
    total = [b.load(tile, [0, n * width + i, tidx]) for i in range(width)]
    if rows == 1:
        return total

    def row(r: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        return acc.merge(carried, [b.load(tile, [r, n * width + i, tidx]) for i in range(width)])

    return b.for_(1, rows, 1, ev.in_scope(row), total, unroll=rows <= UNROLLED_COMBINE_ROWS, iv_name="r")


def finish_partials_kernel(
    fusion: F.FusionOp,
    reds: list[Operation],
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
    outputs: list[int],
    groups: int,
    scratch: list[ScratchBuffer],
) -> LoweredKernel:
    """The finishing kernel of sibling reductions ``reds`` whose partial results
    another kernel wrote: ``scratch`` starts with one buffer per accumulator value
    (``accumulator_dtypes``), each ``[groups][result elements]``. It merges the
    ``groups`` partial results of every element and stores the ``fuser.output``
    operands ``outputs`` (the results, or epilogues at their index), as a grid
    reduction's second kernel does (``_ReductionNest.finish_kernel``)."""
    nest = _ReductionNest(fusion, reds, reduction_nest(fusion, reds[0], shapes), shapes, in_layouts, out_layouts, name)
    nest.row_outs, nest.full_outs = list(outputs), []
    nest.red_blocks = [0]  # the scratch starts with the partial results
    nest.groups = groups
    nest.n_out = math.prod(shapes[nest.result])
    nest.width = len(accumulator_dtypes(reds))
    return nest.finish_kernel(scratch)


def sibling_items(
    ev: ElementEvaluator,
    srcs: Sequence[SSAValue],
    envs: Sequence[dict[str, int | SSAValue]],
    lanes: Sequence[Any],
    slot: Callable[[dict[str, int | SSAValue]], int],
    reading: Callable[[dict[str, int | SSAValue], Any], None] | None = None,
) -> dict[int, list[list[tuple[SSAValue, None]]]]:
    """The inputs ``srcs`` of sibling reductions at each lane (loop indices ``envs``,
    indices ``lanes``), grouped by the slot ``slot`` folds the lane into: the items
    ``SiblingAccumulators.update`` takes, for ``fold_slots``. ``reading(env, index)``
    is told before each lane is evaluated (the compute-at lowering checks register
    reads against it)."""
    if reading is not None:
        reading(envs[0], lanes[0])
    for src in dict.fromkeys(srcs):
        ev.prefetch(src, lanes)
    items: dict[int, list[list[tuple[SSAValue, None]]]] = {}
    for e, i in zip(envs, lanes, strict=True):
        if reading is not None:
            reading(e, i)
        chunks = items.setdefault(slot(e), [[] for _ in srcs])
        for chunk, src in zip(chunks, srcs, strict=True):
            chunk.append((ev.value(src, i), None))
    return items


def fold_slots(
    acc: RowReduction | SiblingAccumulators, state: list[SSAValue], items: dict[int, Any], width: int,
    duplicates: bool = True, together: bool = False,
) -> list[SSAValue]:
    """``state`` (``width`` accumulator values a slot, slot after slot) with
    ``items[n]`` (what ``acc.update`` takes: slot ``n``'s new input values) folded
    into slot ``n``; ``duplicates``: as ``RowReduction.update``'s.

    ``together``: these slots are only ever folded together, by calls that give each
    of them as many unpredicated values (a vector's lanes, each its own column), so
    their Welford counts are equal: every slot then reads and gets the first slot's
    count, and the Chan merges of all slots divide by the same count (one division a
    step instead of one a lane, once the CUDA compiler merges the identical ones)."""
    out = list(state)
    shared = acc.count_positions() if together and len(items) > 1 else []
    lengths = {len(c) for chunks in items.values() for c in chunks} if shared else set()
    if shared and (len(lengths) != 1 or any(p is not None for chunks in items.values() for c in chunks for _, p in c)):
        shared = []
    first: int | None = None
    for n, chunk in items.items():
        before = state[n * width : (n + 1) * width]
        if first is not None:
            for c in shared:
                before[c] = state[first * width + c]
        out[n * width : (n + 1) * width] = acc.update(before, chunk, duplicates)
        if first is None:
            first = n
        else:
            for c in shared:
                out[n * width + c] = out[first * width + c]
    return out
