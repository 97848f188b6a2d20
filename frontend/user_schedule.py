"""nvFuser's user ``schedule()`` hook on a ``FusionDefinition`` subclass, and ``fd.sched``.

::

    class MyFusion(FusionDefinition):
        def definition(self):
            t0 = self.from_pytorch(x)
            self.add_output(self.ops.sinh(t0))

        def schedule(self):
            pass                      # no transforms: the fusion stays unscheduled

    fd = MyFusion()
    fd.execute([x])                  # defines, calls schedule() for x's layout, runs
    fd.sched.user_schedule_ir()      # the user-scheduled fusion

As in nvFuser, the first ``execute`` of a subclass that defines ``schedule`` (and every
``execute(profile=True)`` of it) makes a user schedule for the inputs' layout: the
definition is complete by then, so defining an op or an input inside ``schedule()``
raises nvFuser's ``RuntimeError("Attempting to add to a completed definition!")``.
Later runs with that layout use the user schedule unless
``override_user_schedule=True``.

What fuser supports inside ``schedule()``: reading the definition's tensors and
``fd.sched.user_schedule_ir()``. nvFuser's scheduling calls (``fd.sched.split``,
``merge``, ``parallelize``, ``schedule`` with a heuristic, ...) are not implemented:
each raises ``NotImplementedError`` naming the call. A user schedule is thus always
the fusion without transforms, which nvFuser compiles as one serial kernel; fuser
lowers it the same way (``fuser.codegen.lower.serial_schedule``: a loop nest of serial
loops, one thread of one block; a reduction is a serial fold, an output at another
shape an apply kernel after it; a chain of reductions, such as softmax's, is no loop
nest and raises on the GPU). On the CPU a user
schedule runs on the reference interpreter like any fusion (schedules never change
results); ``fd.profile()`` reports it as one segment of scheduler ``"user"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp, UnitAttr

from fuser.ir.dialects.fuser import FusionOp

if TYPE_CHECKING:
    from fuser.frontend.cache import CacheEntry
    from fuser.frontend.fusion_definition import FusionDefinition

__all__ = ["ScheduleOperators", "UserSchedule", "defines_schedule", "find", "make", "run"]

NOT_DEFINED = "User schedule is not defined."


@dataclass
class UserSchedule:
    """The user schedule of one input layout."""

    fusion: FusionOp
    """The runtime fusion of that layout, marked ``fuser.unscheduled``."""
    metas: list[Any]
    """The inputs' metadata (``layouts.layout_key``)."""
    gpu_plans: dict[tuple, Any] = field(default_factory=dict)

    def ir(self) -> str:
        """The user-scheduled fusion as IR text."""
        return str(ModuleOp([self.fusion.clone()]))


class ScheduleOperators:
    """``fd.sched``: nvFuser's scheduling API inside ``schedule()``. fuser implements
    ``user_schedule_ir``; every other call raises ``NotImplementedError``."""

    def __init__(self, fd: FusionDefinition) -> None:
        self._fd = fd
        self._current: UserSchedule | None = None

    def user_schedule_ir(self) -> str:
        """The fusion of the last user schedule made for this definition, or
        ``"User schedule is not defined."`` (nvFuser's answer)."""
        if self._fd._entry is None:
            raise RuntimeError("Invalid fusion definition!")
        return NOT_DEFINED if self._current is None else self._current.ir()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedError(
            f"fd.sched.{name}: fuser's user schedules apply no transforms yet (only "
            "fd.sched.user_schedule_ir is available); the fusion stays unscheduled"
        )


def defines_schedule(fd: FusionDefinition) -> bool:
    """Whether ``fd``'s class defines a ``schedule`` method (nvFuser's test)."""
    return callable(getattr(fd, "schedule", None))


def find(entry: CacheEntry, inputs: Sequence[Any]) -> UserSchedule | None:
    """The user schedule made for these inputs' layout, if any."""
    if not entry.user_schedules:
        return None
    from fuser.frontend.layouts import layout_key

    key, _ = layout_key(entry, inputs)
    return entry.user_schedules.get(key)


def make(fd: FusionDefinition, inputs: Sequence[Any]) -> UserSchedule:
    """Call ``fd.schedule()`` for these inputs' layout and keep the user schedule
    (replacing one made before for it)."""
    from fuser.codegen.lower import UNSCHEDULED
    from fuser.frontend import execution
    from fuser.frontend.layouts import layout_key
    from fuser.frontend.validation import plain_inputs

    entry = fd._ensure_defined()
    key, metas = layout_key(entry, inputs)
    rt = execution.runtime_for(entry, plain_inputs(metas))
    fusion = rt.fusion.clone()
    fusion.attributes[UNSCHEDULED] = UnitAttr()
    sched = UserSchedule(fusion, metas)
    ops: ScheduleOperators = fd.sched
    previous = ops._current
    ops._current = sched
    try:
        fd.schedule()  # type: ignore[attr-defined]
    except BaseException:
        ops._current = previous
        raise
    entry.user_schedules[key] = sched
    return sched


def run(entry: CacheEntry, sched: UserSchedule, inputs: Sequence[Any]) -> list[Any]:
    """Run ``inputs`` under the user schedule: GPU arrays through the serial kernel of
    the unscheduled fusion, host inputs on the reference interpreter."""
    from fuser.frontend import execution, profiling

    entry.last_user_schedule = sched
    rec = profiling.active()
    if not execution._any_gpu_input(inputs):
        import time

        start = time.perf_counter()
        outs = execution.execute(entry, inputs, _reference)
        if rec is not None:
            rec.add(
                sched.fusion.sym_name.data,
                "cpu",
                "user",
                (time.perf_counter() - start) * 1e3,
                inputs,
                outs,
            )
        return outs
    from fuser.frontend.validation import flatten_inputs, plain_inputs
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import GpuPlan, meta_array

    flat = flatten_inputs(
        entry.inputs,
        [
            x if ga.is_gpu_array(x) else p
            for x, p in zip(
                inputs,
                plain_inputs(
                    [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
                ),
                strict=True,
            )
        ],
        draw_rng=True,
    )
    key = entry.gpu_key(inputs)
    plan = sched.gpu_plans.get(key)
    first = plan is None
    if plan is None:
        plan = sched.gpu_plans[key] = GpuPlan(sched.fusion, flat)
    entry.last_run = plan
    return plan.run(flat, first=first)


def _reference(fusion: FusionOp, flat: Sequence[Any]) -> list[Any]:
    """The reference interpreter, passed as an explicit executor (no segmentation: a
    user schedule is one segment)."""
    from fuser.frontend.execution import reference_executor

    return reference_executor(fusion, flat)
