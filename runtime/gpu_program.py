"""An ``Executable`` on the GPU: its ``hir.program`` run by the GPU host evaluator,
every ``hir.launch`` compiled (once per layout) and launched with generated kernels.

::

    exe = driver.compile(fusion, Signature.of(fusion, flat), target)
    prog = GpuProgram(exe, flat)
    outs = prog.run(flat)        # first run: walks the program, compiles each segment
    outs = prog.run(flat)        # same signature: the replay (below), kernels cached

``fd.execute`` on GPU arrays keeps one ``GpuProgram`` per input signature (dtypes,
shapes, strides, alignment classes: ``CacheEntry.gpu_key``), so everything decided
from the signature is decided once:

* **launches**: the launcher lowers the launch's segment for the layouts it sees
  (``fuser.codegen.lower.lower_segment``, reading the segment's loop nest),
  prints CUDA, compiles with NVRTC (through the disk cache) and loads it, in the
  program's own ``FusionCompiler``. A launch whose tensors have no element (zero-size
  extents: nothing for a kernel to do, and a reduction over an empty axis only
  produces identities) runs its segment with the reference interpreter on host copies.
* **the replay**: after the first run, a program of host views, ``hir.allocate`` of
  static shapes, ``hir.launch ... outs(...)``, ``hir.alias``, ``hir.deallocate``,
  stream loops and communications (what ``segment``, the stream lowering and
  ``lower-communications`` emit) is replayed on later runs by a
  ``fuser.runtime.gpu_replay.Replay``: host views are composed into pointer offsets
  and loops unrolled when the replay is built, so a call only reads pointers,
  allocates the outputs, switches streams, communicates and launches. The input
  checks are the signature's (the cache key); a replay that communicates is taken
  only with the communicator it was built with (the evaluator's). Any other program
  is walked every time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fuser.codegen.aliased_args import in_place_pairs
from fuser.ir.dialects import fuser as F
from fuser.runtime import gpu_arrays as ga
from fuser.runtime.compile_fusion import CompiledSegment, FusionCompiler, launch_fusion
from fuser.runtime.driver import Executable
from fuser.runtime.gpu_evaluator import GpuEvaluator
from fuser.runtime.gpu_replay import Replay
from fuser.runtime.library_ops import LibraryCall, library_segment

__all__ = ["GpuProgram"]


class _Evaluator(GpuEvaluator):
    """The GPU evaluator; ``torch_buffers`` makes every buffer a torch tensor (a
    fusion without tensor inputs on the default GPU returns torch tensors)."""

    def __init__(self, *args: Any, torch_buffers: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.torch_buffers = torch_buffers

    def _prepare(self, inputs: Sequence[Any], preallocated_outputs: Sequence[Any | None] | None) -> None:
        super()._prepare(inputs, preallocated_outputs)
        self._torch = self._torch or self.torch_buffers


def _numel(x: Any) -> int:
    return int(np.prod(ga.array_info(x).shape)) if ga.is_gpu_array(x) else 1


def _to_numpy(x: Any) -> Any:
    if not ga.is_gpu_array(x):
        return x
    if ga._torch_tensor(x) is not None:
        from fuser.runtime.torch_arrays import torch_to_numpy

        return torch_to_numpy(x.detach().cpu())
    return x.to_numpy() if hasattr(x, "to_numpy") else ga.DeviceArray(
        ga.array_info(x).shape, ga.array_info(x).dtype, ptr=ga.array_info(x).ptr
    ).to_numpy()


def _upload_into(dst: Any, host: np.ndarray) -> None:
    host = np.ascontiguousarray(host)
    if ga._torch_tensor(dst) is not None:
        from fuser.runtime.torch_arrays import numpy_to_torch

        dst.copy_(numpy_to_torch(host).reshape(dst.shape))
        return
    from fuser.runtime import cuda_driver as drv

    if host.nbytes:
        drv.memcpy_htod(ga.array_info(dst).ptr, host)


def _aligned(layout: Any, ty: Any) -> Any:
    """``layout`` with its pointer alignment capped at 16 bytes of the element type of
    ``ty``, as ``pointer_alignment`` reads it from a pointer: a program input keeps its
    own, a buffer the program allocates (``launch_layouts``: 16 elements) is a fresh
    allocation's."""
    from dataclasses import replace

    from fuser.runtime.compile_fusion import pointer_alignment

    cap = pointer_alignment(0, F.dtype_of(ty).itemsize)  # a 16-byte aligned pointer's
    return layout if layout.pointer_align <= cap else replace(layout, pointer_align=cap)


