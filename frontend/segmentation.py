"""``fd.segment(inputs)`` and segmented execution: seed 000's Python side.

::

    with FusionDefinition() as fd:
        T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        T2 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)
        T3 = fd.ops.broadcast(T2, is_broadcast_dim=[False, True])
        T4 = fd.ops.segment_set(T3)      # the cut nvFuser's segmenter makes here
        T5 = fd.ops.add(T1, T4)
        fd.add_output(T5)
    seg0, seg1 = fd.segment(inputs)      # one FusionDefinition per segment
    fd.segment_index_space_maps[seg0]    # {0: 0, 2: 3}
    fd.segment_index_space_maps[seg1]    # {0: 1, 1: 3, 3: 5}
    fd.execute(inputs)                   # runs seg0 then seg1 (the argument manager)

**How segments are found**: ``fuser.runtime.segmented.segment_fusion`` (the ``segment``
pass: the scheduler registry decides, for the sizes of ``inputs``) cuts the fusion
of the runtime that ``inputs`` select. A fusion one scheduler accepts whole is one
segment (fuser's registry runs plain seed 000 as one inner-persistent kernel; the
seed's two segments come from the explicit ``segment_set``).

**How segment definitions are built** (printing uses the segment's fusion): each
segment's ``fuser.fusion`` is replayed through the frontend API
(``mlir.definition_from_fusion``, the same replay as ``FusionDefinition.from_mlir``),
so ``repr(segment)`` is nvFuser-style Python with its own numbering
(``T0``.. for its inputs, then its ops), and re-executing the printed text rebuilds
it. Each segment definition is an ordinary cached fusion (``segment.id()``). A
group of views that the host does without a copy (``scheduler == "host"``, no
kernel) is a segment definition too: it only holds view ops and its ``execute``
returns views of its input.

**Index spaces**: a segment's states are numbered by its own definition; the maps
``fd.segment_index_space_maps[segment]`` send its inputs and outputs (nvFuser maps
only these) to the *original* definition's state indices (``T3`` -> 3), as nvFuser's
``map_segment_fid_to_original_fid``. Segments are printed as nvFuser translates its
IR: a reduction with ``keepdim`` is the reduction, then a broadcast.
Values the original definition has no state for (a constant written as a Python
number, the entries of a vector input, a view the segmenter moved through a
pointwise op) get the indices ``num_states + k`` where ``k`` is the value's position
in the fusion (inputs, then op results: ``fuser.runtime.segmented.value_indices``).

**Execution** (``execute_segments``, nvFuser's ``_execute_segments``): the original
definition is the argument manager. ``values`` maps original indices to arrays,
starting with the inputs; each segment takes its arguments through the map, runs
with ``segment.execute`` (the CPU reference or, for GPU arrays, the GPU path), its
outputs are stored back through the map, and every value that no later segment
and no output needs is deleted. ``Segmentation.live_after`` records the indices
alive after each segment. In-place outputs (``alias_input``) are copied into the
caller's array at the end; a returned output that is also written in place is
returned as that array (as nvFuser returns the aliased input tensor).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.frontend.state import InputSpec, Value
from fuser.ir.dialects import fuser as F
from fuser.ir.fp8 import as_strided

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition
    from fuser.runtime.segmented import SegmentInfo

__all__ = ["Segmentation", "SegmentStep", "execute_segments", "segment_definition"]


@dataclass
class SegmentStep:
    """One segment, in execution order."""

    definition: FusionDefinition
    scheduler: str | None
    """The registry's scheduler kind; ``"host"`` for views done on the host."""
    index_map: dict[int, int]
    """Segment state index -> original state index."""
    input_map: tuple[int, ...]
    """Original index of each of the segment's inputs (``definition.inputs()``)."""
    output_map: tuple[int, ...]
    """Original index of each of the segment's outputs (``definition.outputs()``)."""

    @property
    def launches_kernel(self) -> bool:
        return self.scheduler != "host"


@dataclass
class Segmentation:
    """What ``fd.segment`` stores on the definition."""

    steps: list[SegmentStep]
    input_indices: tuple[int, ...]
    """Original index of each flattened input (block argument) of the fusion."""
    output_indices: tuple[int, ...]
    """Original index of each returned output."""
    inplace: tuple[tuple[int, int], ...]
    """(original index of the value, flattened input position) per in-place output."""
    num_states: int
    live_after: list[tuple[int, ...]] = field(default_factory=list)
    """After the last ``execute``: the original indices alive after each segment."""

    @property
    def definitions(self) -> list[FusionDefinition]:
        return [s.definition for s in self.steps]


