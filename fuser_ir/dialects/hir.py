"""The ``hir`` host dialect: host programs that allocate buffers, build views, launch
fusions and manage streams (nvFuser's host IR, seed 001).

A module holds the kernels as ``fuser.fusion`` symbols and one or more
``hir.program`` symbols that drive them. The ``SingleSetOp`` host IR of seed 001::

    %HostIrContainer { (T0_g_float[iS0{i0}, iS1{i2}]) -> (T1_g_float[iStreamIdx2{i0}, iS3{i2}]) :
      T1 = ALLOCATE(buffer=T1, mem_type=global, size=( i0 * i2 ), zero_init=false)
      FOR StreamIdx in iStreamIdx2{i0}:
        GetCurrentStream into Stream 0
        SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
        Synchronize Stream 0
        T2 = HirAliasSelect( T0, axis = iS0{i0}, index = StreamIdx )
        T3 = HirAliasSelect( T1, axis = iStreamIdx2{i0}, index = StreamIdx )
        T3 = Set( T2, cache_op=Streaming )
        SetCurrentStream to Stream 0
        Synchronize Stream ( StreamIdx % numberOfStreams )
    }

is, one op for one line::

    fuser.fusion @set(%x : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
      %y = fuser.set %x : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      fuser.output %y : !fuser.tensor<?xf32>
    }
    hir.program @main(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
      %i0 = fuser.size %t0 {dim = 0 : i64} : (!fuser.tensor<?x?xf32>) -> i64
      %i2 = fuser.size %t0 {dim = 1 : i64} : (!fuser.tensor<?x?xf32>) -> i64
      %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) : !fuser.tensor<?x?xf32>
      %c0 = arith.constant 0 : i64
      %c1 = arith.constant 1 : i64
      hir.for %i = %c0 to %i0 step %c1 : i64 {
        %s0 = hir.get_current_stream : !hir.stream
        %s = hir.stream_for_index %i : i64
        hir.set_current_stream %s
        hir.synchronize_stream %s0
        %t2 = hir.alias_select %t0[axis = 0, %i] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
        %t3 = hir.alias_select %t1[axis = 0, %i] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
        %r = hir.launch @set(%t2) outs(%t3 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
        hir.set_current_stream %s0
        hir.synchronize_stream %s
      } {stream_axis = "iStreamIdx2{i0}"}
      hir.return %t1 : !fuser.tensor<?x?xf32>
    }

Design choices:

* **Host-side expressions** (seed 001's ``Set``/``Binary``/``Reduction`` on
  preallocated outputs) are ``hir.launch`` of a one-op ``fuser.fusion`` with
  ``outs``: the op semantics then live in one place (the fuser dialect and its
  reference interpreter), and a host expression is a segment like any other.
* **Views** (``hir.reshape``, ``hir.permute``, ``hir.squeeze``, ``hir.broadcast``,
  ``hir.slice``, ``hir.alias_select``) never copy: they are strided metadata over the
  buffer of their input, so writing through ``hir.slice`` or ``hir.alias_select``
  writes into the input's buffer. Broadcast views are read-only.
* **Aliases** (``hir.alias %value, %target``) are declarations of the program, as
  nvFuser's ``HostIrContainer::markAlias``: every read or write of ``%value``,
  anywhere in the program, goes to ``%target``'s buffer. The target must be defined
  before the aliased value; a program input can never be the aliased value (its
  buffer is the caller's).
* **Streams** are values of type ``!hir.stream``: ``hir.get_current_stream`` (the
  user's stream on entry), ``hir.stream_for_index %i`` (pool stream
  ``i % num_streams``), ``hir.set_current_stream`` and ``hir.synchronize_stream``
  (the current stream waits for the given one).
* Host scalars are ``index`` or signless integers; they come from program inputs,
  ``arith`` integer ops and ``fuser.size``.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    NoTerminator,
    Pure,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.func_like import FuncLikeOp
from fuser.ir.dialects.fuser import (
    FusionOp,
    InferError,
    TensorType,
    check_broadcast_in_dim,
    slice_properties,
    sliced_shape,
)
from fuser.ir.dialects.sharding import DeviceMeshAttr
from fuser.ir.dtypes import is_element_type
from fuser.ir.shapes import DYN, ShapeError, fmt_shape, normalize_dim

__all__ = [
    "COMMUNICATIONS",
    "AliasOp",
    "AllgatherOp",
    "AllreduceOp",
    "BroadcastFromOp",
    "CommunicationOp",
    "RecvOp",
    "ReduceScatterOp",
    "SendOp",
    "ShardOp",
    "AliasSelectOp",
    "AllocateOp",
    "BroadcastOp",
    "DeallocateOp",
    "ForOp",
    "GetCurrentStreamOp",
    "Hir",
    "HostViewOp",
    "LaunchOp",
    "MeshPositionOp",
    "PermuteOp",
    "ProgramOp",
    "ReshapeOp",
    "ReturnOp",
    "SetCurrentStreamOp",
    "SliceOp",
    "SqueezeOp",
    "StreamForIndexOp",
    "StreamType",
    "SynchronizeStreamOp",
    "types_compatible",
]

# =====================================================================================
# Types
# =====================================================================================


@irdl_attr_definition
class StreamType(ParametrizedAttribute, TypeAttribute):
    """``!hir.stream``: a CUDA stream handle on the host."""

    name = "hir.stream"


# =====================================================================================
# Helpers
# =====================================================================================


def _ints(attr: DenseArrayBase | None) -> list[int]:
    return [] if attr is None else [int(v) for v in attr.get_values()]  # type: ignore[arg-type]


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def is_host_int_type(t: Attribute) -> bool:
    """``index`` or a signless integer type wider than i1 (host sizes and indices)."""
    return isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.width.data > 1)


def is_host_value_type(t: Attribute) -> bool:
    return isinstance(t, TensorType | StreamType | IndexType) or is_element_type(t)


def types_compatible(a: Attribute, b: Attribute) -> bool:
    """Equal types, except that tensors ignore layout and a ``?`` extent matches any."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        if a.element_type != b.element_type or a.rank != b.rank:
            return False
        return all(x == y or DYN in (x, y) for x, y in zip(a.get_shape(), b.get_shape(), strict=True))
    return a == b


