"""Evaluate any value of a fusion at a symbolic element index, as kernel IR.

A lowering picks an iteration space (the output of a pointwise fusion, the rows of a
reduction...) and asks for the value of each output at the current index. The
evaluator walks the fusion backwards from there: an elementwise op evaluates its
operands at the same index (numpy broadcasting sends extent-1 axes to index 0); a view
op maps the index — ``permute`` permutes it, ``slice`` shifts and scales it,
``reshape`` re-ravels it, ``pad`` and ``cat`` select between in-bounds loads — so a
view in the middle of a chain costs index arithmetic, never a kernel boundary
(seed 002's A/B/C table); a fusion input is a load at the offset its strides give.

Sizes and strides are compile-time constants (kernels are specialized for the concrete
shapes they run on), so index arithmetic folds and divisions are by constants.

Indices are lists of ``Dim``: ``base + offset`` with ``base`` an ``index`` SSA value
(or none) and a Python ``offset``, plus a known divisor of ``base``. Keeping offsets
symbolic lets the evaluator recognise that the lanes of a vector (``i, i+1, ...,
i+V-1``) read consecutive, aligned addresses of an input and load them with one
128-bit ``vector.load``. Results are memoized per (value, index), so a value used
twice at the same index is computed once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType
from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.codegen.kernel_builders import KernelBuilder
from fuser.codegen.lower.accumulators import RowReduction
from fuser.codegen.lower.common import (
    ArgRef,
    LoweringError,
    ScratchBuffer,
    TensorLayout,
    extent_symbols,
    index_bits_for,
    kernel_arg_names,
    kernel_arg_types,
    max_offset,
)
from fuser.codegen.lower.scalar import ScalarEmitter
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.shapes import same_elements
from fuser.schedulers.analysis.graph import (
    is_elementwise,
    is_reduction,
    reduction_dims,
    reduction_input,
)


def is_trivial_reduction(op: Operation, shape: Callable[[SSAValue], Sequence[int]]) -> bool:
    """A reduction whose reduced axes all have extent 1 (``shape``: a value's concrete
    shape): one element per result, which ``ElementEvaluator`` computes wherever it is
    read, so no loop nest folds it."""
    return is_reduction(op) and all(shape(reduction_input(op))[d] == 1 for d in reduction_dims(op))


@dataclass(frozen=True)
class Dim:
    """One axis index: ``base + offset``; ``align`` divides ``base`` (1 if unknown).

    ``flat``, on the innermost axis of an aligned row (``iterdomain.align``):
    ``(m, shape, keys)`` telling that this index plus the row-major offset of the
    other axes' indices (whose ``key()`` are ``keys``) in a tensor of ``shape`` is a
    multiple of ``m`` (``flat_aligned``). A shifted index's alignment is one of the
    element's position in the whole tensor, not of the index alone."""

    base: SSAValue | None
    offset: int = 0
    align: int = 1
    flat: tuple[int, tuple[int, ...], tuple] | None = None

    def key(self) -> tuple[int, int]:
        return (0 if self.base is None else id(self.base), self.offset)

    def shifted(self, c: int) -> Dim:
        return Dim(self.base, self.offset + c, self.align, self.flat if c == 0 else None)

    @staticmethod
    def const(c: int) -> Dim:
        return Dim(None, c, 0)


Index = tuple[Dim, ...]


def reindex(idx: Index, ref: Sequence[int], shape: Sequence[int]) -> Index:
    """``idx`` (an index of ``ref``) as an index of ``shape``, which holds the same
    elements with axes of extent 1 added or removed (``same_elements``): the axes of
    extent > 1 in order, 0 on the others."""
    if tuple(shape) == tuple(ref):
        return idx
    it = iter(d for d, e in zip(idx, ref, strict=True) if e != 1)
    return tuple(next(it) if e != 1 else Dim.const(0) for e in shape)


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides (elements) of a contiguous row-major tensor of ``shape``."""
    out, stride = [], 1
    for e in reversed(shape):
        out.append(stride)
        stride *= e
    return tuple(reversed(out))


def flat_aligned(first: Index, axis: int, n: int, shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the element at ``first`` of a tensor of ``shape`` laid out with
    ``strides`` is at a multiple of ``n`` elements from its start, by the ``flat``
    claim of its index on ``axis`` (``Dim``): the claim is for this shape, these
    other indices and a multiple of ``n``, the axis is the innermost, and the layout
    is contiguous row-major."""
    d = first[axis]
    if d.flat is None:
        return False
    m, fshape, keys = d.flat
    return (
        m % n == 0 and axis == len(shape) - 1 and tuple(shape) == fshape
        and tuple(strides) == row_major_strides(shape)
        and tuple(x.key() for k, x in enumerate(first) if k != axis) == keys
    )