# ---- index spaces ----------------------------------------------------------------------


def _positions(block_values: Sequence[SSAValue]) -> dict[SSAValue, int]:
    return {v: i for i, v in enumerate(block_values)}


def _block_values(fd: FusionDefinition) -> list[SSAValue]:
    block = fd._state.block
    return [*block.args, *(r for op in block.ops for r in op.results)]


def original_index_map(fd: FusionDefinition, inputs: Sequence[Any]) -> tuple[dict[int, int], int]:
    """Fusion value index (``fuser.runtime.segmented.value_indices`` of the runtime's
    fusion) -> original state index, and the number of states. The definition is
    replayed with the inputs' bindings when its runtime is concretized, so that the
    positions are those of the fusion that runs."""
    from fuser.frontend.execution import input_bindings
    entry = fd._ensure_defined()
    bindings = input_bindings(entry, inputs) if entry.needs_concretization else None
    replay = type(fd)._replayed(entry.records, bindings)
    pos = _positions(_block_values(replay))
    out: dict[int, int] = {}
    for s in replay._state.states:
        if isinstance(s, Value) and s.value in pos:
            out.setdefault(pos[s.value], s.index)
    return out, len(replay._state.states)


def _view_fusion(
    name: str,
    ins: Sequence[SSAValue],
    ops: Sequence[Operation],
    outs: Sequence[SSAValue],
    index: dict[SSAValue, int],
) -> tuple[F.FusionOp, dict[int, int]]:
    """A ``fuser.fusion`` of view ops done on the host, and its value index -> the
    original fusion's value index (``index``)."""
    fusion = F.FusionOp(name, [v.type for v in ins], [v.type for v in outs])
    block = fusion.body.block
    mapper: dict[SSAValue, SSAValue] = dict(zip(ins, block.args, strict=True))
    fid: dict[int, int] = {k: index[v] for k, v in enumerate(ins)}
    k = len(ins)
    for op in ops:
        block.add_op(op.clone(value_mapper=mapper))
        for r in op.results:
            fid[k] = index[r]
            k += 1
    block.add_op(F.OutputOp([mapper[v] for v in outs]))
    return fusion, fid


def _host_fusion(name: str, info: SegmentInfo) -> tuple[F.FusionOp, dict[int, int]]:
    """The ``fuser.fusion`` of a host-view segment of ``segment_fusion``."""
    by_index: dict[int, SSAValue] = {}
    for v, i in info.host_index.items():
        by_index.setdefault(i, v)
    ins = [by_index[i] for i in info.input_map]
    outs = [by_index[i] for i in info.output_map]
    return _view_fusion(name, ins, info.host_ops, outs, info.host_index)


# ---- fd.segment ------------------------------------------------------------------------


