"""``fd.execute(inputs, profile=True)`` and ``fd.profile()``: what each segment of a run took.

nvFuser's profile comes from CUPTI (kernel times on the GPU). fuser has no CUPTI; its
profile says what it measured and how:

- CPU runs (numpy or CPU torch inputs): every segment is timed with the host's wall
  clock (``time.perf_counter``). A fusion one scheduler takes runs whole on the
  reference interpreter: one segment, with the scheduler the registry picked for these
  sizes. A segmented fusion runs its host program: one segment per ``hir.launch``,
  timed around that launch, with its segment's scheduler. A user ``schedule()``
  (``fuser.frontend.user_schedule``) is one segment with scheduler ``"user"``.
- GPU runs: the segments and schedulers of the plan that ran; the whole run is timed
  with the host's wall clock between two device synchronizations (``host_time_ms``).
  The time of one launch is only known for a single-segment run (it is the whole
  run); the segments of a segmented GPU run have ``time_ms = None`` (not measured).

``timer`` on the profile says which clock was used.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FusionProfile", "KernelProfile", "Recorder", "active", "recording"]


@dataclass(frozen=True)
class KernelProfile:
    """One segment (kernel launch) of a profiled run (nvFuser's ``KernelProfile``)."""

    name: str
    """The segment's fusion (``nvfuser_fusion_id3``, or its segment name)."""
    segment_id: int
    device: str
    """``"cpu"`` or ``"cuda:N"``."""
    scheduler: str
    """The scheduler that took the segment (``"pointwise"``, ``"reduction"``, ...;
    ``"user"`` for a user ``schedule()``)."""
    time_ms: float | None
    """Wall-clock time of the segment; None when it was not measured on its own."""
    input_bytes: int
    output_bytes: int


@dataclass(frozen=True)
class FusionProfile:
    """A profiled ``execute`` (nvFuser's ``FusionProfile``)."""

    fusion_id: int
    segments: int
    device: str
    timer: str
    """``"host wall clock"`` (CPU runs) or ``"host wall clock, device synchronized"``."""
    host_time_ms: float
    """The whole ``execute``, input checks included."""
    kernel_time_ms: float | None
    """The sum of the segments' times; None when a segment was not measured."""
    input_bytes: int
    output_bytes: int
    kernel_profiles: list[KernelProfile] = field(default_factory=list)


def nbytes(values: Sequence[Any]) -> int:
    """Bytes of the tensors among ``values`` (numpy arrays, torch tensors, GPU arrays)."""
    total = 0
    for v in values:
        n = getattr(v, "nbytes", None)
        if isinstance(n, int):
            total += n
        elif hasattr(v, "element_size") and hasattr(v, "numel"):
            total += int(v.element_size()) * int(v.numel())
    return total


@dataclass
class Recorder:
    """Collects the segments of one profiled run."""

    kernels: list[KernelProfile] = field(default_factory=list)

    def add(
        self,
        name: str,
        device: str,
        scheduler: str,
        time_ms: float | None,
        inputs: Sequence[Any],
        outputs: Sequence[Any],
    ) -> None:
        self.kernels.append(
            KernelProfile(
                name, len(self.kernels), device, scheduler, time_ms, nbytes(inputs), nbytes(outputs)
            )
        )


_active: list[Recorder] = []


def active() -> Recorder | None:
    """The recorder of the profiled run in progress (None when not profiling)."""
    return _active[-1] if _active else None


@contextmanager
def recording(enabled: bool) -> Iterator[Recorder | None]:
    """Profile the ``execute`` inside the block when ``enabled``."""
    if not enabled:
        yield None
        return
    rec = Recorder()
    _active.append(rec)
    try:
        yield rec
    finally:
        _active.remove(rec)


def run_segmented_timed(module: Any, flat: Sequence[Any], schedulers: dict[str, str]) -> list[Any]:
    """Run a segmented host program (``fuser.runtime.segmented``) on the CPU host evaluator,
    timing every ``hir.launch`` into the active recorder; ``schedulers`` maps a segment
    fusion's name to its scheduler."""
    from fuser.runtime.host_evaluator import HostEvaluator

    rec = active()
    assert rec is not None

    class TimedEvaluator(HostEvaluator):
        def _launch(self, op: Any) -> list[Any]:
            fusion = self._callee(op)
            name = fusion.sym_name.data
            args = [self._read(v, op) for v in op.args]
            start = time.perf_counter()
            outs = super()._launch(op)
            elapsed = (time.perf_counter() - start) * 1e3
            rec.add(name, "cpu", schedulers.get(name, "unknown"), elapsed, args, outs)
            return outs

    return TimedEvaluator(module).run(list(flat), "main", None)


def segment_schedulers(exe: Any) -> dict[str, str]:
    """Segment fusion name -> scheduler (``select-schedulers``' ``fuser.schedule``
    kind) of a ``fuser.runtime.driver.Executable``."""
    from fuser.passes.select_schedulers import SCHEDULE_ATTR

    out = {}
    for name, fusion in exe.fusions.items():
        sched = fusion.attributes.get(SCHEDULE_ATTR)
        kind = sched.data.get("kind") if sched is not None else None  # type: ignore[attr-defined]
        out[name] = kind.data if kind is not None else "unknown"
    return out


def make_profile(
    fusion_id: int,
    rec: Recorder,
    device: str,
    timer: str,
    host_ms: float,
    inputs: Sequence[Any],
    outputs: Sequence[Any],
) -> FusionProfile:
    """The ``FusionProfile`` of a finished run."""
    times = [k.time_ms for k in rec.kernels]
    kernel_ms = (
        None if any(t is None for t in times) else float(sum(t for t in times if t is not None))
    )
    return FusionProfile(
        fusion_id,
        len(rec.kernels),
        device,
        timer,
        host_ms,
        kernel_ms,
        nbytes(inputs),
        nbytes(outputs),
        list(rec.kernels),
    )
