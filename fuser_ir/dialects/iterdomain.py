"""The ``iterdomain`` dialect: first-class iteration domains and their transforms.

nvFuser schedules a tensor by transforming its *logical* iteration domain (one
``IterDomain`` per axis) into a *loop* domain with splits, merges and resizes (and
reversals, ``iterdomain.reverse``, and row-aligned shifts, ``iterdomain.align``, which
nvFuser does not have), and
by binding loop ids to parallel dimensions. This dialect writes that schedule in the
IR, transform-dialect style, inside a ``fuser.fusion`` body after the compute ops and
before ``fuser.output`` (the reference interpreter ignores these ops)::

    fuser.fusion @add(%a : !fuser.tensor<1024x4096xf32>) -> !fuser.tensor<1024x4096xf32> {
      %t = fuser.add %a, %a : (...) -> !fuser.tensor<1024x4096xf32>
      %i0, %i1 = iterdomain.logical %t : !fuser.tensor<1024x4096xf32> -> !iterdomain.id<1024>, !iterdomain.id<4096>
      %m = iterdomain.merge %i0, %i1 : !iterdomain.id<1024>, !iterdomain.id<4096> -> !iterdomain.id<4194304>
      %o, %v = iterdomain.split %m by 4 : !iterdomain.id<4194304> -> !iterdomain.id<1048576>, !iterdomain.id<4>
      %b, %x = iterdomain.split %o by 128 : !iterdomain.id<1048576> -> !iterdomain.id<8192>, !iterdomain.id<128>
      %bx = iterdomain.parallelize %b to BIDx : !iterdomain.id<8192> -> !iterdomain.id<8192, BIDx>
      %tx = iterdomain.parallelize %x to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
      %vv = iterdomain.parallelize %v to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
      iterdomain.loop %t [%bx, %tx, %vv] : !fuser.tensor<1024x4096xf32> [!iterdomain.id<8192, BIDx>, ...]
      fuser.output %t : !fuser.tensor<1024x4096xf32>
    }

An id has the type ``!iterdomain.id<EXTENT[, ITER_TYPE][, PARALLEL_TYPE]>``: the
extent is a static size or ``?``; the iter type (``iteration`` by default,
``reduction``, ``broadcast``, ``symbolic``) and the parallel type (``serial`` by
default, ``BIDx``..``TIDz``, ``vectorize``, ``unroll``, ``unswitch``, ``stream``,
``DIDx``) are printed only when they are not the default.

Multi-device fusions (issue 17) shard tensors across the devices of a mesh:
``iterdomain.shard %t {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : T`` binds
logical axis 0 of ``%t`` to ``DIDx`` over devices 0 and 1 (``fuser.ir.dialects.
sharding``: ``#iterdomain.mesh``, ``#iterdomain.sharding``). ``DIDx`` is a device
axis, never a loop of a kernel: ``iterdomain.parallelize`` rejects it.

A reshape (seed 003) is visible as transforms: ``iterdomain.root`` gives a
``fuser.reshape`` result the ids of its input's axes, splits and merges take them to
the output axes, and ``iterdomain.rfactor`` declares those as the result's logical
domain; its verifier checks that the transforms reshape row-major, e.g.
``[2, 10, 40] -> [2, 10, 2, 20]`` is keep, keep, split by 2 (``fuser.ir.schedule``
builds this from the op's ``#fuser.view``).

Where a tensor is computed (nvFuser's computeAt) is a property of its loop:
``iterdomain.loop %x [...] {compute_at = 1 : i64, memory = "registers"}`` computes
``%x`` once per iteration of the kernel's first loop, in its own nest over its other
loops, and holds it in registers for the consumers that run later in that iteration;
a tensor without ``compute_at`` is inlined (recomputed by each consumer at its index).

Verifiers check extents through every transform, that a loop (or rfactor) domain
consumes every id of the logical (or root) domain exactly once, and the parallel
types of a loop domain (each at most once, ``vectorize`` only innermost and static).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from math import prod
from typing import ClassVar, TypeVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.fuser import (
    REDUCTION_OP_CLASSES,
    ReshapeOp,
    TensorType,
    VarMeanOp,
    VarOp,
    WelfordOp,
)
from fuser.ir.dialects.sharding import DeviceMeshAttr, ShardingAttr, ShardingError
from fuser.ir.shapes import DYN, normalize_dim

_OpT = TypeVar("_OpT", bound=Operation)

# =====================================================================================
# The id type
# =====================================================================================


class IterType(StrEnum):
    """What an id iterates over (nvFuser's ``IterType``)."""

    iteration = "iteration"
    reduction = "reduction"
    broadcast = "broadcast"
    symbolic = "symbolic"


class ParallelType(StrEnum):
    """How a loop id is executed (nvFuser's ``ParallelType``)."""

    serial = "serial"
    BIDx = "BIDx"
    BIDy = "BIDy"
    BIDz = "BIDz"
    TIDx = "TIDx"
    TIDy = "TIDy"
    TIDz = "TIDz"
    vectorize = "vectorize"
    unroll = "unroll"
    unswitch = "unswitch"
    stream = "stream"
    DIDx = "DIDx"


class MemoryType(StrEnum):
    """Where a tensor computed at a loop (``compute_at``) is held."""

    registers = "registers"
    shared = "shared"


PREFETCH_LEVELS = ("L1", "L2")
"""The cache levels a prefetch fills (``prefetch.global.L1``/``.L2``): a prefetched
input's ``iterdomain.loop {prefetch = ...}`` and ``kernel.prefetch``."""


THREAD_TYPES = (ParallelType.TIDx, ParallelType.TIDy, ParallelType.TIDz)
GRID_TYPES = (ParallelType.BIDx, ParallelType.BIDy, ParallelType.BIDz)
MAX_CLUSTER_SIZE = 8
"""Blocks in a thread-block cluster (the portable maximum of sm_90)."""
_PTYPE_ATTRS = {p: StringAttr(str(p)) for p in ParallelType}
"""The ``parallel_type`` property of each parallel type (made once)."""
MAX_THREADS = {ParallelType.TIDx: 1024, ParallelType.TIDy: 1024, ParallelType.TIDz: 64}
MAX_THREADS_PER_BLOCK = 1024
MAX_VECTOR_BYTES = 16


def fmt_extent(extent: int) -> str:
    return "?" if extent == DYN else str(extent)


def ceil_div(a: int, b: int) -> int:
    """``ceilDiv`` on extents; symbolic stays symbolic."""
    return DYN if a == DYN or b == DYN else -(-a // b)


@irdl_attr_definition
class IterDomainType(ParametrizedAttribute, TypeAttribute):
    """``!iterdomain.id<12>``, ``!iterdomain.id<?, reduction>``, ``!iterdomain.id<128, TIDx>``,
    ``!iterdomain.id<8, reduction, BIDx, clustered>`` (a block id whose blocks form one
    thread-block cluster: ``clustered``)."""

    name = "iterdomain.id"

    extent_attr: IntAttr
    iter_type_attr: StringAttr
    parallel_type_attr: StringAttr
    clustered_attr: IntAttr

    def __init__(
        self,
        extent: int,
        iter_type: IterType = IterType.iteration,
        parallel_type: ParallelType = ParallelType.serial,
        clustered: bool = False,
    ) -> None:
        super().__init__(
            IntAttr(extent), StringAttr(str(iter_type)), StringAttr(str(parallel_type)), IntAttr(int(clustered))
        )

    @property
    def extent(self) -> int:
        return self.extent_attr.data

    @property
    def iter_type(self) -> IterType:
        data = self.iter_type_attr.data
        return _ITER_TYPES.get(data) or IterType(data)

    @property
    def parallel_type(self) -> ParallelType:
        data = self.parallel_type_attr.data
        return _PARALLEL_TYPES.get(data) or ParallelType(data)

    @property
    def clustered(self) -> bool:
        """The blocks along this (block) id are one thread-block cluster: they run
        together and share their shared memory (a reduction over the id combines
        through it, in the kernel)."""
        return bool(self.clustered_attr.data)

    @property
    def is_static(self) -> bool:
        return self.extent != DYN

    def with_parallel_type(self, ptype: ParallelType, clustered: bool = False) -> IterDomainType:
        return id_type(self.extent, self.iter_type, ptype, clustered)

    def describe(self) -> str:
        """A short human description for diagnostics, e.g. ``extent 12 (reduction)``."""
        extra = [] if self.iter_type == IterType.iteration else [str(self.iter_type)]
        if self.parallel_type != ParallelType.serial:
            extra.append(str(self.parallel_type))
        if self.clustered:
            extra.append("clustered")
        return f"extent {fmt_extent(self.extent)}" + (f" ({', '.join(extra)})" if extra else "")

    def verify(self) -> None:
        if self.extent < DYN:
            raise VerifyException(f"!iterdomain.id: extent {self.extent} is negative")
        if self.iter_type_attr.data not in IterType.__members__:
            raise VerifyException(
                f"!iterdomain.id: unknown iter type '{self.iter_type_attr.data}' "
                f"(expected one of {', '.join(IterType.__members__)})"
            )
        if self.parallel_type_attr.data not in ParallelType.__members__:
            raise VerifyException(
                f"!iterdomain.id: unknown parallel type '{self.parallel_type_attr.data}' "
                f"(expected one of {', '.join(ParallelType.__members__)})"
            )
        if self.clustered_attr.data not in (0, 1):
            raise VerifyException(f"!iterdomain.id: clustered is 0 or 1, got {self.clustered_attr.data}")
        if self.clustered:
            if self.parallel_type not in GRID_TYPES:
                raise VerifyException(
                    f"!iterdomain.id: only a block id (BIDx, BIDy, BIDz) is clustered, not {self.parallel_type}"
                )
            if not 1 <= self.extent <= MAX_CLUSTER_SIZE:
                raise VerifyException(
                    f"!iterdomain.id: a clustered id has a static extent of 1 to {MAX_CLUSTER_SIZE} "
                    f"(the blocks of one cluster), got {fmt_extent(self.extent)}"
                )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(fmt_extent(self.extent))
            if self.iter_type_attr.data != IterType.iteration:
                printer.print_string(f", {self.iter_type_attr.data}")
            if self.parallel_type_attr.data != ParallelType.serial:
                printer.print_string(f", {self.parallel_type_attr.data}")
            if self.clustered_attr.data:
                printer.print_string(", clustered")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        words = (*IterType.__members__, *ParallelType.__members__, "clustered")
        with parser.in_angle_brackets():
            if parser.parse_optional_punctuation("?") is not None:
                extent = DYN
            else:
                extent = parser.parse_integer(allow_negative=False, allow_boolean=False)
            iter_type, ptype = str(IterType.iteration), str(ParallelType.serial)
            seen_iter = seen_par = clustered = False
            while parser.parse_optional_punctuation(",") is not None:
                word = parser.parse_keyword_in(words)
                if clustered:  # nothing follows ``clustered``
                    pass
                elif word in IterType.__members__ and not seen_iter and not seen_par:
                    iter_type, seen_iter = word, True
                    continue
                elif word in ParallelType.__members__ and not seen_par:
                    ptype, seen_par = word, True
                    continue
                elif word == "clustered" and seen_par:
                    clustered = True
                    continue
                parser.raise_error(
                        f"!iterdomain.id: unexpected '{word}' (syntax: "
                        "<EXTENT[, ITER_TYPE][, PARALLEL_TYPE[, clustered]]>)"
                )
        return [IntAttr(extent), StringAttr(iter_type), StringAttr(ptype), IntAttr(int(clustered))]


_ITER_TYPES: dict[str, IterType] = {str(t): t for t in IterType}
_PARALLEL_TYPES: dict[str, ParallelType] = {str(t): t for t in ParallelType}
_ID_TYPES: dict[tuple[int, str, str, bool], IterDomainType] = {}


def id_type(
    extent: int,
    iter_type: IterType = IterType.iteration,
    parallel_type: ParallelType = ParallelType.serial,
    clustered: bool = False,
) -> IterDomainType:
    """``IterDomainType(extent, iter_type, parallel_type, clustered)``, one instance per
    distinct type (attributes are immutable; building one takes four attributes and
    their verification, and schedules and verifiers build the same few types over and
    over)."""
    key = (extent, str(iter_type), str(parallel_type), clustered)
    t = _ID_TYPES.get(key)
    if t is None:
        if len(_ID_TYPES) > 4096:
            _ID_TYPES.clear()
        t = _ID_TYPES[key] = IterDomainType(extent, iter_type, parallel_type, clustered)
    return t


def _id_type(op: Operation, v: SSAValue, what: str) -> IterDomainType:
    if not isinstance(v.type, IterDomainType):
        raise VerifyException(f"{op.name}: {what} has type {v.type}, expected an !iterdomain.id")
    return v.type


def _tensor_type(op: Operation, v: SSAValue) -> TensorType:
    if not isinstance(v.type, TensorType):
        raise VerifyException(
            f"{op.name}: tensor operand has type {v.type}, expected a !fuser.tensor"
        )
    return v.type


# =====================================================================================
# Logical and root domains
# =====================================================================================


def _reduction_of(tensor: SSAValue) -> tuple[TensorType, list[int], bool] | None:
    """(input type, reduced dims, keepdim) when ``tensor`` is a reduction result."""
    op = tensor.owner
    if not isinstance(op, (*REDUCTION_OP_CLASSES.values(), VarOp, VarMeanOp, WelfordOp)):
        return None
    in_t = op.input.type
    if not isinstance(in_t, TensorType):
        return None
    dims = sorted({normalize_dim(d, in_t.rank) for d in op.dims.get_values()})
    keepdim = bool(getattr(op, "keepdim", None) and op.keepdim.value.data)
    return in_t, dims, keepdim


def _axis_type(extent: int) -> IterDomainType:
    return id_type(extent, IterType.broadcast if extent == 1 else IterType.iteration)


def logical_domain_types(tensor: SSAValue) -> list[IterDomainType]:
    """The logical domain of a fuser tensor value: one id per axis, with the axes
    reduced by the producing reduction (which the tensor type drops unless keepdim)
    as ``reduction`` ids of the input's extent, and extent-1 axes ``broadcast``."""
    t = tensor.type
    assert isinstance(t, TensorType)
    red = _reduction_of(tensor)
    if red is None:
        return [_axis_type(d) for d in t.get_shape()]
    in_t, dims, _ = red
    return [
        id_type(d, IterType.reduction) if i in dims else _axis_type(d)
        for i, d in enumerate(in_t.get_shape())
    ]


def logical_to_tensor_axes(tensor: SSAValue) -> list[int | None]:
    """For each logical id of ``tensor``, the tensor axis it indexes (``None`` for a
    reduction id that the tensor type drops)."""
    t = tensor.type
    assert isinstance(t, TensorType)
    red = _reduction_of(tensor)
    if red is None:
        return list(range(t.rank))
    in_t, dims, keepdim = red
    if keepdim:
        return list(range(in_t.rank))
    out: list[int | None] = []
    k = 0
    for i in range(in_t.rank):
        if i in dims:
            out.append(None)
        else:
            out.append(k)
            k += 1
    return out


def _check_domain_types(
    op: Operation, got: Sequence[Attribute], expected: Sequence[IterDomainType], what: str
) -> None:
    if len(got) != len(expected):
        raise VerifyException(
            f"{op.name}: the {what} of the tensor has {len(expected)} ids, but the op declares {len(got)}"
        )
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if not isinstance(g, IterDomainType):
            raise VerifyException(
                f"{op.name}: result #{i} has type {g}, expected an !iterdomain.id"
            )
        if g.extent != e.extent:
            raise VerifyException(
                f"{op.name}: result #{i} declares extent {fmt_extent(g.extent)}, but axis {i} "
                f"of the {what} has extent {fmt_extent(e.extent)}"
            )
        ok = g.iter_type == e.iter_type or (
            g.extent == DYN
            and {g.iter_type, e.iter_type} == {IterType.iteration, IterType.symbolic}
        )
        if not ok:
            raise VerifyException(
                f"{op.name}: result #{i} is {g.iter_type}, but axis {i} of the {what} is {e.iter_type}"
            )
        if g.parallel_type != ParallelType.serial:
            raise VerifyException(
                f"{op.name}: result #{i} is parallelized ({g.parallel_type}); {what} ids are serial"
            )


class _DomainOp(IRDLOperation):
    """``%ids... = iterdomain.<op> %tensor : T -> ids...``"""

    tensor = operand_def(TensorType)
    ids = var_result_def(IterDomainType)

    def __init__(self, tensor: SSAValue, types: Sequence[IterDomainType] | None = None) -> None:
        super().__init__(
            operands=[tensor], result_types=[list(types or self.expected_types(tensor))]
        )

    @classmethod
    def expected_types(cls, tensor: SSAValue) -> list[IterDomainType]:  # pragma: no cover
        raise NotImplementedError

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.tensor)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)
        printer.print_string(" -> ")
        printer.print_list(self.ids.types, printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> _DomainOp:
        unresolved = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        op = cls.create(
            operands=[parser.resolve_operand(unresolved, t)], result_types=types, attributes=attrs
        )
        return op


@irdl_op_definition
class LogicalOp(_DomainOp):
    """The logical domain of a tensor value: one id per axis (with the producing
    reduction's reduced axes as ``reduction`` ids)::

        %i0, %r1 = iterdomain.logical %s : !fuser.tensor<8xf32> -> !iterdomain.id<8>, !iterdomain.id<16, reduction>
    """

    name = "iterdomain.logical"
    traits = traits_def(Pure())

    @classmethod
    def expected_types(cls, tensor: SSAValue) -> list[IterDomainType]:
        return logical_domain_types(tensor)

    def verify_(self) -> None:
        _tensor_type(self, self.tensor)
        _check_domain_types(
            self, self.ids.types, logical_domain_types(self.tensor), "logical domain"
        )
        _at_most_one_use(self, LogicalOp)


@irdl_op_definition
class RootOp(_DomainOp):
    """The root domain of a ``fuser.reshape`` result: one id per axis of the
    reshape's input, to be split and merged into the result's axes and declared by
    ``iterdomain.rfactor``::

        %r0, %r1 = iterdomain.root %v : !fuser.tensor<80xf32> -> !iterdomain.id<8>, !iterdomain.id<10>
    """

    name = "iterdomain.root"
    traits = traits_def(Pure())

    @classmethod
    def expected_types(cls, tensor: SSAValue) -> list[IterDomainType]:
        op = tensor.owner
        assert isinstance(op, ReshapeOp) and isinstance(op.input.type, TensorType)
        return [_axis_type(d) for d in op.input.type.get_shape()]

    def verify_(self) -> None:
        _tensor_type(self, self.tensor)
        if not isinstance(self.tensor.owner, ReshapeOp) or not isinstance(
            self.tensor.owner.input.type, TensorType
        ):
            raise VerifyException(
                f"{self.name}: the tensor operand is not the result of a fuser.reshape; only "
                "a reshape's result has a root domain distinct from its logical domain"
            )
        _check_domain_types(self, self.ids.types, self.expected_types(self.tensor), "root domain")
        _at_most_one_use(self, RootOp)


def users_of(tensor: SSAValue, kind: type[_OpT]) -> list[_OpT]:
    """The ops of class ``kind`` in the IR (not detached) that use ``tensor``."""
    return [
        u.operation
        for u in tensor.uses
        if isinstance(u.operation, kind) and u.operation.parent is not None
    ]


def _at_most_one_use(op: Operation, kind: type[Operation]) -> None:
    n = len(users_of(op.operands[0], kind))
    if n > 1:
        raise VerifyException(
            f"{op.name}: the tensor operand has {n} {kind.name} ops, expected one"
        )


# =====================================================================================
# Transforms
# =====================================================================================


def _serial_input(op: Operation, t: IterDomainType, what: str) -> None:
    if t.parallel_type != ParallelType.serial:
        raise VerifyException(
            f"{op.name}: {what} is parallelized ({t.parallel_type}); transform ids first and "
            "parallelize the loop ids last"
        )


def _check_result(
    op: Operation, got: Attribute, expected: IterDomainType, what: str, detail: str
) -> None:
    if not isinstance(got, IterDomainType):
        raise VerifyException(f"{op.name}: {what} has type {got}, expected an !iterdomain.id")
    if got.extent != expected.extent:
        raise VerifyException(
            f"{op.name}: {what} declares extent {fmt_extent(got.extent)}, but {detail} gives "
            f"{fmt_extent(expected.extent)}"
        )
    if got.iter_type != expected.iter_type:
        raise VerifyException(
            f"{op.name}: {what} is {got.iter_type}, expected {expected.iter_type}"
        )
    if got.parallel_type != expected.parallel_type:
        raise VerifyException(
            f"{op.name}: {what} is {got.parallel_type}, expected {expected.parallel_type}"
        )
    if got.clustered != expected.clustered:
        raise VerifyException(
            f"{op.name}: {what} is {'' if got.clustered else 'not '}clustered, expected "
            f"{'' if expected.clustered else 'not '}clustered"
        )


def split_types(
    t: IterDomainType, factor: int, inner_split: bool = True
) -> tuple[IterDomainType, IterDomainType]:
    """Outer and inner ids of splitting ``t`` by ``factor`` (the inner extent when
    ``inner_split``, else the outer extent; the other one is ``ceilDiv(extent, factor)``)."""
    rest = ceil_div(t.extent, factor)
    outer, inner = (rest, factor) if inner_split else (factor, rest)
    return id_type(outer, t.iter_type), id_type(inner, t.iter_type)


@irdl_op_definition
class SplitOp(IRDLOperation):
    """Split an id by a static factor into ``(outer, inner)``::

        %o, %i = iterdomain.split %x by 5 : !iterdomain.id<12> -> !iterdomain.id<3>, !iterdomain.id<5>
        %o, %i = iterdomain.split %x by 5 {inner_split = false} : !iterdomain.id<12> -> !iterdomain.id<5>, !iterdomain.id<3>

    With ``inner_split`` (the default) the factor is the inner extent, otherwise the
    outer one; the other extent is ``ceilDiv(extent, factor)``, and the input index is
    ``outer * inner_extent + inner`` (indices past the extent are predicated off).
    """

    name = "iterdomain.split"
    input = operand_def(IterDomainType)
    factor = prop_def(IntegerAttr)
    inner_split = opt_prop_def(BoolAttr)
    outer = result_def(IterDomainType)
    inner = result_def(IterDomainType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, factor: int, inner_split: bool = True) -> None:
        t = input.type
        assert isinstance(t, IterDomainType)
        props: dict[str, Attribute] = {"factor": IntegerAttr(factor, i64)}
        if not inner_split:
            props["inner_split"] = IntegerAttr(0, IntegerType(1))
        # One operand, two results, properties only: Operation's own constructor, as
        # ``create`` builds it (IRDL's argument matching cost a third of
        # schedule-fusions on a 10,000-op fusion, which splits every tensor's ids).
        Operation.__init__(self, operands=[input], properties=props, result_types=list(split_types(t, factor, inner_split)))

    @property
    def factor_value(self) -> int:
        return self.factor.value.data

    @property
    def is_inner_split(self) -> bool:
        return True if self.inner_split is None else bool(self.inner_split.value.data)

    def verify_(self) -> None:
        t = _id_type(self, self.input, "input")
        _serial_input(self, t, "input")
        f = self.factor_value
        if f <= 0:
            raise VerifyException(f"{self.name}: factor {f} must be positive")
        o, i = split_types(t, f, self.is_inner_split)
        detail = (
            f"splitting extent {fmt_extent(t.extent)} by {f} "
            f"(inner_split = {str(self.is_inner_split).lower()})"
        )
        got_o, got_i = self.outer.type, self.inner.type
        if (
            isinstance(got_o, IterDomainType)
            and isinstance(got_i, IterDomainType)
            and ((got_o.extent, got_i.extent) != (o.extent, i.extent))
        ):
            raise VerifyException(
                f"{self.name}: {detail} gives outer {fmt_extent(o.extent)} and inner "
                f"{fmt_extent(i.extent)}, but the results declare outer "
                f"{fmt_extent(got_o.extent)} and inner {fmt_extent(got_i.extent)}"
            )
        _check_result(self, got_o, o, "outer result", detail)
        _check_result(self, got_i, i, "inner result", detail)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" by {self.factor_value}")
        attrs = dict(self.attributes)
        if not self.is_inner_split:
            attrs["inner_split"] = BoolAttr.from_bool(False)
        printer.print_op_attributes(attrs)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_list([self.outer.type, self.inner.type], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> SplitOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_keyword("by")
        factor = parser.parse_integer(allow_boolean=False)
        attrs = parser.parse_optional_attr_dict()
        props: dict[str, Attribute] = {"factor": IntegerAttr(factor, i64)}
        if "inner_split" in attrs:
            flag = attrs.pop("inner_split")
            if not isinstance(flag, IntegerAttr) or flag.type != IntegerType(1):
                parser.raise_error("iterdomain.split: inner_split must be true or false")
            if not flag.value.data:
                props["inner_split"] = flag
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        outer = parser.parse_type()
        parser.parse_punctuation(",")
        inner = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(unresolved, t)],
            result_types=[outer, inner],
            properties=props,
            attributes=attrs,
        )


