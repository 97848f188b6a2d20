"""Compile a segment for concrete inputs and launch it on the GPU.

``launch_fusion(fusion, args, outs, stream, compiler)`` is what the GPU host
evaluator's launcher (``fuser.runtime.gpu_program``) calls for every ``hir.launch``: it looks up (or builds) the compiled kernels of ``fusion`` for
the layouts of ``args`` — scheduler selection, lowering to kernel IR, CUDA printing,
NVRTC (through the kernel cache), module load — and launches them in order on
``stream``, with scratch buffers from a small pool. Kernels are specialized for the
concrete shapes, strides and pointer alignments they run on, but for the batch
extent (``fuser.runtime.signature.kernel_layouts``), which they take as a parameter;
the key of the compiled segment is exactly those, so a new size lowers once and then
hits, and a new batch size whose kernel text is one already compiled loads that
binary from the kernel cache instead of running NVRTC.

The hot path (a cache hit) reads the arrays' pointers and layouts, packs the
argument buffer and calls ``cuLaunchKernel``: a few microseconds of host time.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fuser.codegen.cuda_printer import kernels_of, print_cuda
from fuser.codegen.dependent_launch import lower_for_launch
from fuser.codegen.lower.common import LoweredFusion, LoweringError, TensorLayout
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.gc_pause import paused_gc
from fuser.runtime.signature import kernel_layouts
from fuser.schedulers.analysis.sizes import has_size_operands
from fuser.schedulers.target import from_device


@functools.cache
def _device_target(device: int) -> Any:
    """GPU ``device``'s properties (``from_device``: a dozen driver queries), read once."""
    return from_device(device)


_SIG = {
    DType.float64: "d",
    DType.float32: "f",
    DType.int64: "q",
    DType.int32: "i",
    DType.bool: "b",
    DType.complex64: "c",
    DType.complex128: "z",
}


MAX_COMPILE_THREADS = 16
"""Most NVRTC compiles ``FusionCompiler.prepare`` runs at once."""


def pointer_alignment(ptr: int, itemsize: int) -> int:
    """Alignment of ``ptr`` in elements, capped at 16 bytes' worth."""
    align = 1
    while align * itemsize < 16 and ptr % (align * 2 * itemsize) == 0:
        align *= 2
    return align


def array_layout(info: Any) -> TensorLayout:
    """The layout kernels are compiled for of a GPU array (``gpu_arrays.array_info``):
    its shape, strides and pointer alignment."""
    return TensorLayout(info.shape, info.strides, pointer_alignment(info.ptr, info.dtype.itemsize))


@dataclass
class CompiledSegment:
    """The loaded kernels of one segment for one input signature."""

    fusion: F.FusionOp
    lowered: LoweredFusion
    source: str
    kernels: list[Any] = field(default_factory=list)  # fuser.runtime.cuda_driver.Kernel
    scratch_bytes: list[int] = field(default_factory=list)
    device: int = 0
    """The GPU its kernels are loaded on (its scratch buffers live there too)."""

    def __post_init__(self) -> None:
        # Per kernel, where each argument sits in [*inputs, *outputs, *scratch].
        n_in = len(self.fusion.inputs)
        n_out = len(self.fusion.output_op.values)
        # Symbolic extents (ArgRef "extent") are this launch's values, after the scratch.
        n_scratch = len(self.lowered.scratch)
        self._extents = sorted({a.index: a.value for low in self.lowered.kernels for a in low.args
                                if a.kind == "extent"}.items())
        slot = {j: n_in + n_out + n_scratch + k for k, (j, _) in enumerate(self._extents)}
        base = {"input": 0, "output": n_in, "scratch": n_in + n_out}
        self._gather = [
            (kern, low.grid, low.block, low.shared_bytes,
             [slot[a.index] if a.kind == "extent" else base[a.kind] + a.index for a in low.args])
            for kern, low in zip(self.kernels, self.lowered.kernels, strict=True)
        ]
        self._extent_values = [v for _, v in self._extents]

    def launch_table(self) -> list[tuple[Any, Any, Any, int, list[int]]]:
        """Per kernel, in launch order: (``Kernel``, grid, block, dynamic shared bytes,
        the index of each argument in ``[*inputs, *outputs, *scratch, *extents]``)."""
        return list(self._gather)

    @property
    def extent_values(self) -> list[int]:
        """The values of the symbolic extents this segment was compiled for, in the
        order they follow the scratch buffers (``launch_table``)."""
        return list(self._extent_values)

    def launch(self, inputs: Sequence[Any], outputs: Sequence[int], stream: int, scratch: Sequence[int]) -> None:
        """``inputs``: pointers for tensors, values for scalars; ``outputs``: pointers
        per ``fuser.output`` operand; ``scratch``: pointers."""
        values = [*inputs, *outputs, *scratch, *self._extent_values]
        for kern, grid, block, shared, gather in self._gather:
            kern.launch(grid, block, [values[i] for i in gather], shared, stream)


