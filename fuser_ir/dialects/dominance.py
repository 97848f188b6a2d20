"""Values are defined before their use in the bodies of fuser's symbol ops
(``fuser.fusion``, ``hir.program``, ``kernel.func``)."""

from __future__ import annotations

from xdsl.ir import Block, OpResult, SSAValue
from xdsl.utils.exceptions import VerifyException


def check_defined_before_use(
    where: str, block: Block, visible: frozenset[SSAValue] = frozenset()
) -> None:
    """Every operand in ``block`` (and the blocks nested in it) is defined before its
    use: a block argument of an enclosing block, or the result of an earlier op of an
    enclosing block. xDSL's parser resolves forward references and its verifier does
    not check dominance, so ``%1 = fuser.neg %1`` or swapped lines would reach the
    passes as a cycle."""
    scope = set(visible) | set(block.args)
    for op in block.ops:
        for i, operand in enumerate(op.operands):
            if operand not in scope:
                if isinstance(operand, OpResult):
                    what = f"result #{operand.index} of a {operand.owner.name}"
                else:
                    what = "a block argument"
                name = f"%{operand.name_hint}, {what}" if operand.name_hint else what
                raise VerifyException(
                    f"{where}: {op.name} operand #{i} ({name}) is used before it is "
                    "defined (or outside the region that defines it)"
                )
        for region in op.regions:
            for nested in region.blocks:
                check_defined_before_use(where, nested, frozenset(scope))
        scope.update(op.results)