def merge_iter_type(a: IterType, b: IterType) -> IterType | None:
    """The iter type of merging ids of types ``a`` and ``b`` (None: not allowed)."""
    if a == IterType.broadcast:
        return b
    if b == IterType.broadcast:
        return a
    if (a == IterType.reduction) != (b == IterType.reduction):
        return None
    if IterType.symbolic in (a, b):
        return IterType.symbolic
    return a


def merge_type(a: IterDomainType, b: IterDomainType) -> IterDomainType | None:
    extent = DYN if DYN in (a.extent, b.extent) else a.extent * b.extent
    it = merge_iter_type(a.iter_type, b.iter_type)
    return None if it is None else id_type(extent, it)


@irdl_op_definition
class MergeOp(IRDLOperation):
    """Merge two ids (``outer`` major) into one of the product extent::

        %m = iterdomain.merge %a, %b : !iterdomain.id<8>, !iterdomain.id<3> -> !iterdomain.id<24>

    A broadcast id merges into anything; reduction ids merge only with reduction (or
    broadcast) ids. The inputs' indices are ``m / extent(inner)`` and ``m % extent(inner)``.
    """

    name = "iterdomain.merge"
    outer = operand_def(IterDomainType)
    inner = operand_def(IterDomainType)
    result = result_def(IterDomainType)
    traits = traits_def(Pure())

    def __init__(self, outer: SSAValue, inner: SSAValue) -> None:
        a, b = outer.type, inner.type
        assert isinstance(a, IterDomainType) and isinstance(b, IterDomainType)
        t = merge_type(a, b)
        if t is None:
            raise ValueError(f"cannot merge a {a.iter_type} id with a {b.iter_type} id")
        super().__init__(operands=[outer, inner], result_types=[t])

    def verify_(self) -> None:
        a = _id_type(self, self.outer, "outer operand")
        b = _id_type(self, self.inner, "inner operand")
        _serial_input(self, a, "outer operand")
        _serial_input(self, b, "inner operand")
        t = merge_type(a, b)
        if t is None:
            raise VerifyException(
                f"{self.name}: cannot merge the outer operand ({a.iter_type}) with the inner "
                f"operand ({b.iter_type}); reduction ids merge only with reduction or "
                "broadcast ids"
            )
        _check_result(
            self,
            self.result.type,
            t,
            "result",
            f"merging extents {fmt_extent(a.extent)} and {fmt_extent(b.extent)}",
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([self.outer, self.inner], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([self.outer.type, self.inner.type], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> MergeOp:
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ta = parser.parse_type()
        parser.parse_punctuation(",")
        tb = parser.parse_type()
        parser.parse_punctuation("->")
        r = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(a, ta), parser.resolve_operand(b, tb)],
            result_types=[r],
            attributes=attrs,
        )


def _print_id_transform(printer: Printer, op: Operation, middle: str) -> None:
    """``%x <middle> attr-dict : T -> T'`` of a one-id transform (resize, align)."""
    printer.print_string(" ")
    printer.print_operand(op.operands[0])
    printer.print_string(f" {middle}")
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(op.operands[0].type)
    printer.print_string(" -> ")
    printer.print_attribute(op.results[0].type)


def _parse_id_transform(
    cls: type[_OpT], parser: Parser, keywords: Sequence[str], names: Sequence[str] | None = None
) -> _OpT:
    """``_print_id_transform``'s syntax: each keyword followed by an integer, stored
    as the property ``names`` (default: the keywords)."""
    x = parser.parse_unresolved_operand()
    props: dict[str, Attribute] = {}
    for kw, name in zip(keywords, names or keywords, strict=True):
        parser.parse_keyword(kw)
        props[name] = IntegerAttr(parser.parse_integer(allow_boolean=False), i64)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    t = parser.parse_type()
    parser.parse_punctuation("->")
    r = parser.parse_type()
    return cls.create(operands=[parser.resolve_operand(x, t)], result_types=[r], properties=props, attributes=attrs)


def resize_type(t: IterDomainType, left: int, right: int) -> IterDomainType:
    extent = DYN if t.extent == DYN else t.extent + left + right
    it = t.iter_type
    if it == IterType.broadcast and extent != 1:
        it = IterType.iteration
    return id_type(extent, it)


@irdl_op_definition
class ResizeOp(IRDLOperation):
    """Grow (pad, positive) or shrink (slice, negative) an id on both sides::

        %r = iterdomain.resize %x left 2 right -3 : !iterdomain.id<10> -> !iterdomain.id<9>

    The input index is ``index - left``; it is out of bounds in the padding.
    """

    name = "iterdomain.resize"
    input = operand_def(IterDomainType)
    left = prop_def(IntegerAttr)
    right = prop_def(IntegerAttr)
    result = result_def(IterDomainType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, left: int, right: int) -> None:
        t = input.type
        assert isinstance(t, IterDomainType)
        super().__init__(
            operands=[input],
            properties={"left": IntegerAttr(left, i64), "right": IntegerAttr(right, i64)},
            result_types=[resize_type(t, left, right)],
        )

    @property
    def left_value(self) -> int:
        return self.left.value.data

    @property
    def right_value(self) -> int:
        return self.right.value.data

    def verify_(self) -> None:
        t = _id_type(self, self.input, "input")
        _serial_input(self, t, "input")
        if t.iter_type == IterType.reduction:
            raise VerifyException(f"{self.name}: cannot resize a reduction id")
        left, right = self.left_value, self.right_value
        r = resize_type(t, left, right)
        if r.extent < DYN or (t.extent != DYN and r.extent < 0):
            raise VerifyException(
                f"{self.name}: resizing extent {t.extent} by left {left} and right {right} "
                f"gives a negative extent {t.extent + left + right}"
            )
        _check_result(
            self,
            self.result.type,
            r,
            "result",
            f"resizing extent {fmt_extent(t.extent)} by left {left} and right {right}",
        )

    def print(self, printer: Printer) -> None:
        _print_id_transform(printer, self, f"left {self.left_value} right {self.right_value}")

    @classmethod
    def parse(cls, parser: Parser) -> ResizeOp:
        return _parse_id_transform(cls, parser, ("left", "right"))


@irdl_op_definition
class ReverseOp(IRDLOperation):
    """Walk an id backwards: loop index ``i`` is input index ``extent - 1 - i``::

        %r = iterdomain.reverse %x : !iterdomain.id<8192> -> !iterdomain.id<8192>

    The same elements in the opposite order: a schedule whose blocks should start
    with what an earlier kernel read last (still in L2) reverses the id bound to the
    block index (the outer normalization's apply kernel). The input must be serial
    (reverse before parallelizing); the result has the input's type.
    """

    name = "iterdomain.reverse"
    input = operand_def(IterDomainType)
    result = result_def(IterDomainType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue) -> None:
        t = input.type
        assert isinstance(t, IterDomainType)
        super().__init__(operands=[input], result_types=[t])

    def verify_(self) -> None:
        t = _id_type(self, self.input, "input")
        _serial_input(self, t, "input")
        r = self.result.type
        if r != t:
            raise VerifyException(f"{self.name}: result has type {r}, expected the input's type {t}")


ALIGN_FACTORS = (2, 4, 8, 16)
"""The factors ``iterdomain.align`` takes: element counts of a vector."""


def align_type(t: IterDomainType, factor: int) -> IterDomainType:
    """The result type of ``iterdomain.align`` of ``t`` by ``factor``: ``factor - 1``
    more places, the input's iter type."""
    return id_type(DYN if t.extent == DYN else t.extent + factor - 1, t.iter_type)


@irdl_op_definition
class AlignOp(IRDLOperation):
    """Shift the innermost logical id of a tensor so that each row's places start at
    a multiple of ``factor`` in the tensor's row-major order::

        %a = iterdomain.align %col by 8 : !iterdomain.id<3001> -> !iterdomain.id<3008>

    For a tensor ``[rows, 3001]`` the element ``(r, c)`` is at row-major position
    ``r * 3001 + c``; place ``p`` of the result is column ``p - (r * 3001) % 8`` of row
    ``r``, so places ``8k .. 8k+7`` are the row-major positions of one aligned group
    of 8 (``factor - 1`` places more than the extent: every row is covered whatever
    its shift). Places outside ``[0, extent)`` are predicated off. A split of the
    result by ``factor`` then walks aligned groups: in a contiguous tensor with a
    16-byte aligned pointer they are 16-byte vectors of bfloat16 (a vectorized body
    whose edges are predicated), where the plain split's lanes straddle two vectors
    when the width is not a multiple of 8.

    The input must be the innermost logical id (``iterdomain.logical``'s last result)
    and serial; ``factor`` is 2, 4, 8 or 16. The shift depends on the other logical
    ids' indices, so a loop domain with an ``align`` does not reshape (no rfactor)."""

    name = "iterdomain.align"
    input = operand_def(IterDomainType)
    factor = prop_def(IntegerAttr)
    result = result_def(IterDomainType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, factor: int) -> None:
        t = input.type
        assert isinstance(t, IterDomainType)
        super().__init__(
            operands=[input], properties={"factor": IntegerAttr(factor, i64)}, result_types=[align_type(t, factor)]
        )

    @property
    def factor_value(self) -> int:
        return self.factor.value.data

    def verify_(self) -> None:
        t = _id_type(self, self.input, "input")
        _serial_input(self, t, "input")
        f = self.factor_value
        if f not in ALIGN_FACTORS:
            raise VerifyException(f"{self.name}: factor {f} is not one of {', '.join(map(str, ALIGN_FACTORS))}")
        owner = self.input.owner
        if not isinstance(owner, LogicalOp) or self.input is not owner.ids[-1]:
            raise VerifyException(
                f"{self.name}: the input must be the innermost id of an iterdomain.logical (the shift is a "
                "row-major position of the tensor's logical index)"
            )
        _check_result(self, self.result.type, align_type(t, f), "result", f"aligning extent {fmt_extent(t.extent)} by {f}")

    def print(self, printer: Printer) -> None:
        _print_id_transform(printer, self, f"by {self.factor_value}")

    @classmethod
    def parse(cls, parser: Parser) -> AlignOp:
        return _parse_id_transform(cls, parser, ("by",), ("factor",))


@irdl_op_definition
class ParallelizeOp(IRDLOperation):
    """Bind an id to a parallel dimension; the result is the same id, parallelized::

    %tx = iterdomain.parallelize %x to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>

    ``clustered`` (block ids only) makes the blocks along the id one thread-block
    cluster (Hopper): ``%c = iterdomain.parallelize %r to BIDy clustered :
    !iterdomain.id<8, reduction> -> !iterdomain.id<8, reduction, BIDy, clustered>``;
    a reduction over it combines the blocks' partial results in the kernel.
    """

    name = "iterdomain.parallelize"
    input = operand_def(IterDomainType)
    parallel_type = prop_def(StringAttr)
    clustered = opt_prop_def(UnitAttr)
    result = result_def(IterDomainType)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, ptype: ParallelType | str, clustered: bool = False) -> None:
        t = input.type
        assert isinstance(t, IterDomainType)
        ptype = ParallelType(ptype)
        props: dict[str, Attribute] = {"parallel_type": _PTYPE_ATTRS[ptype]}
        if clustered:
            props["clustered"] = UnitAttr()
        # As SplitOp: Operation's own constructor (one operand, one result).
        Operation.__init__(
            self, operands=[input], properties=props,
            result_types=[t.with_parallel_type(ptype, clustered)],
        )

    @property
    def is_clustered(self) -> bool:
        return self.clustered is not None

    def verify_(self) -> None:
        t = _id_type(self, self.input, "input")
        p = self.parallel_type.data
        if p not in ParallelType.__members__:
            raise VerifyException(
                f"{self.name}: unknown parallel type '{p}' (expected one of "
                f"{', '.join(ParallelType.__members__)})"
            )
        if p == ParallelType.DIDx:
            raise VerifyException(
                f"{self.name}: DIDx is a device axis, not a kernel loop; shard the tensor "
                "with iterdomain.shard"
            )
        if self.is_clustered and (p not in GRID_TYPES or not 1 <= t.extent <= MAX_CLUSTER_SIZE):
            raise VerifyException(
                f"{self.name}: a cluster is made of block ids (BIDx, BIDy, BIDz) of a static extent of 1 "
                f"to {MAX_CLUSTER_SIZE}; the input has {t.describe()} and the type is {p}"
            )
        _serial_input(self, t, "input")
        _check_result(
            self,
            self.result.type,
            t.with_parallel_type(ParallelType(p), self.is_clustered),
            "result",
            "the input",
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(f" to {self.parallel_type.data}")
        if self.is_clustered:
            printer.print_string(" clustered")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ParallelizeOp:
        x = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        p = parser.parse_keyword_in(tuple(ParallelType.__members__))
        props: dict[str, Attribute] = {"parallel_type": StringAttr(p)}
        if parser.parse_optional_keyword("clustered") is not None:
            props["clustered"] = UnitAttr()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        r = parser.parse_type()
        return cls.create(
            operands=[parser.resolve_operand(x, t)],
            result_types=[r],
            properties=props,
            attributes=attrs,
        )


TRANSFORM_OPS: tuple[type[Operation], ...] = (SplitOp, MergeOp, ResizeOp, ReverseOp, AlignOp, ParallelizeOp)


# =====================================================================================
# Domain declarations
# =====================================================================================


def trace_domain(
    op: Operation, sources: Sequence[SSAValue], targets: Sequence[SSAValue], source_what: str
) -> list[Operation]:
    """Check that ``targets`` are derived from ``sources`` by transforms that consume
    every id on the way exactly once; return the transform ops in program order.

    Raises VerifyException naming ``op`` and the offending id.
    """
    source_set = set(sources)
    visited: dict[Operation, None] = {}
    for k, target in enumerate(targets):
        stack = [target]
        while stack:
            v = stack.pop()
            if v in source_set:
                continue
            owner = v.owner
            if not isinstance(owner, TRANSFORM_OPS):
                what = "it" if v is target else f"{v.type} on its way"
                raise VerifyException(
                    f"{op.name}: id #{k} ({target.type}) is not derived from the {source_what} "
                    f"of the tensor operand: {what} is not the result of a split, merge, resize "
                    "or parallelize of it"
                )
            if owner not in visited:
                visited[owner] = None
                stack.extend(owner.operands)
    consumers: list[SSAValue] = list(targets)
    for t in visited:
        consumers.extend(t.operands)
    for i, s in enumerate(sources):
        n = consumers.count(s)
        if n != 1:
            problem = "is not used" if n == 0 else f"is used {n} times"
            raise VerifyException(
                f"{op.name}: id #{i} of the {source_what} ({s.type}) {problem} on the way to "
                "the declared ids; every id must be consumed exactly once"
            )
    for t in visited:
        for j, r in enumerate(t.results):
            n = consumers.count(r)
            if n != 1:
                problem = "is dropped" if n == 0 else f"is used {n} times"
                raise VerifyException(
                    f"{op.name}: result #{j} ({r.type}) of an {t.name} {problem}; every id on "
                    "the way to the declared ids must be consumed exactly once"
                )
    return _in_block_order(op, list(visited))


def _in_block_order(op: Operation, ops: list[Operation]) -> list[Operation]:
    """``ops`` in the order of ``op``'s block (those outside it first, in their given
    order). They are defined before ``op``, usually just before it: walk back from
    ``op`` until every one is found, instead of indexing the whole block per op."""
    block = op.parent_block()
    if block is None:
        return ops
    wanted = {o for o in ops if o.parent is block}
    position: dict[Operation, int] = {}
    cur = op.prev_op
    distance = 0
    while cur is not None and len(position) < len(wanted):
        distance += 1
        if cur in wanted:
            position[cur] = -distance
        cur = cur.prev_op
    if len(position) < len(wanted):  # one after ``op`` (not dominating): index them all
        index = {o: i for i, o in enumerate(block.ops)}
        return sorted(ops, key=lambda o: index[o] if o.parent is block else -1)
    outside = [o for o in ops if o.parent is not block]
    return outside + sorted(position, key=position.__getitem__)


def domain_of(tensor: SSAValue) -> tuple[list[SSAValue], list[SSAValue]]:
    """(root ids, logical ids) of a tensor as declared in the IR. Root ids are empty
    unless the tensor is a reshape result with ``iterdomain.rfactor``."""
    rf = users_of(tensor, RfactorOp)
    if rf:
        roots = users_of(tensor, RootOp)
        return (list(roots[0].ids) if roots else [], list(rf[0].ids))
    logical = users_of(tensor, LogicalOp)
    return ([], list(logical[0].ids)) if logical else ([], [])


class _DeclareOp(IRDLOperation):
    """``iterdomain.<op> %tensor [%ids...] : T [id types...]``"""

    tensor = operand_def(TensorType)
    ids = var_operand_def(IterDomainType)

    PROPERTY_NAMES: ClassVar[tuple[str, ...]] = ()
    """Properties printed and parsed in the attribute dictionary."""

    def __init__(self, tensor: SSAValue, ids: Sequence[SSAValue]) -> None:
        super().__init__(operands=[tensor, list(ids)])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.tensor)
        printer.print_string(" [")
        printer.print_list(self.ids, printer.print_operand)
        printer.print_string("]")
        printer.print_op_attributes({**self.properties, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)
        printer.print_string(" [")
        printer.print_list(self.ids.types, printer.print_attribute)
        printer.print_string("]")

    @classmethod
    def parse(cls, parser: Parser) -> _DeclareOp:
        t_op = parser.parse_unresolved_operand()
        ids: list[UnresolvedOperand] = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        props = {k: attrs.pop(k) for k in cls.PROPERTY_NAMES if k in attrs}
        parser.parse_punctuation(":")
        t = parser.parse_type()
        types = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_type)
        if len(types) != len(ids):
            parser.raise_error(f"{cls.name}: {len(ids)} ids but {len(types)} id types")
        return cls.create(
            operands=[
                parser.resolve_operand(t_op, t),
                *(parser.resolve_operand(u, ty) for u, ty in zip(ids, types, strict=True)),
            ],
            attributes=attrs,
            properties=props,
        )

    def verify_(self) -> None:
        _tensor_type(self, self.tensor)
        for i, v in enumerate(self.ids):
            _id_type(self, v, f"id #{i}")
        _at_most_one_use(self, type(self))


