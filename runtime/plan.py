"""Execution plans: which scheduler runs each kernel launch of a fusion, with which
parameters, and why the others were rejected.

``executable_plan(exe, fusion, inputs)`` (what ``fd.plan`` returns) describes a
compiled ``fuser.runtime.driver.Executable``: one segment per ``hir.launch`` of its
program, in launch order, each with the scheduler ``select-schedulers`` chose and the
registry's reasons; when the driver cut the fusion in several kernels (or the user
marked a cut) the registry's answer for the whole fusion, which says why; a program
that launches nothing is one ``no_op`` segment. ``plan.host_views`` lists the
program's host view chains (views stripped from the ends of segments, outputs that
are views of inputs)::

    >>> print(fd.plan([np.empty((4, 1 << 21), np.float32)]))
    plan for @nvfuser_fusion_id0 on h100: 3 segment(s), 3 kernel(s)
      no single scheduler accepts @nvfuser_fusion_id0; segmented
        rejected: inner_persistent: persistent buffers need 8388608 B per row; ...
      segment 0: reduction  ReductionParams(fastest_dim=True, ...)
        rejected: no_op: not alias-only: output #0 is computed by fuser.max
        ...

``make_plan(fusion, inputs, target)`` only asks the registry about the whole fusion
(one segment, ``scheduler`` None when no scheduler accepts it): ``fd.plan`` returns
it, with the error, for a fusion the driver cannot compile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import DictionaryAttr, StringAttr
from xdsl.ir import BlockArgument

from fuser.ir.dialects.fuser import VIEW_OPS, FusionOp, SegmentSetOp, TensorType
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.params import Params
from fuser.schedulers.registry import Selection, select
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget


@dataclass(frozen=True)
class Segment:
    fusion: FusionOp | None
    """The segment's fusion; None for a group of host views."""
    scheduler: str | None
    """The chosen scheduler's kind, None when no scheduler accepts the segment.
    (Which original values a segment reads and writes: ``fd.segment``'s maps.)"""
    params: Params | None
    rejections: tuple[tuple[str, str], ...]
    launches_kernel: bool
    kernels: int | None = None
    """Kernels the segment's lowering launches (``fd.plan`` lowers each segment to count
    them: an outer reduction split over blocks is a partials, a finish and an apply
    kernel); None when not lowered, counted as one per launching segment."""

    @staticmethod
    def from_schedule(fusion: FusionOp) -> Segment:
        """What ``select-schedulers`` recorded on a segment fusion: its
        ``fuser.schedule`` and, with ``debug`` (the driver's pipeline), its
        ``fuser.schedule_rejections``."""
        from fuser.schedulers.params import REJECTIONS_ATTR, SCHEDULE_ATTR, read_schedule
        from fuser.schedulers.registry import get_scheduler

        kind, params = read_schedule(fusion.attributes[SCHEDULE_ATTR])
        rejected = fusion.attributes.get(REJECTIONS_ATTR)
        rejections = tuple(
            (k, v.data) for k, v in (rejected.data.items() if isinstance(rejected, DictionaryAttr) else ())
            if isinstance(v, StringAttr)
        )
        return Segment(fusion, kind, params, rejections, get_scheduler(kind).launches_kernel)  # type: ignore[arg-type]

    @staticmethod
    def from_selection(fusion: FusionOp, sel: Selection) -> Segment:
        return Segment(
            fusion,
            sel.kind,
            sel.params,
            sel.rejections,
            bool(sel.scheduler and sel.scheduler.launches_kernel),
        )

    @property
    def name(self) -> str:
        return "host views" if self.fusion is None else "@" + self.fusion.sym_name.data


@dataclass(frozen=True)
class HostView:
    """Views the host does without a copy: ``output`` (a returned output's
    position) is a view of fusion input ``input`` through ``ops``; for host view
    ops of a segmented program that feed a kernel, ``output`` is None."""

    ops: tuple[str, ...]
    input: int | None
    output: int | None

    def __str__(self) -> str:
        src = "?" if self.input is None else f"input #{self.input}"
        dst = "an intermediate" if self.output is None else f"output #{self.output}"
        return f"{dst} = {' -> '.join(self.ops)} of {src}"


@dataclass(frozen=True)
class Plan:
    name: str
    target: GpuTarget
    segments: tuple[Segment, ...]
    host_views: tuple[HostView, ...] = ()
    whole: Segment | None = None
    """The registry's answer for the whole fusion when it was segmented."""
    error: str | None = None
    """Why a fusion no scheduler accepts could not be segmented."""

    @property
    def num_kernels(self) -> int:
        """Kernel launches of one run: the lowering's count for every segment that has
        one, else one per segment that launches a kernel."""
        return sum(
            s.kernels if s.kernels is not None else int(s.launches_kernel) for s in self.segments
        )

    @property
    def is_complete(self) -> bool:
        """Every segment has a scheduler."""
        return all(s.scheduler is not None for s in self.segments)

    @property
    def segmented(self) -> bool:
        return self.whole is not None

    def __str__(self) -> str:
        lines = [
            f"plan for @{self.name} on {self.target.name}: {len(self.segments)} segment(s), "
            f"{self.num_kernels} kernel(s)"
        ]
        if self.whole is not None and self.whole.scheduler is not None:
            lines.append(f"  @{self.name} has a fuser.segment_set boundary; segmented")
        elif self.whole is not None:
            lines.append(f"  no single scheduler accepts @{self.name}; segmented")
            lines += [f"    rejected: {k}: {r}" for k, r in self.whole.rejections]
        for i, s in enumerate(self.segments):
            if s.scheduler is None:
                lines.append(
                    f"  segment {i}: no scheduler accepts {s.name}; it must be segmented"
                )
                if self.error:
                    lines.append(f"    segmentation failed: {self.error}")
            else:
                lines.append(f"  segment {i}: {s.scheduler}  {s.params}")
            lines += [f"    rejected: {k}: {r}" for k, r in s.rejections]
        lines += [f"  host view: {v}" for v in self.host_views]
        return "\n".join(lines)


