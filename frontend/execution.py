"""Running a cached fusion: ``fd.execute`` on the CPU and on the GPU.

Both go through the compiler driver (``fuser.runtime.driver``): ``executable_for``
compiles the runtime fusion (dynamic reshapes concretized with the bound sizes) for
the inputs' signature with the fusion's pipeline (``fd.pipeline``, by default
``driver.PASSES`` after ``bind-sizes``) and caches the ``Executable`` on the runtime.
Then:

* **CPU** (``execute``): the Executable's host program runs on the CPU host
  evaluator (``Executable.run_on_cpu``): host views are numpy views of the inputs,
  intermediates are dropped after their last use, and each ``hir.launch`` runs its
  segment with the reference interpreter (the fast CPU mode; the generated kernels
  in the CPU kernel interpreter are ``execute_kernels_on_cpu``). An explicit
  executor (``executor=``, ``set_executor``) instead runs the whole fusion, with
  outputs that are only views of an input returned as numpy views;
* **GPU** (``execute_gpu``): a ``fuser.runtime.gpu_program.GpuProgram`` per input
  signature (dtypes, shapes, strides, alignment: ``CacheEntry.gpu_key``) runs the
  program on the GPU evaluator, compiling each launch's kernels for the layouts it
  sees; later calls replay it. On torch CUDA tensors a replayable program also gets
  a generated cache-hit launcher (``fuser.runtime.hot_launch``) that
  ``FusionDefinition.execute`` calls first (``hot_execute``) when every keyword is at
  its default.

With torch inputs, outputs are torch tensors; with no tensor input at all (scalars
only, or none) too when torch is importable (nvFuser always returns torch tensors).
"""

from __future__ import annotations

import functools
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

HOT = True
"""Whether GPU runs build cache-hit launchers (``hot_execute``). Setting it False
stops new ones only; ``entry.hot.clear()`` drops those built."""

_STREAM_AXES = "_fuser_stream_axes"  # fuser.frontend.streams' mark on a definition
_hot_key: Callable[[Sequence[Any]], tuple] = tuple  # hot_launch.key_of once a launcher exists


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


def executable_for(entry: CacheEntry, rt: Runtime, flat: Sequence[Any], rng_args: int, target: Any) -> Any:
    """The ``fuser.runtime.driver.Executable`` of ``rt.fusion`` for ``flat``'s
    signature, compiled on the first call (the pipeline ``fd.pipeline`` names) and
    cached on the runtime. The last ``rng_args`` values (the hidden Philox seed and
    offset, new at every execution) are no part of the signature."""
    from fuser.runtime.driver import PASSES, Signature, compile

    head = list(flat[: len(flat) - rng_args]) + [None] * rng_args
    passes = entry.passes or PASSES
    key = (Signature.of(rt.fusion, head), target, passes)
    exe = rt.executables.get(key)
    if exe is None:
        exe = rt.executables[key] = compile(rt.fusion, key[0], target, passes)
    return exe


def hot_execute(fd: Any, entry: CacheEntry, inputs: Any) -> list[Any] | None:
    """A cache hit of ``fd.execute(inputs)`` (every keyword at its default) through
    the hot launcher of these inputs' GPU signature (``CacheEntry.hot``, keyed as
    ``gpu_plans``), or None when the call must take the full path: no launcher for
    the key, inputs not a list or tuple, a stored segmentation, stream axes or user
    schedules on the definition. It does what the full path's cache hit does: resets
    the profile and debug-output state, sets ``entry.last_run`` and runs the program
    (a launcher exists only for programs without returned outputs that are inputs
    written in place, random ops, vector or value-keyed scalar inputs:
    ``_remember_hot``; one that writes inputs in place runs only for calls its guard
    passes)."""
    if type(inputs) is not list and type(inputs) is not tuple:
        return None
    state = fd.__dict__
    if state.get("_segmentation") is not None or state.get(_STREAM_AXES) or entry.user_schedules:
        return None
    launcher = entry.hot.get(_hot_key(inputs))
    if launcher is None:
        return None
    state["profiled"] = False
    state["_debug_output"] = None
    if "_profile" in state:
        del state["_profile"]
    if launcher.guard is not None and not launcher.guard(inputs):
        return None
    entry.last_run = launcher.plan
    return launcher.run(inputs)


