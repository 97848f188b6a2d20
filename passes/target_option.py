"""The GPU a pass schedules or lowers for: the module's ``fuser.target`` attribute
(``#fuser.target<...>``, attached by ``set-target``), or the pass's ``gpu`` option.

``segment``, ``select-schedulers`` and ``lower-to-kernels`` take ``gpu`` (``h100``,
``h200`` or ``device``). Left empty, the module's target is used, else the H100. Given
on a module that has a ``fuser.target``, it must name the same GPU: a pipeline cannot
schedule for one GPU and lower for another.

Not a pass: the helper those passes share (as ``sizes_option``).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects.fuser import TargetAttr
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget, from_attr, get_target

__all__ = ["TARGET_ATTR", "TargetOptionError", "module_target", "named_target", "resolve_target"]

TARGET_ATTR = "fuser.target"


class TargetOptionError(DiagnosticException):
    """An unknown ``gpu``, a malformed ``fuser.target``, or the two disagreeing."""


def module_target(module: ModuleOp, pass_name: str) -> GpuTarget | None:
    """The target the module's ``fuser.target`` attribute describes, if it has one."""
    attr = module.attributes.get(TARGET_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, TargetAttr):
        raise TargetOptionError(
            f"{pass_name}: the module's {TARGET_ATTR} must be a #fuser.target, got {attr}"
        )
    return from_attr(attr)


def named_target(gpu: str, pass_name: str) -> GpuTarget:
    """The preset (or ``device``) ``gpu`` names; an unknown name is an error naming
    the pass."""
    try:
        return get_target(gpu)
    except ValueError as e:
        raise TargetOptionError(f"{pass_name}: {e}") from None


def resolve_target(module: ModuleOp, gpu: str, pass_name: str) -> GpuTarget:
    """The target of a pass run with ``gpu`` on ``module`` (module docstring)."""
    in_ir = module_target(module, pass_name)
    if not gpu:
        return in_ir if in_ir is not None else DEFAULT_TARGET
    chosen = named_target(gpu, pass_name)
    if in_ir is not None and in_ir != chosen:
        raise TargetOptionError(
            f"{pass_name}: gpu={gpu} but the module's {TARGET_ATTR} is '{in_ir.name}'; "
            "leave gpu out to use the module's target, or set-target first"
        )
    return chosen
