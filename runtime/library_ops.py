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
base address are multiples of 16 bytes; otherwise it falls back to old CUTLASS ones.
GPT-2's LM head (N = 50257) went from 2.17 ms (sm75 CUTLASS) to 0.63 ms with an
aligned output buffer. Its two backward GEMMs have the odd extent as K or M, and
aligned strides do not help them (3.3 and 2.5 ms, still sm75): zero-padding the
extents, as inductor's pad_mm does, is the next step (not measured yet)."""
PAD_MIN_FLOPS = 1 << 28
PAD_MIN_INTENSITY = 64
"""Pad only GEMMs of at least this many flops and flops per element copied: the
copies into aligned buffers are then small next to the time saved."""


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
    large GEMM whose matrices are not all 16-byte aligned) runs it on aligned copies
    and an aligned output buffer (``aligned``), so cuBLAS takes its fast kernels."""
    if pad is None:
        m, k = a.shape
        n = b.shape[1]
        flops = 2 * m * n * k
        pad = (
            a.is_cuda
            and flops >= PAD_MIN_FLOPS
            and flops >= PAD_MIN_INTENSITY * (m * k + k * n + m * n)
            and not all(is_aligned(t) for t in (a, b, out))
        )
    if not pad:
        _mm(torch, a, b, bias, out)
        return
    target = out if is_aligned(out) else aligned(torch, out, copy=False)
    _mm(torch, aligned(torch, a), aligned(torch, b), bias, target)
    if target is not out:
        out.copy_(target)


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


def aligned(torch: Any, t: Any, copy: bool = True) -> Any:
    """``t`` (a matrix) in a buffer whose leading dimension is padded to
    ``ALIGN_BYTES``, in ``t``'s own orientation (row- or column-major); a view of the
    buffer's first columns (rows), holding ``t``'s values when ``copy``."""
    if is_aligned(t):
        return t
    per = max(1, ALIGN_BYTES // t.element_size())
    rows, cols = t.shape
    if t.stride(0) == 1 and t.stride(1) != 1:  # column-major: pad the rows
        buf = torch.empty((cols, -(-rows // per) * per), dtype=t.dtype, device=t.device)[:, :rows].t()
    else:
        buf = torch.empty((rows, -(-cols // per) * per), dtype=t.dtype, device=t.device)[:, :cols]
    if copy:
        buf.copy_(t)
    return buf