def kernel_signature(fusion: F.FusionOp, lowered_args: Sequence[Any]) -> str:
    sig = []
    for a in lowered_args:
        if a.kind == "input":
            t = fusion.inputs[a.index].type
            if isinstance(t, F.TensorType):
                sig.append("p")
            else:
                dt = DType.from_xdsl(t)
                if dt not in _SIG:
                    raise ValueError(f"scalar input #{a.index} of type {dt} cannot be passed to a kernel")
                sig.append(_SIG[dt])
        elif a.kind == "extent":
            sig.append("q")
        else:
            sig.append("p")
    return "".join(sig)


class FusionCompiler:
    """Compiled segments by (segment name, input layouts, output layouts, scalar size
    values). One compiler belongs to one program (a ``GpuProgram``, a stream
    evaluator), whose module keeps its segment fusions and gives them unique names:
    there is no process-wide compiler and no cache keyed by object identity. Its
    kernels are loaded on ``device`` (the program's GPU)."""

    def __init__(self, target: Any = None, device: int = 0) -> None:
        self.target = target
        self.device = device
        self._cache: dict[tuple, CompiledSegment] = {}
        self._lowered: dict[tuple, tuple[LoweredFusion, str, str]] = {}
        """Lowerings by the segment's IR with its name masked (``_lower``, as the kernel
        cache masks a kernel's: ``canonical_source``), with
        their CUDA and the segment name they carry."""
        self._lock = threading.Lock()
        self.compiles = 0

    def get(
        self,
        fusion: F.FusionOp,
        layouts: Sequence[TensorLayout | None],
        scalars: Sequence[Any],
        out_layouts: Sequence[TensorLayout] | None = None,
        in_place: tuple[tuple[int, int], ...] = (),
    ) -> CompiledSegment:
        """The compiled segment for these layouts and scalars; ``in_place``: the
        (output, input) pairs the launch writes into one buffer
        (``codegen/aliased_args.py``)."""
        key = self._key(fusion, layouts, scalars, out_layouts, in_place)
        seg = self._cache.get(key)
        if seg is None:
            with self._lock:
                seg = self._cache.get(key)
                if seg is None:
                    lowered, source = self._lower(fusion, layouts, scalars, out_layouts, in_place)
                    seg = self._load(fusion, lowered, source, self._compile(fusion, lowered, source))
                    self._cache[key] = seg
        return seg

    @staticmethod
    def _key(
        fusion: F.FusionOp,
        layouts: Sequence[TensorLayout | None],
        scalars: Sequence[Any],
        out_layouts: Sequence[TensorLayout] | None,
        in_place: tuple[tuple[int, int], ...] = (),
    ) -> tuple:
        return (fusion.sym_name.data, tuple(layouts), tuple(out_layouts or ()), tuple(scalars), in_place)

    def prepare(
        self,
        launches: Sequence[tuple[F.FusionOp, Sequence[TensorLayout | None], Sequence[Any], Sequence[TensorLayout],
                                 tuple[tuple[int, int], ...]]],
        threads: int | None = None,
    ) -> int:
        """Compile ahead the segments of ``launches`` (segment, input layouts, scalar
        values, output layouts, in-place pairs: what ``get`` will be asked for) that are not compiled
        yet: each is lowered and printed here, in order, while NVRTC compiles the ones
        before it in ``threads`` threads (NVRTC releases the GIL; default: one a CPU
        core, at most ``MAX_COMPILE_THREADS``). A program's first run then waits for
        the slowest compile instead of their sum (the backward graph of GPT-2 small is
        one program of 75 segments). A launch that fails here is left to ``get``, which
        raises its error when the launch runs; so is a launch predicted with other
        layouts than it runs with. Returns how many segments it compiled."""
        from concurrent.futures import ThreadPoolExecutor

        todo: dict[tuple, tuple] = {}
        for fusion, layouts, scalars, out_layouts, in_place in launches:
            key = self._key(fusion, layouts, scalars, out_layouts, in_place)
            if key not in self._cache:
                todo.setdefault(key, (fusion, layouts, scalars, out_layouts, in_place))
        if len(todo) < 2:  # nothing to overlap: the launch compiles it
            return 0
        workers = threads or max(1, min(len(todo), os.cpu_count() or 1, MAX_COMPILE_THREADS))
        done = 0
        with ThreadPoolExecutor(workers, thread_name_prefix="fuser-nvrtc") as pool:
            pending = []
            for key, (fusion, layouts, scalars, out_layouts, in_place) in todo.items():
                try:
                    lowered, source = self._lower(fusion, layouts, scalars, out_layouts, in_place)
                except Exception:  # noqa: BLE001 - get() lowers it again when it runs, and raises
                    continue
                pending.append((key, fusion, lowered, source, pool.submit(self._compile, fusion, lowered, source)))
            for key, fusion, lowered, source, compiled in pending:
                try:
                    seg = self._load(fusion, lowered, source, compiled.result())
                except Exception:  # noqa: BLE001 - as above: the launch reports it
                    continue
                with self._lock:
                    self._cache.setdefault(key, seg)
                done += 1
        return done

    def segments(self) -> list[CompiledSegment]:
        """The segments compiled so far, in compile order."""
        return list(self._cache.values())

    def _lower(
        self,
        fusion: F.FusionOp,
        layouts: Sequence[TensorLayout | None],
        scalars: Sequence[Any],
        out_layouts: Sequence[TensorLayout] | None,
        in_place: tuple[tuple[int, int], ...] = (),
    ) -> tuple[LoweredFusion, str]:
        """The segment's kernels and their CUDA. A segment whose IR is one lowered
        before with only its name changed (a transformer's layers), at the same
        layouts, takes that lowering renamed (``_renamed``) instead of lowering again:
        the lowering reads nothing but the IR, the layouts, the scalars and the
        target."""
        from fuser.codegen.kernel_cache import canonical_source

        name = fusion.sym_name.data
        with paused_gc():
            key = (canonical_source(str(fusion), name), tuple(layouts), tuple(out_layouts or ()), tuple(scalars),
                   in_place)
            done = self._lowered.get(key)
            if done is not None:
                return _renamed(*done, name)
            target = self.target or _device_target(self.device)
            lowered = lower_for_launch(fusion, kernel_layouts(layouts), target, scalars, out_layouts,
                                       in_place=in_place)
            if not lowered.kernels:  # host work: launching nothing would leave the outputs unwritten
                raise LoweringError(f"@{name}: its {lowered.scheduler} schedule launches no kernel")
            source = print_cuda(*lowered.modules())
            self._lowered[key] = (lowered, source, name)
            return lowered, source

    @staticmethod
    def _compile(fusion: F.FusionOp, lowered: LoweredFusion, source: str) -> Any:
        from fuser.codegen.kernel_cache import compile_cached

        return compile_cached(source, name=lowered.kernels[0].name, fusion=fusion.sym_name.data)

    def _load(self, fusion: F.FusionOp, lowered: LoweredFusion, source: str, compiled: Any) -> CompiledSegment:
        from fuser.runtime import cuda_driver as drv

        module = drv.load_module(compiled.image, self.device)
        # A segment that differs from one compiled before only in its name shares its image
        # (``KernelCache``): its kernels carry that segment's names.
        # A kernel marked a dependent launch waits for the kernel before it first
        # (``codegen/dependent_launch.py``): it may be launched while that one finishes.
        kernels = [
            module.kernel(
                compiled.symbol(k.name), kernel_signature(fusion, k.args),
                all(f.is_dependent_launch() for f in kernels_of(k.module)),
            )
            for k in lowered.kernels
        ]
        self.compiles += 1
        scratch = [s.numel * s.dtype.itemsize for s in lowered.scratch]
        return CompiledSegment(fusion, lowered, source, kernels, scratch, self.device)


