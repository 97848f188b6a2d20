"""Which torch tensors ``FusionDefinition.from_pytorch`` takes: fuser's device model or nvFuser's.

fuser runs numpy arrays and CPU torch tensors on the CPU (the reference interpreter) and
GPU arrays on their GPU, so by default ``from_pytorch`` accepts CPU tensors.
nvFuser only takes CUDA tensors (and CPU scalar tensors, which it passes by value):
``set_cpu_tensors(False)`` selects nvFuser's model, in which ``from_pytorch`` rejects a
CPU tensor of rank > 0 with nvFuser's ``ValueError`` ("Found unsupported device cpu,
only scalar CPU or CUDA tensors are supported"). The conformance suite's CUDA mode runs
with it (``tests/conformance/conftest.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_from_pytorch_device", "cpu_tensors_allowed", "set_cpu_tensors"]

_cpu_tensors = [True]


def set_cpu_tensors(allowed: bool) -> bool:
    """Accept (True, fuser's default) or reject (False, nvFuser's model) CPU tensors of
    rank > 0 in ``from_pytorch``; returns the previous setting."""
    if not isinstance(allowed, bool):
        raise ValueError(f"set_cpu_tensors: expected True or False, got {allowed!r}")
    old = _cpu_tensors[0]
    _cpu_tensors[0] = allowed
    return old


def cpu_tensors_allowed() -> bool:
    """Whether ``from_pytorch`` accepts CPU tensors of rank > 0 (see the module)."""
    return _cpu_tensors[0]


def check_from_pytorch_device(tensor: Any) -> None:
    """nvFuser's ``from_pytorch`` check on a torch tensor, under nvFuser's model only."""
    if cpu_tensors_allowed():
        return
    if tensor.device.type == "cpu" and tensor.dim() > 0:
        raise ValueError(
            f"Found unsupported device {tensor.device}, only scalar CPU or CUDA tensors are supported"
        )
