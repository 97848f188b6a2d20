"""Segmented fusions on the Python side (seed 000): segment a fusion for concrete
input shapes, map segment indices to original indices, run the segments in order.

::

    module, infos = segment_fusion(fusion, [(128, 1024), (128, 1024)])
    infos[0].scheduler          # "reduction"
    infos[0].input_map          # segment input #i -> original value index
    infos[0].fid_map            # every value of the segment -> original value index
    outs = execute_segmented(module, [t0, t1])      # through the hir program
    outs = execute_with_maps(fusion, infos, [t0, t1])  # nvFuser's argument manager

**Original value indices** number every SSA value of the original fusion the way
nvFuser's ``FusionDefinition`` numbers its state: the inputs first (``0..n-1``),
then the results of the body's ops in program order (constants included). Values a
segment needs that the original fusion does not have (the segmenter moves views
through pointwise ops so that a view does not split a chain) get indices past the
original ones, in order of appearance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import evaluate_op, run_fusion
from fuser.passes.segment import SegmentRecord, segment_module
from fuser.runtime.host_evaluator import run_program
from fuser.schedulers.target import DEFAULT_TARGET, GpuTarget

__all__ = [
    "SegmentInfo",
    "aliased_indices",
    "execute_segmented",
    "execute_with_maps",
    "returned_indices",
    "segment_fusion",
    "value_indices",
]

Shape = tuple[int, ...]


def value_indices(fusion: F.FusionOp) -> dict[SSAValue, int]:
    """Index of every value of ``fusion``: inputs, then op results in order."""
    out: dict[SSAValue, int] = {}
    for a in fusion.inputs:
        out[a] = len(out)
    for op in fusion.body.block.ops:
        for r in op.results:
            out[r] = len(out)
    return out


@dataclass(frozen=True)
class SegmentInfo:
    """One segment, in execution order."""

    index: int
    fusion: F.FusionOp | None
    """The segment's ``fuser.fusion`` (None: host views, nothing is launched)."""
    scheduler: str | None
    """The registry's scheduler kind, ``"host"`` for host views."""
    input_map: tuple[int, ...]
    """Segment input ``i`` is original value ``input_map[i]``."""
    output_map: tuple[int, ...]
    """Segment output ``i`` is original value ``output_map[i]``."""
    fid_map: dict[int, int] = field(default_factory=dict)
    """nvFuser's ``map_segment_fid_to_original_fid``: every value of the segment
    fusion (numbered by ``value_indices``) to its original index."""
    host_ops: tuple[Operation, ...] = ()
    """The view ops of a host segment (for ``execute_with_maps``)."""
    host_index: dict[SSAValue, int] = field(default_factory=dict)
    """The original index of every operand and result of ``host_ops``."""

    @property
    def launches_kernel(self) -> bool:
        return self.fusion is not None


def _index(indices: dict[SSAValue, int], v: SSAValue) -> int:
    if v not in indices:
        indices[v] = len(indices)
    return indices[v]


def _info(k: int, rec: SegmentRecord, indices: dict[SSAValue, int]) -> SegmentInfo:
    ins = tuple(_index(indices, v) for v in rec.inputs)
    outs = tuple(_index(indices, v) for v in rec.outputs)
    fid: dict[int, int] = {}
    if rec.fusion is not None:
        seg_idx = value_indices(rec.fusion)
        for a, v in zip(rec.fusion.inputs, rec.inputs, strict=True):
            fid[seg_idx[a]] = _index(indices, v)
        originals = [r for op in rec.segment.with_cones() for r in op.results]
        clones = [r for op in rec.fusion.body.block.ops for r in op.results]
        for c, o in zip(clones, originals, strict=False):
            fid[seg_idx[c]] = _index(indices, o)
    host_ops = tuple(rec.segment.ops) if rec.fusion is None else ()
    host_index = {v: _index(indices, v) for op in host_ops for v in (*op.operands, *op.results)}
    return SegmentInfo(k, rec.fusion, rec.scheduler, ins, outs, fid, host_ops, host_index)


def segment_fusion(
    fusion: F.FusionOp,
    input_shapes: Sequence[Shape | None] | None = None,
    target: GpuTarget = DEFAULT_TARGET,
) -> tuple[ModuleOp, list[SegmentInfo]]:
    """Segment a copy of ``fusion`` for ``input_shapes`` (one per input, None for a
    scalar; default: the static extents). Returns the module (the segment fusions
    and ``hir.program @main``) and the segments in execution order."""
    clone = fusion.clone()
    indices = value_indices(clone)
    module = ModuleOp(Region(Block()))
    module.body.block.add_op(clone)
    records = segment_module(module, input_shapes, target).get(fusion.sym_name.data, [])
    infos = [_info(k, rec, indices) for k, rec in enumerate(records)]
    return module, infos


