"""``bind-sizes{sizes="0=8192x3072"}``: specialize every fusion of the module to one
input signature, writing the concrete extents into the types.

The ``sizes`` option has the grammar of ``sizes_option`` (``INDEX=EXTENTS`` joined
by ``x``; a scalar input may be given its value, ``2=7``). The inputs get the given
extents; a scalar input given a value is read as a ``fuser.constant`` of it (the
compiled program is specialized for that value); every op result gets its bound
extents, except those its op infers as symbolic from the bound operands, so the
result verifies (an extent a size operand gives, ``reshape``'s or ``expand``'s
``sizes``, stays symbolic in the type and the passes after bind it from the operand). The extents are first checked against each
other with the binding the schedulers use (``fuser.schedulers.analysis.sizes.
bind_sizes``). Layouts (contiguity, stride order) stay, except that an axis bound to
extent 1 has no contiguity (``none``, as nvFuser gives size-1 axes). The passes after it (``segment``,
``select-schedulers``, ``schedule-fusions``, ``lower-to-kernels``) then need no
``sizes`` of their own: this is how the compiler driver (``fuser.runtime.driver``)
hands them the signature of ``fd.execute``'s inputs.

Before::

    fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
      %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
      fuser.output %s : !fuser.tensor<?xf32>
    }

After ``bind-sizes{sizes="0=4x1024"}``::

    fuser.fusion @row_sum(%x : !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32> {
      %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
      fuser.output %s : !fuser.tensor<4xf32>
    }

Errors (a symbolic extent left unbound, a shape against a static extent or of the
wrong rank, an index past the inputs, extents that do not agree inside the fusion)
name the pass, the fusion and the input or op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects.fuser import ConstantOp, FuserOp, FusionOp, InferError, TensorType
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN
from fuser.passes.sizes_option import input_sizes, parse_sizes
from fuser.schedulers.analysis.sizes import SizeBindingError, bind_sizes

__all__ = ["BindSizes", "BindSizesError", "bind_fusion"]


class BindSizesError(DiagnosticException):
    """Sizes that do not fit a fusion; the message names the pass and the fusion."""


def with_extents(t: Attribute, shape: tuple[int, ...]) -> Attribute:
    """``t`` with extents ``shape``; the layout stays, except that an axis bound to
    extent 1 has no contiguity (``none``, as nvFuser gives size-1 axes: no stride
    of it is ever used), so a layout that was row-major stays row-major. Shared with
    ``localize-shardings`` (per-device extents)."""
    if not isinstance(t, TensorType):
        return t
    contiguity = None
    if t.contiguity.data:
        contiguity = [None if e == 1 else c for c, e in zip(t.get_contiguity(), shape, strict=True)]
    if t.get_shape() == shape and contiguity == (list(t.get_contiguity()) if t.contiguity.data else None):
        return t
    stride_order = list(t.get_stride_order()) if t.stride_order.data else None
    return TensorType(shape, t.element_type, contiguity, stride_order)


def retype(v: SSAValue, shape: tuple[int, ...]) -> None:
    """Give ``v`` the extents ``shape`` (``with_extents``)."""
    new = with_extents(v.type, shape)
    if new is not v.type:
        v._type = new  # noqa: SLF001 - xDSL has no public setter for a value's type


def bind_fusion(fusion: FusionOp, given: dict[int, tuple[int, ...]], pass_name: str = "bind-sizes") -> None:
    """Specialize ``fusion`` to ``given`` (see the module docstring)."""
    try:
        sizes = bind_sizes(fusion, input_sizes(fusion, given, pass_name))
    except SizeBindingError as e:  # extents that disagree, shapes that do not fit
        raise BindSizesError(f"{pass_name}: {e}") from None
    block = fusion.body.block
    for i, arg in enumerate(fusion.inputs):
        if isinstance(arg.type, TensorType):
            retype(arg, sizes.shape(arg))
        elif i in given and len(given[i]) == 1 and arg.uses:
            # a scalar's value is part of the signature: its uses read a constant
            const = ConstantOp(given[i][0], DType.from_xdsl(arg.type))
            block.insert_op_before(const, block.first_op)  # type: ignore[arg-type]
            arg.replace_all_uses_with(const.result)
    for op in block.ops:
        if op is fusion.output_op or not isinstance(op, FuserOp):
            continue
        for r in op.results:
            if r in sizes:
                retype(r, sizes.shape(r))
        # what the op infers from its bound operands is what the verifier checks: an
        # extent a size operand gives (reshape's, expand's sizes) stays symbolic
        try:
            inferred = op.infer()
        except (InferError, ValueError) as e:
            raise BindSizesError(f"{pass_name}: @{fusion.sym_name.data}: {op.name}: {e}") from None
        for r, t in zip(op.results, inferred, strict=True):
            if isinstance(t, TensorType) and isinstance(r.type, TensorType):
                bound = r.type.get_shape()
                retype(r, tuple(DYN if e == DYN else b for e, b in zip(t.get_shape(), bound, strict=True)))
    outputs = [v.type for v in fusion.output_op.returned_values()]
    declared = fusion.function_type.outputs.data
    fusion.function_type = FunctionType.from_lists(
        [a.type for a in fusion.inputs],
        [with_extents(d, o.get_shape()) if isinstance(o, TensorType) else d for d, o in zip(declared, outputs, strict=True)],
    )


@dataclass(frozen=True)
class BindSizes(ModulePass):
    """Specialize the types of every fusion to ``sizes`` (see the module docstring)."""

    name = "bind-sizes"

    sizes: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        given = parse_sizes(self.sizes, self.name)
        for fusion in [f for f in op.walk() if isinstance(f, FusionOp)]:
            bind_fusion(fusion, given, self.name)