def segment_definition(fd: FusionDefinition, inputs: Sequence[Any], target: Any = None) -> Segmentation:
    """Segment ``fd`` for ``inputs`` (see the module docstring)."""
    from fuser.frontend import execution
    from fuser.frontend.mlir import definition_from_fusion
    from fuser.frontend.validation import flatten_inputs, plain_inputs, validate_inputs
    from fuser.ir.view_chains import view_chain
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import meta_array
    from fuser.runtime.segmented import (
        aliased_indices,
        returned_indices,
        segment_fusion,
        value_indices,
    )
    from fuser.schedulers.target import DEFAULT_TARGET

    entry = fd._ensure_defined()
    if not isinstance(inputs, list | tuple):
        raise ValueError(f"segment: inputs must be a list or tuple, got {type(inputs).__name__}")
    metas = [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
    plain = plain_inputs(metas)
    validate_inputs(entry.inputs, plain)
    rt = execution.runtime_for(entry, plain)
    flat = flatten_inputs(entry.inputs, plain)
    shapes = [tuple(x.shape) if isinstance(x, np.ndarray) else None for x in flat]
    try:
        module, infos = segment_fusion(rt.fusion, shapes, target or DEFAULT_TARGET)
    except Exception as e:  # noqa: BLE001 - pass diagnostics become ValueErrors
        raise ValueError(f"segment: fusion {entry.id} cannot be segmented: {e}") from None
    ir_to_state, num_states = original_index_map(fd, plain)

    def orig(i: int) -> int:
        return ir_to_state.get(i, num_states + i)

    term = rt.fusion.output_op
    # An output the segmenter recomputed (a view moved through its producer) is a new
    # value: its index is the one the program returns. A fusion input keeps its own
    # index even when the program returns its buffer after an in-place launch wrote
    # into it (an input that is also an output, and the target of an alias).
    indices = value_indices(rt.fusion)
    moved = {
        v: i
        for v, i in zip(term.returned_values(), returned_indices(module, infos), strict=False)
        if i is not None and not isinstance(v, BlockArgument)
    }
    indices.update(moved)
    into = aliased_indices(module, infos)
    for v, a in zip(term.values, term.get_alias_inputs(), strict=True):
        if a >= 0 and a in into and not isinstance(v, BlockArgument):
            indices[v] = into[a]  # an in-place output moved through its producer (seed 3179)
    name = rt.fusion.sym_name.data
    parts: list[tuple[F.FusionOp, dict[int, int], str | None, int]] = []
    for info in infos:
        if info.fusion is not None:
            parts.append((info.fusion, info.fid_map, info.scheduler, info.index))
        else:
            parts.append((*_host_fusion(f"{name}_host{info.index}", info), "host", info.index))
    # Outputs that are views of inputs are host views of the program (mark-aliases),
    # not segments: each becomes a host-view segment of its own.
    produced = {i for info in infos for i in info.output_map} | {indices[a] for a in rt.fusion.inputs}
    for k, v in enumerate(term.values):
        if indices[v] in produced:
            continue
        chain = view_chain(v)
        if chain is None:
            raise ValueError(f"segment: output #{k} of fusion {entry.id} is produced by no segment")
        source = rt.fusion.inputs[chain[0]]
        fusion, fid = _view_fusion(f"{name}_view{k}", [source], chain[1], [v], indices)
        parts.append((fusion, fid, "host", len(parts)))
        produced.add(indices[v])
    steps: list[SegmentStep] = []
    for seg_fusion, fid, scheduler, index in parts:
        try:
            seg_fd, env = definition_from_fusion(seg_fusion, type(fd), nvfuser_form=True)
        except ValueError as e:
            raise ValueError(f"segment: segment {index} of fusion {entry.id}: {e}") from None
        seg_pos = value_indices(seg_fusion)
        index_map: dict[int, int] = {}
        for v in (*seg_fusion.inputs, *seg_fusion.output_op.values):  # nvFuser maps these
            state, k = env.get(v), seg_pos.get(v)
            if k is not None and k in fid and isinstance(state, Value):
                index_map[state.index] = orig(fid[k])
        index_map = dict(sorted(index_map.items()))
        ins = tuple(orig(fid[seg_pos[a]]) for a in seg_fusion.inputs)
        outs = tuple(orig(fid[seg_pos[v]]) for v in seg_fusion.output_op.values)
        steps.append(SegmentStep(seg_fd, scheduler, index_map, ins, outs))
    outputs = tuple(orig(indices[v]) for v in term.returned_values())
    inplace = tuple(
        (orig(indices[v]), a)
        for v, a in zip(term.values, term.get_alias_inputs(), strict=True)
        if a >= 0
    )
    return Segmentation(
        steps, tuple(orig(indices[a]) for a in rt.fusion.inputs), outputs, inplace, num_states
    )


# ---- the argument manager ----------------------------------------------------------------


def execute_segments(fd: FusionDefinition, seg: Segmentation, inputs: Sequence[Any]) -> list[Any]:
    """nvFuser's ``_execute_segments`` (see the module docstring)."""
    from fuser.frontend.validation import (
        flatten_inputs,
        is_torch_tensor,
        plain_inputs,
        validate_inputs,
    )
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import meta_array
    from fuser.runtime.torch_arrays import numpy_to_torch

    entry = fd._ensure_defined()
    if not isinstance(inputs, list | tuple):
        raise ValueError(f"execute: inputs must be a list or tuple, got {type(inputs).__name__}")
    metas = [meta_array(ga.array_info(x)) if ga.is_gpu_array(x) else x for x in inputs]
    validate_inputs(entry.inputs, plain_inputs(metas))
    # GPU arrays stay as they are; the rest become plain values, a list input (the
    # scalars of a define_vector) spread into its scalars, as plain_inputs does
    given: list[Any] = []
    for x, meta in zip(inputs, metas, strict=True):
        given.extend([x] if ga.is_gpu_array(x) else plain_inputs([meta]))
    flat = flatten_inputs(entry.inputs, given, draw_rng=True)
    flat = [x.item() if isinstance(x, np.generic) else x for x in flat]
    values: dict[int, Any] = dict(zip(seg.input_indices, flat, strict=True))
    wanted = set(seg.output_indices) | {i for i, _ in seg.inplace}
    last_use: dict[int, int] = {}
    for k, step in enumerate(seg.steps):
        for i in step.input_map:
            last_use[i] = k
    seg.live_after = []
    for k, step in enumerate(seg.steps):
        try:
            args = [values[i] for i in step.input_map]
        except KeyError as e:
            raise ValueError(
                f"execute: segment {k} reads original value {e.args[0]}, which no earlier "
                "segment produced"
            ) from None
        specs = step.definition._ensure_defined().inputs
        args = [_as_declared(spec, x) for spec, x in zip(specs, args, strict=True)]
        outs = step.definition.execute(args)
        for i, v in zip(step.output_map, outs, strict=True):
            values[i] = v
        for i in [i for i, last in last_use.items() if last == k and i not in wanted]:
            values.pop(i, None)
        seg.live_after.append(tuple(sorted(values)))
    for i, pos in seg.inplace:
        _copy_into(flat[pos], values[i])
    # A returned output that is also written in place is the caller's input (nvFuser
    # returns the aliased input tensor itself).
    target = {i: pos for i, pos in seg.inplace}
    outs = [flat[target[i]] if i in target else values[i] for i in seg.output_indices]
    if any(is_torch_tensor(x) and not ga.is_gpu_array(x) for x in inputs):
        outs = [numpy_to_torch(o) if isinstance(o, np.ndarray) else o for o in outs]
    return outs


def _dense_strides(shape: Sequence[int], stride_order: Sequence[int]) -> list[int]:
    """Element strides of a dense array with ``stride_order`` (rank of each axis's
    stride, ``ndim-1`` outermost)."""
    strides = [0] * len(shape)
    running = 1
    for a in sorted(range(len(shape)), key=lambda a: stride_order[a]):
        strides[a] = running
        running *= max(shape[a], 1)
    return strides


def _as_declared(spec: InputSpec, x: Any) -> Any:
    """``x``, or a dense copy of it in the layout the segment input declares when its
    strides break the declaration (a segment's result can be a view: a slice, a
    broadcast, a permute done without a copy). Numpy arrays and torch tensors are
    copied; other GPU arrays are left to the segment's input validation."""
    from fuser.frontend.validation import is_torch_tensor, layout_mismatch
    from fuser.runtime import gpu_arrays as ga
    from fuser.runtime.gpu_executor import meta_array

    t = spec.type
    if spec.kind != "tensor" or not isinstance(t, F.TensorType):
        return x
    if isinstance(x, np.ndarray):
        meta = x
    elif is_torch_tensor(x) and ga.is_gpu_array(x):
        meta = meta_array(ga.array_info(x))
    else:
        return x
    if meta.ndim != t.rank or layout_mismatch(t, meta) is None:
        return x
    strides = _dense_strides(meta.shape, t.get_stride_order())
    if isinstance(x, np.ndarray):
        dense = as_strided(
            np.empty(max(x.size, 1), x.dtype), x.shape, [s * x.itemsize for s in strides]
        )
        np.copyto(dense, x)
        return dense
    import torch

    return torch.empty_strided(x.shape, strides, dtype=x.dtype, device=x.device).copy_(x)


def _copy_into(target: Any, value: Any) -> None:
    if isinstance(target, np.ndarray):
        np.copyto(target, np.asarray(value))
        return
    copy = getattr(target, "copy_", None)
    if copy is None:
        raise ValueError("execute: in-place outputs of segmented GPU fusions need torch tensors")
    from fuser.runtime.overlap import byte_span, spans_overlap

    a, b = byte_span(target), byte_span(value)
    if spans_overlap(a, b) and a[3] != b[3]:  # type: ignore[index]
        # The value is another view of the target's memory (an input's slice written
        # back into it): torch refuses to copy between overlapping views.
        value = value.clone()
    copy(value)