def index_key(idx: Index) -> tuple:
    return tuple(d.key() for d in idx)


def moving_axis(lanes: Sequence[Index]) -> int | None:
    """The one axis along which the indices ``lanes`` differ; None when they differ
    along none or several."""
    moving = [a for a in range(len(lanes[0])) if any(i[a].key() != lanes[0][a].key() for i in lanes)]
    return moving[0] if len(moving) == 1 else None


@dataclass(frozen=True)
class TensorInput:
    """A fusion input tensor as the kernel sees it: its argument, shape and strides
    (elements), and the alignment (elements) of its data pointer."""

    arg: SSAValue
    dtype: DType
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    pointer_align: int


Preset = dict[tuple[SSAValue, tuple], SSAValue]

_MISSING = object()


class _Scoped:
    """A mapping with nested scopes: ``push`` opens a scope whose entries vanish at
    its ``pop``; lookups see every open scope, innermost first. Entering a scope
    costs nothing (a copy of the memo per ``scf.if`` of a 10,000-op kernel would be
    quadratic)."""

    __slots__ = ("layers",)

    def __init__(self) -> None:
        self.layers: list[dict] = [{}]

    def get(self, key: object, default: object = None) -> object:
        layers = self.layers
        for i in range(len(layers) - 1, -1, -1):
            hit = layers[i].get(key, _MISSING)
            if hit is not _MISSING:
                return hit
        return default

    def __contains__(self, key: object) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __getitem__(self, key: object) -> object:
        hit = self.get(key, _MISSING)
        if hit is _MISSING:
            raise KeyError(key)
        return hit

    def __setitem__(self, key: object, value: object) -> None:
        self.layers[-1][key] = value

    def push(self) -> None:
        self.layers.append({})

    def pop(self) -> None:
        self.layers.pop()