def _value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else (
        f"argument #{v.index}" if isinstance(v, BlockArgument) else "the value"
    )


def _program_of(op: Operation) -> ProgramOp | None:
    p = op.parent_op()
    while p is not None and not isinstance(p, ProgramOp):
        p = p.parent_op()
    return p


def _program_input_index(v: SSAValue) -> int | None:
    """The input position of ``v`` if it is a block argument of a ``hir.program``."""
    if isinstance(v, BlockArgument) and isinstance(v.owner.parent_op(), ProgramOp):
        return v.index
    return None


def _tensor(op: Operation, v: SSAValue, what: str) -> TensorType:
    if not isinstance(v.type, TensorType):
        raise VerifyException(f"{op.name}: {what} must be a !fuser.tensor, got {v.type}")
    return v.type


def _mixed_shape(op: Operation, static: Sequence[int], sizes: Sequence[SSAValue], what: str) -> list[int]:
    """MLIR-style mixed sizes: every ``?`` of ``static`` is bound to one size operand."""
    if any(d < DYN for d in static):
        raise VerifyException(f"{op.name}: {what} {fmt_shape(static)} has a negative extent")
    n_dyn = sum(1 for d in static if d == DYN)
    if n_dyn != len(sizes):
        raise VerifyException(
            f"{op.name}: {what} {fmt_shape(static)} has {n_dyn} symbolic extents but "
            f"{len(sizes)} size operands"
        )
    for i, s in enumerate(sizes):
        if not is_host_int_type(s.type):
            raise VerifyException(
                f"{op.name}: size operand #{i} must be an index or integer, got {s.type}"
            )
    return list(static)


def _check_result(op: Operation, got: Attribute, expected: Sequence[int], dtype: Attribute) -> None:
    exp = TensorType(expected, dtype)
    if not exp.same_value_type(got):
        raise VerifyException(f"{op.name}: result has type {got}, but the operands give {exp}")


def _dominates(target: SSAValue, user: Operation) -> bool:
    """Whether ``target`` is defined before ``user`` in program order, in ``user``'s
    block or one enclosing it."""
    if isinstance(target, BlockArgument):
        block = target.owner
        op: Operation | None = user
        while op is not None:
            if op.parent_block() is block:
                return True
            op = op.parent_op()
        return False
    def_op = target.owner
    assert isinstance(def_op, Operation)
    op = user
    while op is not None:
        if op.parent_block() is def_op.parent_block():
            block = def_op.parent_block()
            assert block is not None
            return block.get_operation_index(def_op) < block.get_operation_index(op)
        op = op.parent_op()
    return False


# =====================================================================================
# Program structure
# =====================================================================================


