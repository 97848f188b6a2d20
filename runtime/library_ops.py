"""Library segments: a ``matmul``-scheduled segment (one ``fuser.matmul`` or
``fuser.linear``, ``fuser.schedulers.matmul``) runs as a cuBLAS call, not a kernel.

The library is cuBLAS through torch: torch is already how fuser meets CUDA tensors
(``fuser.runtime.gpu_arrays``), it picks cuBLAS/cuBLASLt algorithms per shape and
fuses the bias of ``linear`` into the GEMM (``addmm``), and it needs no second CUDA
library binding next to cuda-python. Operands and outputs of any array kind the
runtime reads become zero-copy torch views (``torch_view``), and the call runs on the
launch's stream, so it orders with the generated kernels around it::

    op = library_segment(fusion)           # the op, or None for a kernel segment
    call = LibraryCall(fusion, op)         # once per segment
    call.launch(args, outs, stream)        # writes outs (preallocated buffers)

The replay (``fuser.runtime.gpu_replay``) keeps the ``LibraryCall`` as one step.

Without torch a library segment raises ``RuntimeError`` naming the op. On the CPU
the reference interpreter computes the product (``fuser.ir.reference``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.ir import BlockArgument, Operation

from fuser.ir.dialects import fuser as F
from fuser.runtime import gpu_arrays as ga

__all__ = ["LibraryCall", "library_segment", "torch_view"]


def library_segment(fusion: F.FusionOp) -> Operation | None:
    """The library op a segment runs (its only op besides ``fuser.output``), or None."""
    return next(iter(F.library_ops(fusion)), None)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


class _Interface:
    """A ``__cuda_array_interface__`` holder for ``torch.as_tensor``."""

    def __init__(self, cai: dict[str, Any]) -> None:
        self.__cuda_array_interface__ = cai


def torch_view(x: Any) -> Any:
    """A torch tensor on ``x``'s device memory (``x`` itself when it is one); bfloat16
    through an int16 view (``__cuda_array_interface__`` has no bfloat16)."""
    torch = _torch()
    if isinstance(x, torch.Tensor):
        return x
    info = ga.array_info(x)
    itemsize = info.dtype.itemsize
    as_int = info.dtype is F.DType.bfloat16
    cai = {
        "shape": tuple(info.shape),
        "typestr": "<i2" if as_int else info.dtype.to_numpy().str,
        "data": (info.ptr, False),
        "version": 3,
        "strides": tuple(s * itemsize for s in info.strides),
    }
    t = torch.as_tensor(_Interface(cai), device=f"cuda:{info.device}")
    return t.view(torch.bfloat16) if as_int else t


class LibraryCall:
    """How to run one library segment: ``call(operands, out, stream)`` computes its op
    of ``operands`` (the op's operands, arrays of any kind the runtime reads, in the
    op's order) into ``out``. ``operand_inputs`` are the segment inputs the operands
    are (``args[i]`` of a launch)."""

    def __init__(self, fusion: F.FusionOp, op: Operation) -> None:
        self.fusion = fusion
        self.op = op
        self.operand_inputs: list[int] = []
        for v in op.operands:
            if not isinstance(v, BlockArgument):  # the matmul scheduler's check
                raise ValueError(f"@{fusion.sym_name.data}: an operand of {op.name} is not a segment input")
            self.operand_inputs.append(v.index)
        self._matmul = isinstance(op, F.MatmulOp)
        self.torch = _torch()
        if self.torch is None:
            raise RuntimeError(f"{op.name} runs through cuBLAS in torch, and torch is not installed")

    def launch(self, args: Sequence[Any], outs: Sequence[Any], stream: int) -> None:
        """Run it as ``hir.launch`` does: ``args`` are the segment's inputs."""
        self([args[i] for i in self.operand_inputs], outs[0], stream)

    def __call__(self, operands: Sequence[Any], out: Any, stream: int) -> None:
        torch = self.torch
        ts = [torch_view(x) for x in operands]
        o = torch_view(out)
        device = max(o.get_device(), 0)  # (an int: no torch.device built per call)
        if ga.current_stream("torch", device) == stream and torch.cuda.current_device() == device:
            self._run(ts, o)  # already torch's current stream: no stream switch
            return
        with torch.cuda.device(device), torch.cuda.stream(ga.torch_stream(stream, device)):
            self._run(ts, o)

    def _run(self, ts: list[Any], out: Any) -> None:
        if self._matmul:
            _matmul(self.torch, ts[0], ts[1], out)
        else:
            _linear(self.torch, ts[0], ts[1], ts[2] if len(ts) > 2 else None, out)


ALIGN_BYTES = 16
"""cuBLAS takes its fast GEMM kernels only when every matrix's leading dimension and
base address are multiples of 16 bytes, and (for 16-bit types) the extents M, N, K are
multiples of 8; otherwise it falls back to old CUTLASS ones. GPT-2's LM head (N =
50257) went from 2.17 ms (sm75 CUTLASS) to 0.63 ms with an aligned output buffer; its
two backward GEMMs, with 50257 as K or M, stayed at 3.3 and 2.5 ms until the extents
were zero-padded as well (inductor's pad_mm does the same)."""
PAD_MIN_FLOPS = 1 << 28
PAD_MIN_INTENSITY = 64
"""Pad only GEMMs of at least this many flops and flops per element copied: the
copies into padded buffers are then small next to the time saved."""


def padded_extent(e: int, itemsize: int) -> int:
    """``e`` rounded up to a multiple of ``ALIGN_BYTES`` of ``itemsize``-byte elements."""
    per = max(1, ALIGN_BYTES // itemsize)
    return -(-e // per) * per


def worth_padding(m: int, k: int, n: int) -> bool:
    """Whether a GEMM of these extents is large enough to pad (``PAD_MIN_FLOPS``,
    ``PAD_MIN_INTENSITY``)."""
    flops = 2 * m * n * k
    return flops >= PAD_MIN_FLOPS and flops >= PAD_MIN_INTENSITY * (m * k + k * n + m * n)


def _matmul(torch: Any, a: Any, b: Any, out: Any) -> None:
    if a.dim() == 2 and b.dim() == 2:
        gemm(torch, a, b, None, out)
    elif out.is_contiguous():
        torch.matmul(a, b, out=out)
    else:
        out.copy_(torch.matmul(a, b))


def _linear(torch: Any, x: Any, w: Any, bias: Any, out: Any) -> None:
    """``x @ w.T + bias`` into ``out``: one GEMM with the bias in its epilogue (addmm)
    when ``x`` folds into a matrix and ``w`` is one."""
    if w.dim() == 2 and out.is_contiguous() and x.dim() >= 2 and (x.dim() == 2 or x.is_contiguous()):
        gemm(torch, x.reshape(-1, x.shape[-1]), w.t(), bias, out.view(-1, w.shape[0]))
        return
    out.copy_(torch.nn.functional.linear(x, w, bias))


def gemm(torch: Any, a: Any, b: Any, bias: Any, out: Any, pad: bool | None = None) -> None:
    """``out = a @ b (+ bias)`` for matrices. ``pad`` (by default: on the GPU, for a
    large GEMM whose matrices are not all 16-byte aligned or whose extents are not all
    multiples of 16 bytes) runs it on zero-padded copies (``padded``): every extent
    rounded up to 16 bytes of elements, the product's extra rows and columns dropped
    when copied into ``out``. Zeros added along K add nothing to the sums."""
    m, k = a.shape
    n = b.shape[1]
    mp, kp, np_ = (padded_extent(e, a.element_size()) for e in (m, k, n))
    if pad is None:
        pad = (
            a.is_cuda
            and worth_padding(m, k, n)
            and ((mp, kp, np_) != (m, k, n) or not all(is_aligned(t) for t in (a, b, out)))
        )
    if not pad:
        _mm(torch, a, b, bias, out)
        return
    if bias is not None and np_ != n:
        bias = torch.nn.functional.pad(bias, (0, np_ - n))
    target = out if (mp, np_) == (m, n) and is_aligned(out) else padded(torch, out, mp, np_, copy=False)
    _mm(torch, padded(torch, a, mp, kp), padded(torch, b, kp, np_), bias, target)
    if target is not out:
        _copy_rows(torch, out, target[:m, :n])


def _mm(torch: Any, a: Any, b: Any, bias: Any, out: Any) -> None:
    if bias is None:
        torch.mm(a, b, out=out)
    else:
        torch.addmm(bias, a, b, out=out)


def is_aligned(t: Any) -> bool:
    """A matrix cuBLAS takes with its fast kernels: unit stride on one axis, the other
    stride and the base address multiples of ``ALIGN_BYTES``."""
    size = t.element_size()
    if t.data_ptr() % ALIGN_BYTES:
        return False
    s0, s1 = t.stride()
    if s1 == 1 or t.shape[1] == 1:
        return (s0 * size) % ALIGN_BYTES == 0
    if s0 == 1 or t.shape[0] == 1:
        return (s1 * size) % ALIGN_BYTES == 0
    return False


def padded(torch: Any, t: Any, rows: int, cols: int, copy: bool = True) -> Any:
    """``t`` (a matrix) in a ``rows`` x ``cols`` buffer of ``t``'s own orientation (row-
    or column-major) whose leading dimension is a multiple of ``ALIGN_BYTES``: ``t``'s
    values in the first rows and columns and zeros after them when ``copy`` (else
    uninitialized). ``t`` itself when it already is such a matrix."""
    r, c = t.shape
    if (r, c) == (rows, cols) and is_aligned(t):
        return t
    size = t.element_size()
    if t.stride(0) == 1 and t.stride(1) != 1:  # column-major
        buf = torch.empty((cols, padded_extent(rows, size)), dtype=t.dtype, device=t.device)[:, :rows].t()
    else:
        buf = torch.empty((rows, padded_extent(cols, size)), dtype=t.dtype, device=t.device)[:, :cols]
    if copy:
        _copy_rows(torch, buf[:r, :c], t)
        if cols > c:
            buf[:, c:].zero_()
        if rows > r:
            buf[r:, :c].zero_()
    return buf


def _copy_rows(torch: Any, dst: Any, src: Any) -> None:
    """``dst.copy_(src)`` for two matrices of one orientation, each with unit stride
    along its rows (in memory): on the GPU one pitched copy of the driver
    (``cuMemcpy2DAsync``) on torch's current stream. torch's strided copy of GPT-2's
    4096 x 50257 bf16 logits gradient into a 50264-wide buffer runs at 1.7 TB/s
    (478 us on the H200), the pitched copy at 2.2 (375 us; ``benchmarks/pad_copy.py``).
    Into the padded buffer, and from a padded product back into its output."""
    if src.stride(1) != 1 or dst.stride(1) != 1:
        src, dst = src.t(), dst.t()
    rows_apart = src.stride(0) >= src.shape[1] and dst.stride(0) >= dst.shape[1]
    one_device = src.is_cuda and dst.device == src.device and src.device.index == torch.cuda.current_device()
    if not (one_device and src.dtype == dst.dtype and src.stride(1) == 1 and dst.stride(1) == 1 and rows_apart):
        dst.copy_(src)
        return
    from fuser.runtime import cuda_driver as cd

    size = src.element_size()
    cd.memcpy_2d_dtod(
        dst.data_ptr(), dst.stride(0) * size, src.data_ptr(), src.stride(0) * size, src.shape[1] * size,
        src.shape[0], torch.cuda.current_stream(src.device).cuda_stream,
    )