@irdl_op_definition
class RfactorOp(_DeclareOp):
    """Declare a reshape result's logical domain as transforms of its root domain::

        %r0, %r1 = iterdomain.root %v : !fuser.tensor<2x40xf32> -> !iterdomain.id<2>, !iterdomain.id<40>
        %o, %i = iterdomain.split %r1 by 2 {inner_split = false} : !iterdomain.id<40> -> !iterdomain.id<2>, !iterdomain.id<20>
        iterdomain.rfactor %v [%r0, %o, %i] : !fuser.tensor<2x2x20xf32> [!iterdomain.id<2>, !iterdomain.id<2>, !iterdomain.id<20>]

    The ids must consume the root ids exactly once through splits and merges, have
    the result's extents, and (for static shapes) reshape row-major: splits are exact
    and the merge order keeps the linear index (the verifier checks each id's stride).
    """

    name = "iterdomain.rfactor"

    def verify_(self) -> None:
        super().verify_()
        t = _tensor_type(self, self.tensor)
        roots = users_of(self.tensor, RootOp)
        if not roots:
            raise VerifyException(
                f"{self.name}: the tensor operand has no iterdomain.root to derive its logical "
                "domain from"
            )
        if users_of(self.tensor, LogicalOp):
            raise VerifyException(
                f"{self.name}: the tensor operand also has an iterdomain.logical; its logical "
                "domain is declared either way, not both"
            )
        shape = t.get_shape()
        if len(self.ids) != len(shape):
            raise VerifyException(
                f"{self.name}: {len(self.ids)} ids declared for a tensor of rank {len(shape)}"
            )
        for i, (v, d) in enumerate(zip(self.ids, shape, strict=True)):
            ty = v.type
            assert isinstance(ty, IterDomainType)
            if ty.extent != d:
                raise VerifyException(
                    f"{self.name}: id #{i} has extent {fmt_extent(ty.extent)}, but axis {i} of "
                    f"the tensor has extent {fmt_extent(d)}"
                )
            if ty.parallel_type != ParallelType.serial or ty.iter_type == IterType.reduction:
                raise VerifyException(
                    f"{self.name}: id #{i} ({ty}) must be a serial non-reduction id"
                )
        root_ids = list(roots[0].ids)
        ops = trace_domain(self, root_ids, list(self.ids), "root domain")
        for o in ops:
            if isinstance(o, (ResizeOp, ReverseOp, AlignOp, ParallelizeOp)):
                raise VerifyException(
                    f"{self.name}: a reshape is made of splits and merges, found {o.name}"
                )
        _check_row_major(self, root_ids, list(self.ids), ops)


