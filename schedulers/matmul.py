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

from fuser.ir.dialects.fuser import FusionOp, library_ops

from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler, alone_reject
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
        lib = library_ops(fusion)
        if not lib:
            return Reject("the fusion has no matmul or linear")
        return alone_reject(fusion, lib[0], "a library call")

    @classmethod
    def heuristic(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> NoParams:
        return NoParams()
