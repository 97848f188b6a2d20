"""The ``matmul`` scheduler: one ``fuser.matmul`` or ``fuser.linear`` run by a BLAS
library (nvFuser's ExprEval scheduler, which hands them to ATen).

A generated kernel never computes a matrix product: every other scheduler rejects a
fusion holding one (``library_op_reject``), so segmentation gives each product a
segment of its own, whose inputs are the product's operands::

    fuser.fusion @seg1(%x: !fuser.tensor<8192x4096xbf16>, %w: !fuser.tensor<4096x4096xbf16>,
                       %b: !fuser.tensor<4096xbf16>) -> !fuser.tensor<8192x4096xbf16>
        attributes {fuser.schedule = {kind = "matmul"}} {
      %y = fuser.linear %x, %w, %b : (...) -> !fuser.tensor<8192x4096xbf16>
      fuser.output %y : !fuser.tensor<8192x4096xbf16>
    }

On the GPU the runtime calls cuBLAS through torch (``fuser.runtime.library_ops``);
on the CPU the reference interpreter computes it.
"""

from __future__ import annotations

from xdsl.ir import BlockArgument

from fuser.ir.dialects.fuser import FusionOp, OutputOp, library_ops

from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler
from .params import NoParams
from .target import GpuTarget


def library_op_reject(fusion: FusionOp) -> Reject | None:
    """Why a kernel scheduler cannot take ``fusion``: it holds a library op."""
    ops = library_ops(fusion)
    if not ops:
        return None
    return Reject(f"{ops[0].name} runs in a library call (the matmul scheduler), not a generated kernel")


class MatmulScheduler(Scheduler):
    kind = "matmul"
    runs_library_ops = True

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        ops = [op for op in fusion.body.block.ops if not isinstance(op, OutputOp)]
        lib = library_ops(fusion)
        if not lib:
            return Reject("the fusion has no matmul or linear")
        if len(ops) != 1:
            others = sorted({op.name for op in ops if op is not lib[0]})
            return Reject(f"{lib[0].name} shares the fusion with {', '.join(others)}; a library call runs it alone")
        op = ops[0]
        for i, v in enumerate(op.operands):
            if not isinstance(v, BlockArgument):
                return Reject(f"operand #{i} of {op.name} is computed in the fusion, not an input")
        outs = fusion.output_op.values
        if any(v is not op.results[0] for v in outs) or not outs:
            return Reject(f"the fusion's outputs are not just the result of {op.name}")
        return None

    @classmethod
    def heuristic(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> NoParams:
        return NoParams()
