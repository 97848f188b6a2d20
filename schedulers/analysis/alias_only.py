"""Alias-only detection: every output is a view of an input.

A fusion whose outputs are all fusion inputs seen through chains of view ops
(``reshape``, ``permute``, ``squeeze``, ``broadcast``, ``broadcast_in_dim``,
``slice``, ``expand``) computes nothing: the host can return strided views of the
input buffers, and no kernel is launched::

    fuser.fusion @v(%x : !fuser.tensor<8x1x6xf32>) -> !fuser.tensor<2x3x8xf32> {
      %s = fuser.squeeze %x {dims = array<i64: 1>} ...
      %p = fuser.permute %s {dims = array<i64: 1, 0>} ...
      %r = fuser.reshape %p {new_shape = array<i64: 2, 3, 8>, ...} ...
      fuser.output %r : !fuser.tensor<2x3x8xf32>
    }

Outputs written in place into an input (``alias_inputs``) need a kernel, so they
make a fusion not alias-only.
"""

from __future__ import annotations

from xdsl.ir import BlockArgument, SSAValue

from fuser.ir.dialects.fuser import FusionOp, TensorType, ViewLikeOp

from .graph import producer_op


def view_source(v: SSAValue) -> BlockArgument | None:
    """The fusion input ``v`` is a view of, or None when ``v`` is computed."""
    while True:
        if isinstance(v, BlockArgument):
            return v
        op = producer_op(v)
        if not isinstance(op, ViewLikeOp):
            return None
        v = op.operands[0]


def alias_only_reason(fusion: FusionOp) -> str | None:
    """None when every output is a view of an input; else why not."""
    out = fusion.output_op
    if any(a >= 0 for a in out.get_alias_inputs()):
        return "an output is written in place into an input"
    if not out.values:
        return "the fusion has no outputs"
    for i, v in enumerate(out.values):
        if not isinstance(v.type, TensorType):
            return f"output #{i} is a scalar"
        if view_source(v) is None:
            op = producer_op(v)
            return f"output #{i} is computed by {op.name if op else 'an input'}"
    return None


def is_alias_only(fusion: FusionOp) -> bool:
    return alias_only_reason(fusion) is None