@irdl_op_definition
class ProgramOp(FuncLikeOp):
    """A host program: ``hir.program @main(%a : T, ...) -> (R, ...) { ... }``.

    The block arguments are the inputs; ``hir.return`` lists the outputs. The body
    runs once, in order, on the host."""

    name = "hir.program"

    TERMINATOR_NAME: ClassVar[str] = "hir.return"
    KIND: ClassVar[str] = "program"
    INPUT_KINDS: ClassVar[str] = "a !fuser.tensor, an index or a scalar"

    @property
    def return_op(self) -> ReturnOp:
        term = self.body.block.last_op
        assert isinstance(term, ReturnOp)
        return term

    def input_ok(self, t: Attribute) -> bool:
        return isinstance(t, TensorType | IndexType) or is_element_type(t)

    def result_ok(self, declared: Attribute, given: Attribute) -> bool:
        return types_compatible(declared, given)

    def terminator(self) -> tuple[type[Operation], Sequence[SSAValue]] | None:
        term = self.body.block.last_op
        return (ReturnOp, list(term.values)) if isinstance(term, ReturnOp) else None


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Terminator of a program: ``hir.return %a, %b : T1, T2``."""

    name = "hir.return"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(ProgramOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]) -> None:
        super().__init__(operands=[values])


# =====================================================================================
# Buffers
# =====================================================================================


@irdl_op_definition
class AllocateOp(IRDLOperation):
    """``%t = hir.allocate sizes(%n : i64) {zero_init} : !fuser.tensor<?x8xf32>``.

    A new contiguous buffer; each ``?`` extent of the result type is bound, in order,
    to one size operand. ``zero_init`` fills it with zeros. ``preallocated`` marks an
    output buffer the caller may provide: it must be returned by ``hir.return`` from
    the program's top level, and when the caller passes a buffer for that result, the
    allocation is that buffer (written in place)."""

    name = "hir.allocate"

    sizes = var_operand_def()
    zero_init = opt_prop_def(UnitAttr)
    preallocated = opt_prop_def(UnitAttr)
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "(`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($result)"

    def __init__(
        self,
        type: TensorType,
        sizes: Sequence[SSAValue] = (),
        zero_init: bool = False,
        preallocated: bool = False,
    ) -> None:
        props: dict[str, Attribute] = {}
        if zero_init:
            props["zero_init"] = UnitAttr()
        if preallocated:
            props["preallocated"] = UnitAttr()
        super().__init__(operands=[sizes], properties=props, result_types=[type])

    @property
    def is_zero_init(self) -> bool:
        return self.zero_init is not None

    @property
    def is_preallocated(self) -> bool:
        return self.preallocated is not None

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, TensorType)
        _mixed_shape(self, t.get_shape(), self.sizes, "result shape")
        if not self.is_preallocated:
            return
        program = self.parent_op()
        if not isinstance(program, ProgramOp):
            raise VerifyException(
                "hir.allocate: a preallocated buffer must be allocated at the top level of "
                "a hir.program"
            )
        term = program.body.block.last_op
        if not isinstance(term, ReturnOp) or self.result not in term.values:
            raise VerifyException(
                "hir.allocate: a preallocated buffer must be returned by hir.return"
            )


@irdl_op_definition
class DeallocateOp(IRDLOperation):
    """``hir.deallocate %t : T``: drop a buffer; any later access is an error."""

    name = "hir.deallocate"

    buffer = operand_def(TensorType)

    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue) -> None:
        super().__init__(operands=[buffer])

    def verify_(self) -> None:
        i = _program_input_index(self.buffer)
        if i is not None:
            raise VerifyException(
                f"hir.deallocate: operand {_value_name(self.buffer)} is program input #{i}; "
                "the caller owns it"
            )


# =====================================================================================
# Launches
# =====================================================================================


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """``%r = hir.launch @f(%a, %b) outs(%o : T) : (A, B) -> T``: run the
    ``fuser.fusion`` symbol ``@f`` on the arguments.

    The results are the fusion's returned outputs. With ``outs`` (one per result),
    the fusion writes its outputs into those buffers (destination passing, like
    linalg) and result ``i`` is the buffer ``outs[i]`` itself."""

    name = "hir.launch"

    callee = prop_def(SymbolRefAttr)
    args = var_operand_def()
    outs = var_operand_def(TensorType)
    res = var_result_def()

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$callee `(` $args `)` (`outs` `(` $outs^ `:` type($outs) `)`)? attr-dict "
        "`:` functional-type($args, $res)"
    )

    def __init__(
        self,
        callee: str | FusionOp,
        args: Sequence[SSAValue],
        outs: Sequence[SSAValue] = (),
        result_types: Sequence[Attribute] | None = None,
    ) -> None:
        if isinstance(callee, FusionOp):
            if result_types is None:
                result_types = list(callee.function_type.outputs.data)
            callee = callee.sym_name.data
        if result_types is None:
            result_types = [o.type for o in outs]
        super().__init__(
            operands=[args, outs],
            properties={"callee": SymbolRefAttr(callee)},
            result_types=[list(result_types)],
        )

    def callee_fusion(self) -> FusionOp | None:
        op = SymbolTable.lookup_symbol(self, self.callee)
        return op if isinstance(op, FusionOp) else None

    def verify_(self) -> None:
        name = f"@{self.callee.string_value()}"
        fusion = self.callee_fusion()
        if fusion is None:
            raise VerifyException(f"hir.launch: no fuser.fusion named {name} in the module")
        ins = fusion.function_type.inputs.data
        if len(self.args) != len(ins):
            raise VerifyException(
                f"hir.launch: {name} takes {len(ins)} arguments, got {len(self.args)}"
            )
        for i, (a, t) in enumerate(zip(self.args, ins, strict=True)):
            if not types_compatible(a.type, t):
                raise VerifyException(
                    f"hir.launch: argument #{i} has type {a.type}, but {name} expects {t}"
                )
        outs = fusion.function_type.outputs.data
        if len(self.res) != len(outs):
            raise VerifyException(
                f"hir.launch: {name} returns {len(outs)} values, but the launch has "
                f"{len(self.res)} results"
            )
        for i, (r, t) in enumerate(zip(self.res, outs, strict=True)):
            if not types_compatible(r.type, t):
                raise VerifyException(
                    f"hir.launch: result #{i} has type {r.type}, but {name} returns {t}"
                )
        if not self.outs:
            return
        if len(self.outs) != len(self.res):
            raise VerifyException(
                f"hir.launch: {len(self.outs)} outs for the {len(self.res)} results of {name}"
            )
        for i, (o, r) in enumerate(zip(self.outs, self.res, strict=True)):
            if not types_compatible(o.type, r.type):
                raise VerifyException(
                    f"hir.launch: outs #{i} has type {o.type}, but result #{i} is {r.type}"
                )


# =====================================================================================
# Views (no copy: strided metadata over the input's buffer)
# =====================================================================================


class HostViewOp(IRDLOperation):
    """Base of host views: ``infer_shape`` gives the result extents."""

    def infer_shape(self, t: TensorType) -> list[int]:  # pragma: no cover - overridden
        raise NotImplementedError

    def view_input(self) -> SSAValue:
        return self.operands[0]

    def verify_(self) -> None:
        t = _tensor(self, self.view_input(), "input")
        try:
            shape = self.infer_shape(t)
        except (InferError, ShapeError, ValueError, IndexError) as e:
            raise VerifyException(f"{self.name}: {e}") from e
        _check_result(self, self.results[0].type, shape, t.element_type)


@irdl_op_definition
class ReshapeOp(HostViewOp):
    """``hir.reshape %x sizes(...) {new_shape = array<i64: ...>} : T -> R``: a view
    with a new shape (fails at run time if the input's strides do not allow it)."""

    name = "hir.reshape"
    input = operand_def(TensorType)
    sizes = var_operand_def()
    new_shape = prop_def(DenseArrayBase.constr(I64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$input (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($input) "
        "`->` type($result)"
    )

    def __init__(self, input: SSAValue, new_shape: Sequence[int], sizes: Sequence[SSAValue] = ()) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        super().__init__(
            operands=[input, sizes],
            properties={"new_shape": _i64_array(new_shape)},
            result_types=[t.with_shape(new_shape)],
        )

    def infer_shape(self, t: TensorType) -> list[int]:
        shape = _mixed_shape(self, _ints(self.new_shape), self.sizes, "new_shape")
        if DYN not in t.get_shape() and DYN not in shape and prod(t.get_shape()) != prod(shape):
            raise InferError(
                f"input {fmt_shape(t.get_shape())} and new_shape {fmt_shape(shape)} do not "
                "have the same number of elements"
            )
        return shape


@irdl_op_definition
class PermuteOp(HostViewOp):
    """``hir.permute %x {dims = array<i64: 1, 0>} : T -> R``: output axis ``i`` is
    input axis ``dims[i]``."""

    name = "hir.permute"
    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(I64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dims: Sequence[int]) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        shape = [t.get_shape()[normalize_dim(d, t.rank)] for d in dims]
        super().__init__(
            operands=[input], properties={"dims": _i64_array(dims)}, result_types=[t.with_shape(shape)]
        )

    def get_dims(self) -> list[int]:
        t = self.input.type
        assert isinstance(t, TensorType)
        return [normalize_dim(d, t.rank) for d in _ints(self.dims)]

    def infer_shape(self, t: TensorType) -> list[int]:
        dims = [normalize_dim(d, t.rank) for d in _ints(self.dims)]
        if sorted(dims) != list(range(t.rank)):
            raise InferError(f"dims {_ints(self.dims)} is not a permutation of 0..{t.rank - 1}")
        return [t.get_shape()[d] for d in dims]


@irdl_op_definition
class SqueezeOp(HostViewOp):
    """``hir.squeeze %x {dims = array<i64: 1>} : T -> R``: drop extent-1 axes."""

    name = "hir.squeeze"
    input = operand_def(TensorType)
    dims = prop_def(DenseArrayBase.constr(I64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, dims: Sequence[int]) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        norm = {normalize_dim(d, t.rank) for d in dims}
        shape = [e for i, e in enumerate(t.get_shape()) if i not in norm]
        super().__init__(
            operands=[input], properties={"dims": _i64_array(dims)}, result_types=[t.with_shape(shape)]
        )

    def get_dims(self) -> list[int]:
        t = self.input.type
        assert isinstance(t, TensorType)
        return sorted({normalize_dim(d, t.rank) for d in _ints(self.dims)})

    def infer_shape(self, t: TensorType) -> list[int]:
        dims = [normalize_dim(d, t.rank) for d in _ints(self.dims)]
        if len(set(dims)) != len(dims):
            raise InferError(f"dims {_ints(self.dims)} name an axis twice")
        for d in dims:
            if t.get_shape()[d] not in (1, DYN):
                raise InferError(f"cannot squeeze axis {d} of extent {t.get_shape()[d]}")
        return [e for i, e in enumerate(t.get_shape()) if i not in dims]


@irdl_op_definition
class BroadcastOp(HostViewOp):
    """``hir.broadcast %x sizes(...) {shape = ..., broadcast_dims = ...} : T -> R``:
    input axis ``i`` becomes output axis ``broadcast_dims[i]``, other output axes are
    inserted, extent-1 input axes are expanded (stride 0). The view is read-only."""

    name = "hir.broadcast"
    input = operand_def(TensorType)
    sizes = var_operand_def()
    shape = prop_def(DenseArrayBase.constr(I64))
    broadcast_dims = prop_def(DenseArrayBase.constr(I64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$input (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($input) "
        "`->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        shape: Sequence[int],
        broadcast_dims: Sequence[int],
        sizes: Sequence[SSAValue] = (),
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        super().__init__(
            operands=[input, sizes],
            properties={"shape": _i64_array(shape), "broadcast_dims": _i64_array(broadcast_dims)},
            result_types=[t.with_shape(shape)],
        )

    def infer_shape(self, t: TensorType) -> list[int]:
        shape = _mixed_shape(self, _ints(self.shape), self.sizes, "shape")
        check_broadcast_in_dim(t.get_shape(), shape, _ints(self.broadcast_dims))
        return shape


@irdl_op_definition
class SliceOp(HostViewOp):
    """``hir.slice %x {starts, ends, strides} : T -> R``: ``x[starts:ends:strides]``
    per axis (Python clamping); a writable view."""

    name = "hir.slice"
    input = operand_def(TensorType)
    starts = prop_def(DenseArrayBase.constr(I64))
    ends = prop_def(DenseArrayBase.constr(I64))
    strides = prop_def(DenseArrayBase.constr(I64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self,
        input: SSAValue,
        starts: Sequence[int],
        ends: Sequence[int],
        strides: Sequence[int] | None = None,
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        props = slice_properties(starts, ends, strides)
        shape = sliced_shape(t.get_shape(), starts, ends, _ints(props["strides"]))
        super().__init__(operands=[input], properties=props, result_types=[t.with_shape(shape)])

    def infer_shape(self, t: TensorType) -> list[int]:
        return sliced_shape(t.get_shape(), _ints(self.starts), _ints(self.ends), _ints(self.strides))


@irdl_op_definition
class AliasSelectOp(HostViewOp):
    """``%v = hir.alias_select %t[axis = 0, %i] : T, i64 -> R``: the slice of ``%t`` at
    index ``%i`` along ``axis`` (the axis is removed), as a writable view: writing
    ``%v`` writes ``%t`` (nvFuser's ``HirAliasSelect``)."""

    name = "hir.alias_select"
    input = operand_def(TensorType)
    index = operand_def()
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, axis: int, index: SSAValue) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        d = normalize_dim(axis, t.rank)
        shape = [e for i, e in enumerate(t.get_shape()) if i != d]
        super().__init__(
            operands=[input, index],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[t.with_shape(shape)],
        )

    def get_axis(self) -> int:
        t = self.input.type
        assert isinstance(t, TensorType)
        return normalize_dim(self.axis.value.data, t.rank)

    def infer_shape(self, t: TensorType) -> list[int]:
        if not is_host_int_type(self.index.type):
            raise InferError(f"index must be an index or integer, got {self.index.type}")
        d = normalize_dim(self.axis.value.data, t.rank)
        return [e for i, e in enumerate(t.get_shape()) if i != d]

    @classmethod
    def parse(cls, parser: Parser) -> AliasSelectOp:
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        parser.parse_keyword("axis")
        parser.parse_punctuation("=")
        axis = parser.parse_integer()
        parser.parse_punctuation(",")
        idx = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_t = parser.parse_type()
        parser.parse_punctuation(",")
        idx_t = parser.parse_type()
        parser.parse_punctuation("->")
        res_t = parser.parse_type()
        op = cls.create(
            operands=[parser.resolve_operand(src, src_t), parser.resolve_operand(idx, idx_t)],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[res_t],
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f"[axis = {self.axis.value.data}, ")
        printer.print_operand(self.index)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(", ")
        printer.print_attribute(self.index.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


# =====================================================================================
# Aliases
# =====================================================================================


@irdl_op_definition
class AliasOp(IRDLOperation):
    """``hir.alias %value, %target : T, T``: ``%value`` is another name of ``%target``'s
    buffer. The mark holds for the whole program: every read of ``%value`` reads
    ``%target`` and every write of ``%value`` (a launch result, for instance) is
    stored into ``%target``'s buffer; an ``hir.allocate`` of ``%value`` allocates
    nothing. A program input is never the aliased value."""

    name = "hir.alias"

    value = operand_def(TensorType)
    target = operand_def(TensorType)

    assembly_format = "$value `,` $target attr-dict `:` type($value) `,` type($target)"

    def __init__(self, value: SSAValue, target: SSAValue) -> None:
        super().__init__(operands=[value, target])

    def verify_(self) -> None:
        i = _program_input_index(self.value)
        if i is not None:
            raise VerifyException(
                f"hir.alias: operand {_value_name(self.value)} is program input #{i}; "
                "inputs cannot be aliased"
            )
        if self.value == self.target:
            raise VerifyException(
                f"hir.alias: {_value_name(self.value)} cannot alias itself"
            )
        vt, tt = self.value.type, self.target.type
        assert isinstance(vt, TensorType) and isinstance(tt, TensorType)
        if not types_compatible(vt, tt):
            raise VerifyException(
                f"hir.alias: value of type {vt} cannot alias target of type {tt}"
            )
        value_def = (
            self.value.owner
            if isinstance(self.value.owner, Operation)
            else self
        )
        if not _dominates(self.target, value_def):
            raise VerifyException(
                f"hir.alias: target {_value_name(self.target)} must be defined before the "
                f"aliased value {_value_name(self.value)}"
            )
        program = _program_of(self)
        if program is not None:
            for other in program.walk():
                if isinstance(other, AliasOp) and other is not self and other.value == self.value:
                    raise VerifyException(
                        f"hir.alias: {_value_name(self.value)} is aliased twice"
                    )


# =====================================================================================
# Loops
# =====================================================================================


@irdl_op_definition
class ForOp(IRDLOperation):
    """``hir.for %i = %lb to %ub step %st { ... } {stream_axis = "iStreamIdx2{i0}"}``.

    Runs the body for ``%i`` in ``range(lb, ub, step)``; the bounds and the induction
    variable are ``index`` (default) or the integer type after ``:``. The optional
    ``stream_axis`` names the stream-parallel iter domain the loop comes from."""

    name = "hir.for"

    lb = operand_def()
    ub = operand_def()
    step = operand_def()
    stream_axis = opt_prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(
        self,
        lb: SSAValue,
        ub: SSAValue,
        step: SSAValue,
        body: Region | None = None,
        stream_axis: str | None = None,
    ) -> None:
        if body is None:
            body = Region(Block(arg_types=[lb.type]))
        props: dict[str, Attribute] = {}
        if stream_axis is not None:
            props["stream_axis"] = StringAttr(stream_axis)
        super().__init__(operands=[lb, ub, step], properties=props, regions=[body])

    @property
    def induction_var(self) -> BlockArgument:
        return self.body.block.args[0]

    def verify_(self) -> None:
        t = self.lb.type
        if not is_host_int_type(t):
            raise VerifyException(f"hir.for: lower bound must be an index or integer, got {t}")
        for what, v in (("upper bound", self.ub), ("step", self.step)):
            if v.type != t:
                raise VerifyException(
                    f"hir.for: {what} has type {v.type}, but the lower bound has type {t}"
                )
        args = self.body.block.args
        if len(args) != 1 or args[0].type != t:
            raise VerifyException(
                f"hir.for: the body must have one block argument of type {t} (the "
                "induction variable)"
            )
        step = self.step.owner
        if isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr):
            if step.value.value.data <= 0:
                raise VerifyException(
                    f"hir.for: step must be positive, got {step.value.value.data}"
                )

    def print(self, printer: Printer) -> None:
        iv = self.induction_var
        printer.print_string(" ")
        printer.print_ssa_value(iv)
        printer.print_string(" = ")
        printer.print_ssa_value(self.lb)
        printer.print_string(" to ")
        printer.print_ssa_value(self.ub)
        printer.print_string(" step ")
        printer.print_ssa_value(self.step)
        if not isinstance(iv.type, IndexType):
            printer.print_string(" : ")
            printer.print_attribute(iv.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)
        attrs = dict(self.attributes)
        if self.stream_axis is not None:
            attrs["stream_axis"] = self.stream_axis
        printer.print_op_attributes(attrs)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        iv = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        ub = parser.parse_unresolved_operand()
        parser.parse_keyword("step")
        step = parser.parse_unresolved_operand()
        t: Attribute = parser.parse_type() if parser.parse_optional_punctuation(":") else IndexType()
        operands = [parser.resolve_operand(x, t) for x in (lb, ub, step)]
        body = parser.parse_region((iv.resolve(t),))
        attrs = parser.parse_optional_attr_dict()
        axis = attrs.pop("stream_axis", None)
        if axis is not None and not isinstance(axis, StringAttr):
            parser.raise_error(f"hir.for: stream_axis must be a string, got {axis}")
        op = cls(operands[0], operands[1], operands[2], body)
        if axis is not None:
            op.stream_axis = axis
        op.attributes |= attrs
        return op


# =====================================================================================
# Streams
# =====================================================================================


@irdl_op_definition
class GetCurrentStreamOp(IRDLOperation):
    """``%s = hir.get_current_stream : !hir.stream``."""

    name = "hir.get_current_stream"
    result = result_def(StreamType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self) -> None:
        super().__init__(result_types=[StreamType()])


@irdl_op_definition
class SetCurrentStreamOp(IRDLOperation):
    """``hir.set_current_stream %s``: later launches run on ``%s``."""

    name = "hir.set_current_stream"
    stream = operand_def(StreamType)
    assembly_format = "$stream attr-dict"

    def __init__(self, stream: SSAValue) -> None:
        super().__init__(operands=[stream])


@irdl_op_definition
class SynchronizeStreamOp(IRDLOperation):
    """``hir.synchronize_stream %s``: the current stream waits for the work queued on
    ``%s`` so far."""

    name = "hir.synchronize_stream"
    stream = operand_def(StreamType)
    assembly_format = "$stream attr-dict"

    def __init__(self, stream: SSAValue) -> None:
        super().__init__(operands=[stream])


@irdl_op_definition
class StreamForIndexOp(IRDLOperation):
    """``%s = hir.stream_for_index %i {num_streams = 4 : i64} : i64``: the pool stream
    ``Stream(%i % num_streams)``; without ``num_streams`` the runtime's stream count
    is used (nvFuser's ``numberOfStreams`` option)."""

    name = "hir.stream_for_index"
    index = operand_def()
    num_streams = opt_prop_def(IntegerAttr[I64])
    result = result_def(StreamType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$index attr-dict `:` type($index)"

    def __init__(self, index: SSAValue, num_streams: int | None = None) -> None:
        props: dict[str, Attribute] = {}
        if num_streams is not None:
            props["num_streams"] = IntegerAttr(num_streams, i64)
        super().__init__(operands=[index], properties=props, result_types=[StreamType()])

    def get_num_streams(self) -> int | None:
        return None if self.num_streams is None else self.num_streams.value.data

    def verify_(self) -> None:
        if not is_host_int_type(self.index.type):
            raise VerifyException(
                f"hir.stream_for_index: index must be an index or integer, got {self.index.type}"
            )
        n = self.get_num_streams()
        if n is not None and n <= 0:
            raise VerifyException(f"hir.stream_for_index: num_streams {n} must be positive")


# =====================================================================================
# Communications (multi-device programs)
# =====================================================================================


class CommunicationOp(IRDLOperation):
    """Base of the collectives and point-to-point transfers between the devices of a
    mesh (nvFuser's ``Communication``). Every device of ``mesh`` runs the same
    program, and so the same op; tensors are that device's local buffers. The result
    is written into a buffer the program allocated (destination passing, as NCCL
    does), so these ops have no SSA results. Run by a host evaluator with a
    communicator (``fuser.runtime.communicator``): gloo between CPU processes, NCCL
    between GPUs."""

    mesh = prop_def(DeviceMeshAttr)

    KIND: ClassVar[str] = ""
    """nvFuser's name of the communication."""

    def axis_value(self) -> int | None:
        a = self.properties.get("axis")
        return a.value.data if isinstance(a, IntegerAttr) else None

    def _pair(self, input: SSAValue, output: SSAValue) -> tuple[TensorType, TensorType]:
        ti, to = _tensor(self, input, "input"), _tensor(self, output, "output")
        if ti.element_type != to.element_type or ti.rank != to.rank:
            raise VerifyException(
                f"{self.name}: input {ti} and output {to} differ in element type or rank"
            )
        return ti, to

    def _same_shape(self, input: SSAValue, output: SSAValue) -> None:
        ti, to = self._pair(input, output)
        if not types_compatible(ti, to):
            raise VerifyException(f"{self.name}: input {ti} and output {to} must have one shape")

    def _position(self, v: SSAValue, what: str) -> None:
        """``v`` is a mesh position: an index or integer."""
        if not is_host_int_type(v.type):
            raise VerifyException(f"{self.name}: {what} must be an index or integer, got {v.type}")

    def _scaled(self, small: TensorType, big: TensorType, axis: int, what: str) -> None:
        """``big`` is ``small`` with ``axis`` times the mesh size."""
        if not 0 <= axis < small.rank:
            raise VerifyException(f"{self.name}: axis {axis} is out of range for rank {small.rank}")
        d = self.mesh.size
        for a, (x, y) in enumerate(zip(small.get_shape(), big.get_shape(), strict=True)):
            want = x * d if (a == axis and x != DYN) else x
            if DYN not in (x, y) and want != y:
                raise VerifyException(
                    f"{self.name}: {what} {fmt_shape(big.get_shape())} must be "
                    f"{fmt_shape(small.get_shape())} with axis {axis} times the {d} devices"
                )


class _AlongAxisOp(CommunicationOp):
    """A communication of ``%in`` into ``%out`` along ``axis`` (shared fields)."""

    input = operand_def(TensorType)
    output = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input `,` $output attr-dict `:` type($input) `,` type($output)"

    def __init__(self, input: SSAValue, output: SSAValue, mesh: DeviceMeshAttr, axis: int) -> None:
        super().__init__(operands=[input, output], properties={"mesh": mesh, "axis": IntegerAttr(axis, i64)})


@irdl_op_definition
class AllgatherOp(_AlongAxisOp):
    """``hir.allgather %in, %out {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64}``:
    every device receives the concatenation, along ``axis``, of every device's
    ``%in`` (in mesh order)."""

    name = "hir.allgather"
    KIND: ClassVar[str] = "allgather"

    def verify_(self) -> None:
        ti, to = self._pair(self.input, self.output)
        self._scaled(ti, to, self.axis.value.data, "output")


@irdl_op_definition
class AllreduceOp(CommunicationOp):
    """``hir.allreduce %in, %out {mesh = #iterdomain.mesh<[0, 1]>}``: every device
    receives the elementwise sum of every device's ``%in``."""

    name = "hir.allreduce"
    KIND: ClassVar[str] = "allreduce"
    input = operand_def(TensorType)
    output = operand_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input `,` $output attr-dict `:` type($input) `,` type($output)"

    def __init__(self, input: SSAValue, output: SSAValue, mesh: DeviceMeshAttr) -> None:
        super().__init__(operands=[input, output], properties={"mesh": mesh})

    def verify_(self) -> None:
        self._same_shape(self.input, self.output)


@irdl_op_definition
class ReduceScatterOp(_AlongAxisOp):
    """``hir.reduce_scatter %in, %out {mesh = ..., axis = 0 : i64}``: the device at mesh
    position ``p`` receives part ``p`` (along ``axis``) of the sum of every device's
    ``%in``."""

    name = "hir.reduce_scatter"
    KIND: ClassVar[str] = "reduce_scatter"

    def verify_(self) -> None:
        ti, to = self._pair(self.input, self.output)
        self._scaled(to, ti, self.axis.value.data, "input")


@irdl_op_definition
class ShardOp(_AlongAxisOp):
    """``hir.shard %in, %out {mesh = ..., axis = 0 : i64}``: the device at mesh position
    ``p`` copies part ``p`` (along ``axis``) of its replicated ``%in``; nothing moves
    between devices."""

    name = "hir.shard"
    KIND: ClassVar[str] = "slice"

    def verify_(self) -> None:
        ti, to = self._pair(self.input, self.output)
        self._scaled(to, ti, self.axis.value.data, "input")


@irdl_op_definition
class BroadcastFromOp(CommunicationOp):
    """``hir.broadcast_from %in, %out root(%r : index) {mesh = ...}``: every device
    receives into ``%out`` the ``%in`` of the device at mesh position ``%r`` (which
    copies its own)."""

    name = "hir.broadcast_from"
    KIND: ClassVar[str] = "broadcast"
    input = operand_def(TensorType)
    output = operand_def(TensorType)
    root = operand_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$input `,` $output `root` `(` $root `:` type($root) `)` attr-dict `:` type($input) `,` type($output)"
    )

    def __init__(self, input: SSAValue, output: SSAValue, root: SSAValue, mesh: DeviceMeshAttr) -> None:
        super().__init__(operands=[input, output, root], properties={"mesh": mesh})

    def verify_(self) -> None:
        self._same_shape(self.input, self.output)
        self._position(self.root, "root")


@irdl_op_definition
class SendOp(CommunicationOp):
    """``hir.send %in to(%p : index) {mesh = ...}``: send ``%in`` to the device at mesh
    position ``%p``, which runs the matching ``hir.recv``."""

    name = "hir.send"
    KIND: ClassVar[str] = "send"
    input = operand_def(TensorType)
    peer = operand_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input `to` `(` $peer `:` type($peer) `)` attr-dict `:` type($input)"

    def __init__(self, input: SSAValue, peer: SSAValue, mesh: DeviceMeshAttr) -> None:
        super().__init__(operands=[input, peer], properties={"mesh": mesh})

    def verify_(self) -> None:
        self._position(self.peer, "peer")


@irdl_op_definition
class RecvOp(CommunicationOp):
    """``hir.recv %out from(%p : index) {mesh = ...}``: receive into ``%out`` what the
    device at mesh position ``%p`` sends."""

    name = "hir.recv"
    KIND: ClassVar[str] = "recv"
    output = operand_def(TensorType)
    peer = operand_def()

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$output `from` `(` $peer `:` type($peer) `)` attr-dict `:` type($output)"

    def __init__(self, output: SSAValue, peer: SSAValue, mesh: DeviceMeshAttr) -> None:
        super().__init__(operands=[output, peer], properties={"mesh": mesh})

    def verify_(self) -> None:
        self._position(self.peer, "peer")


@irdl_op_definition
class MeshPositionOp(IRDLOperation):
    """``%p = hir.mesh_position {mesh = #iterdomain.mesh<[0, 1]>} : index``: the
    position in ``mesh`` of the device running the program (nvFuser's device index),
    for programs whose peers depend on who runs them (a ring of sends and receives)."""

    name = "hir.mesh_position"
    mesh = prop_def(DeviceMeshAttr)
    result = result_def(IndexType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, mesh: DeviceMeshAttr) -> None:
        super().__init__(properties={"mesh": mesh}, result_types=[IndexType()])


COMMUNICATIONS: tuple[type[CommunicationOp], ...] = (
    AllgatherOp,
    AllreduceOp,
    ReduceScatterOp,
    ShardOp,
    BroadcastFromOp,
    SendOp,
    RecvOp,
)


Hir = Dialect(
    "hir",
    [
        ProgramOp,
        ReturnOp,
        AllocateOp,
        DeallocateOp,
        LaunchOp,
        ReshapeOp,
        PermuteOp,
        SqueezeOp,
        BroadcastOp,
        SliceOp,
        AliasSelectOp,
        AliasOp,
        ForOp,
        GetCurrentStreamOp,
        SetCurrentStreamOp,
        SynchronizeStreamOp,
        StreamForIndexOp,
        *COMMUNICATIONS,
        MeshPositionOp,
    ],
    [StreamType],
)
