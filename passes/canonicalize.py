"""``canonicalize``: local simplifications of fuser tensor IR.

The patterns, each one local to an op and its producer:

* identity views fold away: a ``reshape``/``expand``/``broadcast_in_dim`` to the
  input's own shape, a ``permute`` by the identity, a ``squeeze`` or ``broadcast``
  of no axis, a ``slice`` that keeps everything, a ``pad`` by zero;
* a ``cast`` to the input's dtype folds away; ``cast(cast(x : A) : B) : C`` becomes
  ``cast(x : A) : C`` when ``A -> B`` loses nothing (``f16 -> f32 -> f64`` is
  ``f16 -> f64``, ``f16 -> f32 -> f16`` is ``x``; ``f32 -> f16 -> f32`` stays);
* ``set(set(x))`` is ``set(x)``;
* ``reshape(reshape(x))`` is one reshape of ``x`` (its keep/merge/split view is
  recomputed); ``permute(permute(x, p), q)`` is ``permute(x, [p[i] for i in q])``;
* pure ops whose results are unused are erased (``region_dce``).

xDSL's own canonicalization patterns (ops with ``HasCanonicalizationPatternsTrait``)
also run, so this pass can stand in for upstream ``canonicalize`` in ``fuser-opt``.

Before::

    %1 = fuser.reshape %0 {new_shape = array<i64: 64, 128, 3072>, ...}
        : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
    %2 = fuser.reshape %1 {new_shape = array<i64: 8192, 3072>, ...}
        : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
    %3 = fuser.cast %2 : (!fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf64>
    %4 = fuser.cast %3 : (!fuser.tensor<8192x3072xf64>) -> !fuser.tensor<8192x3072xf32>
    fuser.output %4 : !fuser.tensor<8192x3072xf32>

After::

    fuser.output %0 : !fuser.tensor<8192x3072xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from fuser.ir.dialects.fuser import (
    BroadcastInDimOp,
    BroadcastOp,
    CastOp,
    ExpandOp,
    PadOp,
    PermuteOp,
    ReshapeOp,
    SetOp,  # type: ignore[attr-defined]
    SliceOp,
    SqueezeOp,
    TensorType,
    dtype_of,
)
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN

_COMPLEX = (DType.complex64, DType.complex128)
LOSSLESS_CASTS: dict[DType, frozenset[DType]] = {
    DType.bool: frozenset(DType),
    DType.int32: frozenset({DType.int32, DType.int64, DType.float64, DType.complex128}),
    DType.int64: frozenset({DType.int64}),
    DType.float16: frozenset({DType.float16, DType.float32, DType.float64, *_COMPLEX}),
    DType.bfloat16: frozenset({DType.bfloat16, DType.float32, DType.float64, *_COMPLEX}),
    DType.float32: frozenset({DType.float32, DType.float64, *_COMPLEX}),
    DType.float64: frozenset({DType.float64, DType.complex128}),
    DType.float8_e4m3fn: frozenset(
        {DType.float8_e4m3fn, DType.float16, DType.bfloat16, DType.float32, DType.float64, *_COMPLEX}
    ),
    DType.float8_e5m2: frozenset(
        {DType.float8_e5m2, DType.float16, DType.bfloat16, DType.float32, DType.float64, *_COMPLEX}
    ),
    DType.complex64: frozenset(_COMPLEX),
    DType.complex128: frozenset({DType.complex128}),
}
"""``LOSSLESS_CASTS[a]``: the dtypes that represent every value of ``a`` exactly."""


def is_lossless(src: DType, dst: DType) -> bool:
    return dst in LOSSLESS_CASTS[src]


def _same_static_shape(a: SSAValue, b: SSAValue) -> bool:
    """Both tensors with the same fully static shape (and so the same extents)."""
    ta, tb = a.type, b.type
    return (
        isinstance(ta, TensorType)
        and isinstance(tb, TensorType)
        and DYN not in ta.get_shape()
        and ta.get_shape() == tb.get_shape()
        and ta.element_type == tb.element_type
    )


def _forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> None:
    """Replace ``op`` (one result) by an existing value."""
    rewriter.replace(op, [], [value])


class FoldIdentityView(RewritePattern):
    """Views that leave a static shape unchanged are the identity."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, ReshapeOp | ExpandOp | BroadcastInDimOp):
            if isinstance(op, BroadcastInDimOp):
                rank = len(op.shape.get_values())
                if list(op.broadcast_dims.get_values()) != list(range(rank)):
                    return
            if not op.sizes and _same_static_shape(op.input, op.result):
                _forward(rewriter, op, op.input)
        elif isinstance(op, PermuteOp):
            if op.get_dims() == list(range(len(op.get_dims()))):
                _forward(rewriter, op, op.input)
        elif isinstance(op, SqueezeOp):
            if not op.get_dims():
                _forward(rewriter, op, op.input)
        elif isinstance(op, BroadcastOp):
            if not any(op.get_flags()):
                _forward(rewriter, op, op.input)
        elif isinstance(op, SliceOp | PadOp):
            if isinstance(op, SliceOp) and any(s != 1 for s in op.strides.get_values()):
                return
            if isinstance(op, PadOp) and any(w != 0 for w in op.widths.get_values()):
                return
            if _same_static_shape(op.input, op.result):
                _forward(rewriter, op, op.input)


