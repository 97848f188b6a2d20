"""Test fusions for the schedulers, built with the fuser dialect's typed constructors."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Operation, Region, SSAValue

from fuser.ir.dialects.fuser import (
    BINARY_OP_CLASSES,
    UNARY_OP_CLASSES,
    BroadcastOp,
    CastOp,
    ConstantOp,
    FusionOp,
    MaxOp,
    OutputOp,
    PermuteOp,
    ReshapeOp,
    SqueezeOp,
    SumOp,
    TensorType,
    VarMeanOp,
)
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN

F32 = DType.float32
F16 = DType.float16


class Builder:
    """Appends ops to a fusion body; ``finish`` wraps them in a ``fuser.fusion``."""

    def __init__(self, name: str = "f") -> None:
        self.name = name
        self.block = Block()

    def input(self, shape: Sequence[int], dtype: DType = F32, **layout: object) -> SSAValue:
        return self.block.insert_arg(TensorType(shape, dtype, **layout), len(self.block.args))  # type: ignore[arg-type]

    def scalar_input(self, dtype: DType = F32) -> SSAValue:
        return self.block.insert_arg(dtype.to_xdsl(), len(self.block.args))

    def op(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float, dtype: DType = DType.float64) -> SSAValue:
        return self.op(ConstantOp(value, dtype))

    def unary(self, name: str, x: SSAValue) -> SSAValue:
        return self.op(UNARY_OP_CLASSES[name](x))

    def binary(self, name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(BINARY_OP_CLASSES[name](a, b))

    def sum(self, x: SSAValue, dims: Sequence[int], keepdim: bool = False) -> SSAValue:
        return self.op(SumOp(x, dims, keepdim))

    def max(self, x: SSAValue, dims: Sequence[int], keepdim: bool = False) -> SSAValue:
        return self.op(MaxOp(x, dims, keepdim))

    def broadcast(self, x: SSAValue, flags: Sequence[bool]) -> SSAValue:
        return self.op(BroadcastOp(x, flags))

    def cast(self, x: SSAValue, dtype: DType) -> SSAValue:
        return self.op(CastOp(x, dtype))

    def finish(self, *outputs: SSAValue) -> FusionOp:
        self.block.add_op(OutputOp(list(outputs)))
        in_types = list(self.block.arg_types)
        out_types = [v.type for v in outputs]
        fusion = FusionOp(self.name, in_types, out_types, Region(self.block))
        fusion.verify()
        return fusion


def softmax(rank: int = 2) -> FusionOp:
    """softmax over the last axis of a symbolic [?, ?] input."""
    b = Builder("softmax")
    x = b.input([DYN] * rank)
    flags = [False] * (rank - 1) + [True]
    m = b.broadcast(b.max(x, [rank - 1]), flags)
    e = b.unary("exp", b.binary("sub", x, m))
    s = b.broadcast(b.sum(e, [rank - 1]), flags)
    return b.finish(b.binary("div", e, s))


def layer_norm_manual(dtype: DType = F32) -> FusionOp:
    """Layer norm over the last axis by hand: mean, centered, variance, scale, shift."""
    b = Builder("layer_norm")
    x = b.input([DYN, DYN], dtype)
    w = b.input([DYN], dtype)
    bias = b.input([DYN], dtype)
    xf = b.cast(x, F32) if dtype != F32 else x
    n = b.op(CastOp(b.op(_size(xf, 1)), F32))
    mean = b.binary("div", b.sum(xf, [1]), n)
    xc = b.binary("sub", xf, b.broadcast(mean, [False, True]))
    var = b.binary("div", b.sum(b.binary("mul", xc, xc), [1]), n)
    eps = b.const(1e-5)
    inv = b.unary("rsqrt", b.binary("add", var, eps))
    y = b.binary("mul", xc, b.broadcast(inv, [False, True]))
    wf = b.cast(w, F32) if dtype != F32 else w
    bf = b.cast(bias, F32) if dtype != F32 else bias
    y = b.binary(
        "add", b.binary("mul", y, b.broadcast(wf, [True, False])), b.broadcast(bf, [True, False])
    )
    return b.finish(b.cast(y, dtype) if dtype != F32 else y)


def _size(x: SSAValue, dim: int) -> Operation:
    from fuser.ir.dialects.fuser import SizeOp

    return SizeOp(x, dim)


def layer_norm_var_mean() -> FusionOp:
    """Layer norm with ``var_mean``."""
    b = Builder("layer_norm_var_mean")
    x = b.input([DYN, DYN])
    w = b.input([DYN])
    vm = VarMeanOp(x, [1], correction=0.0, keepdim=True)
    b.block.add_op(vm)
    inv = b.unary("rsqrt", b.binary("add", vm.var, b.const(1e-5)))
    y = b.binary("mul", b.binary("sub", x, vm.mean), inv)
    return b.finish(b.binary("mul", y, b.broadcast(w, [True, False])))


def rms_norm() -> FusionOp:
    b = Builder("rms_norm")
    x = b.input([DYN, DYN], F16)
    w = b.input([DYN], F16)
    xf = b.cast(x, F32)
    ms = b.sum(b.binary("mul", xf, xf), [1], keepdim=True)
    inv = b.unary("rsqrt", b.binary("add", ms, b.const(1e-6)))
    y = b.binary("mul", b.binary("mul", xf, inv), b.broadcast(b.cast(w, F32), [True, False]))
    return b.finish(b.cast(y, F16))


def sum_broadcast_add() -> FusionOp:
    """``x + sum(x, 1)[:, None]``: x is used before and after the reduction."""
    b = Builder("sum_broadcast_add")
    x = b.input([DYN, DYN])
    s = b.broadcast(b.sum(x, [1]), [False, True])
    return b.finish(b.binary("add", x, s))


def seed_reduction_epilogue() -> FusionOp:
    """Seed 000's example: ``t1 + sum(t0, 1)[:, None]`` with two different inputs."""
    b = Builder("reduction_epilogue")
    t0 = b.input([DYN, DYN])
    t1 = b.input([DYN, DYN])
    s = b.broadcast(b.sum(t0, [1]), [False, True])
    return b.finish(b.binary("add", t1, s))


