"""The scheduled form of a fusion for given inputs (``fd.scheduled_fusion_ir_for``).

Runs ``select-schedulers`` and ``schedule-fusions`` on the runtime fusion of these
inputs (dynamic reshapes concretized, as ``fd.execute`` does) and returns the module
text: the fusion with its ``fuser.schedule`` attribute and the ``iterdomain``
transforms, parallel types and ``iterdomain.loop`` of each scheduled tensor::

    >>> print(scheduled_fusion_ir_for(fd, [np.zeros((4, 1024), np.float32)]))
    builtin.module {
      fuser.fusion @nvfuser_fusion_id0(%t0 : !fuser.tensor<?x?xf32>) -> ...
          attributes {fuser.schedule = {kind = "inner_persistent", ...}} {
        ...
        %t4_bidx = iterdomain.parallelize %0 to BIDx : !iterdomain.id<?> -> !iterdomain.id<?, BIDx>
        ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp

from fuser_ir.context import make_context

if TYPE_CHECKING:
    from fuser_ir.frontend.fusion_definition import FusionDefinition


def sizes_option(flat_inputs: Sequence[Any]) -> str:
    """The ``sizes`` pass option for flat runtime inputs: tensors by shape, integer
    scalars by value (other scalars are not needed to bind extents)."""
    items: list[str] = []
    for i, x in enumerate(flat_inputs):
        shape = getattr(x, "shape", None)
        if shape is not None and getattr(x, "ndim", 0) > 0:
            items.append(f"{i}=" + "x".join(str(int(d)) for d in shape))
        elif isinstance(x, bool):
            continue
        elif isinstance(x, int) and x >= 0:
            items.append(f"{i}={x}")
    return ",".join(items)


def scheduled_fusion_ir_for(fd: FusionDefinition, inputs: Sequence[Any], gpu: str = "h100") -> str:
    """The IR text of ``fd``'s fusion scheduled for ``inputs`` on ``gpu``."""
    from fuser_ir.frontend import execution
    from fuser_ir.frontend.validation import flatten_inputs, plain_inputs, validate_inputs
    from passes.schedule_fusions import ScheduleFusions
    from passes.select_schedulers import SelectSchedulers

    entry = fd._ensure_defined()
    plain = plain_inputs(inputs)
    validate_inputs(entry.inputs, plain)
    rt = execution.runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain)
    sizes = sizes_option(flat)
    module = ModuleOp([rt.fusion.clone()])
    ctx = make_context()
    SelectSchedulers(gpu=gpu, sizes=sizes).apply(ctx, module)
    ScheduleFusions(sizes=sizes).apply(ctx, module)
    module.verify()
    return str(module)


__all__ = ["scheduled_fusion_ir_for", "sizes_option"]
