"""The anchor workloads (``../shared/anchors/peers_h100.py``) as fuser definitions.

Each workload has: a name matching the anchor rows, the input shapes, a fuser
``FusionDefinition`` builder written as nvFuser users write them (half/bfloat16
inputs are cast to float, computed, cast back), a torch reference, and the number of
bytes an ideal kernel moves (each input read once, each output written once) — the
same count the anchors use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fuser import DataType, FusionDefinition

DT = {"float32": DataType.Float, "bfloat16": DataType.BFloat16}


@dataclass(frozen=True)
class Workload:
    name: str
    shapes: list[list[int]]
    define: Callable[[FusionDefinition, Any], None]  # (fd, DataType) -> None
    torch_key: str  # the key of its torch reference in torch_reference()
    out_shapes: list[list[int]]


def _in(fd: FusionDefinition, rank: int, dtype: Any):
    """A contiguous input of ``rank`` symbolic extents (sizes come at execute)."""
    return fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=dtype)


def _to_float(fd: FusionDefinition, t, dtype: Any):
    return fd.ops.cast(t, DataType.Float) if dtype != DataType.Float else t


def _back(fd: FusionDefinition, t, dtype: Any):
    return fd.ops.cast(t, dtype) if dtype != DataType.Float else t


def gelu_bookend(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    t1 = fd.ops.reshape(t0, [64, 128, 3072])
    x = _to_float(fd, t1, dtype)
    t3 = fd.ops.mul(x, 0.5)
    t5 = fd.ops.mul(x, 0.707107)
    t6 = fd.ops.erf(t5)
    t8 = fd.ops.add(t6, 1.0)
    t9 = _back(fd, fd.ops.mul(t3, t8), dtype)
    fd.add_output(fd.ops.reshape(t9, [8192, 3072]))


def transpose_bookend(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 3, dtype)
    t1 = fd.ops.reshape(t0, [64, 12, 128, 64])
    t2 = fd.ops.permute(t1, [0, 2, 1, 3])
    t3 = fd.ops.set(t2)
    t4 = fd.ops.reshape(t3, [64, 128, 768])
    fd.add_output(fd.ops.reshape(t4, [8192, 768]))


def softmax(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    x = _to_float(fd, t0, dtype)
    m = fd.ops.max(x, [1], keepdim=True)
    e = fd.ops.exp(fd.ops.sub(x, m))
    s = fd.ops.sum(e, [1], keepdim=True)
    fd.add_output(_back(fd, fd.ops.div(e, s), dtype))


def layernorm(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    w = _in(fd, 1, dtype)
    b = _in(fd, 1, dtype)
    x = _to_float(fd, t0, dtype)
    var, mean = fd.ops.var_mean(x, [1], correction=0, keepdim=True)
    r = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
    y = fd.ops.mul(fd.ops.sub(x, mean), r)
    wb = fd.ops.broadcast(_to_float(fd, w, dtype), [True, False])
    bb = fd.ops.broadcast(_to_float(fd, b, dtype), [True, False])
    fd.add_output(_back(fd, fd.ops.add(fd.ops.mul(y, wb), bb), dtype))


def rmsnorm(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    w = _in(fd, 1, dtype)
    x = _to_float(fd, t0, dtype)
    ms = fd.ops.sum(fd.ops.mul(x, x), [1], keepdim=True)
    n = fd.ops.size(t0, 1)
    r = fd.ops.rsqrt(fd.ops.add(fd.ops.div(ms, n), 1e-6))
    wb = fd.ops.broadcast(_to_float(fd, w, dtype), [True, False])
    fd.add_output(_back(fd, fd.ops.mul(fd.ops.mul(x, r), wb), dtype))


def row_sum(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    fd.add_output(_back(fd, fd.ops.sum(_to_float(fd, t0, dtype), [1]), dtype))


def col_sum(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    fd.add_output(_back(fd, fd.ops.sum(_to_float(fd, t0, dtype), [0]), dtype))


def outer_norm(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    x = _to_float(fd, t0, dtype)
    var, mean = fd.ops.var_mean(x, [0], correction=0, keepdim=True)
    r = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
    fd.add_output(_back(fd, fd.ops.mul(fd.ops.sub(x, mean), r), dtype))


def layernorm_backward(fd: FusionDefinition, dtype: Any) -> None:
    """dx, dw, db of a layer norm from dy, x, its mean and rstd ([N, 1]) and the
    weight: row sums for dx, column sums for dw and db (the inner-outer kind)."""
    dy, x = _in(fd, 2, dtype), _in(fd, 2, dtype)
    mean = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=dtype)
    rstd = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=dtype)
    w = _in(fd, 1, dtype)
    dyf, xf, wf, mf, rf = (_to_float(fd, t, dtype) for t in (dy, x, w, mean, rstd))
    xhat = fd.ops.mul(fd.ops.sub(xf, mf), rf)
    g = fd.ops.mul(dyf, fd.ops.broadcast(wf, [True, False]))
    a = fd.ops.sum(g, [1], keepdim=True)
    c = fd.ops.sum(fd.ops.mul(g, xhat), [1], keepdim=True)
    n = fd.ops.cast(fd.ops.size(x, 1), DataType.Float)
    t = fd.ops.sub(fd.ops.sub(fd.ops.mul(g, n), a), fd.ops.mul(xhat, c))
    fd.add_output(_back(fd, fd.ops.mul(fd.ops.div(rf, n), t), dtype))
    fd.add_output(fd.ops.sum(fd.ops.mul(dyf, xhat), [0]))
    fd.add_output(fd.ops.sum(dyf, [0]))


def middle_sum(fd: FusionDefinition, dtype: Any) -> None:
    """A sum over the middle axis of a 3-D tensor."""
    t0 = _in(fd, 3, dtype)
    fd.add_output(_back(fd, fd.ops.sum(_to_float(fd, t0, dtype), [1]), dtype))


def sum_bcast_add(fd: FusionDefinition, dtype: Any) -> None:
    t0 = _in(fd, 2, dtype)
    t1 = _in(fd, 2, dtype)
    s = fd.ops.sum(_to_float(fd, t0, dtype), [1])
    b = fd.ops.broadcast(s, [False, True])
    fd.add_output(_back(fd, fd.ops.add(_to_float(fd, t1, dtype), b), dtype))


def _torch_refs() -> dict[str, Callable[..., Any]]:
    import torch
    import torch.nn.functional as tf

    def gelu(x):
        t1 = x.view(64, 128, 3072)
        return ((t1 * 0.5) * (torch.erf(t1 * 0.707107) + 1.0)).view(8192, 3072)

    def transpose(x):
        return x.view(64, 12, 128, 64).permute(0, 2, 1, 3).contiguous().view(64, 128, 768).view(8192, 768)

    def ln_bwd(dy, x, mean, rstd, w):
        f = torch.float32 if x.dtype != torch.float64 else torch.float64
        dyf, xf, mf, rf, wf = (t.to(f) for t in (dy, x, mean, rstd, w))
        xhat = (xf - mf) * rf
        g = dyf * wf
        n = x.shape[1]
        dx = rf / n * (g * n - g.sum(1, keepdim=True) - xhat * (g * xhat).sum(1, keepdim=True))
        return dx.to(x.dtype), (dyf * xhat).sum(0), dyf.sum(0)

    def outer(x):
        m = x.mean(dim=0, keepdim=True)
        v = ((x - m) ** 2).mean(dim=0, keepdim=True)
        return (x - m) * torch.rsqrt(v + 1e-5)

    return {
        "gelu_bookend_views": gelu,
        "transpose_bookend_views": transpose,
        "softmax": lambda x: torch.softmax(x, dim=-1),
        "layernorm": lambda x, w, b: tf.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        "rmsnorm": lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
        "row_sum": lambda x: x.sum(dim=-1),
        "col_sum": lambda x: x.sum(dim=0),
        "outer_norm": outer,
        "sum_bcast_add": lambda t0, t1: t1 + t0.sum(dim=1, keepdim=True),
        "layernorm_backward": ln_bwd,
        "middle_sum": lambda x: x.sum(dim=1),
    }


def workloads() -> list[Workload]:
    """Every anchor row's workload, in the anchors' order, then the classes issue 15
    measured far from the copy figure (no anchor rows: compare with the copy and
    torch in the same run)."""
    out: list[Workload] = [
        Workload("gelu_bookend_views", [[8192, 3072]], gelu_bookend, "gelu_bookend_views", [[8192, 3072]]),
        Workload(
            "transpose_bookend_views", [[768, 128, 64]], transpose_bookend, "transpose_bookend_views", [[8192, 768]]
        ),
    ]
    for n in (1024, 4096, 16384):
        m = 16384 * 1024 // n * 4
        out += [
            Workload(f"softmax_{n}", [[m, n]], softmax, "softmax", [[m, n]]),
            Workload(f"layernorm_{n}", [[m, n], [n], [n]], layernorm, "layernorm", [[m, n]]),
            Workload(f"rmsnorm_{n}", [[m, n], [n]], rmsnorm, "rmsnorm", [[m, n]]),
            Workload(f"row_sum_{n}", [[m, n]], row_sum, "row_sum", [[m]]),
        ]
    out += [
        Workload("col_sum_32768x2048", [[32768, 2048]], col_sum, "col_sum", [[2048]]),
        Workload("outer_norm_16384x1024", [[16384, 1024]], outer_norm, "outer_norm", [[16384, 1024]]),
        Workload(
            "sum_bcast_add_8192x3072", [[8192, 3072], [8192, 3072]], sum_bcast_add, "sum_bcast_add", [[8192, 3072]]
        ),
    ]
    out += [
        Workload(
            f"layernorm_backward_{m}x{n}",
            [[m, n], [m, n], [m, 1], [m, 1], [n]],
            layernorm_backward,
            "layernorm_backward",
            [[m, n], [n], [n]],
        )
        # issue 15's size, then GPT-2's (tokens x 768) and Llama's hidden width
        for m, n in ((16384, 1024), (32768, 768), (4096, 4096))
    ]
    out += [
        Workload("middle_sum_64x1024x256", [[64, 1024, 256]], middle_sum, "middle_sum", [[64, 256]]),
        Workload("softmax_unaligned_4096x3001", [[4096, 3001]], softmax, "softmax", [[4096, 3001]]),
        # two more widths no vector divides: short rows, and a norm with weights
        Workload("softmax_unaligned_8192x1023", [[8192, 1023]], softmax, "softmax", [[8192, 1023]]),
        Workload(
            "layernorm_unaligned_16384x771", [[16384, 771], [771], [771]], layernorm, "layernorm", [[16384, 771]]
        ),
        Workload("vocab_softmax_32x50257", [[32, 50257]], softmax, "softmax", [[32, 50257]]),
        Workload("few_rows_softmax_8x32000", [[8, 32000]], softmax, "softmax", [[8, 32000]]),
        # Llama-3's vocabulary: a row too long for one block's registers (f32) or for
        # one block in bf16 beside the others; one kernel over a thread-block cluster.
        Workload("vocab_softmax_8x128256", [[8, 128256]], softmax, "softmax", [[8, 128256]]),
    ]
    return out


def build(workload: Workload, dtype_name: str) -> FusionDefinition:
    with FusionDefinition() as fd:
        workload.define(fd, DT[dtype_name])
    return fd


def torch_reference(key: str) -> Callable[..., Any]:
    return _torch_refs()[key]
