"""The scheduler registry and its priority order.

Schedulers are tried in this order; the first that accepts a fusion (compile-time
then run-time check) schedules it:

1. ``no_op``: every output is a view of an input; no kernel.
2. ``expr_eval``: only scalar (host) outputs; no kernel.
3. ``reduction``: reductions without persistent buffers.
4. ``transpose``: two groups with different innermost axes.
5. ``pointwise``: no reduction.
6. ``inner_persistent``: inner reductions with persistent buffers.
7. ``outer_persistent``: outer reductions with persistent buffers.
8. ``inner_outer_persistent``: both, reducing complementary axes.

The three persistent schedulers share their checks (``persistent``) and each takes
exactly one reduction type, so their order among themselves does not change the
result (seed 004). Segmentation asks ``select`` whether one kernel can run a group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fuser_ir.dialects.fuser import FusionOp

from .analysis.sizes import ConcreteSizes
from .base import Scheduler
from .inner_outer_persistent import InnerOuterPersistentScheduler
from .inner_persistent import InnerPersistentScheduler
from .no_op import ExprEvalScheduler, NoOpScheduler
from .outer_persistent import OuterPersistentScheduler
from .params import Params
from .pointwise import PointwiseScheduler
from .reduction import ReductionScheduler
from .target import GpuTarget
from .transpose import TransposeScheduler

SCHEDULERS: tuple[type[Scheduler], ...] = (
    NoOpScheduler,
    ExprEvalScheduler,
    ReductionScheduler,
    TransposeScheduler,
    PointwiseScheduler,
    InnerPersistentScheduler,
    OuterPersistentScheduler,
    InnerOuterPersistentScheduler,
)
"""All schedulers, in priority order."""

SCHEDULER_KINDS: tuple[str, ...] = tuple(s.kind for s in SCHEDULERS)


def get_scheduler(kind: str) -> type[Scheduler]:
    for s in SCHEDULERS:
        if s.kind == kind:
            return s
    raise KeyError(f"unknown scheduler '{kind}'; expected one of {', '.join(SCHEDULER_KINDS)}")


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


def select(
    fusion: FusionOp,
    sizes: ConcreteSizes,
    target: GpuTarget,
    schedulers: Sequence[type[Scheduler]] = SCHEDULERS,
) -> Selection:
    """The first scheduler (in priority order) that accepts ``fusion``."""
    rejections: list[tuple[str, str]] = []
    for s in schedulers:
        reject = s.can_schedule_compile_time(fusion) or s.can_schedule_run_time(
            fusion, sizes, target
        )
        if reject is None:
            return Selection(s, s.heuristic(fusion, sizes, target), tuple(rejections))
        rejections.append((s.kind, reject.reason))
    return Selection(None, None, tuple(rejections))
