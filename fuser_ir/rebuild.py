"""An operation built again with other operands or result types.

Passes that retype a value (``compute-half-in-float`` widens a chain to float32,
``lower-stream-loops`` drops the stream axis, the host rewrites give a view its
layout or swap it before an elementwise op) rebuild each op the same way: its class,
properties and attributes, new operands and result types::

    %y = fuser.exp %x : (!fuser.tensor<8xbf16>) -> !fuser.tensor<8xbf16>
    rebuilt(exp, operands=[%xf], result_types=[f32 tensor])
    %y2 = fuser.exp %xf : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>

The new op is not inserted anywhere and not verified: the caller places it (and
verifies it where the types may not fit).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, Operation, SSAValue


def rebuilt(
    op: Operation,
    *,
    operands: Sequence[SSAValue] | None = None,
    result_types: Sequence[Attribute] | None = None,
    properties: dict[str, Attribute] | None = None,
) -> Operation:
    """``op``'s class with its properties (or ``properties``) and attributes, and
    ``operands`` and ``result_types`` (``op``'s own where None). Regions and
    successors are not carried: for ops without them."""
    if op.regions or op.successors:
        raise ValueError(f"{op.name}: rebuilt() does not carry regions or successors")
    return type(op).create(
        operands=list(op.operands if operands is None else operands),
        result_types=list(op.result_types if result_types is None else result_types),
        properties=dict(op.properties if properties is None else properties),
        attributes=dict(op.attributes),
    )
