"""Run a fusion on the GPU for ``fd.execute`` with GPU inputs.

A fusion that one scheduler accepts runs as one segment: its returned outputs are
allocated as the caller's array type (torch tensors for torch inputs, else
``DeviceArray``), and ``fuser.runtime.compile_fusion.launch_fusion`` compiles (once per
input layout) and launches its kernels on the current stream. Outputs that are only
views of an input (reshape/permute/squeeze/slice/broadcast chains) come back as
views of the caller's tensor and launch nothing. A fusion no single scheduler takes
is segmented (``fuser.runtime.segmented``) and its host program runs on the GPU
(``fuser.runtime.gpu_evaluator``) when those modules are present; otherwise the error
says which schedulers refused and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fuser.ir.dialects import fuser as F
from fuser.ir.fp8 import as_strided
from fuser.runtime import gpu_arrays as ga


def meta_array(info: ga.ArrayInfo) -> np.ndarray:
    """A numpy array with the shape, strides and dtype of a GPU array, for shape and
    layout checks only: its memory is a one-element buffer and must never be read."""
    dt = info.dtype.to_numpy()
    base = np.zeros(1, dt)
    return as_strided(base, info.shape, [s * dt.itemsize for s in info.strides], writeable=False)


def _torch_view_chain(x: Any, ops: Sequence[Any], flat: Sequence[Any]) -> Any:
    """Apply fuser view ops to a torch tensor as torch views (no copy); None when one
    of them is no view of ``x``'s memory (a reshape merging an expanded or strided
    axis needs a copy: a kernel then materializes the output)."""
    for op in ops:
        if isinstance(op, F.ReshapeOp):
            shape = op.result.type.get_shape()
            try:
                x = x.view(shape if -1 not in shape else _scalar_shape(op, flat))
            except RuntimeError:  # torch: "view size is not compatible with ... stride"
                return None
        elif isinstance(op, F.PermuteOp):
            x = x.permute(*op.get_dims())
        elif isinstance(op, F.SqueezeOp):
            for d in reversed(op.get_dims()):
                x = x.squeeze(d)
        elif isinstance(op, F.BroadcastOp):
            for i, f in enumerate(op.get_flags()):
                if f:
                    x = x.unsqueeze(i)
        elif isinstance(op, F.ExpandOp):
            x = x.expand(*op.result.type.get_shape()) if -1 not in op.result.type.get_shape() else None
            if x is None:
                return None
        elif isinstance(op, F.BroadcastInDimOp):
            shape = op.result.type.get_shape()
            if -1 in shape:
                return None
            staged = [1] * len(shape)
            for i, d in enumerate(F._ints(op.broadcast_dims)):
                staged[d] = x.shape[i]
            x = x.reshape(staged).expand(*shape)
        elif isinstance(op, F.SliceOp):
            idx = tuple(slice(a, b, s) for a, b, s in zip(F._ints(op.starts), F._ints(op.ends), F._ints(op.strides), strict=True))
            x = x[idx]
        else:
            return None
    return x


def _scalar_shape(op: F.ReshapeOp, flat: Sequence[Any]) -> list[int]:
    it = iter(op.sizes)
    out = []
    for d in F._ints(op.new_shape):
        if d == -1:
            v = next(it)
            raise ValueError(f"{op.name}: symbolic size {v} is not bound")
        out.append(d)
    return out


# ---- plans ---------------------------------------------------------------------------------


def fast_key(x: Any, by_value: bool = False) -> Any:
    """What decides a GPU plan for one input: dtype, shape, strides, device and the
    data pointer's 16-byte alignment class (tensors); the type for scalars, and their
    value when ``by_value`` (a fusion whose reshapes are decided by input values)."""
    torch = ga._torch_tensor(x)
    if torch is not None:
        return (x.dtype, x.shape, x.stride(), x.get_device(), x.data_ptr() & 15)
    if ga.is_gpu_array(x):
        info = ga.array_info(x)
        return (info.dtype, info.shape, info.strides, info.device, info.ptr & 15)
    if by_value:
        return (type(x), tuple(x) if isinstance(x, list | tuple) else x)
    return type(x)


class GpuPlan:
    """Everything decided for one input signature (kernels, output shapes and
    layouts, view outputs), kept so that a
    repeated call only reads pointers, allocates outputs and launches."""

    def __init__(self, fusion: F.FusionOp, flat: Sequence[Any], kind: str | None = None) -> None:
        """``kind`` forces the outputs' array type (``"torch"`` for a fusion without
        tensor inputs run on the default GPU); by default the inputs' type."""
        from fuser.codegen.lower import concrete_shapes
        from fuser.codegen.lower.common import TensorLayout
        from fuser.ir.view_chains import view_chain
        from fuser.runtime.compile_fusion import FusionCompiler, launch_fusion

        self.fusion = fusion
        infos = [ga.array_info(x) if ga.is_gpu_array(x) else None for x in flat]
        self.kind = kind or ga.output_kind([i for i in infos if i is not None])
        self.device = next((i.device for i in infos if i is not None), 0)
        shape_args = [i.shape if i is not None else x for i, x in zip(infos, flat, strict=True)]
        shapes = concrete_shapes(fusion, shape_args)
        term = fusion.output_op
        returned = term.returned_values()
        out_types = fusion.function_type.outputs.data
        self.views: dict[int, tuple[int, list[Any]]] = {}
        if self.kind == "torch":
            for k, v in enumerate(returned):
                t = out_types[k]
                if isinstance(t, F.TensorType) and not t.has_default_layout:
                    continue
                chain = view_chain(v)
                if chain is not None and _torch_view_chain(flat[chain[0]], chain[1], flat) is not None:
                    self.views[k] = chain
        self.outputs: list[tuple[tuple[int, ...], Any, tuple[int, ...] | None]] = []
        for v, t in zip(returned, out_types, strict=True):
            shape = shapes[v]
            strides = None
            if isinstance(t, F.TensorType) and not t.has_default_layout:
                strides = TensorLayout.with_stride_order(shape, t.get_stride_order()).strides
            self.outputs.append((shape, F.dtype_of(v.type), strides))
        self.launches = bool(any(a >= 0 for a in term.get_alias_inputs()) or len(self.views) < len(returned))
        # Zero-size tensors: nothing for a kernel to do, and reductions over empty
        # axes only produce identities; the reference computes them on the host.
        self.on_host = any(0 in s for s, _, _ in self.outputs) or any(
            i is not None and 0 in i.shape for i in infos
        )
        if self.on_host:
            self.launches = False
        self.segment = None
        self.tensor_inputs = [i is not None for i in infos]
        self.aliases = list(term.get_alias_inputs())
        self.compiler = FusionCompiler(device=self.device)
        if self.launches:
            outs = self._allocate()
            _, self.segment = launch_fusion(fusion, flat, outs, None, self.compiler)
            self._first = outs

    def cuda_sources(self) -> list[str]:
        """The CUDA C of the kernels this plan launches (none when its outputs are
        views of the inputs or it runs on the host)."""
        return [] if self.segment is None else [self.segment.source]

    def _allocate(self) -> list[Any]:
        if self.kind == "torch":
            import torch

            if not hasattr(self, "_torch_specs"):
                dev = torch.device("cuda", self.device)
                self._torch_specs = [(s, ga.torch_dtype(dt), st, dev) for s, dt, st in self.outputs]
            return [
                torch.empty(s, dtype=td, device=dev) if st is None
                else torch.empty_strided(s, st, dtype=td, device=dev)
                for s, td, st, dev in self._torch_specs
            ]
        return [ga.empty(s, dt, like=self.kind, device=self.device, strides=st) for s, dt, st in self.outputs]

    def run(self, flat: Sequence[Any], first: bool = False) -> list[Any]:
        if first and self.launches:
            outs = self._first
            del self._first
        elif self.launches:
            outs = self._allocate()
            seg = self.segment
            assert seg is not None
            if self.kind == "torch":
                ptrs = [x.data_ptr() if is_t else _scalar(x) for x, is_t in zip(flat, self.tensor_inputs, strict=True)]
                returned = iter(outs)
                out_ptrs = [ptrs[a] if a >= 0 else next(returned).data_ptr() for a in self.aliases]
            else:
                ptrs = [ga.data_ptr(x) if is_t else _scalar(x) for x, is_t in zip(flat, self.tensor_inputs, strict=True)]
                out_ptrs = _output_pointers(self.aliases, ptrs, outs)
            _run_compiled(seg, ptrs, out_ptrs, ga.current_stream(self.kind, self.device))
        elif self.on_host:
            return self._run_on_host(flat)
        else:
            outs = [None] * len(self.outputs)
        results = list(outs)
        for k, (pos, ops) in self.views.items():
            results[k] = _torch_view_chain(flat[pos], ops, flat)
        return results


    def _run_on_host(self, flat: Sequence[Any]) -> list[Any]:
        """Zero-size case: the reference on host copies, outputs back on the device."""
        from fuser.ir.reference import run_fusion

        host = [_to_numpy(x) if ga.is_gpu_array(x) else x for x in flat]
        outs = run_fusion(self.fusion, host)
        for x, h, alias in zip(flat, host, range(len(flat)), strict=True):
            if ga.is_gpu_array(x) and alias in self.aliases:
                _copy_into(x, h)
        return [_to_device(o, self.kind, self.device) for o in outs]


