"""Schedulers that launch no kernel.

* ``no_op``: every output is a view of an input (``analysis.alias_only``); the
  host returns strided views, nothing runs on the GPU.
* ``expr_eval``: every output is a scalar computed from sizes, constants and
  scalar inputs; the host evaluates it.
"""

from __future__ import annotations

from fuser.ir.dialects.fuser import FusionOp, TensorType

from .analysis.alias_only import alias_only_reason
from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler
from .params import NoParams
from .target import GpuTarget


class NoOpScheduler(Scheduler):
    kind = "no_op"
    launches_kernel = False

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        reason = alias_only_reason(fusion)
        return None if reason is None else Reject(f"not alias-only: {reason}")

    @classmethod
    def heuristic(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> NoParams:
        return NoParams()


class ExprEvalScheduler(Scheduler):
    kind = "expr_eval"
    launches_kernel = False

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        values = fusion.output_op.values
        if not values:
            return Reject("the fusion has no outputs")
        for i, v in enumerate(values):
            if isinstance(v.type, TensorType):
                return Reject(f"output #{i} is a tensor; only scalar outputs are host work")
        return None

    @classmethod
    def heuristic(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> NoParams:
        return NoParams()
