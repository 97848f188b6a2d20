"""nvFuser's kernel strings of a fusion that ran: ``fd.last_cuda_code``,
``fd.cuda_code_for``, ``fd.last_scheduled_fusion_ir``, ``fd.scheduled_fusion_ir_for``.

nvFuser answers them from its compiled kernels: for input signatures that ran, and
with ``RuntimeError`` otherwise (``Fusion N has never been executed ...``, or for inputs
whose kernel was not compiled). fuser answers for the input layouts a fusion ran with
(``CacheEntry.compiled``, keyed by ``layout_key``: dtype, shape and strides of each
tensor, the value of each integer scalar), with the same errors otherwise:

- after a GPU run, ``last_cuda_code`` is the CUDA C of the kernels that ran, and
  ``cuda_code_for`` answers for GPU inputs from the GPU plans ``execute`` keeps (keyed by
  dtype, shape, strides, device and pointer alignment; nothing is recorded per run);
- after a CPU run (numpy or CPU torch inputs run on the reference interpreter; no
  CUDA is compiled), the strings are the ones fuser's GPU path generates for the
  same input layouts: the kernels ``fd.generate_cuda_code(inputs)`` prints, and the
  scheduled IR of ``fd.generate_scheduled_fusion_ir(inputs)``. They are generated
  when asked, not compiled nor launched;
- a user ``schedule()`` (``user_schedule``) answers with its own fusion: the serial
  kernels of an unscheduled fusion (``fuser.codegen.lower.serial_schedule``) and its IR.

``intrinsic_code=True`` includes the helper preamble each kernel is compiled with;
``tensor_transforms=True`` includes the ``iterdomain`` transforms of the schedule
(without it, the fusion with the schedulers' decision only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fuser.frontend import user_schedule
from fuser.frontend.layouts import layout_key
from fuser.ir.fp8 import as_strided

if TYPE_CHECKING:
    from fuser.frontend.cache import CacheEntry
    from fuser.frontend.fusion_definition import FusionDefinition

__all__ = [
    "cuda_code_for",
    "generate_cuda_code",
    "last_cuda_code",
    "last_scheduled_fusion_ir",
    "record_run",
    "scheduled_fusion_ir_for",
]


def _key_meta(k: Any) -> Any:
    """Metadata of one input from its ``gpu_executor.fast_key`` (GPU tensors: dtype,
    shape and strides; scalars: a zero of their type, or their value when kept)."""
    from fuser.ir.dtypes import DType
    from fuser.runtime import gpu_arrays as ga

    if isinstance(k, tuple) and len(k) == 5:
        dtype, shape, strides = k[0], tuple(k[1]), tuple(k[2])
        if not isinstance(dtype, DType):
            import torch

            dtype = ga._torch_dtypes(torch)[dtype]
        dt = dtype.to_numpy()
        return as_strided(
            np.zeros(1, dt), shape, [s * dt.itemsize for s in strides], writeable=False
        )
    if isinstance(k, tuple) and len(k) == 2:  # (type, value): kept by value
        return list(k[1]) if isinstance(k[1], tuple) else k[1]
    return k(0)


def _gpu_plan(entry: CacheEntry, inputs: Sequence[Any]) -> tuple[Any, list[Any]]:
    """The GPU plan of a run with these GPU inputs and their metadata; nvFuser's errors
    when none ran (GPU plans are keyed like ``execute``'s fast path)."""
    key = entry.gpu_key(inputs)
    found = entry.gpu_plans.get(key)
    if found is None:
        if not entry.gpu_plans and not entry.compiled:
            raise _never(entry)
        raise RuntimeError(
            f"Fusion {entry.id} is not compiled for these inputs (no GPU run with their layout)"
        )
    return found[0], [_key_meta(k) for k in key]


def _last_gpu_metas(entry: CacheEntry, plan: Any) -> list[Any]:
    """The metadata of the inputs of the last GPU run (the key of its plan)."""
    for key, (p, _) in entry.gpu_plans.items():
        if p is plan:
            return [_key_meta(k) for k in key]
    raise _never(entry)


def record_run(entry: CacheEntry, inputs: Sequence[Any]) -> None:
    """Remember that ``entry`` ran with these inputs' layouts (after a run)."""
    key, metas = layout_key(entry, inputs)
    entry.compiled.setdefault(key, metas)
    entry.last_layout = key


# ---- errors ----------------------------------------------------------------------------


def defined_entry(fd: FusionDefinition) -> CacheEntry:
    """The fusion of ``fd``; nvFuser's ``RuntimeError`` when it is not defined yet."""
    if fd._entry is None:
        raise RuntimeError("Invalid fusion definition!")
    return fd._entry


def _never(entry: CacheEntry) -> RuntimeError:
    return RuntimeError(
        f"Fusion {entry.id} has never been executed via FusionExecutorCache. (fuser answers for "
        "input layouts the fusion ran with; fd.generate_cuda_code(inputs) and "
        "fd.generate_scheduled_fusion_ir(inputs) show them for any inputs)"
    )


def _compiled_metas(entry: CacheEntry, inputs: Sequence[Any]) -> list[Any]:
    key, _ = layout_key(entry, inputs)
    metas = entry.compiled.get(key)
    if metas is None:
        if not entry.compiled:
            raise _never(entry)
        raise RuntimeError(
            f"Fusion {entry.id} is not compiled for these inputs (it ran with "
            f"{len(entry.compiled)} other input layout(s)); fd.generate_cuda_code(inputs) "
            "shows the CUDA fuser generates for them"
        )
    return metas


# ---- CUDA code -------------------------------------------------------------------------


def _strip(src: str, intrinsic_code: bool) -> str:
    if intrinsic_code:
        return src
    from fuser.codegen.cuda_printer import without_preamble

    return without_preamble(src)


def generate_cuda_code(
    entry: CacheEntry, inputs: Sequence[Any], intrinsic_code: bool = True
) -> str:
    """The CUDA C fuser generates for ``inputs`` (any layouts; no GPU needed): the
    kernels of every launch of the compiled program, a program of several launches
    under one ``// segment k: @name (scheduler, n kernel(s))`` header per launch."""
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.frontend import execution

    lowered = execution.lowered_segments(entry, inputs)
    if len(lowered) == 1:
        return "\n\n".join(_strip(print_cuda(m), intrinsic_code) for m in lowered[0][1].modules())
    parts = []
    for k, (seg, low) in enumerate(lowered):
        header = (
            f"// segment {k}: @{seg.sym_name.data} ({low.scheduler}, {len(low.kernels)} kernel(s))"
        )
        parts.append(
            "\n\n".join([header, *(_strip(print_cuda(m), intrinsic_code) for m in low.modules())])
        )
    return "\n\n".join(parts)


def _user_cuda_code(entry: CacheEntry, sched: Any, intrinsic_code: bool) -> str:
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.codegen.dependent_launch import lower_for_launch
    from fuser.codegen.lower.common import LoweringError
    from fuser.frontend.validation import flatten_inputs
    from fuser.runtime.cpu_runner import layout_of
    from fuser.runtime.signature import kernel_layouts
    from fuser.schedulers.target import from_device

    flat = flatten_inputs(entry.inputs, sched.metas)
    layouts = [layout_of(x) if isinstance(x, np.ndarray) else None for x in flat]
    scalars = [None if isinstance(x, np.ndarray) else x for x in flat]
    try:
        lowered = lower_for_launch(sched.fusion, kernel_layouts(layouts), from_device(), scalars)
    except LoweringError as e:
        raise RuntimeError(f"Fusion {entry.id}: the user schedule has no kernel: {e}") from None
    return "\n\n".join(_strip(print_cuda(m), intrinsic_code) for m in lowered.modules())


def _checked(code: str, entry: CacheEntry) -> str:
    if "__global__" not in code:
        raise _no_kernel(entry)
    return code


def _no_kernel(entry: CacheEntry) -> RuntimeError:
    return RuntimeError(
        f"Fusion {entry.id} launched no kernel for these inputs (its outputs are views of "
        "its inputs, or empty)"
    )


def _launched(
    fd: FusionDefinition, entry: CacheEntry, metas: list[Any], intrinsic_code: bool
) -> str:
    """The kernels the GPU path launches for ``metas`` (a view-only fusion's host views
    launch none, although ``generate_cuda_code`` can print a copy kernel for them)."""
    if fd.plan(metas).num_kernels == 0:
        raise _no_kernel(entry)
    return _checked(generate_cuda_code(entry, metas, intrinsic_code), entry)


def last_cuda_code(fd: FusionDefinition, intrinsic_code: bool, override_user_schedule: bool) -> str:
    """``fd.last_cuda_code`` (see the module docstring)."""
    entry = defined_entry(fd)
    sched = entry.last_user_schedule
    if sched is not None and not override_user_schedule:
        return _user_cuda_code(entry, sched, intrinsic_code)
    last = entry.last_run
    if last is None:
        raise _never(entry)
    if last != "cpu":
        return _checked("\n".join(_strip(s, intrinsic_code) for s in last.cuda_sources()), entry)
    if entry.last_layout is None:
        raise _never(entry)
    return _launched(fd, entry, entry.compiled[entry.last_layout], intrinsic_code)


def cuda_code_for(
    fd: FusionDefinition, inputs: Sequence[Any], intrinsic_code: bool, override_user_schedule: bool
) -> str:
    """``fd.cuda_code_for`` (see the module docstring)."""
    entry = defined_entry(fd)
    if not override_user_schedule:
        sched = user_schedule.find(entry, inputs)
        if sched is not None:
            return _user_cuda_code(entry, sched, intrinsic_code)
    from fuser.frontend.execution import _any_gpu_input

    if _any_gpu_input(inputs):
        plan, _ = _gpu_plan(entry, inputs)
        return _checked("\n".join(_strip(s, intrinsic_code) for s in plan.cuda_sources()), entry)
    return _launched(fd, entry, _compiled_metas(entry, inputs), intrinsic_code)


# ---- scheduled IR ----------------------------------------------------------------------


def last_scheduled_fusion_ir(
    fd: FusionDefinition, tensor_transforms: bool, override_user_schedule: bool
) -> str:
    """``fd.last_scheduled_fusion_ir`` (see the module docstring)."""
    from fuser.frontend.scheduled_ir import scheduled_fusion_ir_for as scheduled

    entry = defined_entry(fd)
    sched = entry.last_user_schedule
    if sched is not None and not override_user_schedule:
        return sched.ir()
    last = entry.last_run
    if last is not None and last != "cpu":
        return scheduled(fd, _last_gpu_metas(entry, last), tensor_transforms=tensor_transforms)
    if entry.last_layout is None:
        raise _never(entry)
    return scheduled(fd, entry.compiled[entry.last_layout], tensor_transforms=tensor_transforms)


def scheduled_fusion_ir_for(
    fd: FusionDefinition,
    inputs: Sequence[Any],
    tensor_transforms: bool,
    override_user_schedule: bool,
) -> str:
    """``fd.scheduled_fusion_ir_for`` (see the module docstring)."""
    from fuser.frontend.scheduled_ir import scheduled_fusion_ir_for as scheduled

    entry = defined_entry(fd)
    if not override_user_schedule:
        sched = user_schedule.find(entry, inputs)
        if sched is not None:
            return sched.ir()
    from fuser.frontend.execution import _any_gpu_input

    if _any_gpu_input(inputs):
        _, metas = _gpu_plan(entry, inputs)
        return scheduled(fd, metas, tensor_transforms=tensor_transforms)
    return scheduled(fd, _compiled_metas(entry, inputs), tensor_transforms=tensor_transforms)
