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

What fuser supports inside ``schedule()``: reading the definition's tensors,
``fd.sched.user_schedule_ir()``, and nvFuser's loop transforms on the tensors of a
fusion without reductions, written as ``iterdomain`` ops on the user-scheduled fusion
when ``schedule()`` returns:

* ``split(t, dim, factor, inner_split=True)``, ``merge(t, dim)``,
  ``reorder(t, {old: new})``, ``parallelize(t, axis, ParallelType.grid_x)`` (nvFuser's
  names: ``grid_x/y/z``, ``block_x/y/z``, ``vectorize``, ``unroll``, ``unswitch``,
  ``serial``);
* ``transform_like(ref, selected_tensors=[])`` replays ``ref``'s splits, merges and
  reorders on the selected tensors of ``ref``'s shape (every other returned output
  when none are selected); ``parallelize_like(ref, ...)`` its parallel types;
* ``inline_most()`` is what the lowering does anyway: a tensor without a loop domain
  is computed where its consumers read it.

Every returned output then needs a loop domain (``transform_like`` gives them one); the
kernel is the generic lowering of that loop nest, so a split, a merge or a parallel
type changes the kernel. Other scheduling calls (``cache_after``, ``rfactor``,
``set_memory_type``, ``schedule`` with a heuristic, ...) raise ``NotImplementedError``
naming the call. A user schedule without transforms is the fusion without transforms,
which nvFuser compiles as one serial kernel; fuser lowers it the same way
(``fuser.codegen.lower.serial_schedule``: a loop nest of serial loops, one thread of
one block; a reduction is a serial fold, an output at another shape an apply kernel
after it; a chain of reductions, such as softmax's, is no loop nest and raises on the
GPU). On the CPU a user schedule runs on the reference interpreter like any fusion
(schedules never change results); ``fd.profile()`` reports it as one segment of
scheduler ``"user"``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Block, SSAValue

from fuser.ir.dialects import iterdomain as I
from fuser.ir.dialects.fuser import FusionOp, TensorType

if TYPE_CHECKING:
    from fuser.frontend.cache import CacheEntry
    from fuser.frontend.fusion_definition import FusionDefinition

__all__ = ["ParallelType", "ScheduleOperators", "UserSchedule", "defines_schedule", "find", "make", "run"]


