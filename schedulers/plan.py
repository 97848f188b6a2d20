"""Execution plans: which scheduler runs each segment of a fusion, with which
parameters, and why the others were rejected.

Until segmentation lands a plan has one segment: the whole fusion. A fusion that
no scheduler accepts gives a segment whose ``scheduler`` is None; ``str(plan)``
says so and lists every rejection (it needs segmentation)::

    >>> print(make_plan(softmax, [(4, 1024)], H100))
    plan for @softmax on h100: 1 segment(s), 1 kernel(s)
      segment 0: inner_persistent  ReductionParams(fastest_dim=True, vectorization=4, ...)
        rejected: no_op: not alias-only: output #0 is computed by fuser.div
        ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fuser_ir.dialects.fuser import FusionOp

from .analysis.sizes import bind_sizes
from .params import Params
from .registry import Selection, select
from .target import DEFAULT_TARGET, GpuTarget


@dataclass(frozen=True)
class Segment:
    fusion: FusionOp
    scheduler: str | None
    """The chosen scheduler's kind, None when no scheduler accepts the segment."""
    params: Params | None
    rejections: tuple[tuple[str, str], ...]
    launches_kernel: bool

    @staticmethod
    def from_selection(fusion: FusionOp, sel: Selection) -> Segment:
        return Segment(
            fusion,
            sel.kind,
            sel.params,
            sel.rejections,
            bool(sel.scheduler and sel.scheduler.launches_kernel),
        )


@dataclass(frozen=True)
class Plan:
    name: str
    target: GpuTarget
    segments: tuple[Segment, ...]

    @property
    def num_kernels(self) -> int:
        return sum(1 for s in self.segments if s.launches_kernel)

    @property
    def is_complete(self) -> bool:
        """Every segment has a scheduler."""
        return all(s.scheduler is not None for s in self.segments)

    def __str__(self) -> str:
        lines = [
            f"plan for @{self.name} on {self.target.name}: {len(self.segments)} segment(s), "
            f"{self.num_kernels} kernel(s)"
        ]
        for i, s in enumerate(self.segments):
            if s.scheduler is None:
                lines.append(
                    f"  segment {i}: no scheduler accepts @{s.fusion.sym_name.data}; "
                    "it must be segmented"
                )
            else:
                lines.append(f"  segment {i}: {s.scheduler}  {s.params}")
            lines += [f"    rejected: {k}: {r}" for k, r in s.rejections]
        return "\n".join(lines)


def make_plan(
    fusion: FusionOp, input_shapes: Sequence[object], target: GpuTarget = DEFAULT_TARGET
) -> Plan:
    """Decide, without running anything, how ``fusion`` runs for these inputs
    (shapes, arrays, or scalar values; see ``analysis.sizes.bind_sizes``)."""
    sizes = bind_sizes(fusion, input_shapes)
    sel = select(fusion, sizes, target)
    return Plan(fusion.sym_name.data, target, (Segment.from_selection(fusion, sel),))