def _output_views(fusion: FusionOp) -> list[HostView]:
    """Returned outputs that are only views of an input."""
    out: list[HostView] = []
    for k, v in enumerate(fusion.output_op.returned_values()):
        ops: list[str] = []
        while not isinstance(v, BlockArgument):
            op = v.owner
            if not isinstance(op, VIEW_OPS):
                break
            ops.append(op.name.removeprefix("fuser."))
            v = op.operands[0]
        if isinstance(v, BlockArgument) and ops and isinstance(v.type, TensorType):
            out.append(HostView(tuple(reversed(ops)), v.index, k))
    return out


def _program_views(program: Any) -> list[HostView]:
    """Host view ops of a segmented program: chains from a program input to a
    returned value are output views, other chains feed kernels."""
    from fuser.ir.dialects import hir as H

    returned = {v: k for k, v in enumerate(program.return_op.values)}
    views = [op for op in program.body.block.ops if isinstance(op, H.HostViewOp)]
    consumed = {op.view_input() for op in views}
    out: list[HostView] = []
    for op in views:
        if op.results[0] in consumed:
            continue  # not the end of a chain
        chain = [op]
        src = op.view_input()
        while isinstance(src.owner, H.HostViewOp):
            chain.append(src.owner)
            src = src.owner.view_input()
        names = tuple(o.name for o in reversed(chain))
        inp = src.index if isinstance(src, BlockArgument) else None
        out.append(HostView(names, inp, returned.get(op.results[0])))
    return out


def executable_plan(exe: Any, fusion: FusionOp, input_shapes: Sequence[object]) -> Plan:
    """The plan of a compiled ``fuser.runtime.driver.Executable`` of ``fusion``: one
    segment per ``hir.launch`` of its program, in order, with what ``select-schedulers``
    recorded on it (``fuser.schedule`` and, the driver running it with ``debug``, the
    rejections: no scheduler is asked again; a program with no launch: one ``no_op``
    segment); the program's host views; and, when the driver cut the fusion in
    several kernels or a cut was marked, the registry's answer for the whole fusion
    (why it was cut)."""
    target = exe.target
    segments = [Segment.from_schedule(exe.callee(op)) for op in exe.launches]
    if not segments:
        # The program launches nothing (every output is an input or a host view of
        # one): the no_op scheduler's answer, whatever the fusion's dead ops are.
        no_op = Segment(fusion, "no_op", None, (), False)
        return Plan(fusion.sym_name.data, target, (no_op,), tuple(_program_views(exe.program)))
    whole = Segment.from_selection(fusion, select(fusion, bind_sizes(fusion, input_shapes), target))
    cut = len(segments) > 1 or whole.scheduler is None or has_segment_boundary(fusion)
    return Plan(
        fusion.sym_name.data,
        target,
        tuple(segments),
        tuple(_program_views(exe.program)),
        whole if cut else None,
    )


def _shape_of(x: object) -> tuple[int, ...] | None:
    shape = getattr(x, "shape", None)
    if shape is not None and getattr(x, "ndim", 1) > 0:
        return tuple(int(d) for d in shape)
    if isinstance(x, tuple | list) and all(isinstance(d, int) for d in x):
        return tuple(x)
    return None


def has_segment_boundary(fusion: FusionOp) -> bool:
    """A ``fuser.segment_set`` whose operand an op of the fusion computes: the user
    marked a cut, so the fusion is segmented even when one scheduler accepts it."""
    return any(
        isinstance(op, SegmentSetOp) and not isinstance(op.operands[0], BlockArgument)
        for op in fusion.body.block.ops
    )


def needs_segmentation(fusion: FusionOp, sel: Selection) -> bool:
    """No scheduler accepts the whole fusion, or it has a segment boundary."""
    return sel.scheduler is None or has_segment_boundary(fusion)


def make_plan(
    fusion: FusionOp,
    input_shapes: Sequence[object],
    target: GpuTarget = DEFAULT_TARGET,
) -> Plan:
    """The registry's answer for the whole of ``fusion`` at these inputs (shapes,
    arrays, or scalar values; see ``analysis.sizes.bind_sizes``), without compiling
    anything: one segment, whose ``scheduler`` is None when no scheduler accepts it.
    ``executable_plan`` is the plan of what the compiler driver made of it."""
    sizes = bind_sizes(fusion, input_shapes)
    sel = select(fusion, sizes, target)
    whole = Segment.from_selection(fusion, sel)
    return Plan(fusion.sym_name.data, target, (whole,), tuple(_output_views(fusion)))