def _renamed(lowered: LoweredFusion, source: str, old: str, new: str) -> tuple[LoweredFusion, str]:
    """The lowering of segment ``old`` as segment ``new``'s (the same IR but for the
    name): its kernels and CUDA carry ``new``'s names (the kernel IR, which is only
    printed, keeps ``old``'s)."""
    from dataclasses import replace

    if old == new:
        return lowered, source
    kernels = [replace(k, name=k.name.replace(old, new)) for k in lowered.kernels]
    return LoweredFusion(lowered.scheduler, kernels, list(lowered.scratch)), source.replace(old, new)


class ScratchPool:
    """Device scratch buffers reused across launches, per device, stream and size:
    work on one stream runs in order, so a buffer handed back after a launch is free
    for the next launch on the same stream. (Stream handles repeat across devices:
    the legacy default stream is 0 on every one.)"""

    def __init__(self) -> None:
        self._free: dict[tuple[int, int, int], list[Any]] = {}

    def take(self, nbytes: int, zero: bool, stream: int, device: int = 0) -> Any:
        from fuser.runtime import cuda_driver as drv
        from fuser.runtime.gpu_arrays import DeviceArray

        bufs = self._free.setdefault((device, stream, nbytes), [])
        buf = bufs.pop() if bufs else DeviceArray([max(nbytes, 1)], DType.bool, device=device)
        if zero and nbytes:
            drv.memset_d8(buf.ptr, 0, nbytes, stream)
        return buf

    def give(self, nbytes: int, buf: Any, stream: int, device: int = 0) -> None:
        self._free.setdefault((device, stream, nbytes), []).append(buf)