def _check_row_major(
    op: Operation, roots: list[SSAValue], outs: list[SSAValue], ops: list[Operation]
) -> None:
    """Check that the transforms take row-major root indices to row-major output
    indices, by tracking each id's stride in the linear index."""

    def ext(v: SSAValue) -> int:
        t = v.type
        assert isinstance(t, IterDomainType)
        return t.extent

    extents = [ext(v) for v in roots] + [ext(v) for v in outs]
    if DYN in extents or 0 in extents:
        return  # symbolic or empty: nothing to check statically
    stride: dict[SSAValue, int] = {}
    acc = 1
    for v in reversed(roots):
        stride[v] = acc
        acc *= ext(v)
    for o in ops:
        if isinstance(o, SplitOp):
            e, eo, ei = ext(o.input), ext(o.outer), ext(o.inner)
            if eo * ei != e:
                raise VerifyException(
                    f"{op.name}: the split of extent {e} by {o.factor_value} is not exact "
                    f"({eo} x {ei}); a reshape splits exactly"
                )
            stride[o.inner] = stride[o.input]
            stride[o.outer] = stride[o.input] * ei
        elif isinstance(o, MergeOp):
            ea, eb = ext(o.outer), ext(o.inner)
            sa, sb = stride[o.outer], stride[o.inner]
            if ea != 1 and eb != 1 and sa != sb * eb:
                raise VerifyException(
                    f"{op.name}: the merge of extents {ea} and {eb} does not keep the row-major "
                    f"order (outer stride {sa}, inner stride {sb})"
                )
            stride[o.result] = sb if eb != 1 else sa
    acc = 1
    for i in reversed(range(len(outs))):
        v = outs[i]
        if ext(v) != 1 and stride[v] != acc:
            raise VerifyException(
                f"{op.name}: id #{i} (extent {ext(v)}) has stride {stride[v]} in the input's "
                f"row-major order, but the reshaped tensor needs {acc}"
            )
        acc *= ext(v)


