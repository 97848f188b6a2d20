"""The ``communication`` scheduler: one ``fuser.reshard`` alone, a data movement
between devices (nvFuser's ``Communication`` segments).

A generated kernel never moves data between devices: every other scheduler rejects a
fusion holding a communication (``communication_reject``), so segmentation gives each
``fuser.reshard`` a segment of its own, whose input is the resharded tensor::

    fuser.fusion @seg2(%0: !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
        attributes {fuser.schedule = {kind = "communication"}} {
      %1 = fuser.reshard %0 {from = #iterdomain.sharding<[0, 1], partial>,
                             to = #iterdomain.sharding<[0, 1]>, local} : ...
      fuser.output %1 : !fuser.tensor<8x16xf32>
    }

``lower-communications`` replaces its ``hir.launch`` with the ``hir`` collective
(``hir.allreduce`` here); nothing compiles it.
"""

from __future__ import annotations

from fuser.ir.dialects.fuser import FusionOp, communication_ops

from .analysis.sizes import ConcreteSizes
from .base import Reject, Scheduler, alone_reject
from .params import NoParams
from .target import GpuTarget


def communication_reject(fusion: FusionOp) -> Reject | None:
    """Why a kernel (or library) scheduler cannot take ``fusion``: it moves data
    between devices."""
    ops = communication_ops(fusion)
    if not ops:
        return None
    return Reject(f"{ops[0].name} moves data between devices (the communication scheduler)")


class CommunicationScheduler(Scheduler):
    kind = "communication"
    launches_kernel = False
    runs_communications = True

    @classmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None:
        comm = communication_ops(fusion)
        if not comm:
            return Reject("the fusion has no fuser.reshard")
        return alone_reject(fusion, comm[0], "a communication")

    @classmethod
    def heuristic(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> NoParams:
        return NoParams()
