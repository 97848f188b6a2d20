"""Run a lowered segment's kernels on the CPU with the kernel interpreter.

This is how CI checks generated kernels without a GPU: the same kernel IR that is
printed as CUDA is executed by ``fuser.codegen.kernel_interpreter`` (blocks, threads,
warps, shared memory, barriers) on small shapes and compared with the reference
interpreter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from fuser.codegen.aliased_args import check_in_place_order
from fuser.codegen.kernel_interpreter import run_kernel
from fuser.codegen.lower import default_out_layouts, lower_segment
from fuser.codegen.lower.common import LoweredFusion, TensorLayout
from fuser.ir.dialects import fuser as F
from fuser.ir.fp8 import as_strided
from fuser.runtime.compile_fusion import written_in_place
from fuser.runtime.host_evaluator import HostEvaluator


def layout_of(x: np.ndarray) -> TensorLayout:
    """Shape, element strides and pointer alignment (in elements) of a numpy array."""
    item = x.itemsize
    if any(s < 0 for s in x.strides):
        raise ValueError("negative strides are not supported")
    align = 1
    addr = x.__array_interface__["data"][0]
    while align < 16 and addr % ((align * 2) * item) == 0:
        align *= 2
    return TensorLayout(tuple(x.shape), tuple(s // item for s in x.strides), align)


def flat_buffer(x: np.ndarray, layout: TensorLayout) -> np.ndarray:
    """A 1-D view of the memory ``x`` spans, starting at its first element."""
    span = 1 + sum((e - 1) * s for e, s in zip(layout.shape, layout.strides, strict=True) if e > 0)
    if x.size == 0:
        return np.empty(0, x.dtype)
    return as_strided(x, shape=(span,), strides=(x.itemsize,))


def _start(x: Any) -> int | None:
    """The address of the first element of a numpy array with elements, else None."""
    return int(x.__array_interface__["data"][0]) if isinstance(x, np.ndarray) and x.size else None


def compile_with_nvrtc(lowered: LoweredFusion, fusion: F.FusionOp) -> None:
    """Compile the lowered kernels for sm_90 (through the kernel cache): every kernel
    the CPU interpreter runs is also proven to compile, with or without a GPU."""
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.codegen.kernel_cache import compile_cached

    for kern in lowered.kernels:
        compile_cached(print_cuda(kern.module), name=kern.name, fusion=fusion.sym_name.data)


def run_segment_on_cpu(
    fusion: F.FusionOp,
    inputs: Sequence[Any],
    lowered: LoweredFusion | None = None,
    nvrtc: bool = True,
    schedule: bool = True,
    outs: Sequence[np.ndarray] | None = None,
) -> tuple[list[np.ndarray], LoweredFusion]:
    """Lower ``fusion`` for ``inputs`` (unless ``lowered`` is given), run its kernels in
    the interpreter, and return (the returned outputs, the lowering); ``nvrtc``: also
    compile the kernels with NVRTC (through the kernel cache). With ``schedule``, a
    fusion without a loop nest is scheduled first as the driver schedules a segment
    (``fuser.runtime.schedule_segment``: select-schedulers, schedule-fusions); the
    driver's own segments are lowered as its pipeline left them. ``outs``: the
    buffers of the returned outputs (a launch's ``outs``), written by the kernels
    themselves in their layouts, as on the GPU: an output that is an input's buffer
    (an in-place update) is read and written by the same kernels; None: new dense
    buffers."""
    from fuser.runtime.schedule_segment import schedule_segment
    from fuser.runtime.signature import Signature, kernel_layouts

    if F.library_ops(fusion):
        # A library segment (a matrix product): no kernel; the reference computes it.
        from fuser.ir.reference import run_fusion

        return [np.asarray(r) for r in run_fusion(fusion, list(inputs))], LoweredFusion("matmul", [])
    in_layouts = [layout_of(x) if isinstance(x, np.ndarray) else None for x in inputs]
    scalars = [None if isinstance(x, np.ndarray) else x for x in inputs]
    given = [layout_of(b) for b in outs] if outs is not None else None
    if lowered is None:
        if schedule:
            fusion = schedule_segment(fusion, Signature.of(fusion, list(inputs)))
        full = None
        if given is not None:
            it = iter(given)
            full = [in_layouts[a] if a >= 0 else next(it) for a in fusion.output_op.get_alias_inputs()]
        lowered = lower_segment(fusion, kernel_layouts(in_layouts), scalars, full)
    if nvrtc:
        compile_with_nvrtc(lowered, fusion)
    from fuser.codegen.lower import concrete_shapes

    shapes = concrete_shapes(
        fusion, [lay.shape if lay else s for lay, s in zip(in_layouts, scalars, strict=True)]
    )
    out_layouts = default_out_layouts(fusion, shapes, in_layouts)
    term = fusion.output_op
    outputs: list[np.ndarray] = []
    out_buffers: list[np.ndarray] = []
    returned = iter(outs if outs is not None else ())
    for v, alias, lay in zip(term.values, term.get_alias_inputs(), out_layouts, strict=True):
        if alias >= 0:
            target = inputs[alias]
            out_buffers.append(flat_buffer(target, layout_of(target)))
            continue
        if outs is not None:
            buf = next(returned)
            out_buffers.append(flat_buffer(buf, layout_of(buf)))
            outputs.append(buf)
            continue
        dt = F.dtype_of(v.type).to_numpy()
        size = 1 + sum((e - 1) * s for e, s in zip(lay.shape, lay.strides, strict=True) if e > 0)
        buf = np.full(max(size, 0), np.nan if dt.kind == "f" else 0, dtype=dt)
        out_buffers.append(buf)
        outputs.append(as_strided(buf, lay.shape, [s * buf.itemsize for s in lay.strides]))
    starts = [_start(x) for x in inputs]  # an input without elements is written by nothing
    pairs = written_in_place(
        starts, [lay if s is not None else None for lay, s in zip(in_layouts, starts, strict=True)],
        [_start(b) for b in out_buffers],
    )
    if pairs:
        # As on the GPU (``mark_aliased_args``): no kernel loads an input after the
        # output written into it was stored.
        check_in_place_order(lowered, pairs)
    scratch = [np.zeros(s.numel, s.dtype.to_numpy()) for s in lowered.scratch]
    for kern in lowered.kernels:
        args: list[Any] = []
        for a in kern.args:
            if a.kind == "input":
                x = inputs[a.index]
                args.append(flat_buffer(x, layout_of(x)) if isinstance(x, np.ndarray) else x)
            elif a.kind == "output":
                args.append(out_buffers[a.index])
            elif a.kind == "extent":
                args.append(a.value)
            else:
                args.append(scratch[a.index])
        run_kernel(kern.module, kern.name, args, kern.grid)
    return outputs, lowered


class KernelHostEvaluator(HostEvaluator):
    """The segmented host program on the CPU with generated kernels: the host
    evaluator (numpy buffers and views, aliases, deallocation) whose ``hir.launch``
    lowers the segment for its arguments' layouts and runs its kernels in the kernel
    interpreter (``run_segment_on_cpu``), where ``fuser.runtime.segmented_gpu.launch_segment``
    launches them on the GPU."""

    def __init__(self, module: ModuleOp, nvrtc: bool = True) -> None:
        super().__init__(module)
        self.nvrtc = nvrtc

    def _run_fusion(self, fusion: F.FusionOp, args: list[Any], outs: list[Any] | None) -> list[Any]:
        """A launch with ``outs`` runs its kernels on those buffers, as the GPU
        launcher does (an in-place update reads and writes the caller's array), not on
        new ones copied into them."""
        direct = outs is not None and not F.library_ops(fusion) and all(
            isinstance(b, np.ndarray) and b.size > 0 and all(s >= 0 for s in b.strides) for b in outs
        )
        return run_segment_on_cpu(fusion, args, nvrtc=self.nvrtc, schedule=False, outs=outs if direct else None)[0]
