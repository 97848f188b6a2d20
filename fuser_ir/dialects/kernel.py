"""The ``kernel`` dialect: what upstream MLIR vocabulary lacks for fuser's CUDA kernels.

Kernel-level IR is mostly upstream xDSL dialects, so that a kernel reads (and is
rewritten) with standard MLIR words:

* ``scf.for`` (``{kernel.unroll}`` on the op prints ``#pragma unroll``), ``scf.if``,
  ``scf.yield``; ``arith``; ``math``;
* ``memref.load`` / ``memref.store`` on global tensors and shared tiles,
  ``memref.alloca`` for per-thread register arrays (the persistent schedulers keep a
  row in one);
* ``vector.load`` / ``vector.store`` of ``vector<4xf32>``, ``vector<8xbf16>``, ... for
  128-bit global accesses, ``vector.extract`` to read one lane.

Kernels are ``kernel.func`` ops directly in a ``builtin.module``. xDSL 0.74's ``gpu``
dialect has the right ops (``gpu.func``, ``gpu.thread_id``, ``gpu.barrier``, ...) but
only in the generic syntax, which is unreadable, so their counterparts are here:
``kernel.thread_id x``, ``kernel.block_id``, ``kernel.block_dim``, ``kernel.grid_dim``
(``threadIdx.x``, ...; ``index`` results) and ``kernel.barrier`` (``__syncthreads()``).
A ``kernel.func`` has ``block_size`` (required; becomes ``__launch_bounds__`` and sizes the
shared reduction workspace) and ``index_bits`` are attributes, ``kernel.return`` ends
the body.

Conventions the printer (``codegen/cuda_printer.py``) and the interpreter
(``codegen/kernel_interpreter.py``) rely on:

* A global tensor is a kernel argument of type ``memref<?xT>``: a flat pointer
  (``T* __restrict__``). Its sizes and strides are separate ``index`` arguments and the
  element offset is computed with explicit ``arith`` on ``index`` values, so the
  printed CUDA is a pointer plus integer sizes/strides and ``x[offset]``.
* ``index`` is 32-bit (``int``) when the function carries ``index_bits = 32``
  (the lowering decides from the tensor sizes), 64-bit (``int64_t``) otherwise; index
  arguments have the same C type.
* Half and bfloat16 are loaded, ``arith.extf``-ed to f32, computed in f32 and
  ``arith.truncf``-ed before the store.

This dialect adds the rest::

    builtin.module {
      kernel.func @row_sum(%x : memref<?xf32>, %y : memref<?xf32>, %cols : index)
          attributes {block_size = array<i32: 128, 1, 1>, index_bits = 32 : i64} {
        %tid = kernel.thread_id x
        ...
        %w = kernel.shuffle %v, %c16 {mode = "xor"} : (f32, i32) -> f32
        %s = kernel.warp_reduce %v {kind = "add"} : (f32) -> f32
        %r = kernel.block_reduce %v {kind = "max", dims = array<i64: 0>} : (f32) -> f32
        %a, %m2, %n = kernel.block_reduce %a0, %m0, %n0 {kind = "welford", dims = array<i64: 0>}
            : (f32, f32, f32) -> (f32, f32, f32)
        %tile = kernel.shared_alloc {padding = 1 : i64} : memref<32x33xf32, 3 : i64>
        %v4 = kernel.from_elements %a, %b, %c, %d : (f32, f32, f32, f32) -> vector<4xf32>
        kernel.return
      }
    }

* ``kernel.shuffle``: ``__shfl_{xor,down,up,}_sync`` over the full warp.
* ``kernel.warp_reduce``: a butterfly (xor) reduction over the 32 lanes of a warp;
  every lane gets the result. Kinds ``add``, ``mul``, ``max``, ``min`` (one operand)
  and ``welford`` (three operands: mean, M2 and count, all floats; Chan's combine).
* ``kernel.block_reduce``: reduces over the threads of a block that differ only in the
  thread-index axes ``dims`` (0 = x, 1 = y, 2 = z), through warp shuffles and shared
  memory; every participating thread gets the result. It is a barrier: all threads of
  the block must reach it.
* ``kernel.cluster_reduce``: reduces a value over every thread of the blocks of the
  kernel's thread-block cluster (``cluster_size``, Hopper; blocks of whole warps): each
  warp reduces its lanes and writes its result to its block's shared memory, a cluster
  barrier, then each warp loads the cluster's warp results (distributed shared memory)
  and reduces them; every thread gets the result. ``kernel.cluster_barrier`` (``barrier.cluster``) is the
  cluster's ``__syncthreads``: a kernel ends with one, so that no block leaves while
  another reads its shared memory.
* ``kernel.shared_alloc``: a static shared-memory tile (``__shared__``), memory space
  3; ``padding`` elements are added to the innermost extent to avoid bank conflicts
  (a 32x32 float tile padded by one is ``memref<32x33xf32, 3 : i64>``).
* ``kernel.from_elements``: a vector built from scalars (the value of a 128-bit store);
  upstream MLIR's ``vector.from_elements``, which xDSL 0.74 lacks.
* ``kernel.rng``: one element of a random tensor (Philox4x32-10, ``RngOp``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BFloat16Type,
    ComplexType,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.dominance import check_defined_before_use
from fuser.ir.dialects.iterdomain import PREFETCH_LEVELS

WARP_SIZE = 32
SHARED_MEMORY_SPACE = 3
SHUFFLE_MODES = ("xor", "down", "up", "idx")
REDUCTION_KINDS = ("add", "mul", "max", "min", "welford")
UNROLL_ATTR = "kernel.unroll"
MAX_CLUSTER_BLOCKS = 8
"""Blocks in a thread-block cluster (the portable maximum of sm_90)."""
STATIC_SHARED_LIMIT = 48 * 1024
"""Bytes of static ``__shared__`` memory a kernel may declare (more needs dynamic
shared memory, which kernels do not use)."""


def value_bits(t: Attribute) -> int:
    """Bits of a kernel value of type ``t`` (``index`` and other types: 64)."""
    if isinstance(t, AnyFloat):
        return t.bitwidth
    if isinstance(t, ComplexType):
        return 2 * value_bits(t.element_type)
    if isinstance(t, IntegerType):
        return max(8, t.width.data)
    return 64


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A CUDA kernel: ``extern "C" __global__ void __launch_bounds__(X*Y*Z) name(...)``.

    ``block_size`` is the launch's block shape (x, y, z); ``index_bits`` (32 or 64,
    default 64) the width of ``index`` values and arguments; ``cluster_size`` (x, y,
    z), when present, groups the blocks into thread-block clusters of that shape
    (``__cluster_dims__``; the grid is a multiple of it). ``dependent_launch``, when
    present, makes the kernel a programmatic dependent launch on sm_90 and later: its
    first statement waits for the kernel before it in the stream, then lets the next
    one launch (``griddepcontrol``), so the runtime may start it while the one before
    finishes (``codegen/dependent_launch.py`` decides which kernels). ``aliased_args``
    lists the arguments that may point into the same buffer as another argument of the
    launch (an in-place update's input and output, ``codegen/aliased_args.py``): they
    are printed without ``const`` and ``__restrict__``."""

    name = "kernel.func"
    sym_name = attr_def(SymbolNameConstraint())
    function_type = attr_def(FunctionType)
    block_size = attr_def(DenseArrayBase)
    index_bits = opt_attr_def(IntegerAttr)
    cluster_size = opt_attr_def(DenseArrayBase)
    dependent_launch = opt_attr_def(UnitAttr)
    aliased_args = opt_attr_def(DenseArrayBase)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, name: str, arg_types: Sequence[Attribute],
                 block_size: Sequence[int], index_bits: int = 64,
                 cluster_size: Sequence[int] | None = None) -> None:
        bs = list(block_size) + [1] * (3 - len(block_size))
        attrs: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "function_type": FunctionType.from_lists(list(arg_types), []),
            "block_size": DenseArrayBase.from_list(i32, bs),
        }
        if index_bits != 64:
            attrs["index_bits"] = IntegerAttr(index_bits, i64)
        if cluster_size is not None:
            cs = list(cluster_size) + [1] * (3 - len(cluster_size))
            attrs["cluster_size"] = DenseArrayBase.from_list(i32, cs)
        super().__init__(attributes=attrs, regions=[Region(Block(arg_types=arg_types))])

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        return self.body.block.args

    def get_block_size(self) -> tuple[int, int, int]:
        v = [int(x) for x in self.block_size.get_values()]
        return (v[0], v[1], v[2])

    def get_cluster_size(self) -> tuple[int, int, int] | None:
        if self.cluster_size is None:
            return None
        v = [int(x) for x in self.cluster_size.get_values()]
        return (v[0], v[1], v[2])

    def is_dependent_launch(self) -> bool:
        return self.dependent_launch is not None

    def aliased_arg_positions(self) -> frozenset[int]:
        """The positions of the arguments in ``aliased_args`` (none when absent)."""
        if self.aliased_args is None:
            return frozenset()
        return frozenset(int(x) for x in self.aliased_args.get_values())

    def threads_per_block(self) -> int:
        x, y, z = self.get_block_size()
        return x * y * z

    def get_index_bits(self) -> int:
        return 64 if self.index_bits is None else self.index_bits.value.data

    def reduction_workspace_bytes(self) -> int:
        """Bytes of the shared workspace of the kernel's ``kernel.block_reduce`` ops
        (the printer's ``fuser_red_smem``): one partial (all the op's values) a thread,
        for the widest op."""
        return max((self._workspace(op) for op in self.walk() if isinstance(op, BlockReduceOp)), default=0)

    def _workspace(self, op: BlockReduceOp) -> int:
        return value_bits(op.values[0].type) // 8 * len(op.values) * self.threads_per_block()

    def static_shared_bytes(self) -> dict[str, int]:
        """The static shared memory the kernel declares: each ``kernel.shared_alloc``
        (``%name``, or ``shared_alloc #<op number>``; 16-byte aligned) and the reduction
        workspace (``block_reduce workspace``), in one walk."""
        use: dict[str, int] = {}
        workspace = 0
        for n, op in enumerate(self.walk()):
            if isinstance(op, SharedAllocOp):
                ty = op.result.type
                assert isinstance(ty, MemRefType)
                nbytes = math.prod(ty.get_shape()) * value_bits(ty.element_type) // 8
                use[f"%{op.result.name_hint}" if op.result.name_hint else f"shared_alloc #{n}"] = -(-nbytes // 16) * 16
            elif isinstance(op, BlockReduceOp):
                workspace = max(workspace, self._workspace(op))
        if workspace:
            use["block_reduce workspace"] = workspace
        return use

    def shared_memory_overflow(self) -> tuple[int, str] | None:
        """When the static shared memory (``static_shared_bytes``) passes
        ``STATIC_SHARED_LIMIT``: its total and its parts (``%tile 49152, block_reduce
        workspace 2048``), for a diagnostic; else None."""
        use = self.static_shared_bytes()
        total = sum(use.values())
        if total <= STATIC_SHARED_LIMIT:
            return None
        return total, ", ".join(f"{name} {n}" for name, n in use.items())

    def verify_(self) -> None:
        where = f"kernel.func @{self.sym_name.data}"
        if self.function_type.outputs.data:
            raise VerifyException(f"{where}: a kernel returns nothing, got results "
                                  f"{list(self.function_type.outputs.data)}")
        if tuple(self.function_type.inputs.data) != self.body.block.arg_types:
            raise VerifyException(f"{where}: the entry block's argument types differ from "
                                  f"the function type")
        bs = [int(x) for x in self.block_size.get_values()]
        if len(bs) != 3 or any(b < 1 for b in bs) or bs[0] * bs[1] * bs[2] > 1024:
            raise VerifyException(f"{where}: block_size must be 3 positive extents with at "
                                  f"most 1024 threads, got {bs}")
        if self.cluster_size is not None:
            cs = [int(x) for x in self.cluster_size.get_values()]
            if len(cs) != 3 or any(c < 1 for c in cs) or cs[0] * cs[1] * cs[2] > MAX_CLUSTER_BLOCKS:
                raise VerifyException(f"{where}: cluster_size must be 3 positive extents with at "
                                      f"most {MAX_CLUSTER_BLOCKS} blocks, got {cs}")
        if self.get_index_bits() not in (32, 64):
            raise VerifyException(f"{where}: index_bits must be 32 or 64, got "
                                  f"{self.get_index_bits()}")
        for i, t in enumerate(self.function_type.inputs.data):
            if isinstance(t, MemRefType):
                if t.get_num_dims() != 1 or t.get_shape()[0] != DYNAMIC_INDEX or not isinstance(
                        t.memory_space, NoneAttr):
                    raise VerifyException(
                        f"{where}: argument #{i} must be a flat global tensor memref<?xT>, "
                        f"got {t}")
            elif isinstance(t, ComplexType) and isinstance(t.element_type, Float32Type | Float64Type):
                pass  # a complex scalar by value (fuser_complex<float/double>)
            elif not isinstance(t, AnyFloat | IntegerType | IndexType):
                raise VerifyException(f"{where}: argument #{i} has unsupported type {t}")
        if self.aliased_args is not None:
            positions = [int(x) for x in self.aliased_args.get_values()]
            args = self.function_type.inputs.data
            if positions != sorted(set(positions)):
                raise VerifyException(f"{where}: aliased_args must be increasing argument positions, "
                                      f"got {positions}")
            for p in positions:
                if not 0 <= p < len(args) or not isinstance(args[p], MemRefType):
                    raise VerifyException(f"{where}: aliased_args names argument #{p}, which is not "
                                          f"a tensor argument of the kernel's {len(args)}")
        check_defined_before_use(where, self.body.block)
        if over := self.shared_memory_overflow():
            raise VerifyException(f"{where}: declares {over[0]} bytes of static shared memory "
                                  f"({over[1]}), more than the {STATIC_SHARED_LIMIT} a kernel may")

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name, inputs, outputs, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type"))
        op = cls.create(attributes={"sym_name": StringAttr(name),
                                    "function_type": FunctionType.from_lists(inputs, outputs)},
                        regions=[region])
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(printer, self.sym_name, self.function_type, self.body,
                           self.attributes, reserved_attr_names=("sym_name", "function_type"),
                           print_empty_outputs=False)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """The end of a ``kernel.func``."""

    name = "kernel.return"
    assembly_format = "attr-dict"
    traits = traits_def(IsTerminator(), HasParent(FuncOp))

    def __init__(self) -> None:
        super().__init__()


class _LaunchIndexOp(IRDLOperation):
    """``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` along one axis (x, y, z)."""

    dim = prop_def(StringAttr)
    result = result_def(IndexType)

    def __init__(self, dim: str) -> None:
        super().__init__(result_types=[IndexType()], properties={"dim": StringAttr(dim)})

    @classmethod
    def parse(cls, parser: Parser) -> _LaunchIndexOp:
        pos = parser.pos
        dim = parser.parse_identifier()
        if dim not in ("x", "y", "z"):
            parser.raise_error(f"{cls.name}: expected x, y or z, got '{dim}'", pos, parser.pos)
        attrs = parser.parse_optional_attr_dict()
        op = cls(dim)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.dim.data}")
        printer.print_op_attributes(self.attributes)

    def axis(self) -> int:
        return "xyz".index(self.dim.data)

    def verify_(self) -> None:
        if self.dim.data not in ("x", "y", "z"):
            raise VerifyException(f"{self.name}: dim must be x, y or z, got '{self.dim.data}'")