@irdl_op_definition
class LoopOp(_DeclareOp):
    """Declare a tensor's loop domain, outermost first::

        iterdomain.loop %t [%bx, %tx, %v] : !fuser.tensor<1024xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]

    The ids must consume the tensor's logical ids (``iterdomain.logical``, or the
    ``iterdomain.rfactor`` ids of a reshape result) exactly once through transforms.
    Each parallel type other than ``serial`` appears at most once; ``vectorize`` only on
    the innermost id, of a static extent of at most 16 bytes; static thread extents fit
    a CUDA block.

    ``compute_at`` (optional, in ``[0, #ids]``) places the tensor: computed at that loop
    position, in ``memory`` (``registers`` by default, or ``shared``); without it the
    tensor is inlined into its consumers, and a ``memory`` is an error. ``partials``
    (a reduction's serial or unrolled reduction loop positions) rFactors it: one
    partial result per iteration of those loops, combined after the others.
    ``prefetch`` (``"L2"`` or ``"L1"``, on a fusion input placed at a position with a
    serial loop before it) asks each iteration of those loops to prefetch, into that
    cache level, the elements of the tensor the next iteration loads (nvFuser's
    circular-buffer prefetch distance of one iteration, without the buffer).
    """

    name = "iterdomain.loop"

    PROPERTY_NAMES: ClassVar[tuple[str, ...]] = ("compute_at", "memory", "partials", "prefetch")
    compute_at_attr = opt_prop_def(IntegerAttr[IntegerType], prop_name="compute_at")
    memory_attr = opt_prop_def(StringAttr, prop_name="memory")
    partials_attr = opt_prop_def(DenseArrayBase, prop_name="partials")
    prefetch_attr = opt_prop_def(StringAttr, prop_name="prefetch")

    def __init__(
        self,
        tensor: SSAValue,
        ids: Sequence[SSAValue],
        compute_at: int | None = None,
        memory: MemoryType | str | None = None,
    ) -> None:
        super().__init__(tensor, ids)
        if compute_at is not None:
            self.set_compute_at(compute_at, memory)

    def set_compute_at(self, position: int, memory: MemoryType | str | None = None) -> None:
        """Compute the tensor at loop ``position`` (held in ``memory``; registers when
        None)."""
        self.properties["compute_at"] = IntegerAttr(position, i64)
        if memory is not None:
            self.properties["memory"] = StringAttr(str(MemoryType(memory)))

    def set_partials(self, positions: Sequence[int]) -> None:
        """Keep one partial result per iteration of the reduction loops at
        ``positions``, combined after the other reduction loops (nvFuser's rFactor:
        the other loops are the partial reduction, these the final one)."""
        self.properties["partials"] = DenseArrayBase.from_list(i64, list(positions))

    def set_prefetch(self, level: str) -> None:
        """Prefetch the next iteration's elements of this input into cache ``level``
        (``PREFETCH_LEVELS``) at each iteration of the serial loops before its
        ``compute_at`` position."""
        self.properties["prefetch"] = StringAttr(level)

    @property
    def prefetch(self) -> str | None:
        """The cache level the next iteration's elements are prefetched into (None:
        no prefetch)."""
        a = self.prefetch_attr
        return None if a is None else a.data

    @property
    def partials(self) -> tuple[int, ...]:
        a = self.partials_attr
        return () if a is None else tuple(int(x) for x in a.get_values())

    @property
    def compute_at(self) -> int | None:
        """The loop position the tensor is computed at (None: inlined into its
        consumers)."""
        a = self.compute_at_attr
        return None if a is None else a.value.data

    @property
    def memory(self) -> MemoryType:
        a = self.memory_attr
        return MemoryType.registers if a is None else MemoryType(a.data)

    def verify_(self) -> None:
        super().verify_()
        t = _tensor_type(self, self.tensor)
        where = self.tensor.name_hint and f"%{self.tensor.name_hint}" or "the tensor"
        pos = self.compute_at
        if pos is not None and not 0 <= pos <= len(self.ids):
            raise VerifyException(
                f"{self.name}: {where} is computed at loop position {pos}, outside [0, "
                f"{len(self.ids)}] (its loop domain has {len(self.ids)} ids)"
            )
        if self.memory_attr is not None:
            if self.memory_attr.data not in MemoryType.__members__:
                raise VerifyException(
                    f"{self.name}: {where}: unknown memory '{self.memory_attr.data}' (expected "
                    f"one of {', '.join(MemoryType.__members__)})"
                )
            if pos is None:
                raise VerifyException(
                    f"{self.name}: {where} is placed in {self.memory_attr.data} memory but has no "
                    "compute_at position (an inlined tensor lives nowhere)"
                )
        self._verify_prefetch(where)
        partials = self.partials
        if len(set(partials)) != len(partials):
            raise VerifyException(f"{self.name}: {where}: partials {list(partials)} repeat a loop position")
        for k in partials:
            if not 0 <= k < len(self.ids):
                raise VerifyException(
                    f"{self.name}: {where}: partials name loop #{k}, outside the {len(self.ids)} loop ids"
                )
            ty = self.ids[k].type
            assert isinstance(ty, IterDomainType)
            if ty.iter_type != IterType.reduction or ty.parallel_type not in (
                ParallelType.serial, ParallelType.unroll
            ):
                raise VerifyException(
                    f"{self.name}: {where}: partials name loop #{k} ({ty.describe()}), which is not a "
                    "serial or unrolled reduction id (threads keep their partials anyway)"
                )
        _, logical = domain_of(self.tensor)
        if not logical and not (users_of(self.tensor, LogicalOp) or users_of(self.tensor, RfactorOp)):
            raise VerifyException(
                f"{self.name}: the tensor operand has no iterdomain.logical (or iterdomain.rfactor) "
                "to derive its loop domain from"
            )
        trace_domain(self, logical, list(self.ids), "logical domain")
        seen: dict[ParallelType, int] = {}
        types = [v.type for v in self.ids]
        for i, ty in enumerate(types):
            assert isinstance(ty, IterDomainType)
            p = ty.parallel_type
            if p == ParallelType.serial:
                continue
            if p in seen:
                raise VerifyException(
                    f"{self.name}: parallel type {p} is used by id #{seen[p]} and id #{i}; each "
                    "parallel type binds at most one loop id"
                )
            seen[p] = i
            if p == ParallelType.vectorize:
                if i != len(types) - 1:
                    raise VerifyException(
                        f"{self.name}: id #{i} is vectorized but is not the innermost loop id"
                    )
                if ty.extent == DYN:
                    raise VerifyException(
                        f"{self.name}: id #{i} is vectorized but its extent is symbolic"
                    )
                nbytes = ty.extent * t.dtype.itemsize
                if nbytes > MAX_VECTOR_BYTES:
                    raise VerifyException(
                        f"{self.name}: id #{i} vectorizes {ty.extent} x {t.dtype} = {nbytes} "
                        f"bytes, more than {MAX_VECTOR_BYTES}"
                    )
            if p in MAX_THREADS and ty.extent > MAX_THREADS[p]:
                raise VerifyException(
                    f"{self.name}: id #{i} binds {p} to extent {ty.extent}, more than "
                    f"{MAX_THREADS[p]}"
                )
        threads = [
            ty.extent
            for ty in types
            if isinstance(ty, IterDomainType) and ty.parallel_type in THREAD_TYPES
        ]
        if DYN not in threads and prod(threads) > MAX_THREADS_PER_BLOCK:
            raise VerifyException(
                f"{self.name}: the thread extents {threads} make {prod(threads)} threads per "
                f"block, more than {MAX_THREADS_PER_BLOCK}"
            )


    def _verify_prefetch(self, where: str) -> None:
        level = self.prefetch
        if level is None:
            return
        if level not in PREFETCH_LEVELS:
            raise VerifyException(
                f"{self.name}: {where}: unknown prefetch level '{level}' (expected one of "
                f"{', '.join(PREFETCH_LEVELS)})"
            )
        if not isinstance(self.tensor, BlockArgument):
            raise VerifyException(
                f"{self.name}: {where} is prefetched but is not a fusion input (only a tensor read "
                "from global memory has a next iteration to fetch early)"
            )
        pos = self.compute_at
        if pos is None:
            raise VerifyException(
                f"{self.name}: {where} is prefetched but has no compute_at position (the prefetch runs "
                "one iteration ahead of the loops before it)"
            )
        before = [v.type for v in self.ids[:pos]]
        if not any(isinstance(t, IterDomainType) and t.parallel_type == ParallelType.serial for t in before):
            raise VerifyException(
                f"{self.name}: {where} is prefetched but no loop before its compute_at position {pos} is "
                "serial: there is no next iteration to prefetch"
            )


