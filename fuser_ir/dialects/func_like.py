"""What ``fuser.fusion`` and ``hir.program`` share: a symbol with an isolated,
single-block body whose arguments are the inputs, a ``function_type``, and the
``@name(%a : T, ...) -> (R, ...) { ... }`` syntax of ``func.func``.

Subclasses name the op and the terminator that lists the outputs, say which input
types they take (``input_ok``) and how a returned value matches its declared result
type (``result_ok``); ``verify_`` checks the signature against the body with
messages that name the op, the input or result and the types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import FunctionType, StringAttr, SymbolNameConstraint
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, prop_def, region_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.dominance import check_defined_before_use


class FuncLikeOp(IRDLOperation):
    """Base of symbol ops with a signature and a single-block body."""

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    INPUT_KINDS: ClassVar[str] = "a !fuser.tensor or a scalar"
    """How ``input_ok`` is described in the diagnostic."""

    def __init__(
        self,
        name: str,
        input_types: Sequence[Attribute],
        output_types: Sequence[Attribute],
        region: Region | None = None,
    ) -> None:
        if region is None:
            region = Region(Block(arg_types=input_types))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(input_types, output_types),
            },
            regions=[region],
        )

    @property
    def inputs(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args

    # ---- hooks ----------------------------------------------------------------------
    def input_ok(self, t: Attribute) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def result_ok(self, declared: Attribute, given: Attribute) -> bool:  # pragma: no cover
        raise NotImplementedError

    def terminator(self) -> tuple[type[Operation], Sequence[SSAValue]] | None:  # pragma: no cover
        """(the terminator class, the values it returns), or None when the body ends
        with something else."""
        raise NotImplementedError

    # ---- verification -----------------------------------------------------------------
    def verify_(self) -> None:
        where = f"{self.name} @{self.sym_name.data}"
        block = self.body.block
        inputs = self.function_type.inputs.data
        if tuple(block.arg_types) != inputs:
            raise VerifyException(
                f"{where}: block arguments ({', '.join(map(str, block.arg_types))}) do not "
                f"match the inputs ({', '.join(map(str, inputs))})"
            )
        for i, t in enumerate(inputs):
            if not self.input_ok(t):
                raise VerifyException(f"{where}: input #{i} has type {t}, expected {self.INPUT_KINDS}")
        check_defined_before_use(where, block)
        found = self.terminator()
        term_name = self.TERMINATOR_NAME
        if found is None:
            raise VerifyException(f"{where}: body must end with {term_name}")
        _, returned = found
        outs = self.function_type.outputs.data
        if len(returned) != len(outs):
            raise VerifyException(
                f"{where}: {term_name} returns {len(returned)} values but the {self.KIND} "
                f"declares {len(outs)} results"
            )
        for i, (v, t) in enumerate(zip(returned, outs, strict=True)):
            if not self.result_ok(t, v.type):
                raise VerifyException(f"{where}: result #{i} is declared {t} but {term_name} gives {v.type}")

    TERMINATOR_NAME: ClassVar[str] = ""
    KIND: ClassVar[str] = ""

    # ---- syntax -----------------------------------------------------------------------
    @classmethod
    def parse(cls, parser: Parser) -> FuncLikeOp:
        name, inputs, outputs, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        op = cls(name, inputs, outputs, region)
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            reserved_attr_names=("sym_name", "function_type"),
        )

