"""Lower an inner-outer persistent segment (layer-norm backward's shape) as the
kernels of its two halves.

The segment has row (inner) and column (outer) reductions of the same inputs, e.g.
layer-norm backward: ``dx`` needs per-row sums, ``dw = sum(dy * xhat, rows)`` and
``db = sum(dy, rows)`` per-column sums. The outputs are split by the kind of
reduction they depend on; each half is the fusion with only its outputs (dead ops
removed, all inputs kept so argument indices do not move) and is lowered on its own
— the row half by ``rows.lower_rows`` (one block per row, the row in registers),
the column half by ``columns.lower_columns`` (partials, finish) — and the kernels
run one after the other::

    @ln_bwd (inner_outer_persistent)  ->  kernel 0: @ln_bwd_rows  (dx)
                                          kernel 1: @ln_bwd_cols_partials  (dw, db)
                                          kernel 2: @ln_bwd_cols_finish

This reads the shared inputs twice, where nvFuser's fused inner-outer kernel reads
them once (its column partials are accumulated in the row kernel's registers); the
fused kernel is future work. An output that depends on both kinds of reduction is
rejected with a ``LoweringError``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, StringAttr
from xdsl.ir import Operation, SSAValue

from codegen.lower.common import ArgRef, LoweredFusion, LoweredKernel, TensorLayout
from codegen.lower.scalar import LoweringError
from fuser_ir.dialects import fuser as F


def _reduction_kinds(v: SSAValue, cache: dict[SSAValue, frozenset[str]]) -> frozenset[str]:
    """``{"inner", "outer"}``: which kinds of reduction ``v`` depends on."""
    hit = cache.get(v)
    if hit is not None:
        return hit
    op = v.owner
    kinds: frozenset[str] = frozenset()
    if isinstance(op, Operation):
        for u in op.operands:
            kinds |= _reduction_kinds(u, cache)
        if isinstance(op, F.ReductionOp | F.VarOp | F.VarMeanOp | F.WelfordOp):
            t = op.operands[0].type
            assert isinstance(t, F.TensorType)
            dims = [d % t.rank for d in F._ints(op.dims)]
            kinds |= {"inner" if t.rank - 1 in dims else "outer"}
    cache[v] = kinds
    return kinds


def half_fusion(fusion: F.FusionOp, keep: Sequence[int], suffix: str) -> F.FusionOp:
    """``fusion`` with only the ``fuser.output`` operands ``keep`` (pure ops that no
    kept output needs are removed; inputs stay)."""
    clone = fusion.clone()
    clone.properties["sym_name"] = StringAttr(f"{fusion.sym_name.data}_{suffix}")
    term = clone.output_op
    aliases = term.get_alias_inputs()
    values = [term.values[i] for i in keep]
    new_term = F.OutputOp(values, [aliases[i] for i in keep])
    block = clone.body.block
    block.insert_op_before(new_term, term)
    block.erase_op(term)
    returned = _returned_positions(fusion)
    declared = fusion.function_type.outputs.data
    clone.properties["function_type"] = FunctionType.from_lists(
        clone.function_type.inputs.data, [declared[returned.index(i)] for i in keep if i in returned]
    )
    # Dead code: erase ops with no uses, innermost first.
    for op in reversed(list(clone.body.block.ops)):
        if op is new_term:
            continue
        if all(not r.uses for r in op.results):
            block.erase_op(op)
    clone.verify()
    return clone


def _returned_positions(fusion: F.FusionOp) -> list[int]:
    return [i for i, a in enumerate(fusion.output_op.get_alias_inputs()) if a < 0]


def lower_inner_outer(
    fusion: F.FusionOp,
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout],
    target: object,
    name: str,
) -> LoweredFusion:
    cache: dict[SSAValue, frozenset[str]] = {}
    groups: dict[str, list[int]] = {"inner": [], "outer": []}
    for i, v in enumerate(fusion.output_op.values):
        kinds = _reduction_kinds(v, cache)
        if kinds == {"inner", "outer"}:
            raise LoweringError(
                f"@{fusion.sym_name.data}: output #{i} depends on both row and column reductions; "
                "the inner-outer lowering splits outputs by reduction kind"
            )
        groups["outer" if kinds == {"outer"} else "inner"].append(i)
    if not groups["inner"] or not groups["outer"]:
        raise LoweringError(f"@{fusion.sym_name.data}: an inner-outer segment needs both row and column outputs")
    return lower_output_groups(
        fusion, [(groups["inner"], "rows"), (groups["outer"], "cols")], in_layouts, scalar_values, out_layouts,
        target, name, "inner_outer_persistent",
    )


def lower_output_groups(
    fusion: F.FusionOp,
    groups: Sequence[tuple[Sequence[int], str]],
    in_layouts: Sequence[TensorLayout | None],
    scalar_values: Sequence[object] | None,
    out_layouts: Sequence[TensorLayout],
    target: object,
    name: str,
    scheduler: str,
) -> LoweredFusion:
    """Lower ``fusion`` as one sub-fusion per group of ``fuser.output`` operands
    (``half_fusion``), each by its own scheduler, and run their kernels in order."""
    from codegen.lower import lower_segment

    kernels: list[LoweredKernel] = []
    scratch = []
    for keep, suffix in groups:
        half = half_fusion(fusion, keep, suffix)
        low = lower_segment(half, in_layouts, scalar_values, [out_layouts[i] for i in keep], target,
                            name=f"{name}_{suffix}")
        offset = len(scratch)
        scratch.extend(low.scratch)
        for k in low.kernels:
            args = [
                ArgRef("output", keep[a.index]) if a.kind == "output"
                else ArgRef("scratch", a.index + offset) if a.kind == "scratch"
                else a
                for a in k.args
            ]
            kernels.append(LoweredKernel(k.module, k.name, k.block, k.grid, args, k.shared_bytes))
    return LoweredFusion(scheduler, kernels, scratch)