# =====================================================================================
# Device shardings
# =====================================================================================


@irdl_op_definition
class ShardOp(IRDLOperation):
    """``iterdomain.shard %t {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : T``:
    how ``%t`` is distributed over the devices of a mesh (nvFuser's
    ``set_device_mesh`` plus a ``DIDx``-parallelized logical id).

    A user declares the shardings of inputs (and of any tensor whose sharding it
    wants fixed: an output's is what ``execute`` returns); ``propagate-shardings``
    declares every other tensor's. A tensor has at most one. Like the loop ops it
    computes nothing: the reference interpreter ignores it, so a sharded fusion means
    what the same fusion on one device means."""

    name = "iterdomain.shard"

    tensor = operand_def(TensorType)
    sharding = prop_def(ShardingAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$tensor attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue, sharding: ShardingAttr) -> None:
        super().__init__(operands=[tensor], properties={"sharding": sharding})

    def verify_(self) -> None:
        t = _tensor_type(self, self.tensor)
        try:
            self.sharding.local_shape(t.get_shape())
        except ShardingError as e:
            raise VerifyException(f"{self.name}: {e}") from None
        _at_most_one_use(self, ShardOp)


def shardings_of(fusion: Operation) -> dict[SSAValue, ShardingAttr]:
    """The declared sharding of each tensor of ``fusion`` (``iterdomain.shard``)."""
    return {op.tensor: op.sharding for op in fusion.walk() if isinstance(op, ShardOp)}


IterDomain = Dialect(
    "iterdomain",
    [LogicalOp, RootOp, SplitOp, MergeOp, ResizeOp, ReverseOp, AlignOp, ParallelizeOp, LoopOp, RfactorOp, ShardOp],
    [IterDomainType, DeviceMeshAttr, ShardingAttr],
)
