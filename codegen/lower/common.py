"""What every lowering produces: kernels with their launch shape and argument list.

A segment (one ``fuser.fusion`` accepted by one scheduler) lowers to one or more
``kernel.func``s run in order (an outer normalization, for example, is a statistics
kernel then an apply kernel) plus the scratch buffers they share. Each kernel lists
its arguments symbolically (``ArgRef``), so that the runtime binds them to the
caller's input, output and scratch buffers without knowing how the kernel was built.

Symbolic extents: an input layout whose extents are ``fuser.ir.symbolic.SymInt``s
(``symbolic_layouts``) is lowered with those extents as kernel parameters
(``ArgRef("extent", j, value)``, the launch's value of ``n<j>``), so kernels of
launches that differ only in them print the same text and share one binary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.ir import Attribute, SSAValue

from fuser.codegen.kernel_builders import global_memref
from fuser.codegen.lowering_error import LoweringError as LoweringError  # re-exported
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.schedule import Var
from fuser.ir.symbolic import SymInt

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class ArgRef:
    """A kernel argument: ``kind`` is ``input`` (fusion input ``index``; a pointer for
    a tensor, the value for a scalar), ``output`` (returned or aliased output
    ``index`` of the fusion's ``fuser.output``), ``scratch`` (scratch buffer
    ``index``) or ``extent`` (symbolic extent ``n<index>``, an int64 whose value at
    this launch is ``value``)."""

    kind: str
    index: int
    value: int = 0


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

    def __post_init__(self) -> None:
        # Symbolic extents (SymInt) decided the launch shape at this launch's values.
        self.grid = (int(self.grid[0]), int(self.grid[1]), int(self.grid[2]))
        self.block = (int(self.block[0]), int(self.block[1]), int(self.block[2]))
        self.shared_bytes = int(self.shared_bytes)


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
        elif a.kind == "extent":
            types.append(IntegerType(64))
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


def batch_axes(shapes: Sequence[Sequence[int] | None]) -> list[tuple[int, int]]:
    """The batch extents: axis 0 of the tensor inputs of the highest rank (the rows of
    a normalization), as (input, axis); what usually varies from call to call. The
    other extents (the row width decides vectorization, unrolling and the persistent
    buffers) are cheap to specialize on."""
    top = max((len(s) for s in shapes if s is not None), default=0)
    if top == 0:
        return []
    return [(i, 0) for i, s in enumerate(shapes) if s is not None and len(s) == top]


def symbolic_layouts(
    layouts: Sequence[TensorLayout | None], positions: Sequence[tuple[int, int]]
) -> list[TensorLayout | None]:
    """``layouts`` with the extents at ``positions`` (input index, axis) symbolic:
    ``SymInt(value, n<j>)``, one symbol per distinct value (extents of 0 and 1 stay
    concrete: broadcasting and empty tensors change the code; so does a value that
    is also an extent at another position)."""
    symbols: dict[int, SymInt] = {}
    out = list(layouts)
    chosen = set(positions)
    # A value that is also a concrete extent elsewhere (a batch of 1024 rows of 1024)
    # stays concrete: which extent a use means could not be told apart.
    others = {int(e) for i, lay in enumerate(layouts) if lay is not None
              for a, e in enumerate(lay.shape) if (i, a) not in chosen}
    for i, axis in positions:
        lay = out[i]
        if lay is None or axis >= len(lay.shape) or int(lay.shape[axis]) <= 1 or int(lay.shape[axis]) in others:
            continue
        value = int(lay.shape[axis])
        sym = symbols.get(value)
        if sym is None:
            sym = symbols[value] = SymInt(value, Var(f"n{len(symbols)}"))
        shape = list(lay.shape)
        shape[axis] = sym
        out[i] = TensorLayout(tuple(shape), lay.strides, lay.pointer_align)
    return out


def extent_symbols(layouts: Sequence[TensorLayout | None]) -> dict[int, SymInt]:
    """The symbolic extents of ``layouts`` (``symbolic_layouts``) by value."""
    table: dict[int, SymInt] = {}
    for lay in layouts:
        if lay is None:
            continue
        for e in lay.shape:
            if isinstance(e, SymInt) and isinstance(e.expr, Var):
                table.setdefault(int(e), e)
    return table


def symbolize(x: object, table: dict[int, SymInt]) -> object:
    """``x`` (an int, or tuples and lists of them) with every int whose value is in
    ``table`` replaced by its symbol: at this launch it is that value."""
    if isinstance(x, bool) or not table:
        return x
    if isinstance(x, int):
        return x if isinstance(x, SymInt) else table.get(x, x)
    if isinstance(x, tuple):
        return tuple(symbolize(e, table) for e in x)
    if isinstance(x, list):
        return [symbolize(e, table) for e in x]
    return x


def symbolize_layout(lay: TensorLayout | None, table: dict[int, SymInt]) -> TensorLayout | None:
    if lay is None or not table:
        return lay
    return TensorLayout(symbolize(lay.shape, table), symbolize(lay.strides, table), lay.pointer_align)  # type: ignore[arg-type]


def desymbolize_layout(lay: TensorLayout | None, values: set[int]) -> TensorLayout | None:
    """``lay`` with its symbolic extents of the given ``values`` concrete again."""
    if lay is None:
        return None
    def plain(t: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(int(e) if isinstance(e, SymInt) and int(e) in values else e for e in t)
    return TensorLayout(plain(lay.shape), plain(lay.strides), lay.pointer_align)
