"""Segmented fusions on the GPU: the host program of ``fuser.runtime.segmented`` run by
``fuser.runtime.gpu_evaluator.GpuEvaluator`` with generated kernels.

``fd.execute`` on GPU arrays builds a ``fuser.runtime.gpu_executor.GpuPlan`` (one segment)
when one scheduler accepts the fusion at these sizes, and a ``SegmentedGpuPlan`` when
none does (softmax over rows of 2^21 floats, seed 000 at ``[2, 32]`` / ``[2, 128]``) or
the fusion has a ``fuser.segment_set`` cut (``fuser.runtime.plan.needs_segmentation``, the
decision ``fd.plan`` makes)::

    plan = SegmentedGpuPlan(fusion, flat)     # segment_fusion for these shapes
    outs = plan.run(flat, first=True)          # hir program on the GPU
    outs = plan.run(flat)                      # cached: no segmentation, no compile

The plan is cached by ``execute_gpu`` per input signature (dtypes, shapes, strides,
alignment), so the segmentation is decided once per signature. Each ``hir.launch``
goes to ``launch_segment``: it allocates the outputs when the launch has no
``outs`` (the caller's array type: torch for torch inputs, else ``DeviceArray``)
and calls ``fuser.runtime.compile_fusion.launch_fusion`` on the evaluator's current
stream (compiled once per segment and layout). Intermediates are dropped by the
program's ``hir.deallocate`` after their last use; outputs that are views of an
input are host views of the caller's memory.

``stream_evaluator`` gives the GPU evaluator of a stream-loop program
(``fd.parallelize_stream``), kept on the definition per stream count so that its
stream pool is reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from fuser.ir.dialects import fuser as F
from fuser.runtime import gpu_arrays as ga
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget

__all__ = ["RecordingLauncher", "SegmentedGpuPlan", "launch_segment", "stream_evaluator"]


def _shape_args(args: Sequence[Any]) -> list[Any]:
    return [ga.array_info(a).shape if ga.is_gpu_array(a) else a for a in args]


def allocate_outputs(fusion: F.FusionOp, args: Sequence[Any]) -> list[Any]:
    """Contiguous buffers for the returned outputs of ``fusion`` at ``args``' sizes."""
    from fuser.codegen.lower import concrete_shapes

    infos = [ga.array_info(a) for a in args if ga.is_gpu_array(a)]
    kind = ga.output_kind(infos)
    device = infos[0].device if infos else 0
    shapes = concrete_shapes(fusion, _shape_args(args))
    return [
        ga.empty(shapes[v], F.dtype_of(v.type), like=kind, device=device)
        for v in fusion.output_op.returned_values()
    ]


def launch_segment(
    fusion: F.FusionOp, args: list[Any], outs: list[Any] | None, stream: int
) -> list[Any]:
    """The ``GpuEvaluator`` launcher: ``launch_fusion`` into ``outs`` (allocated here
    when None); returns the outputs."""
    from fuser.runtime.compile_fusion import launch_fusion

    if outs is None:
        outs = allocate_outputs(fusion, args)
    launch_fusion(fusion, args, outs, stream)
    return outs


class RecordingLauncher:
    """``launch_segment`` that remembers the CUDA C of every segment it launched
    (keyed by segment name, in first-launch order) for ``fd.last_cuda_code``."""

    def __init__(self) -> None:
        self.sources: dict[str, str] = {}

    def __call__(self, fusion: F.FusionOp, args: list[Any], outs: list[Any] | None, stream: int) -> list[Any]:
        from fuser.runtime.compile_fusion import default_compiler

        result = launch_segment(fusion, args, outs, stream)
        name = fusion.sym_name.data
        if name not in self.sources:
            last = default_compiler().last
            if last is not None:
                self.sources[name] = last.source
        return result

    def cuda_sources(self) -> list[str]:
        return list(self.sources.values())


class SegmentedGpuPlan:
    """The segmented host program of ``fusion`` for the shapes of ``flat``, run on
    the GPU (same ``run(flat, first)`` interface as ``GpuPlan``)."""

    def __init__(
        self,
        fusion: F.FusionOp,
        flat: Sequence[Any],
        target: GpuTarget = DEFAULT_TARGET,
        num_streams: int = 1,
    ) -> None:
        from fuser.runtime.gpu_evaluator import GpuEvaluator
        from fuser.runtime.segmented import segment_fusion

        self.fusion = fusion
        infos = [ga.array_info(x) if ga.is_gpu_array(x) else None for x in flat]
        shapes = [i.shape if i is not None else None for i in infos]
        self.device = next((i.device for i in infos if i is not None), 0)
        try:
            self.module, self.segments = segment_fusion(fusion, shapes, target)
        except Exception as e:  # noqa: BLE001 - pass diagnostics become ValueErrors
            raise ValueError(f"cannot segment @{fusion.sym_name.data}: {e}") from None
        self.launcher = RecordingLauncher()
        self.evaluator = GpuEvaluator(self.module, self.launcher, num_streams, self.device)

    @property
    def num_kernels(self) -> int:
        return sum(1 for s in self.segments if s.launches_kernel)

    def cuda_sources(self) -> list[str]:
        """The CUDA C of the segments launched so far (one entry per segment)."""
        return self.launcher.cuda_sources()

    def run(self, flat: Sequence[Any], first: bool = False) -> list[Any]:
        del first  # every run goes through the evaluator; kernels are cached
        args = [x.item() if hasattr(x, "item") and not ga.is_gpu_array(x) else x for x in flat]
        return self.evaluator.run(args)


def stream_evaluator(fd: Any, module: ModuleOp, num_streams: int, flat: Sequence[Any]) -> Any:
    """The ``GpuEvaluator`` of ``fd``'s stream-loop ``module`` (one per stream count
    and device, kept on the definition)."""
    from fuser.runtime.gpu_evaluator import GpuEvaluator

    device = next((ga.array_info(x).device for x in flat if ga.is_gpu_array(x)), 0)
    cache: dict[tuple[int, int, int], GpuEvaluator] = fd.__dict__.setdefault("_stream_evaluators", {})
    key = (id(module), num_streams, device)
    ev = cache.get(key)
    if ev is None:
        ev = cache[key] = GpuEvaluator(module, RecordingLauncher(), num_streams, device)
    return ev