def _overlap_guard(aliases: Sequence[int], inputs: Sequence[Any]) -> Callable[[Sequence[Any]], bool] | None:
    """For a program that writes inputs in place: a check that a call's tensor inputs
    do not overlap the inputs it writes (by pointer, with the byte spans of these
    inputs' signature), so that ``check_in_place_inputs`` has nothing to say; None
    for a program without in-place outputs. A call that fails it takes the full
    path, which allows the same array read element by element and raises the
    ``ValueError`` otherwise."""
    from fuser.runtime.overlap import byte_span

    spans: dict[int, tuple[int, int]] = {}
    for k, x in enumerate(inputs):
        span = byte_span(x)
        if span is not None:
            start = span[3][0]
            spans[k] = (span[1] - start, span[2] - start)
    pairs = [(a, j) for a in sorted({a for a in aliases if a >= 0}) for j in spans if j != a]
    if not pairs:
        return None
    used = sorted({k for pair in pairs for k in pair})
    if any(k not in spans for k in used):
        return lambda xs: False  # a written input without elements: the full path
    lo = {k: spans[k][0] for k in used}
    hi = {k: spans[k][1] for k in used}

    def guard(xs: Sequence[Any]) -> bool:
        ptr = {k: xs[k].data_ptr() for k in used}
        return all(ptr[a] + hi[a] <= ptr[j] + lo[j] or ptr[j] + hi[j] <= ptr[a] + lo[a] for a, j in pairs)

    return guard


def _remember_hot(entry: CacheEntry, key: tuple, plan: Any, rt: Runtime, inputs: Sequence[Any], flat: Sequence[Any]) -> None:
    """Build the hot launcher of ``plan`` for ``key`` once, after a run: only when the
    run's flat arguments are the inputs themselves (no vector, no random seed), the
    launcher's key of the inputs is ``key`` (no scalar keyed by value), no returned
    output is an input written in place (``with_aliased_inputs``) and the program has
    a replay; ``hot_launch.build`` checks the rest. A program writing inputs in place
    gets a launcher guarded against overlapping inputs (``_overlap_guard``)."""
    if not HOT or key in entry.hot or plan.hot_checked:
        return
    if len(flat) != len(inputs) or any(f is not x for f, x in zip(flat, inputs, strict=True)):
        return
    from fuser.runtime.hot_launch import build, key_of, takes

    if not takes(inputs) or key_of(inputs) != key:  # this call's kinds of inputs
        return
    plan.hot_checked = True
    replay = plan.replay
    if replay is None or rt.aliased:
        return
    launcher = build(replay, plan, inputs)
    if launcher is not None:
        launcher.guard = _overlap_guard(rt.fusion.output_op.get_alias_inputs(), inputs)
        global _hot_key
        _hot_key = key_of
        entry.hot[key] = launcher


