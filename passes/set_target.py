"""``set-target{gpu=h100}``: record the GPU the module is compiled for as a fact in the
IR, the module attribute ``fuser.target = #fuser.target<...>``.

Options: ``gpu``: ``h100`` (default), ``h200``, or ``device`` (the properties of the GPU
present, read through the driver; the H100's without one). The passes that schedule and
lower (``segment``, ``select-schedulers``, ``lower-to-kernels``) then read the target
from the module instead of their own ``gpu`` options (``target_option``); a module may
also carry a hand-written ``#fuser.target`` (a what-if GPU).

Before::

    builtin.module {
      fuser.fusion @f(...) { ... }
    }

After ``set-target{gpu=h100}``::

    builtin.module attributes {fuser.target = #fuser.target<"h100", sm_90, sm_count = 132,
        regs_per_sm = 65536, ..., max_blocks_per_sm = 32>} {
      fuser.fusion @f(...) { ... }
    }

Nothing else changes: the fusions compute what they computed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fuser.passes.target_option import TARGET_ATTR, named_target
from fuser.schedulers.target import to_attr


@dataclass(frozen=True)
class SetTarget(ModulePass):
    """Attach ``fuser.target`` (the ``gpu`` option's properties) to the module."""

    name = "set-target"

    gpu: str = "h100"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.attributes[TARGET_ATTR] = to_attr(named_target(self.gpu, self.name))