class FoldIdentityCast(RewritePattern):
    """``cast`` to the dtype it already has."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /) -> None:
        if dtype_of(op.input.type) == dtype_of(op.result.type):
            _forward(rewriter, op, op.input)


class FoldLosslessCastChain(RewritePattern):
    """``cast(cast(x : A) : B) : C`` -> ``cast(x : A) : C`` when ``A -> B`` is exact."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input.owner
        if not isinstance(inner, CastOp):
            return
        src = dtype_of(inner.input.type)
        if not is_lossless(src, dtype_of(inner.result.type)):
            return
        rewriter.replace(op, CastOp(inner.input, dtype_of(op.result.type)))


class FoldSetOfSet(RewritePattern):
    """``set(set(x))`` -> ``set(x)``: one copy is enough."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SetOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(op.input.owner, SetOp):
            _forward(rewriter, op, op.input)


class FoldReshapeOfReshape(RewritePattern):
    """``reshape(reshape(x, s1), s2)`` -> ``reshape(x, s2)``, view recomputed."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input.owner
        if not isinstance(inner, ReshapeOp):
            return
        new_shape = list(op.new_shape.get_values())
        rewriter.replace(op, ReshapeOp(inner.input, new_shape, list(op.sizes)))


class FoldPermuteOfPermute(RewritePattern):
    """``permute(permute(x, p), q)`` -> ``permute(x, [p[i] for i in q])``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PermuteOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input.owner
        if not isinstance(inner, PermuteOp):
            return
        p = inner.get_dims()
        rewriter.replace(op, PermuteOp(inner.input, [p[i] for i in op.get_dims()]))


FUSER_CANONICALIZATION_PATTERNS: tuple[type[RewritePattern], ...] = (
    FoldIdentityView,
    FoldIdentityCast,
    FoldLosslessCastChain,
    FoldSetOfSet,
    FoldReshapeOfReshape,
    FoldPermuteOfPermute,
)


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    """Apply fuser's (and xDSL's) canonicalization patterns to a fixpoint, then
    erase dead pure ops."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        patterns: list[RewritePattern] = [p() for p in FUSER_CANONICALIZATION_PATTERNS]
        patterns.append(CanonicalizationRewritePattern())
        PatternRewriteWalker(
            GreedyRewritePatternApplier(patterns, ctx=ctx, folding_enabled=True),
            post_walk_func=region_dce,
        ).rewrite_module(op)
