"""``pipeline-loads{max_bytes=N}``: in kernel IR, every loop that waits for other
threads (a block or warp reduction, a barrier) loads its next iteration's inputs into
registers at the top of each iteration and carries them into it; the first
iteration's are loaded before the loop (``fuser.codegen.pipeline_loads``; a loop done
once carries ``{kernel.pipelined}`` and is not done again). ``max_bytes`` caps what a
thread carries per loop (its first loads in program order that fit; 0, the default:
no cap). An experiment, off in the lowering unless ``FUSER_PIPELINE_LOADS=1``: on the
H200 only the f32 4096 x 4096 layer-norm backward with 512 threads a row gained (71.2
-> 67.4 us); with the heuristic's schedules the carried rows cost more registers than
the latency they hide (``benchmarks/RESULTS.md``, twentieth session).

Before::

    scf.for %i = %c0 to %c4 step %c1 {
      %row = arith.addi %base, %i : index
      %p = arith.cmpi slt, %row, %rows : index
      %v = scf.if %p -> (f32) {
        %off = arith.addi %rowoff, %tidx : index    // %rowoff = %row * 32
        %xv = memref.load %x[%off] : memref<?xf32>
        scf.yield %xv : f32
      } else { scf.yield %zero : f32 }
      %s = kernel.block_reduce %v {kind = "add", dims = array<i64: 0>} : (f32) -> f32
      ...
    }

After::

    %more = arith.cmpi slt, %c0, %c4 : index
    ...                                             // the row, guard and offset at %c0
    %xv_first = scf.if (%more && %p_first) -> (f32) {
      memref.load %x[%off_first] } else { 0.0 }
    scf.for %i = %c0 to %c4 step %c1 iter_args(%xv_cur = %xv_first) -> (f32) {
      %next = arith.addi %i, %c1 : index
      %more_1 = arith.cmpi slt, %next, %c4 : index
      ...                                           // at %next
      %xv_next = scf.if (%more_1 && %p_next) -> (f32) {
        memref.load %x[%off_next] } else { %xv_cur }
      ...                                           // the body, reading %xv_cur
      scf.yield %xv_next : f32
    } {kernel.pipelined}

What every thread computes and stores is unchanged; each carried value is loaded
under the conditions its load had, one iteration early.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from fuser.codegen.pipeline_loads import pipeline_loop, waits
from fuser.ir.dialects import kernel as k


@dataclass(frozen=True)
class PipelineLoopLoads(RewritePattern):
    """A kernel's loop that waits for other threads carries its next iteration's loads
    (the loop is replaced by one with more iteration arguments, or only marked)."""

    max_bytes: int | None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        func = k.enclosing_kernel(op)
        if func is None or not waits(op):
            return
        if not pipeline_loop(op, k.written_tensors(func), self.max_bytes, rewriter):
            rewriter.notify_op_modified(op)  # marked only


@dataclass(frozen=True)
class PipelineLoads(ModulePass):
    """Load the next iteration's inputs of every waiting loop of every kernel into
    registers one iteration early."""

    name = "pipeline-loads"

    max_bytes: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_bytes < 0:
            raise PassFailedException(
                f"pipeline-loads: option max_bytes must be 0 (no cap) or a positive number of bytes, got {self.max_bytes}")
        PatternRewriteWalker(
            PipelineLoopLoads(self.max_bytes or None), apply_recursively=False
        ).rewrite_module(op)