def _to_numpy(x: Any) -> Any:
    torch = ga._torch_tensor(x)
    if torch is not None:
        from fuser.runtime.torch_arrays import torch_to_numpy

        return torch_to_numpy(x.detach().cpu())
    return x.to_numpy() if hasattr(x, "to_numpy") else np.asarray(x)


def _to_device(a: Any, kind: str, device: int) -> Any:
    a = np.ascontiguousarray(a)
    if kind == "torch":
        from fuser.runtime.torch_arrays import numpy_to_torch

        return numpy_to_torch(a).to(f"cuda:{device}")
    return ga.DeviceArray.from_numpy(a, device)


def _copy_into(x: Any, h: np.ndarray) -> None:
    if ga._torch_tensor(x) is not None:
        from fuser.runtime.torch_arrays import numpy_to_torch

        x.copy_(numpy_to_torch(h))


def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x




def _output_pointers(aliases: Sequence[int], ptrs: Sequence[Any], outs: Sequence[Any]) -> list[int]:
    returned = iter(outs)
    return [ptrs[a] if a >= 0 else ga.data_ptr(next(returned)) for a in aliases]


def _run_compiled(seg: Any, ptrs: Sequence[Any], out_ptrs: Sequence[int], stream: int) -> None:
    from fuser.runtime.compile_fusion import run_compiled

    run_compiled(seg, ptrs, out_ptrs, stream)
