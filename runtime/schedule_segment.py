"""Schedule one segment as the compiler driver schedules each of its segments.

``schedule_segment(fusion, signature)`` is for a fusion that is already one segment
(a test's fusion, a tuning variant): a copy, its extents bound, with its loop nest
written; the driver's pipeline does the same to every segment it makes::

    fuser.fusion @f(%x : !fuser.tensor<?x?xf32>) ... { ... }

becomes (``bind-sizes{sizes="0=64x1024"}``, ``select-schedulers``, ``schedule-fusions``)::

    fuser.fusion @f(%x : !fuser.tensor<64x1024xf32>) ... attributes {fuser.schedule = {...}} {
      ...
      iterdomain.loop %y [%y_bidx, %y_tidx, %y_vec] : ...
    }
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.context import make_context
from fuser.ir.dialects import fuser as F
from fuser.passes import all_passes
from fuser.passes.target_option import TARGET_ATTR
from fuser.runtime.signature import Signature
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget, to_attr

__all__ = ["ScheduleSegmentError", "schedule_segment"]


class ScheduleSegmentError(ValueError):
    """A segment that cannot be scheduled for a signature; names the pass's message."""



def schedule_segment(
    fusion: F.FusionOp,
    signature: Signature,
    target: GpuTarget = DEFAULT_TARGET,
    chosen: tuple[str, object] | None = None,
) -> F.FusionOp:
    """A copy of one segment, its extents bound to ``signature`` and its loop nest
    written as the driver writes a segment's: ``bind-sizes``, then ``select-schedulers``
    (unless a ``fuser.schedule`` is recorded) and ``schedule-fusions``, without
    segmenting (a fusion no single scheduler takes is a ``ScheduleSegmentError`` with every
    scheduler's reason). ``chosen`` (a scheduler kind and its parameters, e.g. a
    tuning variant) is recorded as the ``fuser.schedule`` instead of asking the
    schedulers. A fusion that already holds a loop nest, or a user schedule
    (``fuser.unscheduled``), is returned as it is."""
    from fuser.codegen.lower import UNSCHEDULED
    from fuser.codegen.lower.loop_nest import has_loop_nest
    from fuser.passes.bind_sizes import BindSizes
    from fuser.passes.select_schedulers import SCHEDULE_ATTR

    if chosen is None and (UNSCHEDULED in fusion.attributes or has_loop_nest(fusion)):
        return fusion
    clone = fusion.clone()
    if chosen is not None:
        from fuser.ir.schedule import drop_schedule
        from fuser.schedulers.params import schedule_attr

        drop_schedule(clone)
        clone.attributes.pop(UNSCHEDULED, None)
        clone.attributes[SCHEDULE_ATTR] = schedule_attr(*chosen)
    module = ModuleOp(Region(Block()))
    module.body.block.add_op(clone)
    module.attributes[TARGET_ATTR] = to_attr(target)
    passes = ["schedule-fusions"] if SCHEDULE_ATTR in clone.attributes else ["select-schedulers", "schedule-fusions"]
    try:
        BindSizes(signature.sizes_option()).apply(make_context(), module)
        PassPipeline.parse_spec(all_passes(), ",".join(passes)).apply(make_context(), module)
        module.verify()
    except (DiagnosticException, ValueError) as e:
        raise ScheduleSegmentError(f"cannot schedule @{fusion.sym_name.data}: {e}") from None
    clone.detach()
    return clone
