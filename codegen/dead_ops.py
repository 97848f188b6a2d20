"""Erase the pure ops a kernel computes and never reads.

The lowering builds index expressions and conversions as it goes. A simplification
that finds a value already computed leaves the ops of the longer form unread:
``kernel_builders.recombined`` (the merge of a split index is the split index),
``KernelBuilder.to_storage`` (a bf16 value widened to f32 is stored as itself, not
rounded again). The uniform guard's hoisting leaves its old copies. Those ops are
pure: ``kernel.INDEX_ARITH_OPS``, the launch indices and float conversions. Erasing
them changes nothing but the CUDA C a reader sees (and the compiler's warnings)::

    int t4 = t3 / 50257;                     int t4 = t3 / 50257;
    int t5 = t4 / 512;          (unread)     int t7 = t3 % 50257;
    int t7 = t3 % 50257;                     ...
    int t8 = t5 * 512;          (unread)
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Block

from fuser.ir.dialects import kernel as k

__all__ = ["erase_dead_ops"]

PURE = (*k.INDEX_ARITH_OPS, *k.LAUNCH_INDEX_OPS, arith.ExtFOp, arith.TruncFOp)
"""The ops erased when nothing reads them."""


def erase_dead_ops(block: Block) -> int:
    """Erase, to a fixed point, the pure ops (``PURE``) in ``block`` and the regions
    in it whose results nothing reads; returns how many."""
    erased = 0
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.walk())):
            if isinstance(op, PURE) and all(not r.uses for r in op.results) and op.parent_block() is not None:
                op.detach()
                op.erase()
                erased += 1
                changed = True
    return erased