@irdl_op_definition
class ThreadIdOp(_LaunchIndexOp):
    name = "kernel.thread_id"


@irdl_op_definition
class BlockIdOp(_LaunchIndexOp):
    name = "kernel.block_id"


@irdl_op_definition
class BlockDimOp(_LaunchIndexOp):
    name = "kernel.block_dim"


@irdl_op_definition
class GridDimOp(_LaunchIndexOp):
    name = "kernel.grid_dim"


LAUNCH_INDEX_OPS = (ThreadIdOp, BlockIdOp, BlockDimOp, GridDimOp)
INDEX_ARITH_OPS = (
    arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivSIOp, arith.RemSIOp, arith.IndexCastOp,
    arith.CmpiOp, arith.AndIOp, arith.ConstantOp, arith.MinSIOp, arith.MaxSIOp,
)
"""The side-effect-free integer ``arith`` ops the lowering computes offsets and row
guards with (with the launch indices: the ops a transform may copy or move across a
kernel's branches, ``codegen/uniform_guard.py`` and ``codegen/prefetch_loads.py``)."""


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """``__syncthreads()``: every thread of the block must reach it."""

    name = "kernel.barrier"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()




@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """``prefetch.global.L2 [&mem[index]]``: ask the memory system for the cache line
    of one element of a global tensor, without waiting for it (no result). The later
    load of that element finds it in the cache (``level``: ``L2``, or ``L1`` of the
    thread's multiprocessor). ``codegen/prefetch_loads.py`` issues the next
    iteration's loads of a persistent loop this way::

        kernel.prefetch %x[%i] {level = "L2"} : memref<?xbf16>
    """

    name = "kernel.prefetch"
    mem = operand_def(MemRefType)
    index = operand_def(IndexType)
    level = prop_def(StringAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$mem `[` $index `]` attr-dict `:` type($mem)"

    def __init__(self, mem: SSAValue | Operation, index: SSAValue | Operation, level: str = "L2") -> None:
        super().__init__(operands=[mem, index], properties={"level": StringAttr(level)})

    def verify_(self) -> None:
        if self.level.data not in PREFETCH_LEVELS:
            raise VerifyException(
                f"kernel.prefetch: level must be one of {list(PREFETCH_LEVELS)}, got '{self.level.data}'")
        ty = self.mem.type
        assert isinstance(ty, MemRefType)
        if ty.get_shape() != (DYNAMIC_INDEX,) or isinstance(ty.memory_space, IntegerAttr):
            raise VerifyException(
                f"kernel.prefetch: operand mem must be a global tensor (memref<?xT>), got {ty}")


def written_tensors(func: FuncOp) -> set[SSAValue]:
    """The memrefs ``func`` stores to (``memref.store``, ``vector.store``): a global
    tensor argument outside this set is read-only in the kernel."""
    out: set[SSAValue] = set()
    for op in func.walk():
        if isinstance(op, memref.StoreOp):
            out.add(op.memref)
        elif isinstance(op, vector.StoreOp):
            out.add(op.base)
    return out


def enclosing_kernel(op: Operation) -> FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent


def _is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def _is_scalar(t: Attribute) -> bool:
    return isinstance(t, AnyFloat | IntegerType | IndexType)


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """``__shfl_<mode>_sync(0xffffffff, value, offset)`` over the full warp."""

    name = "kernel.shuffle"
    value = operand_def()
    offset = operand_def(IntegerType)
    mode = prop_def(StringAttr)
    result = result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value `,` $offset attr-dict `:` functional-type(operands, results)"

    def __init__(self, value: SSAValue | Operation, offset: SSAValue | Operation,
                 mode: str = "xor") -> None:
        value = SSAValue.get(value)
        super().__init__(operands=[value, offset], result_types=[value.type],
                         properties={"mode": StringAttr(mode)})

    def verify_(self) -> None:
        if self.mode.data not in SHUFFLE_MODES:
            raise VerifyException(
                f"kernel.shuffle: unknown mode '{self.mode.data}' (expected one of "
                f"{', '.join(SHUFFLE_MODES)})")
        if not _is_scalar(self.value.type):
            raise VerifyException(
                f"kernel.shuffle: the shuffled value must be a scalar, got {self.value.type}")
        if self.result.type != self.value.type:
            raise VerifyException(
                f"kernel.shuffle: result type {self.result.type} differs from the value "
                f"type {self.value.type}")
        if enclosing_kernel(self) is None:
            raise VerifyException("kernel.shuffle must be inside a kernel.func")


def _verify_reduction(op: IRDLOperation, kind: str, values: Sequence[SSAValue],
                      results: Sequence[SSAValue]) -> None:
    if kind not in REDUCTION_KINDS:
        raise VerifyException(
            f"{op.name}: unknown kind '{kind}' (expected one of {', '.join(REDUCTION_KINDS)})")
    want = 3 if kind == "welford" else 1
    if len(values) != want:
        raise VerifyException(
            f"{op.name}: kind '{kind}' takes {want} operand(s), got {len(values)}")
    if len(results) != len(values):
        raise VerifyException(
            f"{op.name}: {len(values)} operand(s) but {len(results)} result(s)")
    for i, (v, r) in enumerate(zip(values, results, strict=True)):
        if isinstance(v.type, ComplexType) and kind in ("add", "mul"):
            pass  # complex sums and products (the preamble's fuser_complex)
        elif isinstance(v.type, ComplexType):
            raise VerifyException(
                f"{op.name}: kind '{kind}' of complex operand #{i} ({v.type}): complex values "
                "have no order (only add and mul)")
        elif not _is_scalar(v.type) or isinstance(v.type, IndexType):
            raise VerifyException(
                f"{op.name}: operand #{i} must be a float, integer or complex scalar, got {v.type}")
        if r.type != v.type:
            raise VerifyException(
                f"{op.name}: result #{i} has type {r.type}, its operand {v.type}")
    if kind == "welford":
        types = {v.type for v in values}
        if len(types) != 1 or not _is_float(values[0].type):
            raise VerifyException(
                f"{op.name}: welford operands (mean, M2, count) must share one float type, "
                f"got {', '.join(str(v.type) for v in values)}")
    if enclosing_kernel(op) is None:
        raise VerifyException(f"{op.name} must be inside a kernel.func")


class _KindReduceOp(IRDLOperation):
    """A reduction of ``kind`` over a fixed group of threads (``values`` -> as many
    results of the same types)."""

    values = var_operand_def()
    kind = prop_def(StringAttr)
    results_ = var_result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$values attr-dict `:` functional-type($values, $results_)"

    def __init__(self, values: Sequence[SSAValue | Operation], kind: str) -> None:
        vals = [SSAValue.get(v) for v in values]
        super().__init__(operands=[vals], result_types=[[v.type for v in vals]],
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        _verify_reduction(self, self.kind.data, self.values, self.results_)


@irdl_op_definition
class WarpReduceOp(_KindReduceOp):
    """Reduce a value over the 32 lanes of a warp; every lane gets the result."""

    name = "kernel.warp_reduce"


@irdl_op_definition
class BlockReduceOp(IRDLOperation):
    """Reduce over the threads of a block along thread axes ``dims``; a barrier."""

    name = "kernel.block_reduce"
    values = var_operand_def()
    kind = prop_def(StringAttr)
    dims = prop_def(DenseArrayBase)
    results_ = var_result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$values attr-dict `:` functional-type($values, $results_)"

    def __init__(self, values: Sequence[SSAValue | Operation], kind: str,
                 dims: Sequence[int] = (0,)) -> None:
        vals = [SSAValue.get(v) for v in values]
        super().__init__(operands=[vals], result_types=[[v.type for v in vals]],
                         properties={"kind": StringAttr(kind),
                                     "dims": DenseArrayBase.from_list(i64, list(dims))})

    def get_dims(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.dims.get_values())

    def verify_(self) -> None:
        _verify_reduction(self, self.kind.data, self.values, self.results_)
        dims = self.get_dims()
        if not dims or list(dims) != sorted(set(dims)) or any(d not in (0, 1, 2) for d in dims):
            raise VerifyException(
                f"kernel.block_reduce: dims must be a non-empty increasing subset of "
                f"[0, 1, 2] (x, y, z), got {list(dims)}")


def _clustered_kernel(op: Operation) -> FuncOp:
    f = enclosing_kernel(op)
    if f is None or f.cluster_size is None:
        raise VerifyException(
            f"{op.name} must be inside a kernel.func with a cluster_size (a kernel of thread-block clusters)")
    return f


@irdl_op_definition
class ClusterReduceOp(_KindReduceOp):
    """Reduce a value over every thread of the thread-block cluster's blocks (whole
    warps); every thread gets the result. A cluster barrier: every thread of the
    cluster must reach it."""

    name = "kernel.cluster_reduce"

    def verify_(self) -> None:
        super().verify_()
        for i, v in enumerate(self.values):
            if isinstance(v.type, ComplexType):
                raise VerifyException(f"{self.name}: operand #{i} is complex; cluster reductions take "
                                      f"real scalars, got {v.type}")
        _clustered_kernel(self)


@irdl_op_definition
class ClusterBarrierOp(IRDLOperation):
    """``barrier.cluster``: every thread of the cluster's blocks must reach it; the
    shared-memory writes before it are visible to the cluster after it."""

    name = "kernel.cluster_barrier"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()

    def verify_(self) -> None:
        _clustered_kernel(self)


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """A static ``__shared__`` tile; ``padding`` elements pad the innermost extent."""

    name = "kernel.shared_alloc"
    padding = opt_prop_def(IntegerAttr)
    result = result_def(MemRefType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, shape: Sequence[int], element_type: Attribute,
                 padding: int = 0) -> None:
        padded = list(shape[:-1]) + [shape[-1] + padding]
        ty = MemRefType(element_type, padded,
                        memory_space=IntegerAttr(SHARED_MEMORY_SPACE, i64))
        props = {"padding": IntegerAttr(padding, i64)} if padding else {}
        super().__init__(result_types=[ty], properties=props)

    def get_padding(self) -> int:
        return 0 if self.padding is None else self.padding.value.data

    def verify_(self) -> None:
        ty = self.result.type
        assert isinstance(ty, MemRefType)
        shape = ty.get_shape()
        if not shape or any(s < 1 for s in shape):
            raise VerifyException(
                f"kernel.shared_alloc: the tile must have a static, non-empty shape, got {ty}")
        space = ty.memory_space
        if not (isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE):
            raise VerifyException(
                f"kernel.shared_alloc: the result must be in memory space "
                f"{SHARED_MEMORY_SPACE} (shared), got {ty}")
        pad = self.get_padding()
        if pad < 0 or pad >= shape[-1]:
            raise VerifyException(
                f"kernel.shared_alloc: padding {pad} must be in [0, {shape[-1]}) (the padded "
                f"innermost extent)")
        if enclosing_kernel(self) is None:
            raise VerifyException("kernel.shared_alloc must be inside a kernel.func")


@irdl_op_definition
class FromElementsOp(IRDLOperation):
    """A 1-D vector from scalars (upstream MLIR's ``vector.from_elements``)."""

    name = "kernel.from_elements"
    elements = var_operand_def()
    result = result_def(VectorType)

    assembly_format = "$elements attr-dict `:` functional-type($elements, $result)"

    def __init__(self, elements: Sequence[SSAValue | Operation]) -> None:
        vals = [SSAValue.get(v) for v in elements]
        super().__init__(operands=[vals],
                         result_types=[VectorType(vals[0].type, [len(vals)])])

    def verify_(self) -> None:
        ty = self.result.type
        assert isinstance(ty, VectorType)
        shape = ty.get_shape()
        if len(shape) != 1 or shape[0] != len(self.elements):
            raise VerifyException(
                f"kernel.from_elements: {len(self.elements)} elements for a {ty}")
        for i, e in enumerate(self.elements):
            if e.type != ty.element_type:
                raise VerifyException(
                    f"kernel.from_elements: element #{i} has type {e.type}, the vector "
                    f"{ty.element_type}")


@irdl_op_definition
class IntrinsicOp(IRDLOperation):
    """A scalar function upstream ``arith``/``math`` lack (``fuser_ir/intrinsics.py``
    defines each one for the printer and the interpreter)::

        %r = kernel.intrinsic "erfinv"(%x) : (f32) -> f32
        %p = kernel.intrinsic "isnan"(%x) : (f32) -> i1
    """

    name = "kernel.intrinsic"
    callee = prop_def(StringAttr)
    args = var_operand_def()
    result = result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $result)"

    def __init__(self, callee: str, args: Sequence[SSAValue]) -> None:
        from fuser.ir.intrinsics import INTRINSICS

        spec = INTRINSICS.get(callee)
        rt = IntegerType(1) if spec is not None and spec.predicate else args[0].type
        super().__init__(operands=[list(args)], properties={"callee": StringAttr(callee)},
                         result_types=[rt])

    def verify_(self) -> None:
        from fuser.ir.intrinsics import INTRINSICS

        name = self.callee.data
        spec = INTRINSICS.get(name)
        if spec is None:
            raise VerifyException(
                f"kernel.intrinsic: unknown function '{name}' (known: {', '.join(sorted(INTRINSICS))})")
        if len(self.args) != spec.arity:
            raise VerifyException(
                f"kernel.intrinsic \"{name}\": takes {spec.arity} operands, got {len(self.args)}")
        t = self.args[0].type
        for i, a in enumerate(self.args):
            if a.type != t:
                raise VerifyException(
                    f"kernel.intrinsic \"{name}\": operand #{i} has type {a.type}, operand #0 {t}")
        is_float = isinstance(t, AnyFloat)
        if spec.floats_only and not is_float:
            raise VerifyException(f"kernel.intrinsic \"{name}\": needs float operands, got {t}")
        if spec.ints_only and not isinstance(t, IntegerType):
            raise VerifyException(f"kernel.intrinsic \"{name}\": needs integer operands, got {t}")
        want = IntegerType(1) if spec.predicate else t
        if self.result.type != want:
            raise VerifyException(
                f"kernel.intrinsic \"{name}\": result type {self.result.type}, expected {want}")


RNG_DISTRIBUTIONS = ("uniform", "normal")


@irdl_op_definition
class RngOp(IRDLOperation):
    """One element of ``fuser.uniform``/``fuser.normal`` (``fuser_ir/philox.py``): the
    Philox seed and offset (i64), the element's row-major linear index in the random
    tensor (i64) and the two distribution parameters, in the compute type of ``dtype``
    (f64 for f64, else f32), which is also the result's type::

        %u = kernel.rng "uniform"(%seed, %offset, %i, %lo, %hi) {dtype = f16}
            : (i64, i64, i64, f32, f32) -> f32

    The printer calls the preamble's ``fuser_rng_<distribution>_<dtype>`` device
    function (``codegen/random_cuda.py``), the interpreter ``fuser.ir.philox``.
    """

    name = "kernel.rng"
    distribution = prop_def(StringAttr)
    dtype = prop_def(Attribute)
    seed = operand_def()
    offset = operand_def()
    index = operand_def()
    a = operand_def()
    b = operand_def()
    result = result_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$distribution `(` $seed `,` $offset `,` $index `,` $a `,` $b `)` attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self, distribution: str, dtype: Attribute, seed: SSAValue, offset: SSAValue,
        index: SSAValue, a: SSAValue, b: SSAValue,
    ) -> None:
        ct = Float64Type() if isinstance(dtype, Float64Type) else Float32Type()
        super().__init__(
            operands=[seed, offset, index, a, b],
            properties={"distribution": StringAttr(distribution), "dtype": dtype},
            result_types=[ct],
        )

    def verify_(self) -> None:
        dist = self.distribution.data
        if dist not in RNG_DISTRIBUTIONS:
            raise VerifyException(f"kernel.rng: unknown distribution '{dist}' (uniform or normal)")
        dt = self.dtype
        if not isinstance(dt, Float64Type | Float32Type | Float16Type | BFloat16Type):
            raise VerifyException(f"kernel.rng: dtype must be f64, f32, f16 or bf16, got {dt}")
        for v, what in ((self.seed, "seed"), (self.offset, "offset"), (self.index, "index")):
            if v.type != i64:
                raise VerifyException(f"kernel.rng: {what} must be i64, got {v.type}")
        ct = Float64Type() if isinstance(dt, Float64Type) else Float32Type()
        for v, what in ((self.a, "operand a"), (self.b, "operand b"), (self.result, "result")):
            if v.type != ct:
                raise VerifyException(f"kernel.rng: {what} must be {ct} (the compute type of {dt}), got {v.type}")


def vector_lanes(ty: Attribute) -> int:
    assert isinstance(ty, VectorType)
    (n,) = ty.get_shape()
    return n


def static_int(attr: Attribute) -> int:
    assert isinstance(attr, IntAttr | IntegerAttr)
    return attr.data if isinstance(attr, IntAttr) else attr.value.data


Kernel = Dialect(
    "kernel",
    [FuncOp, ReturnOp, ThreadIdOp, BlockIdOp, BlockDimOp, GridDimOp, BarrierOp, ShuffleOp, WarpReduceOp, BlockReduceOp, ClusterReduceOp, ClusterBarrierOp, SharedAllocOp, FromElementsOp, IntrinsicOp, RngOp, PrefetchOp],
    [],
)
