"""The state of a definition: records, the values they define, the IR being built.

Every call on a ``FusionDefinition`` appends one ``Record``: the API call in its
canonical form (the method, positional and keyword arguments, with the values it
defines). Records are the single source of truth: they print as the Python
definition (``printing``), their printed text is the cache key (``cache``), and
replaying them on a fresh definition rebuilds the fusion (used to re-open cached
fusions and to concretize dynamic reshapes with bound sizes).

While recording, the IR is built eagerly in one block: each op's typed constructor
infers its result type, so shapes and dtypes are known at definition time::

    T0 = fd.define_tensor(shape=[-1, 4], ...)   ->  block argument  !fuser.tensor<?x4xf32>
    T2 = fd.ops.add(T0, S1)                     ->  %2 = fuser.add %0, %1 : ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from fuser.frontend.datatype import DataType
from fuser.ir.dialects.fuser import ConstantOp, TensorType, dtype_of
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN

if TYPE_CHECKING:
    from fuser.frontend.fusion_definition import FusionDefinition


@dataclass(frozen=True)
class Record:
    """One canonical API call: ``outputs = fd.<target>(*args, **kwargs)``."""

    target: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    outputs: tuple[State, ...]


class State:
    """A value defined by a record; named ``T3``/``S3``/``V3`` by its index."""

    prefix = "?"

    def __init__(self, fd: FusionDefinition, index: int) -> None:
        self.fd = fd
        self.index = index

    @property
    def name(self) -> str:
        return f"{self.prefix}{self.index}"

    def __repr__(self) -> str:
        return self.name

    __hash__ = object.__hash__


@dataclass
class Elem:
    """An integer entry of a vector (or a size): an SSA value, a known value, or both."""

    value: SSAValue | None
    known: int | None


class Value(State):
    """A tensor or scalar: it has an SSA value and supports Python operators."""

    def __init__(self, fd: FusionDefinition, index: int, value: SSAValue) -> None:
        super().__init__(fd, index)
        self.value = value

    # ---- operators (Python numbers on either side become weak constants) ----------
    def __add__(self, o: Any) -> Any:
        return self.fd.ops.add(self, o)

    def __radd__(self, o: Any) -> Any:
        return self.fd.ops.add(o, self)

    def __sub__(self, o: Any) -> Any:
        return self.fd.ops.sub(self, o)

    def __rsub__(self, o: Any) -> Any:
        return self.fd.ops.sub(o, self)

    def __mul__(self, o: Any) -> Any:
        return self.fd.ops.mul(self, o)

    def __rmul__(self, o: Any) -> Any:
        return self.fd.ops.mul(o, self)

    def __truediv__(self, o: Any) -> Any:
        return self.fd.ops.truediv(self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return self.fd.ops.truediv(o, self)

    def __mod__(self, o: Any) -> Any:
        return self.fd.ops.remainder(self, o)

    def __rmod__(self, o: Any) -> Any:
        return self.fd.ops.remainder(o, self)

    def __pow__(self, o: Any) -> Any:
        return self.fd.ops.pow(self, o)

    def __rpow__(self, o: Any) -> Any:
        return self.fd.ops.pow(o, self)

    def __and__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_and(self, o)

    def __rand__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_and(o, self)

    def __or__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_or(self, o)

    def __ror__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_or(o, self)

    def __xor__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_xor(self, o)

    def __rxor__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_xor(o, self)

    def __lshift__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_left_shift(self, o)

    def __rshift__(self, o: Any) -> Any:
        return self.fd.ops.bitwise_right_shift(self, o)

    def __neg__(self) -> Any:
        return self.fd.ops.neg(self)

    def __abs__(self) -> Any:
        return self.fd.ops.abs(self)

    def __invert__(self) -> Any:
        return self.fd.ops.bitwise_not(self)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return self.fd.ops.eq(self, o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return self.fd.ops.ne(self, o)

    def __lt__(self, o: Any) -> Any:
        return self.fd.ops.lt(self, o)

    def __le__(self, o: Any) -> Any:
        return self.fd.ops.le(self, o)

    def __gt__(self, o: Any) -> Any:
        return self.fd.ops.gt(self, o)

    def __ge__(self, o: Any) -> Any:
        return self.fd.ops.ge(self, o)

    __hash__ = State.__hash__


class Tensor(Value):
    """A tensor value of the definition (nvFuser's ``Tensor``)."""

    prefix = "T"
    #: The allocation order ``fd.ops.stride_order`` gave this tensor (nvFuser's
    #: ``stride_order``: rank of each axis's stride, 0 innermost); ``add_output`` uses
    #: it when it is given none. Values are unchanged: it is a layout request.
    stride_order: tuple[int, ...] | None = None

    @property
    def type(self) -> TensorType:
        t = self.value.type
        assert isinstance(t, TensorType)
        return t

    @property
    def ndim(self) -> int:
        return self.type.rank

    @property
    def dtype(self) -> DataType:
        return DataType.from_dtype(self.type.dtype)

    @property
    def static_shape(self) -> tuple[int, ...]:
        """Extents with ``-1`` for symbolic axes."""
        return self.type.get_shape()

    def shape(self) -> Vector:
        """The extents as a vector (``fd.ops.shape``)."""
        return self.fd.ops.shape(self)

    def size(self, dim: int) -> Scalar:
        return self.fd.ops.size(self, dim)


class Scalar(Value):
    """A scalar value (``S3``); ``known`` is its value when fixed at definition time
    (constants, static extents, inputs bound during concretization)."""

    prefix = "S"

    def __init__(
        self, fd: FusionDefinition, index: int, value: SSAValue, known: Any = None
    ) -> None:
        super().__init__(fd, index, value)
        self.known = known

    @property
    def dtype(self) -> DataType:
        return DataType.from_dtype(dtype_of(self.value.type))


class Vector(State):
    """A vector of integers (``V3``), used as a shape."""

    prefix = "V"

    def __init__(self, fd: FusionDefinition, index: int, elements: Sequence[Elem]) -> None:
        super().__init__(fd, index)
        self.elements = list(elements)

    def __len__(self) -> int:
        return len(self.elements)

    @property
    def size(self) -> int:
        return len(self.elements)

    def __getitem__(self, i: int) -> Scalar:
        return self.fd.ops.at(self, i)

    def __iter__(self):  # noqa: ANN204 - a vector iterates over its scalars
        return (self[i] for i in range(len(self)))


@dataclass
class InputSpec:
    """A fusion input: ``kind`` is tensor, scalar or vector; ``args`` are its block
    argument positions (a vector input has one i64 argument per entry). A cached
    fusion's last spec may be of kind ``rng``: the hidden Philox seed and offset, which
    the caller does not pass (``DefinitionState.rng_spec``)."""

    kind: str
    state: State
    args: list[int]
    type: Attribute | None = None
    length: int = 0

    @property
    def name(self) -> str:
        return self.state.name


@dataclass
class OutputSpec:
    value: SSAValue
    state: State
    alias: int = -1  # block-argument position written in place, or -1
    stride_order: tuple[int, ...] | None = None


@dataclass
class DefinitionState:
    """Everything a definition accumulates; ``bindings`` (input position -> shape or
    value) make a replay produce a concretized fusion."""

    bindings: dict[int, Any] | None = None
    records: list[Record] = field(default_factory=list)
    states: list[State] = field(default_factory=list)
    block: Block = field(default_factory=Block)
    inputs: list[InputSpec] = field(default_factory=list)
    outputs: list[OutputSpec] = field(default_factory=list)
    rng: list[BlockArgument] = field(default_factory=list)
    """The hidden i64 inputs (Philox seed, offset) of the random ops defined without
    ``rng_seed``/``rng_offset``: always the last block arguments, filled per
    execution (``rng_spec``, ``validation.flatten_inputs``)."""
    rng_ops: int = 0
    """How many random ops take their seed and offset from the hidden inputs (the
    ``k``-th uses ``offset + k``, as nvFuser numbers its random ops)."""

    def insert(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def add_arg(self, t: Attribute) -> BlockArgument:
        """A new fusion input, placed before the hidden rng inputs."""
        return self.block.insert_arg(t, len(self.block.args) - len(self.rng))

    def rng_spec(self, fd: FusionDefinition) -> InputSpec | None:
        """The input spec of the hidden rng inputs (kind ``"rng"``, ``length`` = the
        number of random ops using them), or None without any."""
        if not self.rng:
            return None
        return InputSpec("rng", State(fd, -1), [a.index for a in self.rng], None, self.rng_ops)

    def binding(self) -> Any:
        """The bound value of the next input, when concretizing."""
        if self.bindings is None:
            return None
        return self.bindings.get(len(self.inputs))

    def constant(self, value: Any, dtype: DType) -> SSAValue:
        """A ``fuser.constant`` inserted in the block (no record)."""
        return self.insert(ConstantOp(value, dtype)).results[0]

    def elem_value(self, e: Elem) -> SSAValue:
        if e.value is None:
            assert e.known is not None
            e.value = self.constant(e.known, DType.int64)
        return e.value


def extent_of(e: Elem) -> int:
    return DYN if e.known is None else int(e.known)
