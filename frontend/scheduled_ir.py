"""The scheduled form of a fusion for given inputs (``fd.scheduled_fusion_ir_for``).

Compiles the runtime fusion of these inputs (dynamic reshapes concretized) with the
compiler driver, as ``fd.execute`` does, and returns the module text of each segment
fusion the program launches as the driver's ``schedule-fusions`` left it (a pipeline
without that pass: ``schedule-fusions`` runs here): the segment with its
``fuser.schedule`` attribute and the ``iterdomain`` transforms, parallel types and
``iterdomain.loop`` of each scheduled tensor: what its kernels are lowered from::

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
    # The driver's pipeline wrote the loop nests it lowers; a pipeline without
    # schedule-fusions gets them here.
    write = not any(p.split("{", 1)[0].strip() == "schedule-fusions" for p in fd.pipeline)
    if len(segments) == 1:
        return _scheduled(segments[0], tensor_transforms, write)
    return "\n\n".join(
        f"// segment {k}: @{seg.sym_name.data}\n" + _scheduled(seg, tensor_transforms, write)
        for k, seg in enumerate(segments)
    )


def _scheduled(segment: Any, tensor_transforms: bool, write: bool) -> str:
    """A module holding a copy of ``segment`` (its types bound, its ``fuser.schedule``
    chosen by the driver) with the loop nests the driver's ``schedule-fusions`` wrote
    (``write``: a pipeline without it, every loop nest written here), or without any
    ``iterdomain`` op when ``tensor_transforms`` is False."""
    clone = segment.clone()
    module = ModuleOp([clone])
    if not tensor_transforms:
        drop_schedule(clone)
    elif write:
        ScheduleFusions().apply(make_context(), module)
    module.verify()
    return str(module)


__all__ = ["scheduled_fusion_ir_for"]
