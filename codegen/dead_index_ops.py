"""Erase the index arithmetic a kernel computes and never reads.

The lowering builds index expressions as it goes: a simplification that finds a
value already computed (``kernel_builders.recombined``: the merge of a split is the
split index) leaves the ops of the longer form unread, and the uniform guard's
hoisting leaves its old copies. They are pure (``kernel.INDEX_ARITH_OPS`` and the
launch indices), so erasing them changes nothing but the CUDA C a reader sees::

    int t4 = t3 / 50257;                     int t4 = t3 / 50257;
    int t5 = t4 / 512;          (unread)     int t7 = t3 % 50257;
    int t7 = t3 % 50257;                     ...
    int t8 = t5 * 512;          (unread)
"""

from __future__ import annotations

from xdsl.ir import Block

from fuser.ir.dialects import kernel as k

__all__ = ["erase_dead_index_ops"]


def erase_dead_index_ops(block: Block) -> int:
    """Erase, to a fixed point, the pure index ops in ``block`` (and the regions in
    it) whose results nothing reads; returns how many."""
    erased = 0
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.walk())):
            pure = isinstance(op, k.INDEX_ARITH_OPS + k.LAUNCH_INDEX_OPS)
            if pure and all(not r.uses for r in op.results) and op.parent_block() is not None:
                op.detach()
                op.erase()
                erased += 1
                changed = True
    return erased
