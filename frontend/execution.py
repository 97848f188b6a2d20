"""Running a cached fusion on the CPU.

``execute`` validates the inputs, picks the runtime for their signature (building
it, concretizing dynamic reshapes with the bound sizes, on a miss), runs it through
the executor and post-processes the outputs:

* the executor is one replaceable function ``(FusionOp, flat inputs) -> outputs``
  (``set_executor``); the default is the reference interpreter
  ``fuser.ir.reference.run_fusion``, which also writes aliased outputs into their
  input arrays in place;
* with the default executor, the scheduler registry decides per runtime and input
  sizes (``host_program_for``, cached on the runtime): a fusion that one scheduler
  accepts runs on the reference interpreter as a whole (the semantic source of
  truth, and faster on the CPU); a fusion that none accepts is segmented
  (``fuser.runtime.segmented.segment_fusion``) and its host program runs on the CPU host
  evaluator (``execute_segmented``: views are numpy views, intermediates are
  dropped after their last use);
* outputs that are only views of an input (reshape, permute, squeeze, slice,
  broadcast, expand chains) are returned as numpy views of that input, computed
  here at the frontend, whatever the executor does;
* with torch inputs, outputs are torch tensors; with no tensor input at all (scalars
  only, or none) too when torch is importable (nvFuser always returns torch tensors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fuser.frontend.cache import CacheEntry, FusionCache, Runtime
from fuser.frontend.validation import (
    flatten_inputs,
    input_signature,
    is_torch_tensor,
    plain_inputs,
    rng_spec,
    spread_lists,
    validate_inputs,
)
from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.ir.view_chains import apply_view_chain, view_chain
from fuser.runtime.torch_arrays import numpy_to_torch

Executor = Callable[[FusionOp, Sequence[Any]], list[Any]]


def reference_executor(fusion: FusionOp, inputs: Sequence[Any]) -> list[Any]:
    """Run ``fusion`` with the reference numpy interpreter."""
    try:
        from fuser.ir.reference import run_fusion
    except ImportError as e:  # pragma: no cover - the runtime ships with fuser
        raise RuntimeError("the reference interpreter (fuser.ir.reference) is not available") from e
    return run_fusion(fusion, inputs)


_executor: Executor = reference_executor


def set_executor(fn: Executor | None) -> Executor:
    """Replace the executor (None restores the reference one); returns the old one."""
    global _executor
    old = _executor
    _executor = fn or reference_executor
    return old


def get_executor() -> Executor:
    return _executor


def runtime_for(entry: CacheEntry, inputs: Sequence[Any]) -> Runtime:
    concrete = entry.needs_concretization
    sig = input_signature(entry.inputs, inputs, concrete)
    rt = entry.runtimes.get(sig)
    if rt is None:
        fusion = concretize(entry, inputs) if concrete else entry.fusion
        rt = entry.runtimes[sig] = Runtime(fusion)
    return rt


def input_bindings(entry: CacheEntry, inputs: Sequence[Any]) -> dict[int, Any]:
    """Input position -> shape (tensors), values (vectors) or value (scalars)."""
    from fuser.frontend.validation import user_specs

    bindings: dict[int, Any] = {}
    for pos, (spec, x) in enumerate(zip(user_specs(entry.inputs), inputs, strict=True)):
        if spec.kind == "tensor":
            bindings[pos] = tuple(int(s) for s in x.shape)
        elif spec.kind == "vector":
            bindings[pos] = [int(e) for e in x]
        else:
            bindings[pos] = x.item() if isinstance(x, np.ndarray | np.generic) else x
    return bindings


def concretize(entry: CacheEntry, inputs: Sequence[Any]) -> FusionOp:
    """Replay the definition with input sizes and scalar values bound: every reshape
    becomes static and carries its keep/merge/split view."""
    fd = FusionCache.definition()._replayed(entry.records, input_bindings(entry, inputs))
    return fd._state_fusion(f"nvfuser_fusion_id{entry.id}")


def size_key(flat: Sequence[Any]) -> tuple[Any, ...]:
    """What the scheduler decision depends on beyond the runtime's signature: tensor
    shapes and integer scalars (which may be sizes); float scalars never are."""
    out: list[Any] = []
    for x in flat:
        if hasattr(x, "shape") and getattr(x, "ndim", 0) > 0:
            out.append(tuple(int(s) for s in x.shape))
        elif isinstance(x, int | np.integer) and not isinstance(x, bool):
            out.append(int(x))
        else:
            out.append(None)
    return tuple(out)


def host_program_for(rt: Runtime, flat: Sequence[Any], rng_args: int = 0) -> Any | None:
    """The segmented module (``fuser.runtime.segmented.segment_fusion``) when no single
    scheduler of the registry accepts ``rt.fusion`` at these sizes (or it has a
    ``fuser.segment_set`` cut), else None (the plain reference path). Decided once per runtime and ``size_key``; a fusion the
    segmenter cannot cut runs on the reference path (the reason is kept in
    ``rt.segmentation_errors``). The last ``rng_args`` values (the hidden Philox seed
    and offset, new at every execution) are no part of the key."""
    key = size_key(flat[: len(flat) - rng_args])
    if key in rt.host_programs:
        return rt.host_programs[key]
    module = None
    try:
        from fuser.runtime.plan import needs_segmentation
        from fuser.runtime.segmented import segment_fusion
        from fuser.schedulers.analysis.sizes import bind_sizes
        from fuser.schedulers.registry import select
        from fuser.schedulers.target import DEFAULT_TARGET

        sel = select(rt.fusion, bind_sizes(rt.fusion, list(flat)), DEFAULT_TARGET)
        if needs_segmentation(rt.fusion, sel):
            shapes = [tuple(x.shape) if isinstance(x, np.ndarray) else None for x in flat]
            module, _ = segment_fusion(rt.fusion, shapes, DEFAULT_TARGET)
    except Exception as e:  # noqa: BLE001 - the reference path is always correct on the CPU
        rt.segmentation_errors[key] = f"{type(e).__name__}: {e}"
        module = None
    rt.host_programs[key] = module
    return module


def execute(entry: CacheEntry, inputs: Sequence[Any], executor: Executor | None = None) -> list[Any]:
    if not isinstance(inputs, list | tuple):
        raise ValueError(f"execute: inputs must be a list or tuple, got {type(inputs).__name__}")
    if executor is None and _any_gpu_input(inputs):
        return execute_gpu(entry, inputs)
    if executor is None and _on_default_gpu(inputs):
        return execute_gpu(entry, inputs, torch_outputs=True)
    use_torch = _returns_torch(inputs)
    plain = plain_inputs(inputs)
    validate_inputs(entry.inputs, plain)
    rt = runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain, draw_rng=True)
    run = executor or _executor
    rng_args = 2 if rng_spec(entry.inputs) is not None else 0
    program = host_program_for(rt, flat, rng_args) if run is reference_executor else None
    if program is not None:
        from fuser.frontend import profiling
        from fuser.runtime.segmented import execute_segmented

        try:
            if profiling.active() is not None:  # fd.execute(profile=True): time each launch
                outs = profiling.run_segmented_timed(program, flat, profiling.segment_schedulers(rt.fusion, flat))
            else:
                outs = execute_segmented(program, flat)
        except ValueError as e:
            raise ValueError(f"fusion {entry.id}: {e}") from None
        outs = [np.asarray(r) if isinstance(r, np.generic) else r for r in outs]
    else:
        outs = run_runtime(rt, flat, run, entry.id)
    outs = with_aliased_inputs(rt.fusion, outs, flat)
    rt.runs += 1
    entry.last_run = "cpu"
    if use_torch:
        outs = [numpy_to_torch(o) for o in outs]
    return outs


def _returns_torch(inputs: Sequence[Any]) -> bool:
    """Torch tensors out for torch tensors in; numpy in, numpy out (fuser's CPU
    convention); with no tensor input at all (scalars only, or none), torch tensors when
    torch is importable, as nvFuser always returns torch tensors."""
    if any(is_torch_tensor(x) for x in inputs):
        return True
    if any(isinstance(x, np.ndarray) for x in inputs):
        return False
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _on_default_gpu(inputs: Sequence[Any]) -> bool:
    """A fusion without tensor inputs, and ``set_default_device`` picked a GPU."""
    from fuser.frontend.execute_options import default_device

    if default_device() is None:
        return False
    return not any(isinstance(x, np.ndarray) or is_torch_tensor(x) or hasattr(x, "__cuda_array_interface__") for x in inputs)


def _any_gpu_input(inputs: Sequence[Any]) -> bool:
    from fuser.runtime.gpu_arrays import is_gpu_array

    return any(is_gpu_array(x) for x in inputs)


def execute_gpu(entry: CacheEntry, inputs: Sequence[Any], torch_outputs: bool = False) -> list[Any]:
    """Run on the GPU: the same validation as on the CPU (on the arrays' metadata),
    then ``fuser.runtime.gpu_executor.GpuPlan`` (one segment), or, when no single scheduler
    accepts the fusion at these sizes or it has a ``fuser.segment_set`` cut (the same
    decision as ``fd.plan``: ``fuser.runtime.plan.needs_segmentation``),
    ``fuser.runtime.segmented_gpu.SegmentedGpuPlan`` (the segmented host program on the GPU
    evaluator); the plan is cached per input signature. Outputs are the caller's
    array type; ``torch_outputs`` (a fusion without tensor inputs on the default GPU,
    ``execute_options.set_default_device``) makes them torch CUDA tensors."""
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import GpuPlan, meta_array

    inputs = spread_lists(inputs)  # the scalars of define_vector(n) may come as a list
    key = entry.gpu_key(inputs)
    plans = entry.gpu_plans
    plan = plans.get(key)
    if plan is not None:
        # Same dtypes, shapes, strides and alignment as a validated call: the cached
        # plan holds the compiled kernels and output shapes.
        entry.last_run = plan[0]
        flat = flatten_inputs(entry.inputs, [_plain_scalar(x) for x in inputs], draw_rng=True)
        return with_aliased_inputs(plan[1].fusion, plan[0].run(flat), flat)
    metas: list[Any] = []
    for x in inputs:
        if ga.is_gpu_array(x):
            metas.append(meta_array(ga.array_info(x)))
        elif isinstance(x, np.ndarray) and x.ndim > 0:
            raise ValueError("execute: inputs mix host (numpy) and GPU arrays; move them to one device")
        else:
            metas.append(x)
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    rt = runtime_for(entry, plain)
    flat = flatten_inputs(
        entry.inputs, [x if ga.is_gpu_array(x) else p for x, p in zip(inputs, plain, strict=True)], draw_rng=True
    )
    from fuser.runtime.plan import needs_segmentation
    from fuser.runtime.segmented_gpu import SegmentedGpuPlan
    from fuser.schedulers.analysis.sizes import bind_sizes
    from fuser.schedulers.registry import select
    from fuser.schedulers.target import DEFAULT_TARGET

    try:
        shape_args = [ga.array_info(x).shape if ga.is_gpu_array(x) else x for x in flat]
        selection = select(rt.fusion, bind_sizes(rt.fusion, shape_args), DEFAULT_TARGET)
        if needs_segmentation(rt.fusion, selection):
            # No single kernel (or the user marked a cut): the segmented host program.
            plan = SegmentedGpuPlan(rt.fusion, flat, DEFAULT_TARGET)
            if torch_outputs:
                plan = _TorchOutputs(plan)
        else:
            plan = GpuPlan(rt.fusion, flat, "torch" if torch_outputs else None)
    except ValueError as e:
        raise ValueError(f"fusion {entry.id}: {e}") from None
    plans[key] = (plan, rt)
    rt.runs += 1
    entry.last_run = plan
    return with_aliased_inputs(rt.fusion, plan.run(flat, first=True), flat)


class _TorchOutputs:
    """A GPU plan whose outputs are copied into torch CUDA tensors (a segmented fusion
    without tensor inputs, whose buffers are fuser's own device arrays)."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.fusion = plan.fusion

    def cuda_sources(self) -> list[str]:
        return self.plan.cuda_sources()

    def run(self, flat: Sequence[Any], first: bool = False) -> list[Any]:
        import torch

        outs = self.plan.run(flat, first)
        return [o if is_torch_tensor(o) else torch.as_tensor(o, device="cuda").clone() for o in outs]


def with_aliased_inputs(fusion: FusionOp, outs: list[Any], flat: Sequence[Any]) -> list[Any]:
    """``outs`` with every returned output that is also written in place into an
    input (``add_output(t)`` and ``add_output(t, alias_input=x)``) replaced by that
    input's array: nvFuser returns the aliased input tensor itself (same storage)."""
    term = fusion.output_op
    aliases = term.get_alias_inputs()
    if all(a < 0 for a in aliases):
        return outs
    target = {v: a for v, a in zip(term.values, aliases, strict=True) if a >= 0}
    returned = term.returned_values()
    if not any(v in target for v in returned):
        return outs
    return [flat[target[v]] if v in target else o for v, o in zip(returned, outs, strict=True)]


def _plain_scalar(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def cuda_code_for(entry: CacheEntry, inputs: Sequence[Any]) -> str:
    """CUDA source for the fusion at these inputs' layouts (see FusionDefinition): its
    kernels, or for a fusion that needs segmentation the kernels of every segment, each
    segment under a ``// segment k: @name (scheduler, n kernel(s))`` header."""
    from fuser.codegen.cuda_printer import print_cuda

    lowered = lowered_segments(entry, inputs)
    if len(lowered) == 1 and lowered[0][0] is None:
        return "\n\n".join(print_cuda(m) for m in lowered[0][1].modules())
    parts = []
    for k, (seg, low) in enumerate(lowered):
        assert seg is not None
        header = f"// segment {k}: @{seg.sym_name.data} ({low.scheduler}, {len(low.kernels)} kernel(s))"
        parts.append("\n\n".join([header, *(print_cuda(m) for m in low.modules())]))
    return "\n\n".join(parts)


def lowered_segments(entry: CacheEntry, inputs: Sequence[Any]) -> list[tuple[FusionOp | None, Any]]:
    """The lowering (``LoweredFusion``) of the fusion at these inputs' layouts:
    ``[(None, lowered)]`` when one scheduler takes it, else ``(segment, lowered)`` for
    every kernel launch of its segmented host program, in order."""
    from fuser.codegen.lower import lower_segment
    from fuser.codegen.lower.common import TensorLayout
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.cpu_runner import layout_of
    from fuser.runtime.gpu_executor import meta_array
    from fuser.runtime.plan import needs_segmentation
    from fuser.schedulers.analysis.sizes import bind_sizes
    from fuser.schedulers.registry import select
    from fuser.schedulers.target import DEFAULT_TARGET

    metas = [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    rt = runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain)
    layouts: list[TensorLayout | None] = []
    scalars: list[Any] = []
    for x in flat:
        if isinstance(x, np.ndarray):
            layouts.append(layout_of(x))
            scalars.append(None)
        else:
            layouts.append(None)
            scalars.append(x)
    shape_args = [lay.shape if lay is not None else v for lay, v in zip(layouts, scalars, strict=True)]
    selection = select(rt.fusion, bind_sizes(rt.fusion, shape_args), DEFAULT_TARGET)
    if not needs_segmentation(rt.fusion, selection):
        return [(None, lower_segment(rt.fusion, layouts, scalars))]
    return [
        (seg, lower_segment(seg, seg_layouts, seg_scalars))
        for seg, seg_layouts, seg_scalars in segment_launches(rt.fusion, layouts, scalars)
    ]


def execute_kernels_on_cpu(
    entry: CacheEntry, inputs: Sequence[Any], nvrtc: bool = True
) -> list[Any]:
    """Run the plan the GPU would run, on the CPU, with the generated kernels: the same
    validation, scheduler decision and segmentation as ``execute_gpu``; one segment
    lowers for the inputs' layouts and its kernels run in the CPU kernel interpreter
    (``fuser.runtime.cpu_runner.run_segment_on_cpu``), a segmented fusion runs its host
    program with every launch doing the same (``fuser.runtime.cpu_runner.KernelHostEvaluator``;
    intermediates are numpy arrays). Inputs are numpy arrays (or torch CPU tensors) and
    scalars; outputs are numpy arrays. ``nvrtc``: also compile every kernel with NVRTC.
    Zero-size tensors are computed by the reference, as ``GpuPlan`` does on the host.
    For tests: the interpreter runs a Python generator per thread, so keep shapes small."""
    from fuser.codegen.lower import concrete_shapes
    from fuser.ir.reference import run_fusion
    from fuser.runtime.cpu_runner import KernelHostEvaluator, run_segment_on_cpu
    from fuser.runtime.plan import needs_segmentation
    from fuser.runtime.segmented import segment_fusion
    from fuser.schedulers.analysis.sizes import bind_sizes
    from fuser.schedulers.registry import select
    from fuser.schedulers.target import DEFAULT_TARGET

    plain = plain_inputs(inputs)
    validate_inputs(entry.inputs, plain)
    rt = runtime_for(entry, plain)
    flat = [_plain_scalar(x) for x in flatten_inputs(entry.inputs, plain)]
    shapes = [tuple(x.shape) if isinstance(x, np.ndarray) else None for x in flat]
    shape_args = [s if s is not None else x for s, x in zip(shapes, flat, strict=True)]
    selection = select(rt.fusion, bind_sizes(rt.fusion, shape_args), DEFAULT_TARGET)
    if needs_segmentation(rt.fusion, selection):
        module, _ = segment_fusion(rt.fusion, shapes, DEFAULT_TARGET)
        outs = KernelHostEvaluator(module, nvrtc=nvrtc).run(flat, "main")
    elif any(s is not None and 0 in s for s in shapes) or any(
        0 in concrete_shapes(rt.fusion, shape_args)[v]
        for v in rt.fusion.output_op.returned_values()
    ):
        outs = run_fusion(rt.fusion, flat)
    else:
        outs = run_segment_on_cpu(rt.fusion, flat, nvrtc=nvrtc)[0]
    return [np.asarray(o) if isinstance(o, np.generic) else o for o in outs]


def segment_launches(
    fusion: FusionOp, layouts: Sequence[Any], scalars: Sequence[Any]
) -> list[tuple[FusionOp, list[Any], list[Any]]]:
    """Each kernel launch of the segmented host program of ``fusion`` (``fd.segment``'s
    segmentation, the one the GPU runs) with its input layouts and scalar values: a
    program input keeps the caller's layout, an intermediate is the dense buffer the
    program allocates for it (in the stride order the segment declares)."""
    from fuser.ir.dialects import hir as H
    from fuser.runtime.driver import launch_layouts
    from fuser.runtime.segmented import segment_fusion
    from fuser.schedulers.target import DEFAULT_TARGET

    shapes = [lay.shape if lay is not None else None for lay in layouts]
    module, _ = segment_fusion(fusion, shapes, DEFAULT_TARGET)
    program = next(op for op in module.walk() if isinstance(op, H.ProgramOp))
    callees = {op.sym_name.data: op for op in module.walk() if isinstance(op, FusionOp)}
    return launch_layouts(program, callees, layouts, scalars, "cuda_code_for: ")


def run_runtime(rt: Runtime, flat: list[Any], executor: Executor, fusion_id: int) -> list[Any]:
    fusion = rt.fusion
    term = fusion.output_op
    returned = term.returned_values()
    out_types = fusion.function_type.outputs.data
    views: dict[int, Any] = {}
    for i, (v, t) in enumerate(zip(returned, out_types, strict=True)):
        if isinstance(t, TensorType) and not t.has_default_layout:
            continue
        chain = view_chain(v)
        if chain is not None:
            try:
                views[i] = apply_view_chain(chain, flat)
            except Exception:  # noqa: BLE001 - fall back to the executor's result
                pass
    has_alias = any(a >= 0 for a in term.get_alias_inputs())
    results: list[Any] = [None] * len(returned)
    if has_alias or len(views) < len(returned):
        try:
            results = list(executor(fusion, flat))
        except ValueError as e:
            raise ValueError(f"fusion {fusion_id}: {e}") from None
    for i, v in views.items():
        results[i] = v
    return [np.asarray(r) if isinstance(r, np.generic) else r for r in results]