def _predicted_launch(
    seg: F.FusionOp, layouts: Sequence[Any], scalars: Sequence[Any], in_place: tuple[tuple[int, int], ...] = ()
) -> tuple | None:
    """What ``launch_fusion`` will ask the compiler for when the program launches
    ``seg`` with arguments of ``layouts`` and ``scalars`` (``launch_layouts``): the
    inputs' layouts (``_aligned``), the scalars that set extents, the outputs'
    layouts (an aliased output its input's, a returned one dense in its declared
    stride order, freshly allocated), and the launch's ``in_place`` pairs
    (``codegen.aliased_args.in_place_pairs``); None for a launch with zero-size
    tensors (run on the host)."""
    from fuser.codegen.lower import concrete_shapes
    from fuser.codegen.lower.common import TensorLayout
    from fuser.schedulers.analysis.sizes import has_size_operands

    ins = [lay if lay is None else _aligned(lay, t.type) for lay, t in zip(layouts, seg.inputs, strict=True)]
    sized = has_size_operands(seg)
    vals = [v if sized and lay is None else None for v, lay in zip(scalars, ins, strict=True)]
    shapes = concrete_shapes(seg, [lay.shape if lay is not None else v for lay, v in zip(ins, scalars, strict=True)])
    outs: list[Any] = []
    returned = iter(seg.output_op.returned_values())
    for alias in seg.output_op.get_alias_inputs():
        if alias >= 0:
            outs.append(ins[alias])
            continue
        v = next(returned)
        if not isinstance(v.type, F.TensorType):
            return None  # a scalar output: not a kernel's
        outs.append(_aligned(TensorLayout.with_stride_order(shapes[v], v.type.get_stride_order()), v.type))
    if any(lay is not None and 0 in lay.shape for lay in (*ins, *outs)):
        return None
    return seg, ins, vals, outs, in_place


