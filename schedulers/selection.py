"""Trying schedulers in order on one fusion: the first that accepts it, and why each
one before it said no. ``fuser.schedulers.registry.select`` tries every scheduler; the
inner-outer scheduler tries the others on each half of its fusion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fuser.ir.dialects.fuser import FusionOp

from .analysis.sizes import ConcreteSizes
from .base import Scheduler
from .communication import communication_reject
from .matmul import library_op_reject
from .params import Params
from .target import GpuTarget


@dataclass(frozen=True)
class Selection:
    """The outcome of trying the schedulers on one fusion."""

    scheduler: type[Scheduler] | None
    params: Params | None
    rejections: tuple[tuple[str, str], ...] = field(default=())
    """``(kind, reason)`` for every scheduler tried before the chosen one (all of
    them when none accepted)."""

    @property
    def kind(self) -> str | None:
        return self.scheduler.kind if self.scheduler else None

    def explain(self) -> str:
        return "\n".join(f"  {k}: {r}" for k, r in self.rejections)


def select_among(
    fusion: FusionOp,
    sizes: ConcreteSizes,
    target: GpuTarget,
    schedulers: Sequence[type[Scheduler]],
) -> Selection:
    """The first of ``schedulers`` (in their order) that accepts ``fusion``."""
    rejections: list[tuple[str, str]] = []
    library = library_op_reject(fusion)
    comm = communication_reject(fusion)
    for s in schedulers:
        reject = (
            (None if s.runs_communications else comm)
            or (None if s.runs_library_ops else library)
            or s.can_schedule_compile_time(fusion)
            or s.can_schedule_run_time(fusion, sizes, target)
        )
        if reject is None:
            return Selection(s, s.heuristic(fusion, sizes, target), tuple(rejections))
        rejections.append((s.kind, reject.reason))
    return Selection(None, None, tuple(rejections))
