"""Outputs that are only views of an input: the chain of view ops (``VIEW_OPS``:
reshape, permute, broadcast, squeeze, slice, ...) from a fusion input to a value, and its
evaluation on an input array through the reference semantics.

A returned value that is such a chain needs no kernel: the frontend and the GPU executor
return a view of the input (numpy or torch), as nvFuser does for its alias outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.ir.dialects.fuser import VIEW_OPS, TensorType


def view_chain(value: SSAValue) -> tuple[int, list[Operation]] | None:
    """``(input position, view ops in order)`` when ``value`` is only a view of an input."""
    ops: list[Operation] = []
    while not isinstance(value, BlockArgument):
        op = value.owner
        if not isinstance(op, VIEW_OPS):
            return None
        ops.append(op)
        value = op.operands[0]
    if not isinstance(value.type, TensorType):
        return None
    return value.index, ops[::-1]


def apply_view_chain(chain: tuple[int, list[Operation]], flat: list[Any]) -> np.ndarray:
    from fuser.ir.reference import evaluate_op

    memo: dict[SSAValue, Any] = {}

    def scalar(v: SSAValue) -> Any:
        if isinstance(v, BlockArgument):
            return flat[v.index]
        if v not in memo:
            op = v.owner
            assert isinstance(op, Operation)
            res = evaluate_op(op, [scalar(o) for o in op.operands])
            for r, x in zip(op.results, res, strict=True):
                memo[r] = x
        return memo[v]

    pos, ops = chain
    x = flat[pos]
    for op in ops:
        x = evaluate_op(op, [x, *[scalar(o) for o in op.operands[1:]]])[0]
    return x