def _produced(module: ModuleOp, infos: Sequence[SegmentInfo]) -> tuple[dict[SSAValue, int], H.ProgramOp | None]:
    """The original index of each launch result (and ``outs`` buffer) of the
    segmented program, and the program; None when the module has not exactly one."""
    by_callee = {info.fusion.sym_name.data: info for info in infos if info.fusion is not None}
    produced: dict[SSAValue, int] = {}
    progs = [op for op in module.body.block.ops if isinstance(op, H.ProgramOp)]
    if len(progs) != 1:
        return produced, None
    for op in progs[0].body.block.ops:
        if not isinstance(op, H.LaunchOp):
            continue
        info = by_callee.get(op.callee.string_value())
        if info is None:
            continue
        for p, r in enumerate(op.res):
            produced[r] = info.output_map[p]
        for p, o in enumerate(op.outs):
            produced[o] = info.output_map[p]
    return produced, progs[0]


def returned_indices(module: ModuleOp, infos: Sequence[SegmentInfo]) -> list[int | None]:
    """The original index of each value the segmented program returns (the fusion's
    returned outputs, in order), None where the host computes it (a view, an alias).

    The index can differ from the output's index in the unsegmented fusion: the
    segmenter may move a view through the pointwise op that produced an output
    (``view(e(x))`` becomes ``e(view(x))``), and the output is then the new value."""
    produced, prog = _produced(module, infos)
    returns = [op for op in prog.body.block.ops if isinstance(op, H.ReturnOp)] if prog is not None else []
    if len(returns) != 1:
        return []
    return [produced.get(v) for v in returns[0].values]


def aliased_indices(module: ModuleOp, infos: Sequence[SegmentInfo]) -> dict[int, int]:
    """Program input position -> the original index of the value a launch writes
    into it (``hir.alias %value, %input``): as ``returned_indices``, the index of an
    in-place output whose view the segmenter moved through its producer is the new
    value's."""
    produced, prog = _produced(module, infos)
    if prog is None:
        return {}
    out: dict[int, int] = {}
    for op in prog.body.block.ops:
        if (
            isinstance(op, H.AliasOp) and isinstance(op.target, BlockArgument)
            and op.target.owner is prog.body.block and op.value in produced
        ):
            out[op.target.index] = produced[op.value]
    return out


def execute_segmented(
    module: ModuleOp,
    inputs: Sequence[Any],
    preallocated_outputs: Sequence[np.ndarray | None] | None = None,
) -> list[Any]:
    """Run the segmented program: segments in topological order on the host
    evaluator, intermediates dropped after their last use, in-place updates written
    into the caller's arrays."""
    return run_program(module, inputs, "main", preallocated_outputs)


def execute_with_maps(
    fusion: F.FusionOp, infos: Sequence[SegmentInfo], inputs: Sequence[Any]
) -> list[Any]:
    """nvFuser's ``_execute_segments``: the original fusion as argument manager.

    ``map_original_fid_to_value`` starts with the inputs; each segment takes its
    arguments through ``input_map``, stores its results through ``output_map``, and
    every value no later segment (nor the result) needs is deleted. Raises
    ValueError for fusions whose outputs the segments do not produce (in-place
    updates, outputs that are views of inputs: those live in the host program)."""
    indices = value_indices(fusion)
    term = fusion.output_op
    if any(a >= 0 for a in term.get_alias_inputs()):
        raise ValueError("execute_with_maps: in-place outputs need the host program")
    wanted = [indices[v] for v in term.values]
    env: dict[int, Any] = {indices[a]: x for a, x in zip(fusion.inputs, inputs, strict=True)}
    last_use: dict[int, int] = {}
    for k, info in enumerate(infos):
        for i in info.input_map:
            last_use[i] = k
    for k, info in enumerate(infos):
        args = [env[i] for i in info.input_map]
        if info.fusion is not None:
            outs = run_fusion(info.fusion, args)
        else:
            local: dict[SSAValue, Any] = {}
            originals = dict(zip(info.input_map, args, strict=True))
            for op in info.host_ops:
                vals = [
                    local[v] if v in local else originals[info.host_index[v]] for v in op.operands
                ]
                local[op.results[0]] = evaluate_op(op, vals)[0]
            by_index = {info.host_index[r]: x for r, x in local.items()}
            outs = [by_index[i] for i in info.output_map]
        for i, v in zip(info.output_map, outs, strict=True):
            env[i] = v
        for i in [i for i, last in last_use.items() if last == k and i not in wanted]:
            env.pop(i, None)
    missing = [i for i in wanted if i not in env]
    if missing:
        raise ValueError(
            f"execute_with_maps: original value(s) {missing} are produced by no segment"
        )
    return [env[i] for i in wanted]
