"""The scheduled form of a fusion for given inputs (``fd.scheduled_fusion_ir_for``).

Compiles the runtime fusion of these inputs (dynamic reshapes concretized) with the
compiler driver, as ``fd.execute`` does, runs ``schedule-fusions`` on each segment
fusion the program launches (the driver's pipeline ends with it) and returns the
module text: the segment with its ``fuser.schedule`` attribute and the ``iterdomain``
transforms, parallel types and ``iterdomain.loop`` of each scheduled tensor::

    >>> print(scheduled_fusion_ir_for(fd, [np.zeros((4, 1024), np.float32)]))
    builtin.module {
      fuser.fusion @nvfuser_fusion_id0_seg0(%t0 : !fuser.tensor<4x1024xf32>) -> ...
          attributes {fuser.schedule = {kind = "inner_persistent", ...}} {
        ...
        %t4_bidx = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
        ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

from fuser.ir.context import make_context
from fuser.ir.schedule import drop_schedule
from fuser.passes.schedule_fusions import ScheduleFusions

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition


def scheduled_fusion_ir_for(
    fd: FusionDefinition, inputs: Sequence[Any], gpu: str = "h100", *, tensor_transforms: bool = True
) -> str:
    """The IR text of what ``fd.execute`` compiles for ``inputs`` on ``gpu``: each
    segment fusion the ``Executable``'s program launches (the compiler driver's
    pipeline: types bound, the ``fuser.schedule`` of ``select-schedulers``), then
    ``schedule-fusions`` (its ``iterdomain`` transforms) unless ``tensor_transforms``
    is False; a program of several launches prints each segment under a
    ``// segment k: @name`` header."""
    from fuser.frontend import execution
    from fuser.frontend.validation import flatten_inputs, plain_inputs, validate_inputs
    from fuser.schedulers.target import get_target

    entry = fd._ensure_defined()
    plain = plain_inputs(inputs)
    validate_inputs(entry.inputs, plain)
    rt = execution.runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain)
    exe = execution.executable_for(entry, rt, flat, 0, get_target(gpu))
    segments = [exe.callee(op) for op in exe.launches]
    if len(segments) == 1:
        return _scheduled(segments[0], tensor_transforms)
    return "\n\n".join(
        f"// segment {k}: @{seg.sym_name.data}\n" + _scheduled(seg, tensor_transforms)
        for k, seg in enumerate(segments)
    )


def _scheduled(segment: Any, tensor_transforms: bool) -> str:
    """A module holding a copy of ``segment`` (its types bound, its ``fuser.schedule``
    chosen by the driver) with the loop nests ``schedule-fusions`` writes (the driver's
    pipeline ran it; a pipeline without it gets it here), or without any
    ``iterdomain`` op when ``tensor_transforms`` is False."""
    clone = segment.clone()
    module = ModuleOp([clone])
    if tensor_transforms:
        ScheduleFusions().apply(make_context(), module)
    else:
        drop_schedule(clone)
    module.verify()
    return str(module)


__all__ = ["scheduled_fusion_ir_for"]