def check_in_place_inputs(entry: CacheEntry, rt: Runtime, flat: Sequence[Any]) -> None:
    """A ``ValueError`` when an input shares memory with one the fusion updates in
    place (``fuser.runtime.overlap``), unless it is that very array and the fusion
    reads it element by element."""
    if rt.in_place is None:
        fusion = rt.fusion
        aliases = tuple(fusion.output_op.get_alias_inputs())
        if any(a >= 0 for a in aliases):
            from fuser.passes.mark_aliases import reads_misaligned

            aligned = frozenset(
                j for j, x in enumerate(fusion.inputs)
                if isinstance(x.type, TensorType) and not reads_misaligned(x)
            )
            rt.in_place = (aliases, aligned)
        else:
            rt.in_place = ()
    if not rt.in_place:
        return
    from fuser.runtime.overlap import in_place_conflict

    aliases, aligned = rt.in_place
    problem = in_place_conflict(aliases, flat, aligned.__contains__)
    if problem is not None:
        raise ValueError(f"fusion {entry.id}: {problem}")


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
    check_in_place_inputs(entry, rt, flat)
    if executor is not None or _executor is not reference_executor:
        # An explicit executor (``executor=``, ``set_executor``) runs the whole fusion.
        outs = run_runtime(rt, flat, executor or _executor, entry.id)
    else:
        from fuser.frontend import profiling
        from fuser.runtime.driver import CompileError
        from fuser.schedulers.target import DEFAULT_TARGET

        rng_args = 2 if rng_spec(entry.inputs) is not None else 0
        try:
            exe = executable_for(entry, rt, flat, rng_args, DEFAULT_TARGET)
            if profiling.active() is not None:  # fd.execute(profile=True): time each launch
                outs = profiling.run_segmented_timed(exe.module, flat, profiling.segment_schedulers(exe))
            else:
                outs = exe.run_on_cpu(flat)
        except (CompileError, ValueError) as e:
            raise ValueError(f"fusion {entry.id}: {e}") from None
        outs = [np.asarray(r) if isinstance(r, np.generic) else r for r in outs]
    outs = with_aliased_inputs(rt, outs, flat)
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
    then the ``GpuProgram`` of the fusion's ``Executable`` for this input signature
    (compiled for the device's ``GpuTarget``; cached per ``gpu_key``). Outputs are
    the caller's array type; ``torch_outputs`` (a fusion without tensor inputs on the
    default GPU, ``execute_options.set_default_device``) makes them torch CUDA
    tensors."""
    given = inputs
    inputs = spread_lists(inputs)  # the scalars of define_vector(n) may come as a list
    key = entry.gpu_key(inputs)
    plans = entry.gpu_plans
    plan = plans.get(key)
    if plan is not None:
        # Same dtypes, shapes, strides and alignment as a validated call: the cached
        # plan holds the compiled kernels and output shapes.
        entry.last_run = plan[0]
        flat = flatten_inputs(entry.inputs, [_plain_scalar(x) for x in inputs], draw_rng=True)
        check_in_place_inputs(entry, plan[1], flat)
        outs = with_aliased_inputs(plan[1], plan[0].run(flat), flat)
        _remember_hot(entry, key, plan[0], plan[1], given, flat)
        return outs
    plain, flat = validated_gpu_inputs(entry, inputs)
    rt = runtime_for(entry, plain)
    check_in_place_inputs(entry, rt, flat)
    from fuser.runtime.driver import CompileError
    from fuser.runtime.gpu_program import GpuProgram

    rng_args = 2 if rng_spec(entry.inputs) is not None else 0
    try:
        exe = executable_for(entry, rt, flat, rng_args, device_target(flat))
        plan = GpuProgram(exe, flat, torch_outputs=torch_outputs)
    except (CompileError, ValueError) as e:
        raise ValueError(f"fusion {entry.id}: {e}") from None
    plans[key] = (plan, rt)
    rt.runs += 1
    entry.last_run = plan
    try:
        outs = plan.run(flat, first=True)
    except ValueError as e:
        raise ValueError(f"fusion {entry.id}: {e}") from None
    outs = with_aliased_inputs(rt, outs, flat)
    if not torch_outputs:
        _remember_hot(entry, key, plan, rt, given, flat)
    return outs


def validated_gpu_inputs(entry: CacheEntry, inputs: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """``inputs`` validated as ``fd.execute`` does on the CPU, GPU arrays by their
    metadata (``meta_array``), and flattened for the program: (the plain inputs, the
    flat arguments with the GPU arrays as given). Host (numpy) arrays beside GPU
    arrays are an error."""
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import meta_array

    on_gpu = any(ga.is_gpu_array(x) for x in inputs)
    metas: list[Any] = []
    for x in inputs:
        if ga.is_gpu_array(x):
            metas.append(meta_array(ga.array_info(x)))
        elif on_gpu and isinstance(x, np.ndarray) and x.ndim > 0:
            raise ValueError("execute: inputs mix host (numpy) and GPU arrays; move them to one device")
        else:
            metas.append(x)
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    flat = flatten_inputs(
        entry.inputs, [x if ga.is_gpu_array(x) else p for x, p in zip(inputs, plain, strict=True)], draw_rng=True
    )
    return plain, flat


def device_target(flat: Sequence[Any]) -> Any:
    """The ``GpuTarget`` of the device the GPU arrays of ``flat`` live on (the
    properties read from the driver once per device; the H100's without one)."""
    from fuser.runtime import gpu_arrays as ga

    device = next((ga.array_info(x).device for x in flat if ga.is_gpu_array(x)), 0)
    return _device_target(device)


@functools.cache
def _device_target(ordinal: int) -> Any:
    from fuser.schedulers.target import from_device

    return from_device(ordinal)


def with_aliased_inputs(rt: Runtime, outs: list[Any], flat: Sequence[Any]) -> list[Any]:
    """``outs`` with every returned output that is also written in place into an
    input (``add_output(t)`` and ``add_output(t, alias_input=x)``) replaced by that
    input's array: nvFuser returns the aliased input tensor itself (same storage).
    The positions are read from ``rt.fusion`` once (``Runtime.aliased``)."""
    aliased = rt.aliased
    if aliased is None:
        term = rt.fusion.output_op
        target = {v: a for v, a in zip(term.values, term.get_alias_inputs(), strict=True) if a >= 0}
        aliased = rt.aliased = [(k, target[v]) for k, v in enumerate(term.returned_values()) if v in target]
    if not aliased:
        return outs
    outs = list(outs)
    for k, a in aliased:
        outs[k] = flat[a]
    return outs


def _plain_scalar(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def lowered_segments(entry: CacheEntry, inputs: Sequence[Any], target: Any = None) -> list[tuple[FusionOp, Any]]:
    """The lowering (``LoweredFusion``) of every kernel launch of the fusion's
    ``Executable`` at these inputs' layouts, in launch order: what ``fd.execute``
    launches for them."""
    from fuser.codegen.aliased_args import in_place_pairs
    from fuser.codegen.dependent_launch import lower_for_launch
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.cpu_runner import layout_of
    from fuser.runtime.gpu_executor import meta_array
    from fuser.runtime.signature import kernel_layouts

    metas = [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    rt = runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain)
    layouts: list[Any] = []
    scalars: list[Any] = []
    for x in flat:
        if isinstance(x, np.ndarray):
            layouts.append(layout_of(x))
            scalars.append(None)
        else:
            layouts.append(None)
            scalars.append(_plain_scalar(x))
    if target is None:
        target = device_target(inputs) if any(ga.is_gpu_array(x) for x in inputs) else _default_target()
    exe = executable_for(entry, rt, flat, 0, target)
    out = []
    for launch, (seg, seg_layouts, seg_scalars) in zip(exe.launches, exe.launch_layouts(layouts, scalars), strict=True):
        lowered = lower_for_launch(
            seg, kernel_layouts(seg_layouts), exe.target, seg_scalars, in_place=in_place_pairs(launch, seg)
        )
        out.append((seg, lowered))
    return out


def _default_target() -> Any:
    from fuser.schedulers.target import DEFAULT_TARGET

    return DEFAULT_TARGET


def execute_kernels_on_cpu(
    entry: CacheEntry, inputs: Sequence[Any], nvrtc: bool = True, target: Any = None
) -> list[Any]:
    """Run what the GPU would run, on the CPU, with the generated kernels: the same
    validation and ``Executable`` as ``fd.execute``; its host program runs on the CPU
    with every launch lowered for its arguments' layouts and run in the CPU kernel
    interpreter (``fuser.runtime.cpu_runner.KernelHostEvaluator``; intermediates are
    numpy arrays). Inputs are numpy arrays (or torch CPU tensors) and scalars; outputs
    are numpy arrays. ``nvrtc``: also compile every kernel with NVRTC. Zero-size
    tensors are computed by the reference, as ``GpuProgram`` does. ``target``: the
    ``GpuTarget`` scheduled for (the default target when None; one with few SMs
    gives small shapes the persistent grids and per-SM decisions of large ones). For
    tests: the interpreter runs a Python generator per thread, so keep shapes small."""
    plain = plain_inputs(inputs)
    validate_inputs(entry.inputs, plain)
    rt = runtime_for(entry, plain)
    flat = [_plain_scalar(x) for x in flatten_inputs(entry.inputs, plain)]
    exe = executable_for(entry, rt, flat, 0, target or _default_target())
    outs = exe.run_on_cpu(flat, kernels=True, nvrtc=nvrtc)
    return [np.asarray(o) if isinstance(o, np.generic) else o for o in outs]


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