_scratch = ScratchPool()


def allocate_outputs(fusion: F.FusionOp, args: Sequence[Any], kind: str) -> list[Any]:
    """Buffers for ``fusion``'s returned outputs at the shapes ``args`` give, of the
    caller's array kind (``torch`` or ``fuser``), in their declared layouts."""
    from fuser.codegen.lower import concrete_shapes
    from fuser.runtime import gpu_arrays as ga

    shape_args = [ga.array_info(a).shape if ga.is_gpu_array(a) else a for a in args]
    shapes = concrete_shapes(fusion, shape_args)
    device = next((ga.array_info(a).device for a in args if ga.is_gpu_array(a)), 0)
    outs = []
    for v, t in zip(fusion.output_op.returned_values(), fusion.function_type.outputs.data, strict=True):
        strides = None
        if isinstance(t, F.TensorType) and not t.has_default_layout:
            strides = TensorLayout.with_stride_order(shapes[v], t.get_stride_order()).strides
        outs.append(ga.empty(shapes[v], F.dtype_of(v.type), like=kind, device=device, strides=strides))
    return outs


def launch_fusion(
    fusion: F.FusionOp,
    args: Sequence[Any],
    outs: Sequence[Any] | None,
    stream: int | None,
    compiler: FusionCompiler,
) -> tuple[list[Any], CompiledSegment]:
    """Run ``fusion`` on the GPU: ``args`` are its inputs (GPU arrays of any kind the
    runtime reads, Python scalars), ``outs`` the buffers of its returned outputs, or
    None to allocate them (the caller's array kind). Aliased outputs are written into
    their input's buffer. Returns the returned outputs and the compiled segment (with
    its CUDA source), from ``compiler``."""
    from fuser.runtime import cuda_driver as drv
    from fuser.runtime.gpu_arrays import array_info, current_stream
    from fuser.runtime.gpu_arrays import is_gpu_array as ga_is_gpu

    torch_args = any(type(a).__module__.startswith("torch") for a in args)
    if stream is None:
        if torch_args:
            stream = current_stream("torch", next(array_info(a).device for a in args if ga_is_gpu(a)))
        else:
            stream = drv.current_stream()
    layouts: list[TensorLayout | None] = []
    values: list[Any] = []
    scalars: list[Any] = []
    sized = None  # whether scalar inputs set extents: computed at the first scalar input
    for i, (a, t) in enumerate(zip(args, fusion.function_type.inputs.data, strict=True)):
        if isinstance(t, F.TensorType):
            info = array_info(a)
            if info.dtype != t.dtype:
                raise ValueError(f"input #{i} of @{fusion.sym_name.data}: dtype {info.dtype}, expected {t.dtype}")
            layouts.append(array_layout(info))
            values.append(info.ptr)
            scalars.append(None)
        else:
            layouts.append(None)
            values.append(a.item() if hasattr(a, "item") else a)
            if sized is None:
                sized = has_size_operands(fusion)
            scalars.append(values[-1] if sized else None)
    term = fusion.output_op
    if outs is None:
        outs = allocate_outputs(fusion, args, "torch" if torch_args else "fuser")
    out_ptrs: list[int] = []
    out_layouts: list[TensorLayout] = []
    returned = iter(outs)
    for alias in term.get_alias_inputs():
        if alias >= 0:
            out_ptrs.append(values[alias])
            lay = layouts[alias]
            assert lay is not None
            out_layouts.append(lay)
        else:
            info = array_info(next(returned))
            out_ptrs.append(info.ptr)
            out_layouts.append(array_layout(info))
    seg = compiler.get(fusion, layouts, scalars, out_layouts, written_in_place(values, layouts, out_ptrs))
    run_compiled(seg, values, out_ptrs, stream)
    return list(outs), seg


