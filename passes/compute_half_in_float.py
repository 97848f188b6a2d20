"""``compute-half-in-float``: compute chains of half-precision elementwise ops in
float32, rounding only where a value leaves the chain.

A ``fuser.mul`` of two ``bf16`` tensors has a ``bf16`` result: the reference rounds it
(torch eager does, op by op), and a kernel emulates that rounding after every op (a
float32 -> bfloat16 -> float32 conversion, on the GPU's quarter-rate conversion unit).
GPT-2's GELU backward is 20 such ops an element; its kernel was bound by the
conversions (68 us against a 16 us memory time, H200). Inductor computes such chains
in float32 and rounds once (``emulate_precision_casts`` off); nvFuser's frontends
write the casts explicitly. This pass does the same in the IR: every elementwise op
and view whose result is ``f16``/``bf16`` and that reads a value of such a chain is
computed in ``f32`` on the chain's float32 values; a ``cast`` of a chain value to
``f32`` is that float32 value (no rounding); any other use (a fusion output, a
reduction, a matmul, a cast to another type) reads the value rounded once::

    %1 = fuser.mul %0, %0 : (!fuser.tensor<8xbf16>, !fuser.tensor<8xbf16>) -> !fuser.tensor<8xbf16>
    %2 = fuser.tanh %1 : (!fuser.tensor<8xbf16>) -> !fuser.tensor<8xbf16>
    fuser.output %2 : !fuser.tensor<8xbf16>

becomes::

    %3 = fuser.cast %0 : (!fuser.tensor<8xbf16>) -> !fuser.tensor<8xf32>
    %4 = fuser.mul %3, %3 : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
    %5 = fuser.tanh %4 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
    %6 = fuser.cast %5 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xbf16>
    fuser.output %6 : !fuser.tensor<8xbf16>

It changes results: they are the float32 chain's, rounded once, which is at least as
accurate as eager's rounding after every op but not bit for bit eager's. So it is not
in the default pipeline; the torch.compile backend runs it after ``segment``, on each
segment fusion (values between kernels keep their dtype), as inductor computes its
kernels; ``FUSER_HALF_IN_FLOAT=0`` in the environment turns that off.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.rebuild import rebuilt

HALF = (DType.float16, DType.bfloat16)


def _half(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, F.TensorType) and t.dtype in HALF


def _in_chain(op: Operation) -> bool:
    """An op the pass computes in float32: a half-precision elementwise op (or a
    view) of one result."""
    return len(op.results) == 1 and _half(op.results[0]) and isinstance(op, (F.ElementwiseOp, *F.VIEW_OPS))


class ComputeChainsInFloat(RewritePattern):
    """The rewrite of one fusion's body, in program order (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, fusion: F.FusionOp, rewriter: PatternRewriter) -> None:
        block = fusion.body.block
        wide: dict[SSAValue, SSAValue] = {}  # a half value -> its float32 value
        created: list[Operation] = []

        def widened(v: SSAValue, before: Operation) -> SSAValue:
            if v not in wide:
                cast = F.CastOp(v, DType.float32)
                rewriter.insert(cast, InsertPoint.before(before))
                created.append(cast)
                wide[v] = cast.results[0]
            return wide[v]

        for op in list(block.ops):
            if isinstance(op, F.CastOp) and op.input in wide and F.dtype_of(op.result.type) is DType.float32:
                rewriter.replace_all_uses_with(op.result, wide[op.input])  # the chain's value, unrounded
                rewriter.erase(op)
                continue
            if not _in_chain(op):
                continue
            if isinstance(op, F.VIEW_OPS) and op.operands[0] not in wide:
                continue  # a view of a value no chain computed
            if not any(_half(v) for v in op.operands):
                continue
            operands = [widened(v, op) if _half(v) else v for v in op.operands]
            res = op.results[0].type
            assert isinstance(res, F.TensorType)
            new = rebuilt(op, operands=operands, result_types=[res.with_dtype(DType.float32)])
            rounded = F.CastOp(new.results[0], res.dtype)
            rewriter.insert([new, rounded], InsertPoint.before(op))
            created.append(rounded)
            rewriter.replace_all_uses_with(op.results[0], rounded.results[0])
            rewriter.erase(op)
            wide[rounded.results[0]] = new.results[0]
        for op in reversed(created):  # roundings and widenings nothing reads
            if not op.results[0].uses:
                rewriter.erase(op)


@dataclass(frozen=True)
class ComputeHalfInFloat(ModulePass):
    """Half-precision elementwise chains computed in float32, rounded once."""

    name = "compute-half-in-float"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ComputeChainsInFloat(), apply_recursively=False).rewrite_module(op)
