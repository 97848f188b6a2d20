"""ATen FX graphs as fuser fusions: which ATen ops fuser runs, and the
``FusionDefinition`` of a partition of them (the torch.compile backend's
translation, ``fuser.frontend.torch_backend``).

A node is supported (``unsupported_reason`` is None) when its target is in ``OPS``,
its tensors have dtypes fuser computes, and its shapes are concrete (a symbolic size
stays in torch). ``definition_of(module)`` replays a partition's graph node by node as
``fd.ops`` calls: placeholders become ``define_tensor``/``define_scalar``, the output
node ``add_output``s. Every translated value is checked against the node's own
metadata (``meta["val"]``: shape and dtype); a mismatch is a ``TranslationError`` and
the partition stays in torch. For example (a GELU MLP's forward, after AOTAutograd)::

    %addmm = aten.addmm(%b1, %x, %t)          # x @ w1.T + b1
    %mul = aten.mul.Tensor(%addmm, 0.5)
    ...
    %tanh = aten.tanh(%mul_2)

becomes ``fd.ops.linear(x, permute(t), b1)``, ``fd.ops.mul(..., 0.5)``, ...,
``fd.ops.tanh(...)``: one fusion whose ``linear`` is a cuBLAS segment and whose
pointwise tail is one generated kernel.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from fuser.frontend.datatype import DataType
from fuser.frontend.fusion_definition import FusionDefinition
from fuser.frontend.nvfuser_api import compute_contiguity

__all__ = ["OPS", "TranslationError", "definition_of", "op_name", "traced_strides", "unsupported_reason"]


class TranslationError(ValueError):
    """A node fuser cannot translate (the partition stays in torch)."""


def _torch() -> Any:
    import torch

    return torch


@functools.cache
def _dtypes() -> dict[Any, DataType]:
    """torch's dtypes that fuser computes, as ``DataType``s (built once)."""
    torch = _torch()
    return {
        torch.float32: DataType.Float, torch.float16: DataType.Half, torch.bfloat16: DataType.BFloat16,
        torch.float64: DataType.Double, torch.int64: DataType.Int, torch.int32: DataType.Int32,
        torch.bool: DataType.Bool,
    }


def op_name(target: Any) -> str:
    """``aten.add.Tensor`` for an ATen overload, the function's name otherwise."""
    return str(target) if hasattr(target, "overloadpacket") else getattr(target, "__name__", str(target))


# ---- the op table --------------------------------------------------------------------

Handler = Callable[..., Any]
"""``handler(fd, node, *args, **kwargs)``: the fuser value(s) of ``node``, its
arguments translated (nodes to fuser tensors; scalars, lists and dtypes as they are)."""


def _unary(name: str) -> Handler:
    return lambda fd, node, x: getattr(fd.ops, name)(x)


def _binary(name: str) -> Handler:
    def h(fd: FusionDefinition, node: Any, a: Any, b: Any, alpha: Any = 1) -> Any:
        if alpha != 1:
            b = fd.ops.mul(b, alpha)
        return getattr(fd.ops, name)(a, b)

    return h


def _shape(node: Any) -> list[int]:
    return [int(d) for d in node.meta["val"].shape]


def _in_shape(node: Any) -> list[Any]:
    """The traced shape of ``node``'s first operand."""
    return list(node.args[0].meta["val"].shape)


def _in_rank(node: Any) -> int:
    return len(node.args[0].meta["val"].shape)