def outer_norm() -> FusionOp:
    """Normalization over the outer axis (batch-norm-like): ``x - mean(x, 0)``."""
    b = Builder("outer_norm")
    x = b.input([DYN, DYN])
    n = b.op(CastOp(b.op(_size(x, 0)), F32))
    mean = b.binary("div", b.sum(x, [0]), n)
    return b.finish(b.binary("sub", x, b.broadcast(mean, [True, False])))


def layer_norm_backward() -> FusionOp:
    """The shape of layer-norm backward: row reductions of ``dy * w`` and
    ``dy * w * xhat`` (persistent over rows) plus column reductions of ``dy`` and
    ``dy * xhat`` (weight and bias gradients)."""
    b = Builder("layer_norm_backward")
    dy = b.input([DYN, DYN])
    x = b.input([DYN, DYN])
    mean = b.input([DYN, 1])
    rstd = b.input([DYN, 1])
    w = b.input([DYN])
    xhat = b.binary("mul", b.binary("sub", x, mean), rstd)
    g = b.binary("mul", dy, b.broadcast(w, [True, False]))
    a = b.sum(g, [1], keepdim=True)
    c = b.sum(b.binary("mul", g, xhat), [1], keepdim=True)
    n = b.op(CastOp(b.op(_size(x, 1)), F32))
    t = b.binary("sub", b.binary("sub", b.binary("mul", g, n), a), b.binary("mul", xhat, c))
    dx = b.binary("mul", b.binary("div", rstd, n), t)
    dw = b.sum(b.binary("mul", dy, xhat), [0])
    db = b.sum(dy, [0])
    return b.finish(dx, dw, db)


def row_sum() -> FusionOp:
    b = Builder("row_sum")
    x = b.input([DYN, DYN])
    return b.finish(b.sum(b.binary("mul", x, b.const(2.0)), [1]))


def col_sum() -> FusionOp:
    b = Builder("col_sum")
    x = b.input([DYN, DYN])
    return b.finish(b.sum(x, [0]))


def pointwise_broadcast() -> FusionOp:
    """``gelu-ish(x * w[None, :] + bias[:, None])``."""
    b = Builder("pointwise")
    x = b.input([DYN, DYN])
    w = b.input([DYN])
    bias = b.input([DYN])
    y = b.binary("mul", x, b.broadcast(w, [True, False]))
    y = b.binary("add", y, b.broadcast(bias, [False, True]))
    return b.finish(b.unary("tanh", y))


def permute_add(shape: Sequence[int] = (DYN, DYN)) -> FusionOp:
    """``permute(a, [1, 0]) + b``: a's innermost axis is b's outer axis."""
    bld = Builder("permute_add")
    a = bld.input(list(shape))
    b = bld.input([shape[1], shape[0]])
    return bld.finish(bld.binary("add", bld.op(PermuteOp(a, [1, 0])), b))


def views_only() -> FusionOp:
    """reshape, permute and squeeze only: every output is a view of the input."""
    b = Builder("views")
    x = b.input([8, 1, 6])
    y = b.op(SqueezeOp(x, [1]))
    y = b.op(PermuteOp(y, [1, 0]))
    y = b.op(ReshapeOp(y, [2, 3, 8]))
    return b.finish(y, x)
