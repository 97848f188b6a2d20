"""nvFuser's ``fd.execute`` keywords beyond the inputs, checked before a run.

- ``device``: ``None``, a device index, ``"cpu"``/``"cuda"``/``"cuda:N"`` or a
  ``torch.device``. fuser runs where the inputs are (CPU inputs on the reference
  interpreter, GPU arrays on their GPU); a CUDA device given with CPU inputs, or a
  device other than the GPU inputs', is a ``ValueError`` rather than a silent run
  elsewhere.
- ``_enable_options`` / ``_disable_options``: lists of NVFUSER_ENABLE/DISABLE option
  names (strings). They tune nvFuser's C++ kernels and checks; fuser's results do not
  depend on them, so they are checked for type only, but for one: disabling
  ``matmul_expr_eval`` asks for matrix products in generated kernels (nvFuser's matmul
  scheduler), which fuser does not have (its matmuls and linears are library calls):
  a fusion with one raises nvFuser's ``RuntimeError`` (no scheduler for the segment)
  instead of running them through the library it was told not to use.
- ``print_repro``: prints ``fd.repro_script_for(inputs)`` before running;
  ``save_repro_inputs``: keeps that script for ``fd.last_repro_script()``.
- ``profile``, ``capture_debug_output``, ``override_user_schedule``: booleans (checked
  here; ``FusionDefinition.execute`` acts on them: ``fuser.frontend.profiling``, the
  captured ``fd.debug_output()``, ``fuser.frontend.user_schedule``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from fuser.frontend.validation import is_torch_tensor


def parse_device(device: Any) -> tuple[str, int] | None:
    """``None`` or (``"cpu"``/``"cuda"``, index); ``ValueError`` for anything else."""
    if device is None:
        return None
    if isinstance(device, bool):
        raise ValueError(f"execute: device must be an index, a string or a torch.device, got {device!r}")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"execute: device index must be >= 0, got {device}")
        return ("cuda", device)
    text = str(device) if type(device).__name__ == "device" else device
    if not isinstance(text, str):
        raise ValueError(f"execute: device must be an index, a string or a torch.device, got {device!r}")
    kind, _, index = text.partition(":")
    if kind not in ("cpu", "cuda") or (index and not index.isdigit()):
        raise ValueError(f"execute: unknown device {device!r} (expected 'cpu', 'cuda' or 'cuda:N')")
    return (kind, int(index) if index else 0)


_DEFAULT_DEVICE: tuple[str, int] | None = None


def set_default_device(device: Any) -> None:
    """Where a fusion without tensor inputs (only scalars, or none) runs: ``None`` or
    ``"cpu"`` (the default: the reference interpreter, torch CPU tensors out) or
    ``"cuda"``/``"cuda:N"``/an index (the GPU, torch CUDA tensors out: nvFuser's
    behaviour, whose fusions always run on ``cuda:0``). Fusions with tensor inputs run
    where their inputs are, whatever this says."""
    global _DEFAULT_DEVICE
    parsed = parse_device(device)
    _DEFAULT_DEVICE = None if parsed is None or parsed[0] == "cpu" else parsed


@contextlib.contextmanager
def default_device_as(device: Any) -> Iterator[None]:
    """``set_default_device(device)`` inside the ``with`` block, the previous default
    restored after it (a torch-backend partition without inputs runs on its traced
    device this way)."""
    global _DEFAULT_DEVICE
    saved = _DEFAULT_DEVICE
    set_default_device(device)
    try:
        yield
    finally:
        _DEFAULT_DEVICE = saved


def default_device() -> tuple[str, int] | None:
    """The GPU that fusions without tensor inputs run on, or None for the CPU
    (``set_default_device``)."""
    return _DEFAULT_DEVICE


def _input_device(value: Any) -> tuple[str, int] | None:
    """Where a tensor input lives: ``("cuda", i)`` for torch CUDA tensors, ``("cpu", 0)``
    for CPU tensors and numpy arrays, None for scalars and other arrays."""
    if is_torch_tensor(value):
        dev = value.device
        return ("cuda", dev.index or 0) if dev.type == "cuda" else ("cpu", 0)
    if hasattr(value, "__array_interface__") and hasattr(value, "shape"):
        return ("cpu", 0)
    return None


def _check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"execute: {name} must be True or False, got {value!r}")
    return value


def _check_options(name: str, value: Any) -> None:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"execute: {name} must be a list of option names, got {value!r}")
    for v in value:
        if not isinstance(v, str):
            raise ValueError(f"execute: {name} entries must be strings, got {v!r}")


def _check_library_matmuls(fd: Any) -> None:
    """``matmul_expr_eval`` disabled: a matmul or linear has no scheduler in fuser."""
    from fuser.ir.dialects.fuser import library_ops

    ops = library_ops(fd._ensure_defined().fusion)
    if ops:
        raise RuntimeError(
            f"Can not find a scheduler to schedule fusion segment: {ops[0].name} runs only as a library call "
            "(nvFuser's ExprEval), which _disable_options=['matmul_expr_eval'] turns off, and fuser generates "
            "no matmul kernels"
        )


def check_execute_options(
    fd: Any,
    inputs: Sequence[Any],
    *,
    device: Any,
    override_user_schedule: Any,
    capture_debug_output: Any,
    print_repro: Any,
    profile: Any,
    save_repro_inputs: Any,
    enable_options: Any,
    disable_options: Any,
) -> None:
    """Check the keywords; print or keep the repro script when asked."""
    if (
        device is None
        and override_user_schedule is False
        and capture_debug_output is False
        and print_repro is False
        and profile is False
        and save_repro_inputs is False
        and not enable_options
        and not disable_options
    ):
        return  # every keyword at its default (the hot path of a cache hit)
    wanted = parse_device(device)
    _check_options("_enable_options", enable_options)
    _check_options("_disable_options", disable_options)
    if "matmul_expr_eval" in disable_options:
        _check_library_matmuls(fd)
    for name, value in (
        ("profile", profile),
        ("capture_debug_output", capture_debug_output),
        ("override_user_schedule", override_user_schedule),
    ):
        _check_flag(name, value)
    if wanted is not None and isinstance(inputs, Sequence) and not isinstance(inputs, str):
        for i, v in enumerate(inputs):
            where = _input_device(v)
            if where is not None and where != wanted:
                raise ValueError(
                    f"execute: input {i} is on {where[0]}:{where[1]} but device "
                    f"{device!r} was given"
                )
    repro = _check_flag("print_repro", print_repro)
    keep = _check_flag("save_repro_inputs", save_repro_inputs)
    if repro or keep:
        script = fd.repro_script_for(inputs)
        if repro:
            print(script)
        if keep:
            fd.__dict__["_last_repro_script"] = script