def _dims(dims: Any, rank: int) -> list[int]:
    if dims is None or (isinstance(dims, list | tuple) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [d % rank if rank else 0 for d in dims]


def _sum(fd: FusionDefinition, node: Any, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    rank = _in_rank(node)
    # ``dtype``: torch sums in it (a bf16 input summed into f32 is not rounded to bf16).
    out = fd.ops.sum(_cast_to(fd, x, node) if dtype is not None else x, _dims(dims, rank), keepdim=keepdim)
    return _cast_to(fd, out, node)


def _mean(fd: FusionDefinition, node: Any, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    shape = _in_shape(node)
    ds = _dims(dims, len(shape))
    count = math.prod(int(shape[d]) for d in ds)
    x = _cast_to(fd, x, node) if dtype is not None else x
    return _cast_to(fd, fd.ops.mul(fd.ops.sum(x, ds, keepdim=keepdim), 1.0 / count), node)


def _amax(fd: FusionDefinition, node: Any, x: Any, dims: Any = None, keepdim: bool = False) -> Any:
    return fd.ops.max(x, _dims(dims, _in_rank(node)), keepdim=keepdim)


def _amin(fd: FusionDefinition, node: Any, x: Any, dims: Any = None, keepdim: bool = False) -> Any:
    return fd.ops.min(x, _dims(dims, _in_rank(node)), keepdim=keepdim)


def _var_mean(fd: FusionDefinition, node: Any, x: Any, dims: Any = None, *, correction: Any = 1, keepdim: bool = False) -> Any:
    rank = _in_rank(node)
    return fd.ops.var_mean(x, _dims(dims, rank), correction=1 if correction is None else correction, keepdim=keepdim)


def _cast_to(fd: FusionDefinition, x: Any, node: Any) -> Any:
    """``x`` cast to the dtype of ``node``'s value when it differs."""
    want = _dtypes().get(node.meta["val"].dtype)
    if want is None:
        raise TranslationError(f"dtype {node.meta['val'].dtype}")
    return x if x.dtype == want else fd.ops.cast(x, want)


def _convert(fd: FusionDefinition, node: Any, x: Any, dtype: Any = None, **kwargs: Any) -> Any:
    device = kwargs.get("device")
    if device is not None and device != node.args[0].meta["val"].device:
        raise TranslationError("a copy to another device")
    return _cast_to(fd, x, node)


def _reshape(fd: FusionDefinition, node: Any, x: Any, shape: Any) -> Any:
    return fd.ops.reshape(x, _shape(node))


def _permute(fd: FusionDefinition, node: Any, x: Any, dims: Any) -> Any:
    return fd.ops.permute(x, [d % len(dims) for d in dims])


def _t(fd: FusionDefinition, node: Any, x: Any) -> Any:
    rank = _in_rank(node)
    return x if rank < 2 else fd.ops.permute(x, [1, 0])


def _transpose(fd: FusionDefinition, node: Any, x: Any, d0: int, d1: int) -> Any:
    rank = _in_rank(node)
    dims = list(range(rank))
    d0, d1 = d0 % rank, d1 % rank
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return fd.ops.permute(x, dims)


def _expand(fd: FusionDefinition, node: Any, x: Any, sizes: Any, implicit: bool = False) -> Any:
    return _broadcast_to(fd, x, _shape(node))


def _broadcast_to(fd: FusionDefinition, x: Any, out: Sequence[int]) -> Any:
    """``x`` broadcast to ``out`` as torch broadcasts: its axes are the last ones."""
    rank = len(x.static_shape)
    return fd.ops.broadcast_in_dim(x, list(out), list(range(len(out) - rank, len(out))))


def _unsqueeze(fd: FusionDefinition, node: Any, x: Any, dim: int) -> Any:
    return fd.ops.reshape(x, _shape(node))


def _squeeze(fd: FusionDefinition, node: Any, x: Any, dims: Any = None) -> Any:
    return fd.ops.reshape(x, _shape(node))


def _clone(fd: FusionDefinition, node: Any, x: Any, **kwargs: Any) -> Any:
    return fd.ops.set(x)


def _slice(fd: FusionDefinition, node: Any, x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    """``aten.slice.Tensor``; a step ``k`` > 1 (``x[..., ::2]``: GPT-J's interleaved
    rotary halves) is the slice ``[s, s + c*k)`` (padded at the end when it runs
    past the axis) viewed as ``c`` groups of ``k``, of which the first of each."""
    shape = [int(v) for v in _in_shape(node)]
    d = dim % len(shape)
    s, e, k = slice(start, end, step).indices(shape[d])
    e = max(e, s)
    if k == 1:
        return fd.ops.slice(x, *_bounds(shape, d, s, e))
    c = -(-(e - s) // k)
    if c == 0:
        return _filled(fd, node, 0)
    over = s + c * k - shape[d]
    if over > 0:
        x = fd.ops.pad(x, _pad_widths(len(shape), d, 0, over))
        shape[d] += over
    grouped = shape[:d] + [c, k] + shape[d + 1 :]
    x = fd.ops.reshape(fd.ops.slice(x, *_bounds(shape, d, s, s + c * k)), grouped)
    return fd.ops.reshape(fd.ops.slice(x, *_bounds(grouped, d + 1, 0, 1)), _shape(node))


def _bounds(shape: Sequence[int], d: int, start: int, end: int) -> tuple[list[int], list[int], list[int]]:
    """``fd.ops.slice``'s starts, ends and strides for ``[start, end)`` of axis ``d``."""
    starts, ends = [0] * len(shape), [int(v) for v in shape]
    starts[d], ends[d] = start, end
    return starts, ends, [1] * len(shape)


def _constant_pad_nd(fd: FusionDefinition, node: Any, x: Any, pad: Sequence[int], value: Any = 0) -> Any:
    return fd.ops.pad(x, [int(w) for w in pad], value)


def _cat(fd: FusionDefinition, node: Any, tensors: Sequence[Any], dim: int = 0) -> Any:
    rank = len(node.meta["val"].shape)
    # torch.cat skips 1-D empty tensors of any other rank (a key/value cache's start).
    metas = [t.meta["val"] for t in node.args[0]]
    kept = [t for t, m in zip(tensors, metas, strict=True) if not (m.dim() == 1 and m.shape[0] == 0 and rank != 1)]
    if len(kept) == 1:
        return fd.ops.set(kept[0])
    return fd.ops.cat(kept, dim % rank)


def _where(fd: FusionDefinition, node: Any, c: Any, a: Any, b: Any) -> Any:
    return _cast_to(fd, fd.ops.where(c, a, b), node)


def _pow(fd: FusionDefinition, node: Any, x: Any, e: Any) -> Any:
    """ATen's special exponents, as ATen computes them (``pow_tensor_scalar_optimized``,
    CPU and CUDA): a square and a cube are products in the tensor's type (``x * x * x``
    of bfloat16 rounds after each product: torch's bf16 ``pow(x, 3)`` differs from a
    rounded ``powf`` in a fifth of the elements), a half power a square root. A general
    ``powf`` for GPT-2's ``pow(x, 3.0)`` also made its GELU kernels compute-bound."""
    if e == 2:
        return fd.ops.mul(x, x)
    if e == 3:
        return fd.ops.mul(fd.ops.mul(x, x), x)
    if e == 0.5:
        return fd.ops.sqrt(x)
    return fd.ops.pow(x, e)


def _mm(fd: FusionDefinition, node: Any, a: Any, b: Any) -> Any:
    return fd.ops.matmul(a, b)


def _addmm(fd: FusionDefinition, node: Any, bias: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    if beta != 1 or alpha != 1 or _in_rank(node) > 1:
        raise TranslationError("addmm with beta, alpha or a 2-D bias")
    return fd.ops.linear(a, fd.ops.permute(b, [1, 0]), bias)


def _getitem(fd: FusionDefinition, node: Any, xs: Any, i: int) -> Any:
    return xs[i]


def _arange(fd: FusionDefinition, node: Any, *args: Any, **kwargs: Any) -> Any:
    """``aten.arange`` (``end``; ``start, end``; ``start, end, step``) as an iota of
    the traced length and dtype."""
    start, step = (args[0], args[2] if len(args) > 2 else 1) if len(args) > 1 else (0, 1)
    val = node.meta["val"]
    return fd.ops.iota(int(val.shape[0]), start, step, _dtypes()[val.dtype])


def _scalar_tensor(fd: FusionDefinition, node: Any, value: Any, **kwargs: Any) -> Any:
    """``aten.scalar_tensor``: a 0-d tensor of the traced dtype (what a decomposition's
    ``torch.where(c, x, 0.0)`` traces its scalar to)."""
    return fd.ops.full([], value, _dtypes()[node.meta["val"].dtype])


def _slice_backward(
    fd: FusionDefinition, node: Any, grad: Any, input_sizes: Any, dim: int, start: Any, end: Any, step: int
) -> Any:
    """``aten.slice_backward``: zeros of ``input_sizes`` with ``grad`` at the slice (the
    backward of ``x[..., a:b]``, rotary embeddings' halves), a ``pad`` of ``grad``; a
    step ``k`` > 1 first spreads each element to a group of ``k`` (it, then zeros)."""
    sizes = [int(e) for e in input_sizes]
    d = dim % len(sizes)
    s, e, k = slice(start, end, step).indices(sizes[d])
    c = max(-(-(e - s) // k), 0)
    if c == 0:
        return _filled(fd, node, 0)
    if k > 1:
        gshape = [int(v) for v in grad.static_shape]
        one = gshape[: d + 1] + [1] + gshape[d + 1 :]
        spread = fd.ops.pad(fd.ops.reshape(grad, one), _pad_widths(len(one), d + 1, 0, k - 1))
        grad = fd.ops.reshape(spread, gshape[:d] + [c * k] + gshape[d + 1 :])
    # The last group may run past the axis: a negative width crops it.
    return fd.ops.pad(grad, _pad_widths(len(sizes), d, s, sizes[d] - s - c * k))


def _pad_widths(rank: int, dim: int, before: int, after: int) -> list[int]:
    """``pad`` widths (torch's order: pairs from the last axis) that widen axis
    ``dim`` of a rank-``rank`` tensor by ``before`` and ``after``."""
    return [0, 0] * (rank - 1 - dim) + [before, after]


def _select(fd: FusionDefinition, node: Any, x: Any, dim: int, index: int) -> Any:
    """``aten.select.int``: the slice ``[index, index + 1)`` of ``dim``, squeezed."""
    shape = [int(v) for v in _in_shape(node)]
    d = dim % len(shape)
    i = index + shape[d] if index < 0 else index
    return fd.ops.reshape(fd.ops.slice(x, *_bounds(shape, d, i, i + 1)), _shape(node))


def _select_backward(fd: FusionDefinition, node: Any, grad: Any, input_sizes: Any, dim: int, index: int) -> Any:
    """``aten.select_backward``: ``grad`` unsqueezed at ``dim``, then the backward of
    the slice ``[index, index + 1)`` there."""
    sizes = [int(e) for e in input_sizes]
    d = dim % len(sizes)
    i = index + sizes[d] if index < 0 else index
    one = fd.ops.reshape(grad, sizes[:d] + [1] + sizes[d + 1 :])
    return _slice_backward(fd, node, one, sizes, d, i, i + 1, 1)


def _split(fd: FusionDefinition, node: Any, x: Any, split: Any, dim: int = 0) -> Any:
    """``aten.split.Tensor`` (chunks of ``split``) and ``aten.split_with_sizes`` (a
    list of sizes): one slice per piece, as torch's tuple."""
    shape = [int(v) for v in _in_shape(node)]
    d = dim % len(shape)
    n = shape[d]
    if isinstance(split, list | tuple):
        sizes = [int(v) for v in split]
    else:
        chunk = max(int(split), 1)
        sizes = [min(chunk, n - a) for a in range(0, max(n, 1), chunk)]
    out, a = [], 0
    for size in sizes:
        out.append(fd.ops.slice(x, *_bounds(shape, d, a, a + size)))
        a += size
    return out


def _stack(fd: FusionDefinition, node: Any, tensors: Sequence[Any], dim: int = 0) -> Any:
    """``aten.stack``: each tensor unsqueezed at ``dim``, concatenated there."""
    out = _shape(node)
    d = dim % len(out)
    one = out[:d] + [1] + out[d + 1 :]
    parts = [fd.ops.reshape(t, one) for t in tensors]
    return parts[0] if len(parts) == 1 else fd.ops.cat(parts, d)


def _filled(fd: FusionDefinition, node: Any, value: Any) -> Any:
    """A new tensor of the traced shape and dtype, every element ``value``."""
    val = node.meta["val"]
    return fd.ops.full(_shape(node), value, _dtypes()[val.dtype])


def _full(value: Any) -> Handler:
    """``aten.zeros``, ``new_ones``, ``zeros_like``, ...: the operands (a size list, a
    tensor giving dtype and device) only shape the traced value; ``empty`` is zeros
    (any value is one its caller may get)."""
    return lambda fd, node, *args, **kwargs: _filled(fd, node, value)


def _full_value(at: int) -> Handler:
    """``aten.full`` (the value second) and ``aten.full_like``/``new_full`` (third)."""
    return lambda fd, node, *args, **kwargs: _filled(fd, node, args[at - 1] if len(args) >= at else kwargs["fill_value"])


def _fill(fd: FusionDefinition, node: Any, x: Any, value: Any) -> Any:
    """``aten.fill``: ``x``'s shape and dtype, every element ``value`` (a scalar, or a
    0-d tensor broadcast)."""
    if isinstance(value, int | float | bool):
        return _filled(fd, node, value)
    return _cast_to(fd, _broadcast_to(fd, value, _shape(node)), node)


def _copy(fd: FusionDefinition, node: Any, dst: Any, src: Any, non_blocking: bool = False) -> Any:
    """Functional ``aten.copy``: ``src`` broadcast to ``dst``'s shape, in its dtype
    (``dst``'s values are not read)."""
    return _cast_to(fd, _broadcast_to(fd, src, _shape(node)), node)


def _masked_fill(fd: FusionDefinition, node: Any, x: Any, mask: Any, value: Any) -> Any:
    """``aten.masked_fill`` (a scalar or 0-d tensor value): ``where(mask, value, x)``."""
    if not isinstance(value, int | float | bool):
        value = fd.ops.cast(value, x.dtype) if value.dtype != x.dtype else value
    return _cast_to(fd, fd.ops.where(mask, value, x), node)


def _safe_softmax(fd: FusionDefinition, node: Any, x: Any, dim: int, dtype: Any = None) -> Any:
    """``aten._safe_softmax`` (scaled dot-product attention's softmax): a softmax whose
    rows of only ``-inf`` are zeros, not NaN. The input is cast to ``dtype`` first
    when given; half inputs are computed in float32 and rounded once, as torch does."""
    d = dim % _in_rank(node)
    if dtype is not None:
        x = fd.ops.cast(x, _dtypes()[dtype])
    if x.dtype in (DataType.Half, DataType.BFloat16):
        x = fd.ops.cast(x, DataType.Float)
    m = fd.ops.max(x, [d], keepdim=True)
    e = fd.ops.exp(fd.ops.sub(x, m))
    out = fd.ops.truediv(e, fd.ops.sum(e, [d], keepdim=True))
    empty = fd.ops.eq(m, float("-inf"))  # the row's max is -inf: so is every entry
    return _cast_to(fd, fd.ops.where(empty, 0.0, out), node)


def _logical(name: str) -> Handler:
    """``aten.bitwise_*``: on booleans the logical op, on integers the bitwise one."""

    def h(fd: FusionDefinition, node: Any, *xs: Any) -> Any:
        boolean = node.meta["val"].dtype == _torch().bool
        op = {"and": "logical_and", "or": "logical_or", "not": "logical_not"}.get(name) if boolean else None
        return getattr(fd.ops, op or f"bitwise_{name}")(*xs)

    return h


def _pow_tensor(fd: FusionDefinition, node: Any, base: Any, e: Any) -> Any:
    """``aten.pow.Tensor_Tensor`` and ``aten.pow.Scalar`` (a scalar base)."""
    return _cast_to(fd, fd.ops.pow(base, e), node)


def _table() -> dict[Any, Handler]:
    torch = _torch()
    aten, prims = torch.ops.aten, torch.ops.prims
    table: dict[Any, Handler] = {
        aten.add.Tensor: _binary("add"), aten.add.Scalar: _binary("add"),
        aten.sub.Tensor: _binary("sub"), aten.sub.Scalar: _binary("sub"),
        aten.mul.Tensor: _binary("mul"), aten.mul.Scalar: _binary("mul"),
        aten.div.Tensor: _binary("truediv"), aten.div.Scalar: _binary("truediv"),
        aten.maximum.default: _binary("maximum"), aten.minimum.default: _binary("minimum"),
        aten.pow.Tensor_Scalar: _pow,
        aten.where.self: _where,
        aten.sum.dim_IntList: _sum, aten.sum.default: _sum, aten.mean.dim: _mean,
        aten.amax.default: _amax, aten.amin.default: _amin, aten.var_mean.correction: _var_mean,
        prims.convert_element_type.default: _convert, aten._to_copy.default: _convert,
        aten.view.default: _reshape, aten._unsafe_view.default: _reshape, aten.reshape.default: _reshape,
        aten.permute.default: _permute, aten.t.default: _t, aten.transpose.int: _transpose,
        aten.expand.default: _expand, aten.unsqueeze.default: _unsqueeze,
        aten.squeeze.dim: _squeeze, aten.squeeze.dims: _squeeze, aten.squeeze.default: _squeeze,
        aten.clone.default: _clone, aten.slice.Tensor: _slice, aten.cat.default: _cat,
        aten.constant_pad_nd.default: _constant_pad_nd,
        aten.mm.default: _mm, aten.bmm.default: _mm, aten.addmm.default: _addmm,
        operator.getitem: _getitem,
        aten.arange.default: _arange, aten.arange.start: _arange, aten.arange.start_step: _arange,
        aten.scalar_tensor.default: _scalar_tensor,
        aten.slice_backward.default: _slice_backward, aten.select.int: _select,
        aten.select_backward.default: _select_backward,
        aten.split.Tensor: _split, aten.split_with_sizes.default: _split, aten.stack.default: _stack,
        aten.zeros.default: _full(0), aten.new_zeros.default: _full(0), aten.zeros_like.default: _full(0),
        aten.empty.memory_format: _full(0), aten.new_empty.default: _full(0), aten.empty_like.default: _full(0),
        aten.ones.default: _full(1), aten.new_ones.default: _full(1), aten.ones_like.default: _full(1),
        aten.full.default: _full_value(2), aten.full_like.default: _full_value(2),
        aten.new_full.default: _full_value(3),
        aten.fill.Scalar: _fill, aten.fill.Tensor: _fill, aten.copy.default: _copy,
        aten.masked_fill.Scalar: _masked_fill, aten.masked_fill.Tensor: _masked_fill,
        aten._safe_softmax.default: _safe_softmax,
        aten.pow.Tensor_Tensor: _pow_tensor, aten.pow.Scalar: _pow_tensor,
        aten.lift_fresh_copy.default: _clone,
    }
    for name in ("and", "or", "xor"):
        table[getattr(aten, f"bitwise_{name}").Tensor] = _logical(name)
        table[getattr(aten, f"bitwise_{name}").Scalar] = _logical(name)
    table[aten.bitwise_not.default] = _logical("not")
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        table[getattr(aten, name).Tensor] = _binary(name)
        table[getattr(aten, name).Scalar] = _binary(name)
    for name in (
        "neg", "exp", "log", "tanh", "rsqrt", "sqrt", "sigmoid", "cos", "sin", "erf", "abs", "relu",
        "reciprocal", "log1p", "expm1", "logical_not",
    ):
        table[getattr(aten, name).default] = _unary(name)
    return table


_OPS: dict[Any, Handler] | None = None


def ops() -> dict[Any, Handler]:
    """The supported targets and their handlers (built once torch is imported)."""
    global _OPS
    if _OPS is None:
        _OPS = _table()
    return _OPS


OPS = ops
"""``OPS()``: the op table (a function: torch is imported on first use)."""


# ---- support -------------------------------------------------------------------------


def _values(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def unsupported_reason(node: Any) -> str | None:
    """Why ``node`` stays in torch, or None when fuser runs it."""
    torch = _torch()
    if node.op != "call_function":
        return "not a call"
    if node.target not in ops():
        return "no fuser equivalent"
    val = node.meta.get("val")
    if val is None:
        return "no shape metadata"
    for v in _values(val):
        if not isinstance(v, torch.Tensor):
            return "a non-tensor result"
        if v.dtype not in _dtypes():
            return f"dtype {v.dtype}"
        if any(not isinstance(d, int) for d in v.shape):
            return "a symbolic size"
    for a in [*node.args, *node.kwargs.values()]:
        for x in _values(a):
            if isinstance(x, torch.fx.Node):
                m = x.meta.get("val")
                if m is None or (isinstance(m, torch.Tensor) and m.device != _values(val)[0].device):
                    return "an operand on another device or without metadata"
                if not isinstance(m, torch.Tensor | tuple | list):
                    return "a symbolic scalar operand"
            elif isinstance(x, torch.SymInt | torch.SymFloat):
                return "a symbolic scalar operand"
    return None


# ---- translation ---------------------------------------------------------------------


def _check(node: Any, got: Any) -> None:
    want = _values(node.meta["val"])
    got_values = _values(got)
    if len(want) != len(got_values):
        raise TranslationError(f"{op_name(node.target)} gave {len(got_values)} values for {len(want)}")
    for w, g in zip(want, got_values, strict=True):
        shape = [int(d) for d in w.shape]
        if list(g.static_shape) != shape or g.dtype != _dtypes()[w.dtype]:
            raise TranslationError(
                f"{op_name(node.target)}: fuser gives {list(g.static_shape)} {g.dtype}, torch {shape} {w.dtype}"
            )


def traced_strides(v: Any) -> tuple[int, ...] | None:
    """The strides of a traced value (its fake tensor's), None if unknown or symbolic."""
    val = getattr(v, "meta", {}).get("val")
    try:
        return tuple(int(s) for s in val.stride())
    except (AttributeError, TypeError, RuntimeError):
        return None


def _row_major(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the axes (those of extent > 1) lie in row-major order without overlap:
    each stride at least the next axis's stride times its extent (gaps allowed)."""
    dense = [(e, s) for e, s in zip(shape, strides, strict=True) if e > 1]
    return all(s >= 1 for _, s in dense) and all(
        s >= s2 * e2 for (_, s), (e2, s2) in zip(dense, dense[1:], strict=False)
    )


def definition_of(gm: Any) -> FusionDefinition:
    """The ``FusionDefinition`` of the FX graph module ``gm`` (a partition: every
    ``call_function`` node supported); its inputs are the placeholders in order, its
    outputs the output node's values in order."""
    torch = _torch()
    env: dict[Any, Any] = {}
    with FusionDefinition() as fd:
        for node in gm.graph.nodes:
            if node.op == "placeholder":
                val = node.meta.get("val")
                if isinstance(val, torch.Tensor):
                    # Concrete sizes: torch.compile guards on them (a symbolic size is
                    # not supported), and the translation checks every shape. A
                    # row-major trace (contiguous, or with gaps: a padded product's
                    # slice) is declared with its contiguity: a view of the input is
                    # then a view on the host, not a copy (``FuserPartition`` copies a
                    # later call's argument laid out otherwise into the traced strides).
                    shape = [int(d) for d in val.shape]
                    strides = [int(s) for s in val.stride()]
                    contiguity = compute_contiguity(shape, strides) if _row_major(shape, strides) else None
                    env[node] = fd.define_tensor(shape=shape, contiguity=contiguity, dtype=_dtypes()[val.dtype])
                else:
                    raise TranslationError(f"placeholder {node.name} is not a tensor")
            elif node.op == "call_function":
                reason = unsupported_reason(node)
                if reason is not None:
                    raise TranslationError(f"{op_name(node.target)}: {reason}")

                def arg(x: Any) -> Any:
                    if isinstance(x, torch.fx.Node):
                        return env[x]
                    if isinstance(x, list | tuple):
                        return type(x)(arg(y) for y in x)
                    return x

                args = [arg(a) for a in node.args]
                kwargs = {k: arg(v) for k, v in node.kwargs.items()}
                try:
                    out = ops()[node.target](fd, node, *args, **kwargs)
                except TranslationError:
                    raise
                except (ValueError, TypeError, IndexError) as e:
                    raise TranslationError(f"{op_name(node.target)}: {e}") from None
                if node.target is not operator.getitem:
                    _check(node, out)
                env[node] = out
            elif node.op == "output":
                for v in _values(node.args[0]):
                    fd.add_output(env[v])
            else:
                raise TranslationError(f"a {node.op} node")
    return fd
