"""Build and read ``iterdomain`` schedules.

``Schedule`` is the builder passes use to schedule a tensor, nvFuser-style: it
starts from the tensor's logical domain and keeps the current loop domain as a list
of ids that ``split``/``merge``/``reorder``/``resize``/``parallelize`` rewrite;
``emit`` inserts the ops before the fusion's ``fuser.output``::

    s = Schedule(t)                      # loop domain [1024, 4096]
    s.merge(0).split(0, 512).split(1, 4) # [8192, 128, 4]
    s.parallelize(0, "BIDx").parallelize(1, "TIDx").parallelize(2, "vectorize")
    s.emit()

gives (types elided)::

    %i0, %i1 = iterdomain.logical %t
    %m = iterdomain.merge %i0, %i1
    %o, %i = iterdomain.split %m by 512
    %o2, %i2 = iterdomain.split %i by 4
    %bx = iterdomain.parallelize %o to BIDx
    %tx = iterdomain.parallelize %o2 to TIDx
    %v = iterdomain.parallelize %i2 to vectorize
    iterdomain.loop %t [%bx, %tx, %v]

``emit_reshape_view`` writes a ``fuser.reshape``'s ``#fuser.view`` as splits and
merges of its root domain (seed 003). ``loop_structure`` reads a scheduled tensor
back: its loop ids, and each logical (and root) axis index as an ``Expr`` of the
loop indices ``i0, i1, ...`` that codegen can print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from fuser.ir.dialects.fuser import FusionOp, ReshapeOp, TensorType
from fuser.ir.dialects.iterdomain import (
    AlignOp,
    IterDomainType,
    IterType,
    LogicalOp,
    LoopOp,
    MergeOp,
    ParallelizeOp,
    ParallelType,
    ResizeOp,
    ReverseOp,
    RfactorOp,
    RootOp,
    SplitOp,
    domain_of,
    logical_to_tensor_axes,
    trace_domain,
    users_of,
)
from fuser.ir.reshape_analysis import ReshapeStep
from fuser.ir.shapes import DYN, ShapeError, normalize_dim

# =====================================================================================
# Index expressions
# =====================================================================================


@dataclass(frozen=True)
class Expr:
    """An integer index expression: ``Const``, ``Var`` or ``BinOp``."""

    def evaluate(self, env: Mapping[str, int]) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def __add__(self, other: Expr | int) -> Expr:
        return _bin("+", self, _lift(other))

    def __sub__(self, other: Expr | int) -> Expr:
        return _bin("-", self, _lift(other))

    def __mul__(self, other: Expr | int) -> Expr:
        return _bin("*", self, _lift(other))

    def __floordiv__(self, other: Expr | int) -> Expr:
        return _bin("/", self, _lift(other))

    def __mod__(self, other: Expr | int) -> Expr:
        return _bin("%", self, _lift(other))


@dataclass(frozen=True)
class Const(Expr):
    value: int

    def evaluate(self, env: Mapping[str, int]) -> int:
        return self.value

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Var(Expr):
    """A loop index ``i<k>`` or a symbolic extent ``N<k>`` (root: ``R<k>``)."""

    name: str

    def evaluate(self, env: Mapping[str, int]) -> int:
        return env[self.name]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class BinOp(Expr):
    """``lhs op rhs`` with ``op`` one of ``+ - * / %`` (``/`` and ``%`` on non-negative
    integers, as C's) or ``ceilDiv``."""

    op: str
    lhs: Expr
    rhs: Expr

    def evaluate(self, env: Mapping[str, int]) -> int:
        return fold_op(self.op, self.lhs.evaluate(env), self.rhs.evaluate(env))

    def __str__(self) -> str:
        if self.op == "ceilDiv":
            return f"ceilDiv({self.lhs}, {self.rhs})"
        return f"({self.lhs} {self.op} {self.rhs})"


def _lift(x: Expr | int) -> Expr:
    return x if isinstance(x, Expr) else Const(x)


def fold_op(op: str, a: int, b: int) -> int:
    """``a op b`` on ints (``ceilDiv`` as ``(a + b - 1) / b``: a ``SymInt`` keeps its formula)."""
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a // b
    if op == "%":
        return a % b
    return (a + b - 1) // b if a >= 0 and b > 0 else -(-a // b)


def _bin(op: str, a: Expr, b: Expr) -> Expr:
    """Build ``a op b``, folding constants and identities."""
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(fold_op(op, a.value, b.value))
    one, zero = Const(1), Const(0)
    if op == "+" and b == zero or op == "-" and b == zero:
        return a
    if op == "+" and a == zero:
        return b
    if op == "*":
        if a == zero or b == zero:
            return zero
        if b == one:
            return a
        if a == one:
            return b
    if op in ("/", "ceilDiv") and b == one:
        return a
    if op == "%" and b == one:
        return zero
    if op in ("/", "%", "ceilDiv") and a == zero:
        return zero
    return BinOp(op, a, b)


def ceil_div_expr(a: Expr, b: Expr) -> Expr:
    return _bin("ceilDiv", a, b)


# =====================================================================================
# The schedule builder
# =====================================================================================


def _fusion_block(tensor: SSAValue) -> Block:
    if isinstance(tensor, BlockArgument):
        block = tensor.block
    else:
        assert isinstance(tensor.owner, Operation)
        block = tensor.owner.parent_block()
    if block is None or not isinstance(block.parent_op(), FusionOp):
        raise ValueError("the tensor is not a value of a fuser.fusion body")
    return block


def _insert_and_verify(block: Block, ops: Sequence[Operation], verify: bool = True) -> None:
    """Insert ``ops`` before the fusion's ``fuser.output`` and verify them (unless
    ``verify`` is false: the caller knows ops of exactly these types verified); when
    one does not verify, remove them all again and re-raise."""
    term = block.last_op
    assert term is not None
    block.insert_ops_before(list(ops), term)
    if not verify:
        return
    try:
        for op in ops:
            op.verify()
    except Exception:
        for op in reversed(ops):
            op.detach()
            op.erase()
        raise


class Schedule:
    """Builds a tensor's loop domain; see the module docstring.

    Axes are positions in the current loop domain (negative counts from the
    innermost). Each method returns ``self`` so calls chain.
    """

    def __init__(self, tensor: SSAValue) -> None:
        if not isinstance(tensor.type, TensorType):
            raise ValueError(f"Schedule needs a !fuser.tensor value, got {tensor.type}")
        self.tensor = tensor
        self.block = _fusion_block(tensor)
        if users_of(tensor, LoopOp):
            raise ValueError("the tensor already has an iterdomain.loop")
        self.ops: list[Operation] = []
        _, logical = domain_of(tensor)
        if not logical:
            op = LogicalOp(tensor)
            self.ops.append(op)
            logical = list(op.ids)
        self.ids: list[SSAValue] = list(logical)
        self._emitted = False

    # ---- queries ------------------------------------------------------------------
    def _type(self, axis: int) -> IterDomainType:
        t = self.ids[self._axis(axis)].type
        assert isinstance(t, IterDomainType)
        return t

    def _axis(self, axis: int) -> int:
        try:
            return normalize_dim(axis, len(self.ids), "loop axis")
        except ShapeError as e:
            raise ValueError(str(e)) from e

    @property
    def extents(self) -> list[int]:
        return [self._type(i).extent for i in range(len(self.ids))]

    @property
    def types(self) -> list[IterDomainType]:
        return [self._type(i) for i in range(len(self.ids))]

    def _add(self, op: Operation) -> Operation:
        if self._emitted:
            raise ValueError("the schedule was already emitted")
        self.ops.append(op)
        return op

    # ---- transforms ---------------------------------------------------------------
    def split(self, axis: int, factor: int, inner_split: bool = True) -> Schedule:
        """Replace ``axis`` by (outer, inner); ``factor`` is the inner extent (outer
        when ``inner_split`` is false)."""
        if factor <= 0:
            raise ValueError(f"split factor {factor} must be positive")
        a = self._axis(axis)
        op = self._add(SplitOp(self.ids[a], factor, inner_split))
        self.ids[a : a + 1] = [op.outer, op.inner]
        return self

    def merge(self, axis: int, other: int | None = None) -> Schedule:
        """Merge ``other`` (default ``axis + 1``) into ``axis``, ``axis`` outer."""
        a = self._axis(axis)
        b = a + 1 if other is None else self._axis(other)
        if a == b or b >= len(self.ids):
            raise ValueError(f"cannot merge loop axis {a} with loop axis {b}")
        op = self._add(MergeOp(self.ids[a], self.ids[b]))
        self.ids[a] = op.result
        del self.ids[b]
        return self

    def reorder(self, order: Sequence[int]) -> Schedule:
        """New loop axis ``k`` is old axis ``order[k]``."""
        axes = [self._axis(o) for o in order]
        if sorted(axes) != list(range(len(self.ids))):
            raise ValueError(f"reorder {list(order)} is not a permutation of {len(self.ids)} axes")
        self.ids = [self.ids[o] for o in axes]
        return self

    def resize(self, axis: int, left: int, right: int) -> Schedule:
        a = self._axis(axis)
        op = self._add(ResizeOp(self.ids[a], left, right))
        self.ids[a] = op.result
        return self

    def view(self, steps: Sequence[ReshapeStep]) -> Schedule:
        """Replay a reshape's keep/merge/split ``steps`` (resolved sizes) on the whole
        loop domain, as ``emit_reshape_view`` does from the root: the loop domain
        becomes the reshape result's shape (nvFuser replays a consumer's reshape on
        its producer this way)."""
        try:
            ops, ids = view_transforms(self.ids, steps)
        except ShapeError as e:
            raise ValueError(str(e)) from e
        for op in ops:
            self._add(op)
        self.ids = ids
        return self

    def reverse(self, axis: int) -> Schedule:
        """Walk ``axis`` backwards (``iterdomain.reverse``)."""
        a = self._axis(axis)
        op = self._add(ReverseOp(self.ids[a]))
        self.ids[a] = op.result
        return self

    def align(self, axis: int, factor: int) -> Schedule:
        """Shift ``axis`` (the innermost logical id, untransformed) so that its places
        start each row at a multiple of ``factor`` in row-major order
        (``iterdomain.align``)."""
        a = self._axis(axis)
        op = self._add(AlignOp(self.ids[a], factor))
        self.ids[a] = op.result
        return self

    def parallelize(self, axis: int, ptype: ParallelType | str, clustered: bool = False) -> Schedule:
        """Bind ``axis`` to ``ptype`` (a block type with ``clustered``: its blocks are
        one thread-block cluster)."""
        a = self._axis(axis)
        op = self._add(ParallelizeOp(self.ids[a], ParallelType(ptype), clustered))
        self.ids[a] = op.result
        return self

    def emit(self, verify: bool = True) -> LoopOp:
        """Insert the ops and the ``iterdomain.loop`` before ``fuser.output``; the
        result is verified (bad schedules raise ``VerifyException``) unless ``verify``
        is false (the same transforms on the same logical domain types verified
        before: the outcome is the same)."""
        loop = LoopOp(self.tensor, self.ids)
        self._add(loop)
        self._emitted = True
        _insert_and_verify(self.block, self.ops, verify)
        return loop


# =====================================================================================
# Reshape as transforms (seed 003)
# =====================================================================================


def view_transforms(
    in_ids: Sequence[SSAValue], steps: Sequence[ReshapeStep]
) -> tuple[list[Operation], list[SSAValue]]:
    """Replay reshape steps (with resolved sizes) on ids: keep passes an id, merge
    merges ids, split splits off outer sizes first (``split by 2`` of 40 gives 2, 20),
    merge_split does both. A squeezed extent-1 id is merged into the next output id
    (or the previous one), and a broadcast extent-1 axis is split off an adjacent
    output id by 1, so every root id is consumed exactly once.

    Returns the new ops and the output ids. Raises ShapeError when the steps do not
    fit the ids or the reshape has no non-trivial axis to attach unit axes to.
    """
    ops: list[Operation] = []

    def split(v: SSAValue, factor: int, inner_split: bool) -> tuple[SSAValue, SSAValue]:
        op = SplitOp(v, factor, inner_split)
        ops.append(op)
        return op.outer, op.inner

    def merge(a: SSAValue, b: SSAValue) -> SSAValue:
        op = MergeOp(a, b)
        ops.append(op)
        return op.result

    # out is the output ids; None marks a broadcast axis that still needs an id.
    out: list[SSAValue | None] = []
    pending_squeeze: list[SSAValue] = []
    i = 0
    for step in steps:
        ids = list(in_ids[i : i + step.num_inputs])
        if len(ids) != step.num_inputs:
            raise ShapeError(
                f"reshape step '{step}' needs {step.num_inputs} ids, {len(ids)} remain"
            )
        i += step.num_inputs
        if step.kind == "squeeze":
            pending_squeeze.append(ids[0])
            continue
        if step.kind == "broadcast":
            out.append(None)
            continue
        v = ids[0]
        for w in ids[1:]:
            v = merge(v, w)
        pieces: list[SSAValue] = []
        for size in step.out_sizes[:-1]:
            if size <= 0:
                raise ShapeError(f"reshape step '{step}' splits off an axis of extent {size}")
            o, v = split(v, size, inner_split=False)
            pieces.append(o)
        pieces.append(v)
        for sq in pending_squeeze:
            pieces[0] = merge(sq, pieces[0])
        pending_squeeze.clear()
        out.extend(pieces)
    if i != len(in_ids):
        raise ShapeError(f"reshape steps consume {i} ids but there are {len(in_ids)}")
    real = [k for k, v in enumerate(out) if v is not None]
    if not real and (pending_squeeze or out):
        raise ShapeError("a reshape of only extent-1 axes has no id to carry them")
    if pending_squeeze:
        last = real[-1]
        v = out[last]
        assert v is not None
        for sq in pending_squeeze:
            v = merge(v, sq)
        out[last] = v
    for k in range(len(out)):
        if out[k] is not None:
            continue
        # split a unit axis off the nearest real output id (to the right if any).
        right = [r for r in range(k + 1, len(out)) if out[r] is not None]
        if right:
            r = right[0]
            v = out[r]
            assert v is not None
            unit, rest = split(v, 1, inner_split=False)
            out[k], out[r] = unit, rest
        else:
            left = [r for r in range(k) if out[r] is not None]
            r = left[-1]
            v = out[r]
            assert v is not None
            rest, unit = split(v, 1, inner_split=True)
            out[r], out[k] = rest, unit
    return ops, [v for v in out if v is not None]


def emit_reshape_view(reshape: ReshapeOp) -> RfactorOp:
    """Write ``reshape``'s ``#fuser.view`` as ``iterdomain.root``, splits and merges
    and ``iterdomain.rfactor`` before the fusion's ``fuser.output``."""
    in_t = reshape.input.type
    if reshape.view is None or not isinstance(in_t, TensorType):
        raise ValueError("the reshape has no static #fuser.view (run concretization first)")
    if users_of(reshape.result, RootOp) or users_of(reshape.result, RfactorOp):
        raise ValueError("the reshape already has an iterdomain.root or iterdomain.rfactor")
    root = RootOp(reshape.result)
    ops, out = view_transforms(list(root.ids), reshape.view.resolved_steps(in_t.get_shape()))
    rf = RfactorOp(reshape.result, out)
    _insert_and_verify(_fusion_block(reshape.result), [root, *ops, rf])
    return rf


# =====================================================================================
# Reading a schedule back
# =====================================================================================


@dataclass(frozen=True)
class LoopAxis:
    """One loop of a scheduled tensor: index variable ``i<position>``."""

    value: SSAValue = field(compare=False)
    extent: Expr
    iter_type: IterType
    parallel_type: ParallelType
    clustered: bool = False
    """Its blocks are one thread-block cluster (``!iterdomain.id<.., BIDx, clustered>``)."""

    @property
    def static_extent(self) -> int | None:
        return self.extent.value if isinstance(self.extent, Const) else None


@dataclass(frozen=True)
class DomainAxis:
    """A logical (or root) id of the tensor and its index in terms of loop indices.

    The loops cover ``[0, extent)`` of each axis at least once and exactly once
    inside the bounds; an iteration whose ``index`` falls outside ``[0, extent)``
    (a non-divisible split, a resize) must be predicated off."""

    value: SSAValue = field(compare=False)
    extent: Expr
    iter_type: IterType
    index: Expr
    tensor_axis: int | None
    """The tensor axis this id indexes (None: a reduction axis the type drops)."""


@dataclass(frozen=True)
class LoopStructure:
    loops: list[LoopAxis]
    logical: list[DomainAxis]
    root: list[DomainAxis]
    """For a reshape result with ``iterdomain.rfactor``: the root ids, indexing the
    reshape's input axes; empty otherwise."""

    def index_env(
        self, loop_indices: Sequence[int], extents: Mapping[str, int] | None = None
    ) -> dict[str, int]:
        """The evaluation environment for ``Expr.evaluate``: loop indices (and
        symbolic extents)."""
        env = dict(extents or {})
        env.update({f"i{k}": v for k, v in enumerate(loop_indices)})
        return env


def find_loop_op(fusion: FusionOp, tensor: SSAValue) -> LoopOp | None:
    """The (first) ``iterdomain.loop`` of ``tensor`` in ``fusion``'s body, found
    among the tensor's uses rather than by a walk of the whole body."""
    block = fusion.body.block
    found = [
        u.operation
        for u in tensor.uses
        if isinstance(u.operation, LoopOp) and u.operation.parent is block and u.operation.tensor is tensor
    ]
    if len(found) <= 1:
        return found[0] if found else None
    for op in block.ops:  # several: the first in the body
        if isinstance(op, LoopOp) and op.tensor is tensor:
            return op
    return None


def drop_schedule(fusion: FusionOp) -> None:
    """Erase every ``iterdomain`` op of ``fusion`` (a partly written schedule too)."""
    block = fusion.body.block
    for op in reversed(list(block.ops)):
        if op.dialect_name() == "iterdomain":
            block.erase_op(op)


def bind_expr(e: Expr, env: Mapping[str, int]) -> Expr:
    """``e`` with the variables of ``env`` replaced by their values, folded."""
    if isinstance(e, Var) and e.name in env:
        return Const(env[e.name])
    if isinstance(e, BinOp):
        return _bin(e.op, bind_expr(e.lhs, env), bind_expr(e.rhs, env))
    return e


def loop_structure(
    fusion: FusionOp, tensor: SSAValue, shapes: Mapping[SSAValue, Sequence[int]] | None = None
) -> LoopStructure:
    """The loops of a scheduled ``tensor`` and how each logical (and root) axis
    index is computed from the loop indices ``i0, i1, ...`` (outermost first).
    Symbolic extents are ``N<k>`` for logical axis ``k`` (``R<k>`` for root axis ``k``
    of a reshape result); with ``shapes`` (the tensors' concrete shapes, as a lowering
    for given inputs knows them) they are bound to their values, so a schedule written
    on symbolic types lowers at concrete sizes. Raises ValueError when the tensor has
    no loop domain."""
    owner = tensor.owner
    sources = [shapes.get(tensor, ())] if shapes is not None else []
    if shapes is not None and isinstance(owner, Operation) and owner.operands:
        sources.append(shapes.get(owner.operands[0], ()))
    # Symbolic extents (fuser.ir.symbolic's SymInt, an int subclass built on this
    # module's Expr): every first-domain extent is a variable, bound below from the
    # shapes, so that the formulas of the SymInts there carry on.
    symbolic = any(isinstance(d, int) and type(d) is not int for src in sources for d in src)
    ls = _loop_structure(fusion, tensor, all_vars=symbolic)
    if shapes is None:
        return ls
    env: dict[str, int] = {}
    if symbolic:
        base, prefix = (ls.root, "R") if ls.root else (ls.logical, "N")
        for k, a in enumerate(base):
            t = a.value.type
            if isinstance(t, IterDomainType) and t.extent != DYN:
                env[f"{prefix}{k}"] = t.extent
    for k, a in enumerate(ls.logical):
        if a.iter_type == IterType.reduction:  # a reduced id: the reduction input's axis
            if isinstance(owner, Operation) and owner.operands and owner.operands[0] in shapes:
                env[f"N{k}"] = _extent(shapes[owner.operands[0]][k])
        elif a.tensor_axis is not None and tensor in shapes:
            env[f"N{k}"] = _extent(shapes[tensor][a.tensor_axis])
    if ls.root and isinstance(owner, Operation) and owner.operands[0] in shapes:
        env.update({f"R{k}": _extent(e) for k, e in enumerate(shapes[owner.operands[0]])})
    return LoopStructure(
        loops=[replace(a, extent=bind_expr(a.extent, env)) for a in ls.loops],
        logical=[replace(a, extent=bind_expr(a.extent, env), index=bind_expr(a.index, env)) for a in ls.logical],
        root=[replace(a, extent=bind_expr(a.extent, env), index=bind_expr(a.index, env)) for a in ls.root],
    )


def row_major_offset(indices: Sequence[Expr], extents: Sequence[Expr]) -> Expr:
    """The row-major position of the first element of a row: ``indices`` of the outer
    axes times the extents after each (``extents`` of every axis, the innermost
    last)."""
    out: Expr = Const(0)
    for k, e in enumerate(indices):
        stride: Expr = Const(1)
        for x in extents[k + 1 :]:
            stride = stride * x
        out = out + e * stride
    return out


def aligned_index(place: Expr, shift: Expr, factor: int) -> Expr:
    """The column an aligned place (``iterdomain.align``) stands for: ``place`` less
    the row's shift, ``shift`` (its row-major offset) modulo ``factor``."""
    return place - shift % factor


def _extent(e: object) -> int:
    """A concrete extent: an int as given (a ``SymInt`` keeps its formula)."""
    return e if isinstance(e, int) else int(e)  # type: ignore[call-overload]


def _loop_structure(fusion: FusionOp, tensor: SSAValue, all_vars: bool = False) -> LoopStructure:
    loop = find_loop_op(fusion, tensor)
    if loop is None:
        raise ValueError("the tensor has no iterdomain.loop in this fusion")
    loop.verify()
    root, logical = domain_of(tensor)
    loop_ids = list(loop.ids)
    ops = trace_domain(loop, logical, loop_ids, "logical domain")
    if root:
        ops = trace_domain(loop, root, logical, "root domain") + ops

    def ty(v: SSAValue) -> IterDomainType:
        t = v.type
        assert isinstance(t, IterDomainType)
        return t

    # extents, forward from the first domain
    extent: dict[SSAValue, Expr] = {}
    base, prefix = (root, "R") if root else (logical, "N")
    for k, v in enumerate(base):
        extent[v] = Var(f"{prefix}{k}") if all_vars or ty(v).extent == DYN else Const(ty(v).extent)
    for op in ops:
        if isinstance(op, SplitOp):
            f = Const(op.factor_value)
            rest = ceil_div_expr(extent[op.input], f)
            extent[op.outer], extent[op.inner] = (rest, f) if op.is_inner_split else (f, rest)
        elif isinstance(op, MergeOp):
            extent[op.result] = extent[op.outer] * extent[op.inner]
        elif isinstance(op, ResizeOp):
            extent[op.result] = extent[op.input] + (op.left_value + op.right_value)
        elif isinstance(op, ReverseOp):
            extent[op.result] = extent[op.input]
        elif isinstance(op, AlignOp):
            extent[op.result] = extent[op.input] + (op.factor_value - 1)
        elif isinstance(op, ParallelizeOp):
            extent[op.result] = extent[op.input]
    # indices, backward from the loops
    index: dict[SSAValue, Expr] = {v: Var(f"i{k}") for k, v in enumerate(loop_ids)}
    for op in reversed(ops):
        if isinstance(op, SplitOp):
            index[op.input] = index[op.outer] * extent[op.inner] + index[op.inner]
        elif isinstance(op, MergeOp):
            m, e = index[op.result], extent[op.inner]
            index[op.outer], index[op.inner] = m // e, m % e
        elif isinstance(op, ResizeOp):
            index[op.input] = index[op.result] - op.left_value
        elif isinstance(op, ReverseOp):
            index[op.input] = (extent[op.input] - 1) - index[op.result]
        elif isinstance(op, ParallelizeOp):
            index[op.input] = index[op.result]
    # An aligned id's index subtracts its row's shift, which reads the other logical
    # ids' indices: known once every loop index is propagated (the input of an
    # ``iterdomain.align`` is a logical id, so nothing else reads its index).
    for op in ops:
        if isinstance(op, AlignOp):
            if root:
                raise ValueError("iterdomain.align in the loop domain of a reshape result (with iterdomain.root)")
            others = logical[:-1]
            shift = row_major_offset([index[v] for v in others], [extent[v] for v in logical])
            index[op.input] = aligned_index(index[op.result], shift, op.factor_value)

    axes = logical_to_tensor_axes(tensor) if not root else list(range(len(logical)))
    return LoopStructure(
        loops=[LoopAxis(v, extent[v], ty(v).iter_type, ty(v).parallel_type, ty(v).clustered) for v in loop_ids],
        logical=[
            DomainAxis(v, extent[v], ty(v).iter_type, index[v], axes[k])
            for k, v in enumerate(logical)
        ],
        root=[DomainAxis(v, extent[v], ty(v).iter_type, index[v], k) for k, v in enumerate(root)],
    )


__all__ = [
    "BinOp",
    "Const",
    "DomainAxis",
    "Expr",
    "LoopAxis",
    "LoopStructure",
    "Schedule",
    "Var",
    "aligned_index",
    "bind_expr",
    "drop_schedule",
    "emit_reshape_view",
    "fold_op",
    "find_loop_op",
    "loop_structure",
    "row_major_offset",
    "view_transforms",
]
