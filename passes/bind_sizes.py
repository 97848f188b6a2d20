"""``bind-sizes{sizes="0=8192x3072"}``: specialize every fusion of the module to one
input signature, writing the concrete extents into the types.

The ``sizes`` option has the grammar of ``sizes_option`` (``INDEX=EXTENTS`` joined
by ``x``; a scalar input that sets an extent may be given its value, ``2=7``). Every
tensor value of every fusion gets the extents the inputs imply (the same binding the
schedulers use, ``fuser.schedulers.analysis.sizes.bind_sizes``); layouts (contiguity,
stride order) and scalars stay as they are. The passes after it (``segment``,
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

from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.passes.sizes_option import input_sizes, parse_sizes
from fuser.schedulers.analysis.sizes import SizeBindingError, bind_sizes

__all__ = ["BindSizes", "BindSizesError", "bind_fusion"]


class BindSizesError(DiagnosticException):
    """Sizes that do not fit a fusion; the message names the pass and the fusion."""


def _bound(t: Attribute, shape: tuple[int, ...]) -> Attribute:
    if not isinstance(t, TensorType) or t.get_shape() == shape:
        return t
    contiguity = list(t.get_contiguity()) if t.contiguity.data else None
    stride_order = list(t.get_stride_order()) if t.stride_order.data else None
    return TensorType(shape, t.element_type, contiguity, stride_order)


def _retype(v: SSAValue, shape: tuple[int, ...]) -> None:
    new = _bound(v.type, shape)
    if new is not v.type:
        v._type = new  # noqa: SLF001 - xDSL has no public setter for a value's type


def bind_fusion(fusion: FusionOp, given: dict[int, tuple[int, ...]], pass_name: str = "bind-sizes") -> None:
    """Write the extents ``given`` implies into the types of ``fusion``."""
    try:
        sizes = bind_sizes(fusion, input_sizes(fusion, given, pass_name))
    except SizeBindingError as e:
        raise BindSizesError(f"{pass_name}: {e}") from None
    for arg in fusion.inputs:
        _retype(arg, sizes.shape(arg))
    for op in fusion.body.block.ops:
        for r in op.results:
            if r in sizes:
                _retype(r, sizes.shape(r))
    outputs = [v.type for v in fusion.output_op.returned_values()]
    declared = fusion.function_type.outputs.data
    fusion.function_type = FunctionType.from_lists(
        [a.type for a in fusion.inputs],
        [_bound(d, o.get_shape()) if isinstance(o, TensorType) else d for d, o in zip(declared, outputs, strict=True)],
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
