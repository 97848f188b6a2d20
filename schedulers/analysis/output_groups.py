"""Splitting a fusion by its outputs: the sub-fusion computing some of the outputs, and
the split of an inner-outer fusion (layer-norm backward) into the outputs that depend on
row reductions and those that depend on column reductions.

The inner-outer kind schedules each half as its own loop nest (a kernel group each,
``codegen/lower/loop_nest_groups.py``); the inner-outer scheduler checks, with the
same functions, that the split exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, StringAttr
from xdsl.ir import Operation, SSAValue

from fuser.ir.dialects import fuser as F

from ..params import REJECTIONS_ATTR, SCHEDULE_ATTR
from .graph import ancestors, is_reduction, reduction_dims


def reduction_kinds(fusion: F.FusionOp) -> dict[SSAValue, frozenset[str]]:
    """For every value: which kinds of reduction (``inner``: reducing the last axis,
    ``outer``: not) it depends on."""
    kinds: dict[SSAValue, frozenset[str]] = {a: frozenset() for a in fusion.inputs}
    for op in fusion.body.block.ops:
        k: frozenset[str] = frozenset()
        for u in op.operands:
            k |= kinds.get(u, frozenset())
        if is_reduction(op):
            t = op.operands[0].type
            assert isinstance(t, F.TensorType)
            k |= {"inner" if t.rank - 1 in reduction_dims(op) else "outer"}
        for r in op.results:
            kinds[r] = k
    return kinds


def split_by_reduction_kind(fusion: F.FusionOp) -> tuple[list[int], list[int]] | str:
    """The ``fuser.output`` operands of the row half (no column reduction under them)
    and of the column half, or why the fusion cannot be split so."""
    kinds = reduction_kinds(fusion)
    inner: list[int] = []
    outer: list[int] = []
    for i, v in enumerate(fusion.output_op.values):
        k = kinds.get(v, frozenset())
        if k == {"inner", "outer"}:
            return (
                f"@{fusion.sym_name.data}: output #{i} depends on both row and column "
                "reductions; the inner-outer lowering splits outputs by reduction kind"
            )
        (outer if k == {"outer"} else inner).append(i)
    if not inner or not outer:
        return f"@{fusion.sym_name.data}: an inner-outer segment needs both row and column outputs"
    return inner, outer


def half_fusion(fusion: F.FusionOp, keep: Sequence[int], suffix: str) -> F.FusionOp:
    """``fusion`` with only the ``fuser.output`` operands ``keep`` (pure ops that no
    kept output needs are removed; inputs stay). The half is a new fusion: the
    schedule recorded on ``fusion`` (``fuser.schedule``, its rejections) is not its own
    and is dropped."""
    clone = fusion.clone()
    clone.properties["sym_name"] = StringAttr(f"{fusion.sym_name.data}_{suffix}")
    for attr in (SCHEDULE_ATTR, REJECTIONS_ATTR):
        clone.attributes.pop(attr, None)
    term = clone.output_op
    aliases = term.get_alias_inputs()
    values = [term.values[i] for i in keep]
    new_term = F.OutputOp(values, [aliases[i] for i in keep])
    block = clone.body.block
    block.insert_op_before(new_term, term)
    block.erase_op(term)
    returned = [i for i, a in enumerate(aliases) if a < 0]
    declared = fusion.function_type.outputs.data
    clone.properties["function_type"] = FunctionType.from_lists(
        clone.function_type.inputs.data,
        [declared[returned.index(i)] for i in keep if i in returned],
    )
    # Dead code: erase ops with no uses, innermost first. An op without results (a
    # written schedule's ``iterdomain.loop``) stays while the tensor it describes is
    # computed.
    live = ancestors(values)
    live |= {r for v in list(live) if isinstance(v.owner, Operation) for r in v.owner.results}
    for op in reversed(list(clone.body.block.ops)):
        if op is new_term:
            continue
        if op.results and all(not r.uses for r in op.results):
            block.erase_op(op)
        elif not op.results and not any(o in live for o in op.operands):
            block.erase_op(op)
    clone.verify()
    return clone