class ParallelType(enum.Enum):
    """nvFuser's ``ParallelType`` names, as the ``iterdomain`` parallel types they are."""

    grid_x = I.ParallelType.BIDx
    grid_y = I.ParallelType.BIDy
    grid_z = I.ParallelType.BIDz
    block_x = I.ParallelType.TIDx
    block_y = I.ParallelType.TIDy
    block_z = I.ParallelType.TIDz
    vectorize = I.ParallelType.vectorize
    unroll = I.ParallelType.unroll
    unswitch = I.ParallelType.unswitch
    serial = I.ParallelType.serial
    stream = I.ParallelType.stream
    mesh_x = I.ParallelType.DIDx

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
    """``fd.sched``: nvFuser's scheduling API inside ``schedule()`` (module docstring):
    loop transforms on the tensors of the user schedule being made, written as
    ``iterdomain`` ops when ``schedule()`` returns."""

    def __init__(self, fd: FusionDefinition) -> None:
        self._fd = fd
        self._current: UserSchedule | None = None
        self._schedules: dict[int, tuple[Any, list[tuple[str, tuple[Any, ...]]]]] = {}
        self._multidevice: Any = None
        """The ``MultiDeviceRecorder`` while ``multidevice_schedule()`` runs
        (``fuser.frontend.multidevice``)."""

    def user_schedule_ir(self) -> str:
        """The fusion of the last user schedule made for this definition, or
        ``"User schedule is not defined."`` (nvFuser's answer)."""
        if self._fd._entry is None:
            raise RuntimeError("Invalid fusion definition!")
        return NOT_DEFINED if self._current is None else self._current.ir()

    # ---- transforms ------------------------------------------------------------------
    def split(self, arg: Any, dim: int, factor: int, inner_split: bool = True) -> None:
        if self._multidevice is not None:
            p, rank = self._device_position("split", arg)
            self._multidevice.split(p, rank, dim, factor, inner_split)
            return
        self._apply("split", arg, (dim, factor, inner_split))

    def merge(self, arg: Any, dim: int) -> None:
        self._apply("merge", arg, (dim,))

    def reorder(self, arg: Any, old2new: Mapping[int, int]) -> None:
        self._apply("reorder", arg, (dict(old2new),))

    def parallelize(self, tensor: Any, axis: int, parallel_type: Any) -> None:
        if not isinstance(parallel_type, ParallelType):
            raise ValueError(f"fd.sched.parallelize: {parallel_type!r} is not a ParallelType")
        if parallel_type is ParallelType.mesh_x or self._multidevice is not None:
            if self._multidevice is None or parallel_type is not ParallelType.mesh_x:
                raise ValueError(
                    "fd.sched.parallelize: mesh_x (a device axis) only in multidevice_schedule(), and "
                    "only mesh_x there"
                )
            p, rank = self._device_position("parallelize", tensor)
            self._multidevice.parallelize(p, rank, axis)
            return
        self._apply("parallelize", tensor, (axis, parallel_type.value))

    _parallelize = parallelize

    # ---- multi-device (fuser.frontend.multidevice) ----------------------------------
    def _create_device_mesh(self, devices: Any) -> Any:
        from fuser.frontend.device_mesh import DeviceMesh

        return DeviceMesh(devices)

    def _set_device_mesh(self, tensor: Any, mesh: Any) -> None:
        if self._multidevice is None:
            raise RuntimeError("fd.sched._set_device_mesh: only inside multidevice_schedule()")
        p, _ = self._device_position("_set_device_mesh", tensor)
        self._multidevice.set_device_mesh(p, mesh)

    def _device_position(self, call: str, tensor: Any) -> tuple[int, int]:
        p = self._position(call, tensor)
        t = block_values(self._fd._state.block)[p].type
        assert isinstance(t, TensorType)
        return p, t.rank

    def transform_like(self, tensor: Any, selected_tensors: Sequence[Any] = ()) -> None:
        """Replay ``tensor``'s splits, merges and reorders on ``selected_tensors`` (every
        other returned output when empty) of the same shape."""
        self._like("transform_like", tensor, selected_tensors, lambda kind: kind != "parallelize")

    def parallelize_like(
        self,
        tensor: Any,
        pos: int = -1,
        selected_tensors: Sequence[Any] = (),
        selected_parallel_types: Any = (),
        propagate_padding: bool = True,
    ) -> None:
        """``tensor``'s parallel types on the selected tensors (``pos`` and
        ``selected_parallel_types`` as nvFuser's: only -1 and all types)."""
        del propagate_padding
        if pos != -1 or selected_parallel_types:
            raise NotImplementedError("fd.sched.parallelize_like: only pos=-1 and every parallel type")
        self._like("parallelize_like", tensor, selected_tensors, lambda kind: kind == "parallelize")

    def inline_most(self, selected_tensors: Sequence[Any] = ()) -> None:
        """Nothing to do: a tensor without a loop domain is computed where it is read."""
        del selected_tensors
        self._current_schedule("inline_most")

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotImplementedError(
            f"fd.sched.{name}: not supported by fuser's user schedules (split, merge, reorder, "
            "parallelize, transform_like, parallelize_like and inline_most are)"
        )

    # ---- bookkeeping -----------------------------------------------------------------
    def _current_schedule(self, call: str) -> UserSchedule:
        if self._current is None:
            raise RuntimeError(f"fd.sched.{call}: only inside schedule()")
        return self._current

    def _position(self, call: str, tensor: Any) -> int:
        value = getattr(tensor, "value", None)
        if getattr(tensor, "fd", None) is not self._fd or not isinstance(value, SSAValue):
            raise ValueError(f"fd.sched.{call}: {tensor!r} is not a tensor of this definition")
        if not isinstance(value.type, TensorType):
            raise ValueError(f"fd.sched.{call}: {tensor!r} is not a tensor")
        return block_values(self._fd._state.block).index(value)

    def _schedule(self, call: str, tensor: Any) -> tuple[Any, list[tuple[str, tuple[Any, ...]]]]:
        return self._schedule_at(call, self._position(call, tensor))

    def _schedule_at(self, call: str, position: int) -> tuple[Any, list[tuple[str, tuple[Any, ...]]]]:
        from fuser.ir.schedule import Schedule

        sched = self._current_schedule(call)
        if position not in self._schedules:
            mine = block_values(self._fd._state.block)
            values = block_values(sched.fusion.body.block)
            if len(mine) != len(values) or mine[position].type != values[position].type:
                raise NotImplementedError(
                    f"fd.sched.{call}: the fusion was rewritten for these inputs (reshapes decided "
                    "at execute time); loop transforms need the definition's own tensors"
                )
            if any(op.name in _REDUCTIONS for op in sched.fusion.body.block.ops):
                raise NotImplementedError(
                    f"fd.sched.{call}: loop transforms on a fusion with reductions are not supported yet"
                )
            self._schedules[position] = (Schedule(values[position]), [])
        return self._schedules[position]

    def _apply(self, kind: str, tensor: Any, args: tuple[Any, ...]) -> None:
        s, record = self._schedule(kind, tensor)
        try:
            _transform(s, kind, args)
        except ValueError as e:
            raise ValueError(f"fd.sched.{kind}: {e}") from None
        record.append((kind, args))

    def _like(self, call: str, tensor: Any, selected: Sequence[Any], which: Callable[[str], bool]) -> None:
        sched = self._current_schedule(call)
        ref_position = self._position(call, tensor)
        _, record = self._schedules.get(ref_position, (None, []))
        values = block_values(sched.fusion.body.block)
        shape = values[ref_position].type.get_shape()  # type: ignore[attr-defined]
        if selected:
            targets = [self._position(call, t) for t in selected]
        else:
            returned = set(sched.fusion.output_op.returned_values())
            targets = [k for k, v in enumerate(values) if v in returned]
        for k in targets:
            if k == ref_position:
                continue
            if values[k].type.get_shape() != shape:  # type: ignore[attr-defined]
                raise NotImplementedError(
                    f"fd.sched.{call}: only tensors of the reference's shape {list(shape)} are "
                    f"replayed; {values[k].type} is not one"
                )
            for kind, args in record:
                if which(kind):
                    s, own = self._schedule_at(call, k)
                    _transform(s, kind, args)
                    own.append((kind, args))

    def _finish(self) -> None:
        """Write the loop domains of ``schedule()``'s transforms into the user
        schedule's fusion (none: it stays unscheduled, the serial loop nest)."""
        from fuser.codegen.lower import UNSCHEDULED

        sched = self._current
        schedules, self._schedules = self._schedules, {}
        if sched is None or not schedules:
            return
        for s, _ in schedules.values():
            s.emit()
        scheduled = {s.tensor for s, _ in schedules.values()}
        for j, v in enumerate(sched.fusion.output_op.returned_values()):
            if isinstance(v.type, TensorType) and v not in scheduled:
                raise ValueError(
                    f"fd.sched: returned output #{j} has no loop domain; schedule it or "
                    "fd.sched.transform_like the scheduled output"
                )
        sched.fusion.attributes.pop(UNSCHEDULED, None)


_REDUCTIONS = frozenset({"fuser.sum", "fuser.prod", "fuser.max", "fuser.min", "fuser.var", "fuser.var_mean",
                         "fuser.welford", "fuser.argmax", "fuser.argmin"})


def block_values(block: Block) -> list[SSAValue]:
    """The values of a fusion body in definition order: how ``fd.sched`` names a tensor
    by position (its arguments, then every op's results)."""
    return [*block.args, *(r for op in block.ops for r in op.results)]


def _transform(s: Any, kind: str, args: tuple[Any, ...]) -> None:
    if kind == "split":
        s.split(*args)
    elif kind == "merge":
        s.merge(*args)
    elif kind == "reorder":
        (old2new,) = args
        n = len(s.ids)
        order = list(range(n))
        new = [-1] * n
        for old, to in old2new.items():
            new[to % n] = old % n
        rest = iter(k for k in order if k not in {o % n for o in old2new})
        s.reorder([k if k >= 0 else next(rest) for k in new])
    else:
        s.parallelize(*args)


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
        ops._finish()
    except BaseException:
        ops._schedules = {}
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
