"""What every lowering produces: kernels with their launch shape and argument list.

A segment (one ``fuser.fusion`` accepted by one scheduler) lowers to one or more
``kernel.func``s run in order (an outer normalization, for example, is a statistics
kernel then an apply kernel) plus the scratch buffers they share. Each kernel lists
its arguments symbolically (``ArgRef``), so that the runtime binds them to the
caller's input, output and scratch buffers without knowing how the kernel was built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, SSAValue

from fuser.codegen.kernel_builders import global_memref
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType

Dim3 = tuple[int, int, int]


class LoweringError(ValueError):
    """A fusion (or op) that a lowering cannot turn into a kernel; names the op."""


@dataclass(frozen=True)
class ArgRef:
    """A kernel argument: ``kind`` is ``input`` (fusion input ``index``; a pointer for
    a tensor, the value for a scalar), ``output`` (returned or aliased output
    ``index`` of the fusion's ``fuser.output``) or ``scratch`` (scratch buffer
    ``index``)."""

    kind: str
    index: int


@dataclass(frozen=True)
class ScratchBuffer:
    """A device buffer the kernels of one segment share (partial results)."""

    numel: int
    dtype: DType
    zero_init: bool = False


@dataclass
class LoweredKernel:
    module: ModuleOp
    name: str
    block: Dim3
    grid: Dim3
    args: list[ArgRef]
    shared_bytes: int = 0


@dataclass
class LoweredFusion:
    """The kernels of one segment, in launch order, and their scratch buffers."""

    scheduler: str
    kernels: list[LoweredKernel]
    scratch: list[ScratchBuffer] = field(default_factory=list)

    def modules(self) -> list[ModuleOp]:
        return [k.module for k in self.kernels]


@dataclass(frozen=True)
class TensorLayout:
    """Concrete shape, element strides and data-pointer alignment (in elements) of a
    fusion input or output tensor at run time."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    pointer_align: int = 16

    @staticmethod
    def contiguous(shape: Sequence[int], align: int = 16) -> TensorLayout:
        strides: list[int] = []
        acc = 1
        for e in reversed(shape):
            strides.append(acc)
            acc *= max(e, 1)
        return TensorLayout(tuple(shape), tuple(reversed(strides)), align)

    @staticmethod
    def with_stride_order(shape: Sequence[int], order: Sequence[int], align: int = 16) -> TensorLayout:
        """Dense strides where ``order[i]`` is the rank of axis ``i``'s stride."""
        strides = [0] * len(shape)
        acc = 1
        for axis in sorted(range(len(shape)), key=lambda a: order[a]):
            strides[axis] = acc
            acc *= max(shape[axis], 1)
        return TensorLayout(tuple(shape), tuple(strides), align)


def output_layouts(fusion: F.FusionOp, shapes: dict[SSAValue, tuple[int, ...]]) -> list[TensorLayout]:
    """Layouts of the outputs a segment writes: returned outputs follow the declared
    result type's stride order; aliased ones the input they update (decided by the
    runtime, which passes their layouts in)."""
    outs = []
    returned = fusion.output_op.returned_values()
    types = fusion.function_type.outputs.data
    for v, t in zip(returned, types, strict=True):
        shape = shapes[v]
        if isinstance(t, F.TensorType) and not t.has_default_layout:
            outs.append(TensorLayout.with_stride_order(shape, t.get_stride_order()))
        else:
            outs.append(TensorLayout.contiguous(shape))
    return outs


def kernel_arg_types(fusion: F.FusionOp, args: Sequence[ArgRef], scratch: Sequence[ScratchBuffer]) -> list[Attribute]:
    """The ``kernel.func`` argument types for ``args``."""
    types: list[Attribute] = []
    outs = fusion.output_op.values
    for a in args:
        if a.kind == "input":
            t = fusion.inputs[a.index].type
            types.append(global_memref(t.dtype) if isinstance(t, F.TensorType) else t)
        elif a.kind == "output":
            types.append(global_memref(F.dtype_of(outs[a.index].type)))
        else:
            types.append(global_memref(scratch[a.index].dtype))
    return types


def index_bits_for(extents: Sequence[int]) -> int:
    """32-bit index arithmetic when every offset the kernel forms fits."""
    return 32 if all(e < 2**31 - 1 for e in extents) else 64


def max_offset(layout: TensorLayout) -> int:
    return sum((e - 1) * abs(s) for e, s in zip(layout.shape, layout.strides, strict=True) if e > 0) + 1


def kernel_arg_names(fusion: F.FusionOp, outs: Sequence[SSAValue]) -> list[str]:
    """C names for a kernel's arguments: the fusion inputs' SSA names, ``out{j}``."""
    names = []
    for i, a in enumerate(fusion.inputs):
        names.append(c_name(a.name_hint, f"in{i}"))
    for j, _ in enumerate(outs):
        names.append(f"out{j}")
    seen: set[str] = set()
    unique = []
    for nm in names:
        base, k = nm, 1
        while nm in seen:
            nm = f"{base}_{k}"
            k += 1
        seen.add(nm)
        unique.append(nm)
    return unique


def c_name(hint: str | None, default: str) -> str:
    if not hint:
        return default
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
    return clean if clean[0].isalpha() else f"v_{clean}"