class GpuProgram:
    """An ``Executable`` run on the GPU for one input signature (module docstring)."""

    def __init__(
        self, exe: Executable, flat: Sequence[Any], torch_outputs: bool = False, num_streams: int = 1
    ) -> None:
        self.exe = exe
        infos = [ga.array_info(x) for x in flat if ga.is_gpu_array(x)]
        self.device = infos[0].device if infos else 0
        self.compiler = FusionCompiler(exe.target, self.device)
        self.evaluator = _Evaluator(
            exe.module, self._launch, num_streams, self.device, torch_buffers=torch_outputs
        )
        self._launched: dict[str, CompiledSegment | None] = {}
        self._library: dict[str, LibraryCall | None] = {}
        """Per segment launched so far (by fusion name), its library call (a matrix
        product), or None for a segment of generated kernels."""
        self._replay: Replay | None = None
        self.runs = 0

    hot_checked = False
    """Whether the frontend tried to build this program's hot launcher
    (``fuser.runtime.hot_launch``)."""

    @property
    def replay(self) -> Replay | None:
        """The replay later runs take (None before the first run, or when the program
        is walked every time)."""
        return self._replay

    # ---- what it runs -------------------------------------------------------------
    @property
    def num_kernels(self) -> int:
        """Launches per run (segments with a kernel)."""
        return len(self.exe.launches)

    def compiled_segments(self) -> list[CompiledSegment]:
        """The compiled segments launched so far, in first-launch order (a launch run
        on the host, zero-size, has none)."""
        return [seg for seg in self._launched.values() if seg is not None]

    def cuda_sources(self) -> list[str]:
        """The CUDA C of the segments launched so far, in first-launch order."""
        return [seg.source for seg in self.compiled_segments()]

    # ---- running ------------------------------------------------------------------
    def run(self, flat: Sequence[Any], first: bool = False) -> list[Any]:
        del first
        self.runs += 1
        replay = self._replay
        if replay is not None and (replay.communicator is None or replay.communicator is self.evaluator.communicator):
            return replay(flat)
        args = [x.item() if hasattr(x, "item") and not ga.is_gpu_array(x) else x for x in flat]
        if self.runs == 1:
            self.compile_ahead(args)
        outs = self.evaluator.run(args)
        if self.runs == 1 or replay is not None:
            # (again after a walk with another communicator: its position may differ)
            self._replay = self._build_replay(flat)
        return outs

    def compile_ahead(self, flat: Sequence[Any]) -> int:
        """Before the first run: compile every segment the run will launch with
        generated kernels, NVRTC in parallel (``FusionCompiler.prepare``), at the
        layouts the run will give them (``_predicted_launch``). A launch predicted
        wrong, or one this cannot predict, compiles when it runs, as without this.
        Returns how many segments it compiled."""
        from fuser.runtime.compile_fusion import array_layout

        if len(self.exe.launches) < 2 or self.evaluator.communicator is not None:
            return 0
        layouts: list[Any] = []
        scalars: list[Any] = []
        for x in flat:
            if ga.is_gpu_array(x):
                layouts.append(array_layout(ga.array_info(x)))
                scalars.append(None)
            else:
                layouts.append(None)
                scalars.append(x)
        try:
            launches = self.exe.launch_layouts(layouts, scalars)
        except Exception:  # noqa: BLE001 - shapes the host cannot predict: the run finds them
            return 0
        jobs = []
        for launch, (seg, seg_layouts, seg_scalars) in zip(self.exe.launches, launches, strict=True):
            if library_segment(seg) is not None:
                continue
            try:
                job = _predicted_launch(seg, seg_layouts, seg_scalars, in_place_pairs(launch, seg))
            except Exception:  # noqa: BLE001 - as above: the launch itself reports it
                continue
            if job is not None:
                jobs.append(job)
        return self.compiler.prepare(jobs)

    def _launch(self, fusion: F.FusionOp, args: list[Any], outs: list[Any] | None, stream: int) -> list[Any]:
        """The evaluator's launcher (``GpuEvaluator``'s ``Launcher``)."""
        name = fusion.sym_name.data
        if outs is None:
            outs = self._allocate(fusion, args)
        if any(_numel(x) == 0 for x in (*args, *outs)):
            self._launched.setdefault(name, None)
            self._host_launch(fusion, args, outs)
            return outs
        if name not in self._library:
            lib = library_segment(fusion)
            self._library[name] = None if lib is None else LibraryCall(fusion, lib)
        call = self._library[name]
        if call is not None:
            # A matrix product: cuBLAS (through torch) on the launch's stream; the
            # replay keeps the call as one step.
            call.launch(args, outs, stream)
            return outs
        outs, seg = launch_fusion(fusion, args, outs, stream, self.compiler)
        if self._launched.setdefault(name, seg) is not seg:
            self._replay_ok = False  # one segment at two layouts: walk every run
        return outs

    def _allocate(self, fusion: F.FusionOp, args: Sequence[Any]) -> list[Any]:
        from fuser.codegen.lower import concrete_shapes

        shapes = concrete_shapes(fusion, [ga.array_info(a).shape if ga.is_gpu_array(a) else a for a in args])
        return [
            self.evaluator._empty(list(shapes[v]), F.dtype_of(v.type))  # noqa: SLF001
            for v in fusion.output_op.returned_values()
        ]

    def _host_launch(self, fusion: F.FusionOp, args: Sequence[Any], outs: Sequence[Any]) -> None:
        from fuser.ir.reference import run_fusion

        self._replay_ok = False
        host = [_to_numpy(x) for x in args]
        results = run_fusion(fusion, host)
        for dst, r in zip(outs, results, strict=True):
            _upload_into(dst, np.asarray(r))
        for alias in fusion.output_op.get_alias_inputs():
            if alias >= 0 and ga.is_gpu_array(args[alias]):
                _upload_into(args[alias], host[alias])

    # ---- the replay ----------------------------------------------------------------
    _replay_ok = True

    def _build_replay(self, flat: Sequence[Any]) -> Replay | None:
        if not self._replay_ok:
            return None
        return Replay.after_walk(self.evaluator, self.exe.program, flat, self._launched, self._library)
