"""The scheduler registry and its priority order.

Schedulers are tried in this order; the first that accepts a fusion (compile-time
then run-time check) schedules it:

1. ``no_op``: every output is a view of an input; no kernel.
2. ``expr_eval``: only scalar (host) outputs; no kernel.
3. ``matmul``: one ``matmul``/``linear`` alone, run by a BLAS library (every other
   scheduler rejects a fusion holding one).
4. ``communication``: one ``fuser.reshard`` alone, a data movement between devices
   (every other scheduler rejects a fusion holding one).
5. ``reduction``: reductions without persistent buffers.
6. ``transpose``: two groups with different innermost axes.
7. ``pointwise``: no reduction.
8. ``inner_persistent``: inner reductions with persistent buffers.
9. ``outer_persistent``: outer reductions with persistent buffers.
10. ``inner_outer_persistent``: both, reducing complementary axes.

The three persistent schedulers share their checks (``persistent``) and each takes
exactly one reduction type, so their order among themselves does not change the
result (seed 004). Segmentation asks ``select`` whether one kernel can run a group.
"""

from __future__ import annotations

from collections.abc import Sequence

from fuser.ir.dialects.fuser import FusionOp

from .analysis.sizes import ConcreteSizes
from .base import Scheduler
from .inner_outer_persistent import HALF_SCHEDULERS, InnerOuterPersistentScheduler
from .selection import Selection, select_among
from .target import GpuTarget

SCHEDULERS: tuple[type[Scheduler], ...] = (*HALF_SCHEDULERS, InnerOuterPersistentScheduler)
"""All schedulers, in priority order: those of one reduction kind, then inner-outer."""

SCHEDULER_KINDS: tuple[str, ...] = tuple(s.kind for s in SCHEDULERS)


def get_scheduler(kind: str) -> type[Scheduler]:
    for s in SCHEDULERS:
        if s.kind == kind:
            return s
    raise KeyError(f"unknown scheduler '{kind}'; expected one of {', '.join(SCHEDULER_KINDS)}")


def select(
    fusion: FusionOp,
    sizes: ConcreteSizes,
    target: GpuTarget,
    schedulers: Sequence[type[Scheduler]] = SCHEDULERS,
) -> Selection:
    """The first scheduler (in priority order) that accepts ``fusion``."""
    return select_among(fusion, sizes, target, schedulers)