def written_in_place(
    values: Sequence[Any], layouts: Sequence[TensorLayout | None], out_ptrs: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    """(output ``j``, input ``i``) for every output whose buffer is tensor input
    ``i``'s (an in-place update, or a caller's output buffer that is an input): the
    kernels declare those arguments without ``__restrict__``
    (``codegen/aliased_args.py``)."""
    return tuple(
        (j, i) for j, p in enumerate(out_ptrs) for i, (v, lay) in enumerate(zip(values, layouts, strict=True))
        if lay is not None and v == p
    )


def run_compiled(seg: CompiledSegment, inputs: Sequence[Any], outputs: Sequence[int], stream: int) -> None:
    """Launch an already compiled segment (the cached fast path: pointers in, no
    layout analysis)."""
    if not seg.scratch_bytes:
        seg.launch(inputs, outputs, stream, ())
        return
    device = seg.device
    bufs = [
        _scratch.take(n, s.zero_init, stream, device)
        for n, s in zip(seg.scratch_bytes, seg.lowered.scratch, strict=True)
    ]
    try:
        seg.launch(inputs, outputs, stream, [b.ptr for b in bufs])
    finally:
        for n, b in zip(seg.scratch_bytes, bufs, strict=True):
            _scratch.give(n, b, stream, device)
