"""A plugin for fuser-opt (and xdsl-opt): the ``example`` dialect with one op, and the
``example-tag-fusions`` pass, which marks every ``fuser.fusion`` with
``example.visited``. Registered through the ``xdsl.universe`` entry point of its
pyproject.toml; fuser is not edited."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Dialect, Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.universe import Universe


@irdl_op_definition
class MarkerOp(IRDLOperation):
    """``example.marker``: an op with no operands, results or semantics."""

    name = "example.marker"
    assembly_format = "attr-dict"


Example = Dialect("example", [MarkerOp], [])


class TagFusion(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name == "fuser.fusion" and "example.visited" not in op.attributes:
            op.attributes["example.visited"] = UnitAttr()
            rewriter.has_done_action = True


@dataclass(frozen=True)
class TagFusions(ModulePass):
    """Mark every ``fuser.fusion`` with the unit attribute ``example.visited``."""

    name = "example-tag-fusions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(TagFusion(), apply_recursively=False).rewrite_module(op)


EXAMPLE_UNIVERSE = Universe(
    all_dialects={"example": lambda: Example},
    all_passes={"example-tag-fusions": lambda: TagFusions},
)
