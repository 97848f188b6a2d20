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

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from fuser.ir.context import make_context
from fuser.passes.schedule_fusions import ScheduleFusions
from fuser.passes.select_schedulers import SelectSchedulers

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition


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


def scheduled_fusion_ir_for(
    fd: FusionDefinition, inputs: Sequence[Any], gpu: str = "h100", *, tensor_transforms: bool = True
) -> str:
    """The IR text of ``fd``'s fusion scheduled for ``inputs`` on ``gpu``; without
    ``tensor_transforms``, only the schedulers' decision (``select-schedulers``: the
    ``fuser.schedule`` attribute), not the ``iterdomain`` transforms."""
    from fuser.frontend import execution
    from fuser.frontend.validation import flatten_inputs, plain_inputs, validate_inputs
    entry = fd._ensure_defined()
    plain = plain_inputs(inputs)
    validate_inputs(entry.inputs, plain)
    rt = execution.runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain)
    segments = _segments(rt.fusion, flat)
    if segments is None:
        return _scheduled(rt.fusion, flat, gpu, tensor_transforms)
    # No single scheduler takes the fusion at these sizes: each segment of the
    # segmentation the GPU runs, scheduled for the shapes it is launched with.
    return "\n\n".join(
        f"// segment {k}: @{seg.sym_name.data}\n" + _scheduled(seg, seg_flat, gpu, tensor_transforms)
        for k, (seg, seg_flat) in enumerate(segments)
    )


def _scheduled(fusion: Any, flat: Sequence[Any], gpu: str, tensor_transforms: bool) -> str:
    sizes = sizes_option(flat)
    module = ModuleOp([fusion.clone()])
    ctx = make_context()
    SelectSchedulers(gpu=gpu, sizes=sizes).apply(ctx, module)
    if tensor_transforms:
        ScheduleFusions(sizes=sizes).apply(ctx, module)
    module.verify()
    return str(module)


def _shaped(shape: Sequence[int]) -> np.ndarray:
    """A float32 array of ``shape`` over one element (only its shape is read)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), tuple(shape), [0] * len(shape), writeable=False)


def _segments(fusion: Any, flat: Sequence[Any]) -> list[tuple[Any, list[Any]]] | None:
    """None when one scheduler takes ``fusion`` at these inputs; else every segment
    launch (``execution.segment_launches``) with stand-ins of its inputs' shapes."""
    from fuser.frontend.execution import segment_launches
    from fuser.runtime.cpu_runner import layout_of
    from fuser.runtime.plan import needs_segmentation
    from fuser.schedulers.analysis.sizes import bind_sizes
    from fuser.schedulers.registry import select
    from fuser.schedulers.target import DEFAULT_TARGET

    shape_args = [x.shape if isinstance(x, np.ndarray) else x for x in flat]
    selection = select(fusion, bind_sizes(fusion, shape_args), DEFAULT_TARGET)
    if not needs_segmentation(fusion, selection):
        return None
    layouts = [layout_of(x) if isinstance(x, np.ndarray) else None for x in flat]
    scalars = [None if isinstance(x, np.ndarray) else x for x in flat]
    return [
        (seg, [_shaped(lay.shape) if lay is not None else v for lay, v in zip(lays, vals, strict=True)])
        for seg, lays, vals in segment_launches(fusion, layouts, scalars)
    ]


__all__ = ["scheduled_fusion_ir_for", "sizes_option"]
