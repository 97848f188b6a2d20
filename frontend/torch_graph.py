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
    out = _shape(node)
    rank_in = _in_rank(node)
    return fd.ops.broadcast_in_dim(x, out, list(range(len(out) - rank_in, len(out))))


def _unsqueeze(fd: FusionDefinition, node: Any, x: Any, dim: int) -> Any:
    return fd.ops.reshape(x, _shape(node))


def _squeeze(fd: FusionDefinition, node: Any, x: Any, dims: Any = None) -> Any:
    return fd.ops.reshape(x, _shape(node))


def _clone(fd: FusionDefinition, node: Any, x: Any, **kwargs: Any) -> Any:
    return fd.ops.set(x)


def _slice(fd: FusionDefinition, node: Any, x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    shape = _in_shape(node)
    d = dim % len(shape)
    s, e, st = slice(start, end, step).indices(int(shape[d]))
    starts = [0] * len(shape)
    ends = [int(v) for v in shape]
    strides = [1] * len(shape)
    starts[d], ends[d], strides[d] = s, max(e, s), st
    return fd.ops.slice(x, starts, ends, strides)


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
    }
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