class ElementEvaluator:
    """Values of a fusion at symbolic indices (see the module docstring)."""

    def __init__(
        self,
        b: KernelBuilder,
        fusion: F.FusionOp,
        shapes: dict[SSAValue, tuple[int, ...]],
        tensors: dict[int, TensorInput],
        scalars: dict[int, SSAValue],
    ) -> None:
        self.b = b
        self.em = ScalarEmitter(b)
        self.fusion = fusion
        self.shapes = shapes
        self.tensors = tensors
        self.scalars = scalars
        self.memo = _Scoped()
        """Values by (value, index key), per scope."""
        self._linear = _Scoped()
        self._unravelled = _Scoped()
        self.hooks: dict[SSAValue, Callable[[Index], SSAValue]] = {}
        """Values computed by the lowering itself (reduction results), by index."""
        self.buffers: dict[SSAValue, TensorInput] = {}
        """Values a kernel reads from a buffer laid out as a tensor, like an input (an
        outer normalization's statistics in scratch): loaded as vectors where the
        lanes allow."""

    # ---- scopes: memoized SSA values are only valid in the region that made them ----
    def push_scope(self) -> None:
        self.memo.push()
        self._linear.push()
        self._unravelled.push()

    def pop_scope(self) -> None:
        self.memo.pop()
        self._linear.pop()
        self._unravelled.pop()

    def in_scope(self, fn: Callable[..., object]) -> Callable[..., object]:
        """``fn`` run in a fresh scope (for ``scf.if``/``scf.for`` region builders)."""

        def run(*args: object) -> object:
            self.push_scope()
            try:
                return fn(*args)
            finally:
                self.pop_scope()

        return run

    # ---- index arithmetic ------------------------------------------------------------
    def materialize(self, d: Dim) -> int | SSAValue:
        if d.base is None:
            return d.offset
        return self.b.add(d.base, d.offset)

    def as_dim(self, v: int | SSAValue, align: int = 1) -> Dim:
        return Dim.const(v) if isinstance(v, int) else Dim(v, 0, align)

    def ravel(self, idx: Index, shape: Sequence[int]) -> Dim:
        """The row-major linear index of ``idx`` in ``shape`` (free when ``idx`` came
        from ``unravel``)."""
        hit = self._linear.get((index_key(idx), tuple(shape)))
        if hit is not None:
            return hit
        last = idx[-1] if idx else None
        if last is not None and last.base is not None and 0 < last.offset < last.align and shape[-1] % last.align == 0:
            # A lane of a vector: lane 0's linear index plus the lane, so that the lanes
            # stay ``base + j`` through a reshape (``unravel`` keeps them in one row).
            first = self.ravel((*idx[:-1], Dim(last.base, 0, last.align)), shape)
            if first.base is not None and first.offset == 0:
                return Dim(first.base, last.offset, first.align)
        lin: int | SSAValue = 0
        for d, ext in zip(idx, shape, strict=True):
            lin = self.b.add(self.b.mul(lin, ext), self.materialize(d))
        # ``prefix * shape[-1] + base``: a multiple of what divides both the innermost
        # extent and the innermost index.
        align = math.gcd(last.align, shape[-1]) if last is not None and last.offset == 0 and last.align > 1 else 1
        out = self._linear[(index_key(idx), tuple(shape))] = self.as_dim(lin, align)
        return out

    def reshape_index(self, idx: Index, shape: Sequence[int], to: Sequence[int]) -> Index:
        """The index in shape ``to`` of the element at ``idx`` of shape ``shape`` (a
        reshape's input index from its output index). A reshape that only adds or drops
        axes of extent 1 (a squeeze or unsqueeze) keeps every other axis's index as it
        is, so a consumer reads the reshaped tensor at the producer's own loop indices
        (a reduction held in registers is read at the index it is held at); any other
        reshape goes through the linear index."""
        if same_elements(to, shape):
            return reindex(idx, shape, to)
        return self.unravel(self.ravel(idx, shape), to)

    def unravel(self, lin: Dim | int | SSAValue, shape: Sequence[int]) -> Index:
        """The multi-index of linear index ``lin`` in ``shape``. ``base + j`` with
        ``j`` below the alignment of ``base`` reuses ``base``'s multi-index (lanes of
        a vector stay in one row), so their loads are recognised as consecutive."""
        if not isinstance(lin, Dim):
            lin = self.as_dim(lin)
        shape = tuple(shape)
        if (
            lin.base is not None
            and 0 < lin.offset < lin.align
            and shape
            and shape[-1] % lin.align == 0
        ):
            base = self.unravel(Dim(lin.base, 0, lin.align), shape)
            idx = (*base[:-1], base[-1].shifted(lin.offset))
        else:
            mkey = (lin.key(), lin.align, shape)
            idx = self._unravelled.get(mkey)  # type: ignore[assignment]
            if idx is None:
                dims: list[Dim] = []
                rest = self.materialize(lin)
                for k, ext in enumerate(reversed(shape[1:])):
                    a = math.gcd(lin.align, ext) if k == 0 and lin.offset == 0 else 1
                    dims.append(self.as_dim(self.b.rem(rest, ext), a))
                    rest = self.b.div(rest, ext)
                if shape:
                    dims.append(self.as_dim(rest, lin.align if len(shape) == 1 and lin.offset == 0 else 1))
                idx = tuple(reversed(dims))
                self._unravelled[mkey] = idx
        self._linear[(index_key(idx), shape)] = lin
        return idx

    def shape(self, v: SSAValue) -> tuple[int, ...]:
        if v not in self.shapes:
            raise LoweringError(f"no concrete shape for {v.name_hint or v}")
        return self.shapes[v]

    # ---- evaluation ------------------------------------------------------------------
    def value(self, v: SSAValue, idx: Index) -> SSAValue:
        """The value of ``v`` at ``idx``, in ``v``'s compute type."""
        key = (v, index_key(idx))
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self._evaluate_operands(v, idx)
        res = self._compute(v, idx)
        self.memo[key] = res
        return res

    def _chain_operands(self, v: SSAValue, idx: Index) -> list[tuple[SSAValue, Callable[[], Index]]]:
        """The operands that ``_compute`` evaluates first for ``v`` (an elementwise op or
        a view whose input index is plain index arithmetic), each with its index (a
        thunk: computed when its turn comes, as ``_compute`` would); [] for others."""
        if v in self.hooks or v in self.buffers or isinstance(v, BlockArgument):
            return []
        op = v.owner
        if is_elementwise(op):
            return [(u, lambda u=u: self._broadcast_index(u, v, idx)) for u in op.operands]
        if isinstance(op, F.BroadcastOp | F.BroadcastInDimOp | F.ExpandOp | F.PermuteOp | F.SqueezeOp):
            return [(op.operands[0], lambda: self._view_index(op, idx))]
        return []

    def _evaluate_operands(self, v: SSAValue, idx: Index) -> None:
        """Evaluate (memoize) the operands of ``v``'s chain of elementwise ops and views
        with an explicit stack, in the order the recursion of ``_compute`` would: a
        chain of 10,000 ops needs no Python stack proportional to its length."""
        stack: list[tuple[SSAValue, Index, list[tuple[SSAValue, Callable[[], Index]]], int]] = [
            (v, idx, self._chain_operands(v, idx), 0)
        ]
        while stack:
            u, i, operands, k = stack.pop()
            if k < len(operands):
                stack.append((u, i, operands, k + 1))
                w, index = operands[k]
                j = index()
                if (w, index_key(j)) not in self.memo:
                    stack.append((w, j, self._chain_operands(w, j), 0))
            elif u is not v:
                key = (u, index_key(i))
                if key not in self.memo:
                    self.memo[key] = self._compute(u, i)

    def values(self, v: SSAValue, lanes: Sequence[Index]) -> list[SSAValue]:
        """``v`` at several indices; consecutive aligned input reads become one
        vector load."""
        self.prefetch(v, lanes)
        return [self.value(v, i) for i in lanes]

    def prefetch(self, v: SSAValue, lanes: Sequence[Index], seen: set | None = None) -> None:
        """Issue the input loads under ``v`` at ``lanes`` (vectorized where possible)
        before any arithmetic, so that all loads of a thread are in flight at once."""
        seen = set() if seen is None else seen
        # Depth first, operands in order, with an explicit stack (no Python recursion
        # proportional to the chain's length).
        stack: list[tuple[SSAValue, Sequence[Index]]] = [(v, lanes)]
        while stack:
            v, lanes = stack.pop()
            key = (v, tuple(index_key(i) for i in lanes))
            if key in seen:
                continue
            seen.add(key)
            if v in self.hooks:
                continue
            buf = self.buffers.get(v)
            if buf is not None:
                if len(lanes) > 1:
                    self._vector_load(v, buf, lanes)
                continue
            if isinstance(v, BlockArgument):
                t = self.tensors.get(v.index)
                if t is not None and len(lanes) > 1:
                    self._vector_load(v, t, lanes)
                continue
            op = v.owner
            assert isinstance(op, Operation)
            if is_elementwise(op):
                stack.extend(
                    (u, [self._broadcast_index(u, v, i) for i in lanes]) for u in reversed(op.operands)
                )
            elif isinstance(op, F.BroadcastOp | F.BroadcastInDimOp | F.ExpandOp | F.PermuteOp | F.SqueezeOp | F.SliceOp):
                stack.append((op.operands[0], [self._view_index(op, i) for i in lanes]))
            elif isinstance(op, F.ReshapeOp):
                sv, su = self.shape(v), self.shape(op.input)
                stack.append((op.input, [self.reshape_index(i, sv, su) for i in lanes]))
            # Other ops (pad, cat, indexing) load lane by lane.

    def _vector_load(self, v: SSAValue, t: TensorInput, lanes: Sequence[Index]) -> None:
        n = len(lanes)
        if any(self.memo.get((v, index_key(i))) is not None for i in lanes):
            return
        if n & (n - 1):
            return
        if n * t.dtype.itemsize > 16:
            # Wider than a load: 16-byte pieces, each checked on its own (the float32
            # statistics of an 8-lane bfloat16 apply kernel: two 4-lane loads).
            m = 16 // t.dtype.itemsize
            if m > 1:
                for c in range(0, n, m):
                    self._vector_load(v, t, lanes[c : c + m])
            return
        # The lanes move along one axis (usually the innermost; the one of stride 1
        # for a tensor laid out otherwise), consecutively.
        axis = moving_axis(lanes) if lanes[0] else None
        if axis is None or t.strides[axis] != 1 or t.shape[axis] == 1:
            return
        inner = [i[axis] for i in lanes]
        base = inner[0]
        if any(d.base is not base.base for d in inner) or [d.offset for d in inner] != list(
            range(base.offset, base.offset + n)
        ):
            return
        # Alignment of the first lane's element offset: every term a multiple of n
        # (or, for an aligned row, their sum: ``flat_aligned``).
        if t.pointer_align % n:
            return
        if not flat_aligned(lanes[0], axis, n, t.shape, t.strides):
            if base.offset % n or (base.base is not None and base.align % n):
                return
            for a, d in enumerate(lanes[0]):
                # (an axis of extent 1 adds nothing: its index is 0 where it is in bounds)
                if a != axis and t.shape[a] != 1 and t.strides[a] % n and not (
                    d.base is None and (d.offset * t.strides[a]) % n == 0
                ):
                    return
        off = self._offset(t, lanes[0])
        vals = self.b.vload(t.arg, off, n, f"{t.arg.name_hint or 'in'}_v")
        for i, lane_val in zip(lanes, vals, strict=True):
            self.memo[(v, index_key(i))] = self.b.to_compute(lane_val)

    def _offset(self, t: TensorInput, idx: Index) -> int | SSAValue:
        return offset_in(self, t.shape, t.strides, idx)

    def _load(self, v: SSAValue, t: TensorInput, idx: Index) -> SSAValue:
        """``v``'s element at ``idx`` from ``t`` (an input or a buffer), in its compute type."""
        return self.b.to_compute(self.b.load(t.arg, [self._offset(t, idx)], v.name_hint))

    def _broadcast_index(self, u: SSAValue, v: SSAValue, idx: Index) -> Index:
        """Index of operand ``u`` of an elementwise op producing ``v`` at ``idx``."""
        if not isinstance(u.type, F.TensorType):
            return ()
        su = self.shape(u)
        sv = self.shape(v)
        if su == sv:
            return tuple(idx)
        lead = len(sv) - len(su)
        return tuple(
            Dim.const(0) if e == 1 and sv[lead + a] != 1 else idx[lead + a] for a, e in enumerate(su)
        )

    def _view_index(self, op: Operation, idx: Index) -> Index:
        """Index of a view op's input for its output index ``idx`` (not reshape)."""
        u = op.operands[0]
        su = self.shape(u)
        if isinstance(op, F.BroadcastOp):
            return tuple(d for d, f in zip(idx, op.get_flags(), strict=True) if not f)
        if isinstance(op, F.BroadcastInDimOp):
            bdims = F._ints(op.broadcast_dims)
            return tuple(Dim.const(0) if su[i] == 1 else idx[d] for i, d in enumerate(bdims))
        if isinstance(op, F.ExpandOp):
            sv = self.shape(op.results[0])
            return tuple(Dim.const(0) if e == 1 and sv[a] != 1 else idx[a] for a, e in enumerate(su))
        if isinstance(op, F.PermuteOp):
            out: list[Dim] = [Dim.const(0)] * len(su)
            for i, d in enumerate(op.get_dims()):
                out[d] = idx[i]
            return tuple(out)
        if isinstance(op, F.SqueezeOp):
            dims = set(op.get_dims())
            it = iter(idx)
            return tuple(Dim.const(0) if a in dims else next(it) for a in range(len(su)))
        if isinstance(op, F.SliceOp):
            out = []
            for a, (d, st, en, sp) in enumerate(
                zip(idx, F._ints(op.starts), F._ints(op.ends), F._ints(op.strides), strict=True)
            ):
                start = range(*slice(st, en, sp).indices(su[a])).start
                if sp == 1:
                    out.append(d.shifted(start))
                else:
                    out.append(self.as_dim(self.b.add(self.b.mul(self.materialize(d), sp), start)))
            return tuple(out)
        raise LoweringError(f"{op.name}: not an index-mapping view")

    def _compute(self, v: SSAValue, idx: Index) -> SSAValue:
        if v in self.hooks:  # values the lowering provides (reduction results, staged inputs)
            return self.hooks[v](idx)
        buf = self.buffers.get(v)
        if buf is not None:
            return self._load(v, buf, idx)
        if isinstance(v, BlockArgument):
            if isinstance(v.type, F.TensorType):
                return self._load(v, self.tensors[v.index], idx)
            # A half/bfloat16 scalar argument lives in f32, its compute type.
            arg = self.scalars[v.index]
            if F.dtype_of(v.type) in (DType.float16, DType.bfloat16) and arg.type != Float32Type():
                return b_ext(self.b, arg)
            return arg
        op = v.owner
        assert isinstance(op, Operation)
        b = self.b
        if isinstance(op, F.ConstantOp):
            return self.em.constant(op)
        if isinstance(op, F.SizeOp):
            shape = self.shape(op.input)
            return self.em.const(shape[op.dim.value.data % len(shape)], DType.int64)
        if is_elementwise(op):
            args = [self.value(u, self._broadcast_index(u, v, idx)) for u in op.operands]
            return self.em.emit(op, args)
        if isinstance(op, F.BroadcastOp | F.BroadcastInDimOp | F.ExpandOp | F.PermuteOp | F.SqueezeOp | F.SliceOp):
            return self.value(op.operands[0], self._view_index(op, idx))
        if isinstance(op, F.ReshapeOp):
            return self.value(op.input, self.reshape_index(idx, self.shape(v), self.shape(op.input)))
        if isinstance(op, F.PadOp):
            return self._pad(op, idx)
        if isinstance(op, F.CatOp):
            return self._cat(op, idx)
        if isinstance(op, F.IotaOp):
            dt = F.dtype_of(v.type)
            start = self.em.convert(self.value(op.start, ()), F.dtype_of(op.start.type), dt)
            step = self.em.convert(self.value(op.step, ()), F.dtype_of(op.step.type), dt)
            i = self.em.convert(self._to_int64(self.materialize(idx[0])), DType.int64, dt)
            if dt.is_float:
                return self.em.round(b.addf(start, b.mulf(step, i)), dt)
            return b.val(arith.AddiOp(start, b.val(arith.MuliOp(step, i))))
        if isinstance(op, F.FullOp):
            dt = F.dtype_of(v.type)
            return self.em.convert(self.value(op.fill_value, ()), F.dtype_of(op.fill_value.type), dt)
        if isinstance(op, F.UniformOp | F.NormalOp):
            return self._random(op, idx)
        if isinstance(op, F.IndexSelectOp | F.SelectOp | F.GatherOp | F.TakeAlongAxisOp):
            return self._indexing(op, idx)
        if isinstance(op, F.CumsumOp):
            return self._cumsum(op, idx)
        if isinstance(op, F.ScatterOp):
            return self._scatter(op, idx)
        if is_trivial_reduction(op, self.shape):
            return self._trivial_reduction(op, v, idx)
        raise LoweringError(f"{op.name}: cannot be evaluated elementwise in this kernel")

    def _trivial_reduction(self, op: Operation, v: SSAValue, idx: Index) -> SSAValue:
        """Result ``v`` of a reduction over axes of extent 1 (``is_trivial_reduction``)
        at output index ``idx``: the reduction's own accumulator folding the one element,
        so its dtype, ``-0.0 + 0``, a variance's correction and a Welford count are the
        reduction's, not a copy's."""
        src = reduction_input(op)
        dims = set(reduction_dims(op))
        keep = F._bool(getattr(op, "keepdim", None))
        it = iter(idx)
        in_idx: list[Dim] = []
        for a in range(len(self.shape(src))):
            if a not in dims:
                in_idx.append(next(it))
                continue
            if keep:
                next(it)  # the kept axis of extent 1
            in_idx.append(Dim.const(0))
        red = RowReduction(op, self, 1)
        state = red.update(red.init(), [(self.value(src, tuple(in_idx)), None)])
        return red.results(state)[v.index]  # type: ignore[attr-defined]

    def _random(self, op: F._RandomOp, idx: Index) -> SSAValue:
        """One element of ``fuser.uniform``/``fuser.normal``: ``kernel.rng`` at the
        element's row-major linear index in the random tensor (nvFuser's Philox index),
        the parameters converted to the compute type (f64 for f64, else f32)."""
        from fuser.ir.dialects import kernel as k

        dt = F.dtype_of(op.results[0].type)
        ct = DType.float64 if dt == DType.float64 else DType.float32
        a, b = (self.em.convert(self.value(p, ()), F.dtype_of(p.type), ct) for p in op.params)
        seed = self.value(op.rng_seed, ())
        offset = self.value(op.rng_offset, ())
        lin = self._to_int64(self.materialize(self.ravel(idx, self.shape(op.results[0]))))
        return self.b.val(k.RngOp(op.DISTRIBUTION, dt.to_xdsl(), seed, offset, lin, a, b))

    def _to_int64(self, v: int | SSAValue) -> SSAValue:
        if isinstance(v, int):
            return self.em.const(v, DType.int64)
        return self.b.val(arith.IndexCastOp(v, IntegerType(64)))

    def _clamp(self, v: int | SSAValue, hi: int) -> int | SSAValue:
        if isinstance(v, int):
            return min(max(v, 0), hi)
        b = self.b
        return b.val(arith.MinSIOp(b.val(arith.MaxSIOp(v, b.index(0))), b.index(hi)))

    def _in_range(self, v: int | SSAValue, lo: int, hi: int) -> SSAValue | bool:
        if isinstance(v, int):
            return lo <= v < hi
        b = self.b
        return b.and_(b.cmp("sge", v, lo), b.cmp("slt", v, hi))

    def _all(self, preds: list[SSAValue | bool]) -> SSAValue | bool:
        out: SSAValue | bool = True
        for p in preds:
            if p is True:
                continue
            if p is False:
                return False
            out = p if out is True else self.b.and_(out, p)  # type: ignore[arg-type]
        return out

    def _pad(self, op: F.PadOp, idx: Index) -> SSAValue:
        su = self.shape(op.input)
        pads = F.PadOp.per_axis(len(su), F._ints(op.widths))
        dt = F.dtype_of(op.result.type)
        fill = self.em.convert(self.value(op.pad_value, ()), F.dtype_of(op.pad_value.type), dt)
        src: list[Dim] = []
        preds: list[SSAValue | bool] = []
        for d, (before, _), ext in zip(idx, pads, su, strict=True):
            if before == 0 and _ == 0:
                src.append(d)
                continue
            i = self.b.sub(self.materialize(d), before)
            preds.append(self._in_range(i, 0, ext))
            src.append(self.as_dim(self._clamp(i, ext - 1)))
        ok = self._all(preds)
        if ok is False or 0 in su:
            return fill
        val = self.em.convert(self.value(op.input, tuple(src)), F.dtype_of(op.input.type), dt)
        if ok is True:
            return val
        return self.b.val(arith.SelectOp(ok, val, fill))

    def _cat(self, op: F.CatOp, idx: Index) -> SSAValue:
        dt = F.dtype_of(op.result.type)
        dim = op.dim.value.data % len(idx)
        pos = self.materialize(idx[dim])
        result: SSAValue | None = None
        start = 0
        pieces = []
        for u in op.inputs:
            ext = self.shape(u)[dim]
            if ext:
                pieces.append((u, start, ext))
            start += ext
        for u, lo, ext in reversed(pieces):
            local = self.b.sub(pos, lo)
            src = list(idx)
            src[dim] = self.as_dim(self._clamp(local, ext - 1))
            val = self.em.convert(self.value(u, tuple(src)), F.dtype_of(u.type), dt)
            if result is None:
                result = val
            else:
                result = self.b.val(arith.SelectOp(self.b.cmp("slt", pos, lo + ext), val, result))
        if result is None:
            raise LoweringError(f"{op.name}: all inputs are empty")
        return result

    def _cumsum(self, op: F.CumsumOp, idx: Index) -> SSAValue:
        """``out[.., i, ..] = sum(x[.., k, ..] for k <= i)``: an ``scf.for`` over the
        prefix, summed in the compute type in order (as the reference does)."""
        d = op.get_dim()
        dt = F.dtype_of(op.result.type)
        b = self.b
        zero = self.em.const(0, dt)

        def step(k: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
            src = list(idx)
            src[d] = self.as_dim(k)
            x = self.value(op.input, tuple(src))
            return [b.addf(acc[0], x) if dt.is_float else b.val(arith.AddiOp(acc[0], x))]

        end = b.add(self.materialize(idx[d]), 1)
        (total,) = b.for_(0, end, 1, self.in_scope(step), [zero], iv_name="k")  # type: ignore[arg-type]
        return self.em.round(total, dt)

    def _scatter(self, op: F.ScatterOp, idx: Index) -> SSAValue:
        """``torch.scatter`` as a pull: output entry ``q`` is ``src[p]`` for the last
        ``p = q with axis dim = k`` (``k`` in order along ``dim``) whose ``index[p]`` is
        ``q[dim]``, else ``input[q]``: an ``scf.for`` over the index's extent along
        ``dim`` with a select per step. Deterministic (the last write wins, as in the
        reference) and race-free; O(index extent) per element. Out-of-range indices
        match no entry (the reference raises for them)."""
        d = op.get_dim()
        dt = F.dtype_of(op.result.type)
        out_shape = self.shape(op.result)
        si = self.shape(op.index)
        b = self.b
        base = self.value(op.input, idx)
        if si[d] == 0 or any(n == 0 for n in si):
            return base
        preds: list[SSAValue | bool] = []
        at: list[Dim] = list(idx)
        for a, n in enumerate(si):
            if a != d and n < out_shape[a]:  # the index covers only part of this axis
                preds.append(self._in_range(self.materialize(idx[a]), 0, n))
                at[a] = self.as_dim(self._clamp(self.materialize(idx[a]), n - 1))
        ok = self._all(preds)
        if ok is False:
            return base
        q = self._to_int64(self.materialize(idx[d]))
        idx_dt = F.dtype_of(op.index.type)
        tensor_src = isinstance(op.src.type, F.TensorType)
        scalar = None
        if not tensor_src:
            scalar = self.em.convert(self.value(op.src, ()), F.dtype_of(op.src.type), dt)

        def step(k: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
            p = list(at)
            p[d] = self.as_dim(k)
            pos = tuple(p)
            target = self.em.convert(self.value(op.index, pos), idx_dt, DType.int64)
            hit = b.val(arith.CmpiOp(target, q, "eq"))
            val = self.value(op.src, pos) if tensor_src else scalar
            assert val is not None
            return [b.val(arith.SelectOp(hit, val, acc[0]))]

        (res,) = b.for_(0, si[d], 1, self.in_scope(step), [base], iv_name="k")  # type: ignore[arg-type]
        if ok is True:
            return res
        return b.val(arith.SelectOp(ok, res, base))

    def _indexing(self, op: F._IndexingOp, idx: Index) -> SSAValue:
        su = self.shape(op.input)
        d = op.get_dim()
        if isinstance(op, F.SelectOp):
            iv = self.value(op.index, ())
            src_idx = list(idx[:d]) + [Dim.const(0)] + list(idx[d:])
        elif isinstance(op, F.IndexSelectOp):
            iv = self.value(op.index, (idx[d],) if self.shape(op.index) else ())
            src_idx = list(idx)
        else:
            iv = self.value(op.index, idx)
            src_idx = list(idx)
        b = self.b
        i = b.val(arith.IndexCastOp(iv, IndexType()))
        i = b.select(b.cmp("slt", i, 0), b.add(i, su[d]), i)
        src_idx[d] = self.as_dim(self._clamp(i, su[d] - 1))
        return self.value(op.input, tuple(src_idx))


def b_ext(b: KernelBuilder, v: SSAValue) -> SSAValue:
    """``v`` (half/bfloat16) extended to f32."""
    return b.val(arith.ExtFOp(v, Float32Type()))


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def is_row_major(shape: Sequence[int], strides: Sequence[int]) -> bool:
    acc = 1
    for e, s in zip(reversed(shape), reversed(strides), strict=True):
        if e != 1 and s != acc:
            return False
        acc *= e
    return True


def offset_in(ev: ElementEvaluator, shape: Sequence[int], strides: Sequence[int], idx: Index) -> int | SSAValue:
    """Element offset of ``idx`` in a tensor of ``shape``/``strides``: the linear index
    itself for a row-major tensor whose index came from ``unravel``."""
    if is_row_major(shape, strides):
        lin = ev._linear.get((index_key(idx), tuple(shape)))
        if lin is not None:
            return ev.materialize(lin)
    off: int | SSAValue = 0
    for d, stride, ext in zip(idx, strides, shape, strict=True):
        if ext == 1:
            continue
        off = ev.b.add(off, ev.b.mul(ev.materialize(d), stride))
    return off


def begin_kernel(
    fusion: F.FusionOp,
    shapes: dict[SSAValue, tuple[int, ...]],
    in_layouts: Sequence[TensorLayout | None],
    out_layouts: Sequence[TensorLayout],
    name: str,
    block: tuple[int, int, int],
    iteration_elements: int,
    scratch: Sequence[ScratchBuffer] = (),
    cluster: tuple[int, int, int] | None = None,
) -> tuple[KernelBuilder, ElementEvaluator, list[ArgRef], list[SSAValue]]:
    """The start of every single-kernel lowering: a ``kernel.func`` taking the fusion's
    inputs, its ``fuser.output`` operands, the symbolic extents of ``in_layouts``
    (``extent_n<j>``, int64), then the segment's ``scratch`` buffers (``partial<k>``;
    ``ArgRef``s in that order), with 32-bit indices when every offset
    fits, and an evaluator over its arguments; ``cluster``: the thread-block cluster
    shape of a kernel that has one.

    Returns (builder, evaluator, argument refs, output arguments); the scratch
    arguments are the function's last ones."""
    from fuser.codegen.lower.common import (
        ArgRef,
    )

    outs = list(fusion.output_op.values)
    args = [ArgRef("input", i) for i in range(len(fusion.inputs))]
    args += [ArgRef("output", j) for j in range(len(outs))]
    symbols = sorted(extent_symbols(in_layouts).values(), key=lambda e: e.expr.name)  # type: ignore[attr-defined]
    args += [ArgRef("extent", int(e.expr.name[1:]), int(e)) for e in symbols]  # type: ignore[attr-defined]
    args += [ArgRef("scratch", k) for k in range(len(scratch))]
    extents = [iteration_elements] + [max_offset(lay) for lay in in_layouts if lay is not None]
    extents += [max_offset(lay) for lay in out_layouts] + [buf.numel for buf in scratch]
    names = kernel_arg_names(fusion, outs)
    sym_names = []
    for e in symbols:
        nm = f"extent_{e.expr.name}"  # type: ignore[attr-defined]
        while nm in names:
            nm += "_"
        sym_names.append(nm)
    names += sym_names + [f"partial{k}" for k in range(len(scratch))]
    names_types = zip(names, kernel_arg_types(fusion, args, scratch), strict=True)
    b = KernelBuilder(name, list(names_types), block, index_bits_for(extents), cluster)
    for e, nm in zip(symbols, sym_names, strict=True):
        b.declare_symbol(e.expr.name, nm, int(e))  # type: ignore[attr-defined]
    tensors: dict[int, TensorInput] = {}
    scalars: dict[int, SSAValue] = {}
    for i, (a, lay) in enumerate(zip(fusion.inputs, in_layouts, strict=True)):
        arg = b.func.args[i]
        if isinstance(a.type, F.TensorType):
            assert lay is not None
            tensors[i] = TensorInput(arg, a.type.dtype, lay.shape, lay.strides, lay.pointer_align)
        else:
            scalars[i] = arg
    out_args = list(b.func.args[len(fusion.inputs) : len(fusion.inputs) + len(outs)])
    return b, ElementEvaluator(b, fusion, shapes, tensors, scalars), args, out_args
