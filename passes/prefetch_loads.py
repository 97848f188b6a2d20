"""``prefetch-loads{level=L2}``: in kernel IR, every loop that waits for other threads
(a block or warp reduction, a barrier) prefetches the global loads of its next
iteration at the top of each iteration (``fuser.codegen.prefetch_loads``; a loop done
once carries ``{kernel.prefetch = "L2"}`` and is not done again). An experiment: on
the H100 it made no layer-norm backward faster (the module's docstring has the
numbers), so ``lower-to-kernels`` adds prefetches only when ``FUSER_PREFETCH`` names
a level.

Before::

    kernel.func @rows(%x : memref<?xf32>, %y : memref<?xf32>) attributes {...} {
      %bidx = kernel.block_id x
      scf.for %i = %c0 to %c4 step %c1 {
        %tidx = kernel.thread_id x
        %row = arith.addi %base, %i : index       // %base from %bidx
        %off = arith.addi %rowoff, %tidx : index  // %rowoff = %row * 128
        %v = memref.load %x[%off] : memref<?xf32>
        %s = kernel.block_reduce %v {kind = "add", dims = array<i64: 0>} : (f32) -> f32
        memref.store %s, %y[%row] : memref<?xf32>
      }
      kernel.return
    }

After::

      scf.for %i = %c0 to %c4 step %c1 {
        %n = arith.addi %i, %c1 : index
        %more = arith.cmpi slt, %n, %c4 : index
        scf.if %more {
          %row2 = arith.addi %base, %n : index
          ...
          kernel.prefetch %x[%off2] {level = "L2"} : memref<?xf32>
        }
        %tidx = kernel.thread_id x
        ...
      } {kernel.prefetch = "L2"}

What every thread loads and stores is unchanged; a prefetch only brings a line the
next iteration reads into the cache sooner.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from fuser.codegen.prefetch_loads import prefetch_next_iteration
from fuser.ir.dialects import kernel as k


@dataclass(frozen=True)
class PrefetchKernelLoads(RewritePattern):
    """One kernel's waiting loops get their next iteration's prefetches."""

    level: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: k.FuncOp, rewriter: PatternRewriter) -> None:
        if prefetch_next_iteration(op, self.level):
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class PrefetchLoads(ModulePass):
    """Prefetch the next iteration's global loads of every waiting loop of every kernel."""

    name = "prefetch-loads"

    level: str = "L2"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.level not in k.PREFETCH_LEVELS:
            raise PassFailedException(
                f"prefetch-loads: option level must be one of {list(k.PREFETCH_LEVELS)}, got '{self.level}'")
        PatternRewriteWalker(PrefetchKernelLoads(self.level), apply_recursively=False).rewrite_module(op)
