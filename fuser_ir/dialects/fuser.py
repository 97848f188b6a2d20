"""The ``fuser`` tensor dialect: fusions of tensor operations.

A fusion is an isolated region. Its block arguments are the inputs (tensors of type
``!fuser.tensor`` or scalars of a builtin type), and ``fuser.output`` lists the outputs::

    fuser.fusion @gelu(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
      %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>, view = #fuser.view<split [64, 128], keep>} : (!fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
      %c = fuser.constant 5.000000e-01 : f64
      %t3 = fuser.mul %t1, %c : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
      ...
      fuser.output %t10 : !fuser.tensor<8192x3072xf32>
    }

Every op infers its result types from its operands and properties (``infer``); the
verifier checks that the declared result types are the inferred ones, so malformed
IR names the op, the operand and the problem. Elementwise ops broadcast like numpy
and promote dtypes like torch (``fuser.ir.dtypes``). Scalars (builtin ``i1``, ``i32``,
``i64``, ``f16``, ``bf16``, ``f32``, ``f64``, ``complex<f32>``, ``complex<f64>``) are weak
in promotion, as Python numbers are in torch.

Complex tensors and scalars (``complex<f32>``/``complex<f64>``, torch's complex64 and
complex128) are accepted by the ops in ``COMPLEX_UNARY_OPS``/``COMPLEX_BINARY_OPS``,
``where``, ``cast``, ``full``, the ``sum``/``prod`` reductions and the ops that only
move data; every other op names the complex operand in its verifier error. ``abs``,
``real`` and ``imag`` of a complex value are real (its component type). A complex
constant prints as ``fuser.constant [3.000000e+00 : f64, 5.000000e-01 : f64] :
complex<f64>`` (real and imaginary part).

The tensor type carries dtype, per-axis extents (``?`` is symbolic) and layout:
``contiguity`` (per axis ``true``/``false``/``none``, ``none`` for broadcast axes,
as nvFuser) and ``stride_order`` (``stride_order[i]`` is the rank of axis ``i``'s
stride, ``rank-1`` for the outermost; absent means row-major). Layout only matters
for fusion inputs and outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BoolAttr,
    ComplexType,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
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
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    ConstantLike,
    HasParent,
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.func_like import FuncLikeOp
from fuser.ir.dialects.sharding import ShardingAttr, ShardingError
from fuser.ir.dtypes import DType, float_result, is_element_type, result_type
from fuser.ir.reshape_analysis import (
    STEP_KINDS,
    ReshapeStep,
    analyze_reshape,
    apply_steps,
)
from fuser.ir.shapes import DYN, ShapeError, broadcast_shapes, fmt_shape, normalize_dim

# =====================================================================================
# Types and attributes
# =====================================================================================

_CONTIG_WORDS = {1: "true", 0: "false", -1: "none"}
INT64_MAX = 2**63 - 1
"""The largest byte offset a tensor may need (kernels index in 64 bits at most)."""


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """``!fuser.tensor<4x?x1xf32>``, optionally with ``, contiguity=[...]`` and
    ``, stride_order=[...]``."""

    name = "fuser.tensor"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    contiguity: ArrayAttr[IntAttr]
    stride_order: ArrayAttr[IntAttr]

    def __init__(
        self,
        shape: Sequence[int],
        element_type: Attribute | DType,
        contiguity: Sequence[bool | None] | None = None,
        stride_order: Sequence[int] | None = None,
    ) -> None:
        if isinstance(element_type, DType):
            element_type = element_type.to_xdsl()
        contig = [] if contiguity is None else [-1 if c is None else int(c) for c in contiguity]
        super().__init__(
            ArrayAttr([IntAttr(d) for d in shape]),
            element_type,
            ArrayAttr([IntAttr(c) for c in contig]),
            ArrayAttr([IntAttr(s) for s in (stride_order or [])]),
        )

    # ---- accessors ----------------------------------------------------------------
    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def dtype(self) -> DType:
        return DType.from_xdsl(self.element_type)

    def get_contiguity(self) -> tuple[bool | None, ...]:
        """Per-axis contiguity; the default is contiguous (``none`` on extent-1 axes)."""
        if not self.contiguity.data:
            return tuple(None if d == 1 else True for d in self.get_shape())
        return tuple(None if c.data == -1 else bool(c.data) for c in self.contiguity.data)

    def get_stride_order(self) -> tuple[int, ...]:
        """``stride_order[i]``: rank of axis ``i``'s stride (row-major by default)."""
        if not self.stride_order.data:
            return tuple(range(self.rank - 1, -1, -1))
        return tuple(s.data for s in self.stride_order.data)

    @property
    def has_default_layout(self) -> bool:
        return self.get_contiguity() == TensorType(
            self.get_shape(), self.element_type
        ).get_contiguity() and (self.get_stride_order() == tuple(range(self.rank - 1, -1, -1)))

    def with_shape(self, shape: Sequence[int]) -> TensorType:
        return TensorType(shape, self.element_type)

    def with_dtype(self, dtype: DType) -> TensorType:
        return TensorType(self.get_shape(), dtype)

    def same_value_type(self, other: Attribute) -> bool:
        """Equal shape and dtype (layout ignored)."""
        return (
            isinstance(other, TensorType)
            and other.get_shape() == self.get_shape()
            and other.element_type == self.element_type
        )

    # ---- verification -------------------------------------------------------------
    def verify(self) -> None:
        for d in self.shape.data:
            if d.data < -1:
                raise VerifyException(f"!fuser.tensor: extent {d.data} is negative")
        if not is_element_type(self.element_type):
            raise VerifyException(
                f"!fuser.tensor: element type {self.element_type} is not one of "
                "i1, i32, i64, f16, bf16, f32, f64, complex<f32>, complex<f64>"
            )
        numel = 1
        for d in self.shape.data:
            numel *= max(d.data, 1)  # a ? extent counts as at least 1
        nbytes = numel * self.dtype.itemsize
        if nbytes > INT64_MAX:
            raise VerifyException(
                f"!fuser.tensor: {list(self.get_shape())} of {self.element_type} is {nbytes} bytes, "
                f"beyond int64 offsets ({INT64_MAX})"
            )
        if self.contiguity.data:
            if len(self.contiguity.data) != self.rank:
                raise VerifyException(
                    f"!fuser.tensor: contiguity has {len(self.contiguity.data)} entries "
                    f"for rank {self.rank}"
                )
            for c in self.contiguity.data:
                if c.data not in (-1, 0, 1):
                    raise VerifyException(
                        "!fuser.tensor: contiguity entries are true, false or none"
                    )
        if self.stride_order.data:
            order = sorted(s.data for s in self.stride_order.data)
            if order != list(range(self.rank)):
                raise VerifyException(
                    f"!fuser.tensor: stride_order {[s.data for s in self.stride_order.data]} "
                    f"is not a permutation of 0..{self.rank - 1}"
                )

    # ---- syntax ---------------------------------------------------------------------
    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            for d in self.get_shape():
                printer.print_string("?" if d == DYN else str(d))
                printer.print_string("x")
            printer.print_attribute(self.element_type)
            if self.contiguity.data:
                printer.print_string(", contiguity=[")
                printer.print_string(", ".join(_CONTIG_WORDS[c.data] for c in self.contiguity.data))
                printer.print_string("]")
            if self.stride_order.data:
                printer.print_string(", stride_order=[")
                printer.print_string(", ".join(str(s.data) for s in self.stride_order.data))
                printer.print_string("]")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            dims = [DYN if d < 0 else d for d in parser.parse_dimension_list()]
            if dims:
                parser.parse_shape_delimiter()
            element_type = parser.parse_type()
            contiguity: list[int] = []
            stride_order: list[int] = []
            while parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_identifier()
                parser.parse_punctuation("=")
                if key == "contiguity":
                    words = parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE,
                        lambda: parser.parse_keyword_in(("true", "false", "none")),
                    )
                    contiguity = [{"true": 1, "false": 0, "none": -1}[w] for w in words]
                elif key == "stride_order":
                    stride_order = parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE, parser.parse_integer
                    )
                else:
                    parser.raise_error(
                        f"unknown !fuser.tensor parameter '{key}' (expected contiguity or stride_order)"
                    )
        return [
            ArrayAttr([IntAttr(d) for d in dims]),
            element_type,
            ArrayAttr([IntAttr(c) for c in contiguity]),
            ArrayAttr([IntAttr(s) for s in stride_order]),
        ]


@irdl_attr_definition
class ViewAttr(ParametrizedAttribute):
    """The keep/merge/split decomposition of a static reshape (seed 003), e.g.
    ``#fuser.view<keep, keep, split [2, 20]>``."""

    name = "fuser.view"

    kinds: ArrayAttr[StringAttr]
    num_inputs: ArrayAttr[IntAttr]
    out_sizes: ArrayAttr[ArrayAttr[IntAttr]]

    def __init__(self, steps: Sequence[ReshapeStep]) -> None:
        # keep and merge produce one axis whose extent follows from the input: it is
        # stored as 0 and resolved against the input shape (``resolved_steps``).
        sizes = [(0,) if s.kind in ("keep", "merge") else s.out_sizes for s in steps]
        super().__init__(
            ArrayAttr([StringAttr(s.kind) for s in steps]),
            ArrayAttr([IntAttr(s.num_inputs) for s in steps]),
            ArrayAttr([ArrayAttr([IntAttr(x) for x in sz]) for sz in sizes]),
        )

    def resolved_steps(self, in_shape: Sequence[int]) -> list[ReshapeStep]:
        """The steps with the extents of keep and merge outputs filled in."""
        return _resolve_view_sizes(in_shape, self.get_steps())

    def get_steps(self) -> list[ReshapeStep]:
        return [
            ReshapeStep(k.data, n.data, tuple(x.data for x in sizes.data))
            for k, n, sizes in zip(
                self.kinds.data, self.num_inputs.data, self.out_sizes.data, strict=True
            )
        ]

    def verify(self) -> None:
        if not len(self.kinds.data) == len(self.num_inputs.data) == len(self.out_sizes.data):
            raise VerifyException("#fuser.view: parameter lists differ in length")
        try:
            self.get_steps()
        except ValueError as e:
            raise VerifyException(f"#fuser.view: {e}") from e

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(", ".join(str(s) for s in self.get_steps()))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        def parse_sizes() -> tuple[int, ...]:
            return tuple(
                parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
            )

        def parse_step() -> ReshapeStep:
            kind = parser.parse_keyword_in(STEP_KINDS)
            try:
                if kind == "keep":
                    return ReshapeStep("keep", 1, (0,))
                if kind == "squeeze":
                    return ReshapeStep("squeeze", 1, ())
                if kind == "broadcast":
                    return ReshapeStep("broadcast", 0, (1,))
                if kind == "merge":
                    return ReshapeStep("merge", parser.parse_integer(), (0,))
                if kind == "split":
                    return ReshapeStep("split", 1, parse_sizes())
                n = parser.parse_integer()
                return ReshapeStep("merge_split", n, parse_sizes())
            except ValueError as e:
                parser.raise_error(str(e))

        with parser.in_angle_brackets():
            steps = parser.parse_comma_separated_list(parser.Delimiter.NONE, parse_step)
        # keep/merge output sizes are filled in by the reshape op's verifier; the
        # attribute stores 0 ("same as the input product") for them.
        attr = ViewAttr(steps)
        return [attr.kinds, attr.num_inputs, attr.out_sizes]


TARGET_FIELDS: tuple[str, ...] = (
    "sm_count",
    "regs_per_sm",
    "max_regs_per_thread",
    "smem_per_block_optin",
    "smem_per_sm",
    "l2_bytes",
    "memory_bandwidth_gbs",
    "max_threads_per_block",
    "warp_size",
    "max_threads_per_sm",
    "max_blocks_per_sm",
)
"""The properties of a GPU that ``#fuser.target`` carries (besides its name and
compute capability), in printed order: ``schedulers.target.GpuTarget``'s fields."""


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The GPU a module is compiled for, as a fact in the IR (``set-target`` attaches
    it to the module as ``fuser.target``; the passes that schedule and lower read it)::

        #fuser.target<"h100", sm_90, sm_count = 132, regs_per_sm = 65536, ...,
                      memory_bandwidth_gbs = 3350.0, ..., max_blocks_per_sm = 32>

    The verifier wants every property of ``TARGET_FIELDS``, once each and in that
    order; all are positive integers except ``memory_bandwidth_gbs`` (GB/s, a positive
    float)."""

    name = "fuser.target"

    gpu: StringAttr
    arch: StringAttr
    keys: ArrayAttr[StringAttr]
    values: ArrayAttr[Attribute]

    def __init__(self, gpu: str, compute_capability: tuple[int, int], values: Sequence[float]) -> None:
        major, minor = compute_capability
        super().__init__(
            StringAttr(gpu),
            StringAttr(f"sm_{major}{minor}"),
            ArrayAttr([StringAttr(f) for f in TARGET_FIELDS]),
            ArrayAttr([_target_value(f, v) for f, v in zip(TARGET_FIELDS, values, strict=True)]),
        )

    @property
    def compute_capability(self) -> tuple[int, int]:
        digits = self.arch.data.removeprefix("sm_")
        return int(digits[:-1]), int(digits[-1])

    def properties(self) -> dict[str, float]:
        """``{property: value}`` in the order written."""
        return {
            k.data: (v.value.data if isinstance(v, FloatAttr) else v.data)  # type: ignore[attr-defined]
            for k, v in zip(self.keys.data, self.values.data, strict=True)
        }

    def verify(self) -> None:
        arch = self.arch.data
        if not (arch.startswith("sm_") and arch[3:].isdigit() and len(arch) >= 5):
            raise VerifyException(f"#fuser.target: compute capability must be sm_XY, got {arch}")
        keys = [k.data for k in self.keys.data]
        if len(keys) != len(self.values.data):
            raise VerifyException("#fuser.target: properties and values differ in number")
        for k in keys:
            if k not in TARGET_FIELDS:
                raise VerifyException(
                    f"#fuser.target: unknown property '{k}'; expected {', '.join(TARGET_FIELDS)}"
                )
            if keys.count(k) > 1:
                raise VerifyException(f"#fuser.target: {k} is given twice")
        missing = [f for f in TARGET_FIELDS if f not in keys]
        if missing:
            raise VerifyException(f"#fuser.target: missing {', '.join(missing)}")
        if keys != list(TARGET_FIELDS):
            raise VerifyException(
                f"#fuser.target: properties must come in the order {', '.join(TARGET_FIELDS)}"
            )
        for f, v in zip(TARGET_FIELDS, self.values.data, strict=True):
            want = FloatAttr if f == "memory_bandwidth_gbs" else IntAttr
            if not isinstance(v, want):
                kind = "a float" if want is FloatAttr else "an integer"
                raise VerifyException(f"#fuser.target: {f} must be {kind}")
            value = v.value.data if isinstance(v, FloatAttr) else v.data  # type: ignore[attr-defined]
            if not value > 0:
                raise VerifyException(f"#fuser.target: {f} must be positive, got {value}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.gpu.data)
            printer.print_string(f", {self.arch.data}")
            for k, v in self.properties().items():
                printer.print_string(f", {k} = {v!r}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        keys: list[str] = []
        values: list[Attribute] = []
        with parser.in_angle_brackets():
            gpu = parser.parse_str_literal("the target's name")
            parser.parse_punctuation(",")
            arch = parser.parse_identifier("a compute capability such as sm_90")
            while parser.parse_optional_punctuation(",") is not None:
                keys.append(parser.parse_identifier("a target property"))
                parser.parse_punctuation("=")
                values.append(_target_value(keys[-1], parser.parse_number()))
        return [
            StringAttr(gpu),
            StringAttr(arch),
            ArrayAttr([StringAttr(k) for k in keys]),
            ArrayAttr(values),
        ]


def _target_value(key: str, value: float) -> Attribute:
    """A property's value: a float for the bandwidth, else an integer (a float where an
    integer belongs stays a float, for the verifier to reject)."""
    if key == "memory_bandwidth_gbs" or isinstance(value, float):
        return FloatAttr(float(value), Float64Type())
    return IntAttr(int(value))


# =====================================================================================
# Helpers on value types
# =====================================================================================


def is_scalar_type(t: Attribute) -> bool:
    return not isinstance(t, TensorType) and is_element_type(t)


def dtype_of(t: Attribute) -> DType:
    if isinstance(t, TensorType):
        return t.dtype
    return DType.from_xdsl(t)


def _check_value_type(op: Operation, t: Attribute, what: str) -> None:
    if not isinstance(t, TensorType) and not is_element_type(t):
        raise VerifyException(
            f"{op.name}: {what} has type {t}, expected a !fuser.tensor or a scalar"
        )


def _ints(attr: DenseArrayBase | None) -> list[int]:
    return [] if attr is None else list(attr.get_values())  # type: ignore[arg-type]


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _bool(attr: IntegerAttr | None, default: bool = False) -> bool:
    return default if attr is None else bool(attr.value.data)


def _bool_attr(v: bool) -> IntegerAttr:
    return IntegerAttr(int(v), IntegerType(1))


_VERIFIED: dict[tuple[object, ...], None] = {}
"""Signatures of ``FuserOp``s that verified (``FuserOp.INFER_FROM_TYPES``)."""


class InferError(Exception):
    """Raised by ``infer`` with a message that the verifier prefixes with the op name."""


class FuserOp(IRDLOperation):
    """Base of all fuser tensor ops: result types are inferred from operands."""

    irdl_options = (ParsePropInAttrDict(),)

    INFER_FROM_TYPES: ClassVar[bool] = False
    """``infer`` reads only the operand types and the op's properties and attributes
    (not, say, the value of a constant operand): then a verified combination of
    those, with its result types, is remembered and not inferred again (a 10,000-op
    fusion is verified after every pass; its ops repeat a few type signatures)."""

    def infer(self) -> list[Attribute]:  # pragma: no cover - overridden
        raise NotImplementedError

    def verify_(self) -> None:
        key = None
        if self.INFER_FROM_TYPES:
            key = (
                type(self),
                tuple(o.type for o in self.operands),
                tuple(r.type for r in self.results),
                tuple(self.properties.items()),
                tuple(self.attributes.items()),
            )
            try:
                if key in _VERIFIED:
                    return
            except TypeError:  # an unhashable attribute: verify as usual
                key = None
        self._verify_inferred()
        if key is not None:
            if len(_VERIFIED) > 65536:
                _VERIFIED.clear()
            _VERIFIED[key] = None

    def _verify_inferred(self) -> None:
        for i, operand in enumerate(self.operands):
            _check_value_type(self, operand.type, f"operand #{i}")
        try:
            expected = self.infer()
        except (InferError, ShapeError, ValueError) as e:
            raise VerifyException(f"{self.name}: {e}") from e
        got = [r.type for r in self.results]
        if len(expected) != len(got):
            raise VerifyException(f"{self.name}: expected {len(expected)} results, got {len(got)}")
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            ok = e.same_value_type(g) if isinstance(e, TensorType) else e == g
            if not ok:
                raise VerifyException(
                    f"{self.name}: result #{i} has type {g}, but the operands give {e}"
                )


def _real_only(t: TensorType, what: str) -> TensorType:
    """``t``, unless its dtype is complex (an InferError naming ``what``)."""
    if t.dtype.is_complex:
        raise InferError(f"{what} is complex ({t.dtype}), which this op does not accept")
    return t


def _tensor_operand(op: Operation, v: SSAValue, what: str) -> TensorType:
    if not isinstance(v.type, TensorType):
        raise InferError(f"{what} must be a tensor, got {v.type}")
    return v.type


def _scalar_operand(v: SSAValue, what: str) -> DType:
    if isinstance(v.type, TensorType):
        raise InferError(f"{what} must be a scalar, got {v.type}")
    return dtype_of(v.type)


def elementwise_type(operand_types: Sequence[Attribute], dtype: DType) -> Attribute:
    """The result type of an elementwise op: the broadcast shape of the tensor
    operands with ``dtype``, or the scalar ``dtype`` when no operand is a tensor."""
    shapes = [t.get_shape() for t in operand_types if isinstance(t, TensorType)]
    if not shapes:
        return dtype.to_xdsl()
    return TensorType(broadcast_shapes(*shapes), dtype)


def promoted(operand_types: Sequence[Attribute]) -> DType:
    for i, t in enumerate(operand_types):
        if dtype_of(t).is_fp8:  # torch: "Promotion for Float8 Types is not supported"
            raise InferError(f"operand #{i} is {dtype_of(t)}: float8 values only take part in casts")
    tensors = [t.dtype for t in operand_types if isinstance(t, TensorType) and t.rank > 0]
    zero_dim = [t.dtype for t in operand_types if isinstance(t, TensorType) and t.rank == 0]
    scalars = [dtype_of(t) for t in operand_types if not isinstance(t, TensorType)]
    return result_type(tensors, scalars, zero_dim)


# =====================================================================================
# Fusion structure
# =====================================================================================


@irdl_op_definition
class FusionOp(FuncLikeOp):
    """A fusion: ``fuser.fusion @name(%a : T, ...) -> (R, ...) { ... }``. Inputs are
    tensors or scalars; ``fuser.output`` lists the outputs (those written in place into
    an input are not results)."""

    name = "fuser.fusion"

    TERMINATOR_NAME: ClassVar[str] = "fuser.output"
    KIND: ClassVar[str] = "fusion"

    SCHEDULE_CHECK: ClassVar[Callable[[Attribute], str | None] | None] = None
    """What is wrong with a ``fuser.schedule`` attribute (None: nothing). The
    scheduler registry defines the kinds and their parameters, above this layer:
    ``fuser.schedulers.params`` installs its check here when imported."""

    def verify_(self) -> None:
        super().verify_()
        schedule = self.attributes.get("fuser.schedule")
        check = FusionOp.SCHEDULE_CHECK
        if schedule is not None and check is not None and (problem := check(schedule)):
            raise VerifyException(f"fuser.fusion @{self.sym_name.data}: fuser.schedule: {problem}")

    @property
    def output_op(self) -> OutputOp:
        term = self.body.block.last_op
        assert isinstance(term, OutputOp)
        return term

    def input_ok(self, t: Attribute) -> bool:
        return isinstance(t, TensorType) or is_element_type(t)

    def result_ok(self, declared: Attribute, given: Attribute) -> bool:
        return declared.same_value_type(given) if isinstance(declared, TensorType) else declared == given

    def terminator(self) -> tuple[type[Operation], Sequence[SSAValue]] | None:
        term = self.body.block.last_op
        return (OutputOp, term.returned_values()) if isinstance(term, OutputOp) else None


@irdl_op_definition
class OutputOp(IRDLOperation):
    """Terminator of a fusion.

    ``alias_inputs[i] = j >= 0`` marks output ``i`` as written in place into fusion
    input ``j`` (nvFuser's ``add_output(t, alias_input=inp)``); such outputs are not
    returned by the fusion, so the fusion's result types list only the others.
    """

    name = "fuser.output"

    values = var_operand_def()
    alias_inputs = opt_prop_def(DenseArrayBase.constr(I64))

    traits = traits_def(IsTerminator(), HasParent(FusionOp))
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue], alias_inputs: Sequence[int] | None = None):
        props = {}
        if alias_inputs is not None and any(a >= 0 for a in alias_inputs):
            props["alias_inputs"] = _i64_array(alias_inputs)
        super().__init__(operands=[values], properties=props)

    def get_alias_inputs(self) -> list[int]:
        if self.alias_inputs is None:
            return [-1] * len(self.values)
        return _ints(self.alias_inputs)

    def returned_values(self) -> list[SSAValue]:
        return [v for v, a in zip(self.values, self.get_alias_inputs(), strict=True) if a < 0]

    def verify_(self) -> None:
        aliases = self.get_alias_inputs()
        if len(aliases) != len(self.values):
            raise VerifyException(
                f"fuser.output: alias_inputs has {len(aliases)} entries for "
                f"{len(self.values)} outputs"
            )
        fusion = self.parent_op()
        if not isinstance(fusion, FusionOp):
            return
        args = fusion.body.block.args
        seen: set[int] = set()
        for i, (v, a) in enumerate(zip(self.values, aliases, strict=True)):
            if a < -1:
                raise VerifyException(
                    f"fuser.output: alias_inputs entry {a} of output #{i} must be -1 (not "
                    f"aliased) or an input index in [0, {len(args)})"
                )
            if a < 0:
                continue
            if a >= len(args):
                raise VerifyException(
                    f"fuser.output: output #{i} aliases input #{a}, but the fusion has "
                    f"{len(args)} inputs"
                )
            if a in seen:
                raise VerifyException(f"fuser.output: input #{a} is aliased by two outputs")
            seen.add(a)
            target = args[a].type
            if not isinstance(target, TensorType) or not target.same_value_type(v.type):
                raise VerifyException(
                    f"fuser.output: output #{i} of type {v.type} cannot be written in "
                    f"place into input #{a} of type {target}"
                )


# =====================================================================================
# Scalars and tensor factories
# =====================================================================================


@irdl_op_definition
class ConstantOp(FuserOp):
    """A scalar constant: ``%c = fuser.constant 5.000000e-01 : f64``; a complex one is
    its (real, imaginary) pair: ``fuser.constant [1.0 : f32, 2.0 : f32] : complex<f32>``."""

    name = "fuser.constant"

    value = prop_def(Attribute)
    result = result_def()

    traits = traits_def(ConstantLike(), Pure())

    def __init__(self, value: complex | float | int | bool, dtype: DType) -> None:
        super().__init__(
            properties={"value": constant_attr(value, dtype)}, result_types=[dtype.to_xdsl()]
        )

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        value = parser.parse_attribute()
        if isinstance(value, ArrayAttr):
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
        elif isinstance(value, FloatAttr | IntegerAttr):
            result_type = value.type
        else:
            parser.raise_error(f"fuser.constant: expected a typed number, got {value}")
        attrs = parser.parse_optional_attr_dict()
        op = cls.create(properties={"value": value}, result_types=[result_type])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        if isinstance(self.value, ArrayAttr):
            printer.print_string(" : ")
            printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)

    @property
    def python_value(self) -> complex | float | int | bool:
        v = self.value
        if isinstance(v, ArrayAttr):
            re, im = v.data
            assert isinstance(re, FloatAttr) and isinstance(im, FloatAttr)
            return complex(float(re.value.data), float(im.value.data))
        if isinstance(v, FloatAttr):
            return float(v.value.data)
        assert isinstance(v, IntegerAttr)
        if v.type == IntegerType(1):
            return bool(v.value.data)
        return int(v.value.data)

    def infer(self) -> list[Attribute]:
        v = self.value
        out = self.result.type
        if isinstance(v, ArrayAttr):
            if not isinstance(out, ComplexType) or not is_element_type(out):
                raise InferError(
                    f"a [real, imaginary] value needs a complex<f32> or complex<f64> result, got {out}"
                )
            part = out.element_type
            if len(v.data) != 2 or not all(
                isinstance(x, FloatAttr) and x.type == part for x in v.data
            ):
                raise InferError(f"value {v} must be two {part} literals (real, imaginary) for {out}")
            return [out]
        if not isinstance(v, FloatAttr | IntegerAttr) or not is_element_type(v.type):
            raise InferError(f"value {v} must be an integer or float literal of a fuser type")
        return [v.type]


def constant_attr(value: complex | float | int | bool, dtype: DType) -> Attribute:
    """The ``value`` property of a constant of ``dtype``."""
    if dtype.is_complex:
        c = complex(value)
        part = dtype.real_dtype.to_xdsl()
        return ArrayAttr([FloatAttr(c.real, part), FloatAttr(c.imag, part)])  # type: ignore[arg-type]
    if dtype.is_float:
        return FloatAttr(float(value), dtype.to_xdsl())  # type: ignore[arg-type]
    if dtype.is_bool:
        return IntegerAttr(int(bool(value)), IntegerType(1))
    return IntegerAttr(int(value), dtype.to_xdsl())  # type: ignore[arg-type]


def _shape_with_operands(op: Operation, static: list[int], sizes: Sequence[SSAValue]) -> list[int]:
    """MLIR-style mixed sizes: ``-1`` entries of ``static`` are taken from ``sizes``."""
    n_dyn = sum(1 for d in static if d == DYN)
    if n_dyn != len(sizes):
        raise InferError(
            f"shape {fmt_shape(static)} has {n_dyn} symbolic entries but {len(sizes)} size operands"
        )
    for i, s in enumerate(sizes):
        if isinstance(s.type, TensorType) or not dtype_of(s.type).is_integer:
            raise InferError(f"size operand #{i} must be an integer scalar, got {s.type}")
    if any(d < DYN for d in static):
        raise InferError(f"negative extent in shape {static}")
    return static


@irdl_op_definition
class FullOp(FuserOp):
    """``fuser.full`` fills a new tensor with a scalar value."""

    name = "fuser.full"

    fill_value = operand_def()
    sizes = var_operand_def()
    shape = prop_def(DenseArrayBase.constr(I64))
    result = result_def()

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    traits = traits_def(Pure())
    assembly_format = "$fill_value (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($fill_value) `->` type($result)"

    def __init__(
        self,
        fill_value: SSAValue,
        shape: Sequence[int],
        dtype: DType,
        sizes: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[fill_value, sizes],
            properties={"shape": _i64_array(shape)},
            result_types=[TensorType(shape, dtype)],
        )

    def infer(self) -> list[Attribute]:
        _scalar_operand(self.fill_value, "fill value")
        shape = _shape_with_operands(self, _ints(self.shape), self.sizes)
        out = self.result.type
        dtype = dtype_of(out)
        return [TensorType(shape, dtype)]


@irdl_op_definition
class IotaOp(FuserOp):
    """``fuser.iota %length, %start, %step``: ``start + step * arange(length)``."""

    name = "fuser.iota"

    length = operand_def()
    start = operand_def()
    step = operand_def()
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = (
        "$length `,` $start `,` $step attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        length: SSAValue,
        start: SSAValue,
        step: SSAValue,
        dtype: DType,
        static_length: int = DYN,
    ):
        super().__init__(
            operands=[length, start, step], result_types=[TensorType([static_length], dtype)]
        )

    def infer(self) -> list[Attribute]:
        if not _scalar_operand(self.length, "length").is_integer:
            raise InferError("length must be an integer scalar")
        _scalar_operand(self.start, "start")
        _scalar_operand(self.step, "step")
        out = self.result.type
        if not isinstance(out, TensorType) or out.rank != 1:
            raise InferError(f"result must be a rank-1 tensor, got {out}")
        if out.dtype.is_bool or out.dtype.is_complex:
            raise InferError(f"iota cannot produce {out.dtype}")
        for what, v in (("start", self.start), ("step", self.step)):
            if dtype_of(v.type).is_complex:
                raise InferError(f"{what} is complex ({dtype_of(v.type)}), which iota does not accept")
        length = self.length.owner
        static = out.get_shape()[0]
        if isinstance(length, ConstantOp) and static != int(length.python_value):
            raise InferError(f"length is {length.python_value} but the result has extent {static}")
        return [out]


@irdl_op_definition
class SizeOp(FuserOp):
    """``fuser.size %t {dim = 1}``: the extent of an axis as an i64 scalar."""

    name = "fuser.size"

    input = operand_def()
    dim = prop_def(IntegerAttr[I64])
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, dim: int) -> None:
        super().__init__(
            operands=[input], properties={"dim": IntegerAttr(dim, i64)}, result_types=[i64]
        )

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        normalize_dim(self.dim.value.data, t.rank)
        return [i64]


class _RandomOp(FuserOp):
    """A tensor of random values (nvFuser's ``RNGOp``), deterministic in its operands:
    two distribution parameters, the Philox ``seed`` and ``offset`` (i64 scalars: the
    frontend draws them per execution when the definition gives none) and the sizes of
    the result's symbolic axes. ``fuser_ir/philox.py`` defines the values: element ``i``
    (row-major) draws from Philox4x32-10 subsequence ``i // m`` (``m`` = 2 for f64, 4
    for the other float types). The result must be f64, f32, f16 or bf16."""

    DISTRIBUTION: ClassVar[str]
    PARAM_NAMES: ClassVar[tuple[str, str]]

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        seed: SSAValue,
        offset: SSAValue,
        shape: Sequence[int],
        dtype: DType,
        sizes: Sequence[SSAValue] = (),
    ) -> None:
        super().__init__(
            operands=[a, b, seed, offset, sizes],
            properties={"shape": _i64_array(shape)},
            result_types=[TensorType(shape, dtype)],
        )

    @property
    def params(self) -> tuple[SSAValue, SSAValue]:
        """The two distribution parameters (low/high or mean/std)."""
        return self.operands[0], self.operands[1]

    @property
    def rng_seed(self) -> SSAValue:
        return self.operands[2]

    @property
    def rng_offset(self) -> SSAValue:
        return self.operands[3]

    def infer(self) -> list[Attribute]:
        for v, what in zip(self.params, self.PARAM_NAMES, strict=True):
            dt = _scalar_operand(v, what)
            if dt.is_bool or dt.is_complex:
                raise InferError(f"{what} must be a real number scalar, got {v.type}")
        for v, what in ((self.rng_seed, "rng_seed"), (self.rng_offset, "rng_offset")):
            if _scalar_operand(v, what) != DType.int64:
                raise InferError(f"{what} must be an i64 scalar, got {v.type}")
        sizes = self.operands[4:]
        shape = _shape_with_operands(self, _ints(self.shape), sizes)  # type: ignore[attr-defined]
        out = self.results[0].type
        dtype = dtype_of(out)
        if dtype not in (DType.float64, DType.float32, DType.float16, DType.bfloat16):
            raise InferError(f"random values must be f64, f32, f16 or bf16, got {dtype}")
        return [TensorType(shape, dtype)]


_RANDOM_FORMAT = (
    "$%s `,` $%s `,` $seed `,` $offset (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict "
    "`:` type($%s) `,` type($%s) `,` type($seed) `,` type($offset) `->` type($result)"
)


@irdl_op_definition
class UniformOp(_RandomOp):
    """``fuser.uniform %low, %high, %seed, %offset``: values uniform in ``[low, high)``
    (nvFuser's ``uniform``; half and bfloat16 never round to ``high``)."""

    name = "fuser.uniform"
    DISTRIBUTION: ClassVar[str] = "uniform"
    PARAM_NAMES: ClassVar[tuple[str, str]] = ("low", "high")

    low = operand_def()
    high = operand_def()
    seed = operand_def()
    offset = operand_def()
    sizes = var_operand_def()
    shape = prop_def(DenseArrayBase.constr(I64))
    result = result_def()

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    traits = traits_def(Pure())
    assembly_format = _RANDOM_FORMAT % ("low", "high", "low", "high")


@irdl_op_definition
class NormalOp(_RandomOp):
    """``fuser.normal %mean, %std, %seed, %offset``: normal values (nvFuser's
    ``normal``, Box-Muller)."""

    name = "fuser.normal"
    DISTRIBUTION: ClassVar[str] = "normal"
    PARAM_NAMES: ClassVar[tuple[str, str]] = ("mean", "std")

    mean = operand_def()
    std = operand_def()
    seed = operand_def()
    offset = operand_def()
    sizes = var_operand_def()
    shape = prop_def(DenseArrayBase.constr(I64))
    result = result_def()

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    traits = traits_def(Pure())
    assembly_format = _RANDOM_FORMAT % ("mean", "std", "mean", "std")


RANDOM_OPS: tuple[type[Operation], ...] = (UniformOp, NormalOp)


# =====================================================================================
# Elementwise ops
# =====================================================================================


class ElementwiseOp(FuserOp):
    """An elementwise op. ``rule`` names how the result dtype is derived:

    ``promote`` (torch promotion), ``float`` (promotion then int→float32, for
    transcendental functions), ``wide_float`` (as ``float``, float32/float64 results
    only), ``bool`` (predicates), ``same`` (first operand's dtype), ``int`` (promotion,
    integer or bool operands only), ``integer`` (promotion, integer operands only),
    ``real`` (the component type of a complex operand, else the operand's: ``abs``,
    ``real``), ``imag`` (as ``real``, complex operands only).

    Complex operands are accepted only by the ops in ``COMPLEX_UNARY_OPS`` and
    ``COMPLEX_BINARY_OPS`` (and ``where``).
    """

    RULE: ClassVar[str] = "promote"
    ARITY: ClassVar[int] = 1
    INFER_FROM_TYPES: ClassVar[bool] = True

    def value_operands(self) -> Sequence[SSAValue]:
        return self.operands

    def result_dtype(self, types: Sequence[Attribute]) -> DType:
        dt = promoted(types)
        kind = self.name.removeprefix("fuser.")
        if dt.is_complex and kind not in COMPLEX_UNARY_OPS | COMPLEX_BINARY_OPS:
            which = next(i for i, t in enumerate(types) if dtype_of(t).is_complex)
            raise InferError(f"operand #{which} is complex ({dtype_of(types[which])}), which {kind} does not accept")
        if self.RULE == "imag" and not dt.is_complex:
            raise InferError(f"needs a complex operand, got {dt}")
        if self.RULE in ("real", "imag"):
            return dt.real_dtype
        if self.RULE == "float":
            return float_result(dt)
        if self.RULE == "wide_float":
            res = float_result(dt)
            if res not in (DType.float32, DType.float64):
                raise InferError(f"needs float32 or float64 operands, got {res}")
            return res
        if self.RULE == "bool":
            return DType.bool
        if self.RULE == "integer" and dt == DType.bool:
            raise InferError("needs integer operands, got bool")
        if self.RULE in ("int", "integer"):
            if dt.is_float:
                raise InferError(f"needs integer or bool operands, got {dt}")
            return dt
        return dt

    def infer(self) -> list[Attribute]:
        types = [v.type for v in self.value_operands()]
        return [elementwise_type(types, self.result_dtype(types))]


class UnaryOp(ElementwiseOp):
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue) -> None:
        super().__init__(operands=[input], result_types=[self.__class__.infer_types([input.type])])

    @classmethod
    def infer_types(cls, types: Sequence[Attribute]) -> Attribute:
        dummy = cls.__new__(cls)
        return elementwise_type(types, ElementwiseOp.result_dtype(dummy, types))


class BinaryOp(ElementwiseOp):
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    ARITY: ClassVar[int] = 2
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(
            operands=[lhs, rhs], result_types=[self.__class__.infer_types([lhs.type, rhs.type])]
        )

    @classmethod
    def infer_types(cls, types: Sequence[Attribute]) -> Attribute:
        dummy = cls.__new__(cls)
        return elementwise_type(types, ElementwiseOp.result_dtype(dummy, types))


def _make_elementwise(base: type, op_name: str, rule: str, doc: str) -> type:
    cls_name = "".join(p.capitalize() for p in op_name.split("_")) + "Op"
    cls = type(
        cls_name,
        (base,),
        {
            "name": f"fuser.{op_name}",
            "RULE": rule,
            "__doc__": doc,
            "__annotations__": {"RULE": ClassVar[str]},
        },
    )
    cls.__module__ = __name__
    return irdl_op_definition(cls)


UNARY_OPS: dict[str, tuple[str, str]] = {
    # name: (dtype rule, meaning)
    "abs": ("real", "|x| (the modulus of a complex x, a real value)"),
    "real": ("real", "real part (x itself when x is not complex)"),
    "imag": ("imag", "imaginary part of a complex x"),
    "neg": ("same", "-x"),
    "exp": ("float", "e^x"),
    "exp2": ("float", "2^x"),
    "expm1": ("float", "e^x - 1"),
    "log": ("float", "natural logarithm"),
    "log2": ("float", "base-2 logarithm"),
    "log10": ("float", "base-10 logarithm"),
    "log1p": ("float", "log(1 + x)"),
    "sqrt": ("float", "square root"),
    "rsqrt": ("float", "1 / sqrt(x)"),
    "reciprocal": ("float", "1 / x"),
    "sin": ("float", "sine"),
    "cos": ("float", "cosine"),
    "tan": ("float", "tangent"),
    "asin": ("float", "arc sine"),
    "acos": ("float", "arc cosine"),
    "atan": ("float", "arc tangent"),
    "sinh": ("float", "hyperbolic sine"),
    "cosh": ("float", "hyperbolic cosine"),
    "tanh": ("float", "hyperbolic tangent"),
    "asinh": ("float", "inverse hyperbolic sine"),
    "acosh": ("float", "inverse hyperbolic cosine"),
    "atanh": ("float", "inverse hyperbolic tangent"),
    "sigmoid": ("float", "1 / (1 + e^-x)"),
    "erf": ("float", "error function"),
    "erfc": ("float", "complementary error function"),
    "erfinv": ("float", "inverse error function"),
    "lgamma": ("float", "log |gamma(x)|"),
    "silu": ("float", "x * sigmoid(x)"),
    "relu": ("same", "max(x, 0)"),
    "ceil": ("same", "round up"),
    "floor": ("same", "round down"),
    "round": ("same", "round half to even"),
    "trunc": ("same", "round toward zero"),
    "frac": ("same", "x - trunc(x)"),
    "sign": ("same", "-1, 0 or 1"),
    "signbit": ("bool", "sign bit set"),
    "isnan": ("bool", "x is NaN"),
    "isinf": ("bool", "x is +-inf"),
    "isfinite": ("bool", "x is finite"),
    "logical_not": ("bool", "!x"),
    "bitwise_not": ("int", "~x (logical not on bool)"),
    "set": ("same", "copy"),
    "segment_set": ("same", "copy that marks a segment boundary"),
}

BINARY_OPS: dict[str, tuple[str, str]] = {
    "add": ("promote", "a + b"),
    "sub": ("promote", "a - b"),
    "mul": ("promote", "a * b"),
    "div": ("promote", "a / b, truncating toward zero on integers"),
    "truediv": ("float", "a / b in floating point"),
    "fmod": ("promote", "C fmod: remainder with the sign of a"),
    "remainder": ("promote", "Python remainder: sign of b"),
    "pow": ("promote", "a ** b"),
    "atan2": ("float", "atan2(a, b)"),
    "maximum": ("promote", "max(a, b), NaN-propagating"),
    "minimum": ("promote", "min(a, b), NaN-propagating"),
    "eq": ("bool", "a == b"),
    "ne": ("bool", "a != b"),
    "lt": ("bool", "a < b"),
    "le": ("bool", "a <= b"),
    "gt": ("bool", "a > b"),
    "ge": ("bool", "a >= b"),
    "logical_and": ("bool", "a && b"),
    "logical_or": ("bool", "a || b"),
    "bitwise_and": ("int", "a & b"),
    "bitwise_or": ("int", "a | b"),
    "bitwise_xor": ("int", "a ^ b"),
    "bitwise_left_shift": ("int", "a << b"),
    "bitwise_right_shift": ("int", "a >> b (arithmetic)"),
    "logical_right_shift": ("integer", "a >> b on a's bits as unsigned (0 when b is outside [0, width))"),
    "gcd": ("integer", "greatest common divisor of |a| and |b| (gcd(0, 0) = 0)"),
    "nextafter": ("wide_float", "the next float32/float64 value after a toward b"),
}

COMPLEX_UNARY_OPS: frozenset[str] = frozenset(
    {
        "abs", "neg", "real", "imag", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin",
        "cos", "tan", "tanh", "isnan", "isinf", "isfinite", "set", "segment_set",
    }
)  # fmt: skip
"""The unary ops that accept complex operands (torch and nvFuser accept more)."""

COMPLEX_BINARY_OPS: frozenset[str] = frozenset({"add", "sub", "mul", "div", "truediv", "eq", "ne"})
"""The binary ops that accept complex operands (not the orderings lt/le/gt/ge, max/min)."""

UNARY_OP_CLASSES: dict[str, type[UnaryOp]] = {
    n: _make_elementwise(UnaryOp, n, rule, f"Elementwise {doc}.")
    for n, (rule, doc) in UNARY_OPS.items()
}
BINARY_OP_CLASSES: dict[str, type[BinaryOp]] = {
    n: _make_elementwise(BinaryOp, n, rule, f"Elementwise {doc}.")
    for n, (rule, doc) in BINARY_OPS.items()
}
globals().update({cls.__name__: cls for cls in UNARY_OP_CLASSES.values()})
globals().update({cls.__name__: cls for cls in BINARY_OP_CLASSES.values()})


@irdl_op_definition
class WhereOp(ElementwiseOp):
    """``where(cond, a, b)``: ``a`` where ``cond`` is true, else ``b``."""

    name = "fuser.where"
    cond = operand_def()
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> None:
        types = [cond.type, lhs.type, rhs.type]
        dt = promoted([lhs.type, rhs.type])
        super().__init__(operands=[cond, lhs, rhs], result_types=[elementwise_type(types, dt)])

    def infer(self) -> list[Attribute]:
        # where picks values: any dtype, complex included (cond must be bool).
        if dtype_of(self.cond.type) != DType.bool:
            raise InferError(f"condition must be bool, got {dtype_of(self.cond.type)}")
        types = [self.cond.type, self.lhs.type, self.rhs.type]
        return [elementwise_type(types, promoted([self.lhs.type, self.rhs.type]))]


class _NaryPromoteOp(ElementwiseOp):
    traits = traits_def(Pure())

    def __init__(self, *operands: SSAValue) -> None:
        types = [o.type for o in operands]
        super().__init__(
            operands=list(operands), result_types=[elementwise_type(types, promoted(types))]
        )


@irdl_op_definition
class ClampOp(_NaryPromoteOp):
    """``clamp(x, lo, hi) = min(max(x, lo), hi)``."""

    name = "fuser.clamp"
    input = operand_def()
    min_value = operand_def()
    max_value = operand_def()
    result = result_def()
    assembly_format = (
        "$input `,` $min_value `,` $max_value attr-dict `:` functional-type(operands, results)"
    )


@irdl_op_definition
class LerpOp(_NaryPromoteOp):
    """``lerp(start, end, weight) = start + weight * (end - start)``."""

    name = "fuser.lerp"
    start = operand_def()
    end = operand_def()
    weight = operand_def()
    result = result_def()
    assembly_format = "$start `,` $end `,` $weight attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class ThresholdOp(ElementwiseOp):
    """``threshold(x, t, v) = x > t ? x : v`` (torch.nn.functional.threshold)."""

    name = "fuser.threshold"
    input = operand_def()
    threshold = operand_def()
    value = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    RULE: ClassVar[str] = "same"
    assembly_format = (
        "$input `,` $threshold `,` $value attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, threshold: SSAValue, value: SSAValue) -> None:
        types = [input.type, threshold.type, value.type]
        super().__init__(
            operands=[input, threshold, value],
            result_types=[elementwise_type(types, dtype_of(input.type))],
        )

    def result_dtype(self, types: Sequence[Attribute]) -> DType:
        for i, t in enumerate(types):
            if dtype_of(t).is_complex:
                raise InferError(f"operand #{i} is complex ({dtype_of(t)}), which threshold does not accept")
        return dtype_of(types[0])


@irdl_op_definition
class AddcmulOp(_NaryPromoteOp):
    """``addcmul(x, t1, t2, value) = x + value * t1 * t2``."""

    name = "fuser.addcmul"
    input = operand_def()
    tensor1 = operand_def()
    tensor2 = operand_def()
    value = operand_def()
    result = result_def()
    assembly_format = "$input `,` $tensor1 `,` $tensor2 `,` $value attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class CastOp(FuserOp):
    """``fuser.cast``: convert to the result's dtype (torch ``.to(dtype)`` semantics)."""

    name = "fuser.cast"
    INFER_FROM_TYPES: ClassVar[bool] = True
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, dtype: DType) -> None:
        t = input.type
        out = t.with_dtype(dtype) if isinstance(t, TensorType) else dtype.to_xdsl()
        super().__init__(operands=[input], result_types=[out])

    def infer(self) -> list[Attribute]:
        t = self.input.type
        out = self.result.type
        if isinstance(t, TensorType) != isinstance(out, TensorType):
            raise InferError(f"cannot cast {t} to {out}: tensor-ness differs")
        dt = dtype_of(out)
        return [t.with_dtype(dt) if isinstance(t, TensorType) else dt.to_xdsl()]


# =====================================================================================
# Reductions
# =====================================================================================


def reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> list[int]:
    rank = len(shape)
    norm = sorted({normalize_dim(d, rank) for d in dims})
    if len(norm) != len(dims):
        raise InferError(f"dims {list(dims)} name an axis twice")
    if keepdim:
        return [1 if i in norm else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in norm]


def default_reduction_dtype(op: str, dtype: DType) -> DType:
    """torch: sum/prod of bool or integers give int64; max/min keep the dtype (and
    sum/prod of floats or complex values)."""
    if op in ("sum", "prod") and not (dtype.is_float or dtype.is_complex):
        return DType.int64
    return dtype


class ReductionOp(FuserOp):
    """``sum``/``prod``/``max``/``min`` over ``dims``; the result dtype is the result
    type's (any dtype may be asked for, as nvFuser's ``dtype=`` argument)."""

    INFER_FROM_TYPES: ClassVar[bool] = True

    input = operand_def()
    dims = prop_def(DenseArrayBase.constr(I64))
    keepdim = opt_prop_def(BoolAttr)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        input: SSAValue,
        dims: Sequence[int],
        keepdim: bool = False,
        dtype: DType | None = None,
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        kind = self.name.split(".")[1]
        dt = dtype or default_reduction_dtype(kind, t.dtype)
        props: dict[str, Attribute] = {"dims": _i64_array(dims)}
        if keepdim:
            props["keepdim"] = _bool_attr(True)
        super().__init__(
            operands=[input],
            properties=props,
            result_types=[TensorType(reduced_shape(t.get_shape(), dims, keepdim), dt)],
        )

    def get_dims(self) -> list[int]:
        t = self.input.type
        assert isinstance(t, TensorType)
        return sorted(normalize_dim(d, t.rank) for d in _ints(self.dims))

    @property
    def is_keepdim(self) -> bool:
        return _bool(self.keepdim)

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        shape = reduced_shape(t.get_shape(), _ints(self.dims), self.is_keepdim)
        out = dtype_of(self.result.type)
        kind = self.name.removeprefix("fuser.")
        if t.dtype.is_fp8 or out.is_fp8:
            raise InferError(f"float8 values only take part in casts, got {t.dtype} -> {out}")
        if t.dtype.is_complex and kind not in ("sum", "prod"):
            raise InferError(f"input is complex ({t.dtype}): complex values have no order")
        if t.dtype.is_complex and not out.is_complex:
            raise InferError(
                f"the result dtype {out} of a complex ({t.dtype}) input must be complex "
                "(it would drop the imaginary part)"
            )
        return [TensorType(shape, out)]


@irdl_op_definition
class SumOp(ReductionOp):
    """Sum over ``dims``."""

    name = "fuser.sum"


@irdl_op_definition
class ProdOp(ReductionOp):
    """Product over ``dims``."""

    name = "fuser.prod"


@irdl_op_definition
class MaxOp(ReductionOp):
    """Maximum over ``dims`` (NaN-propagating)."""

    name = "fuser.max"


@irdl_op_definition
class MinOp(ReductionOp):
    """Minimum over ``dims`` (NaN-propagating)."""

    name = "fuser.min"


REDUCTION_OP_CLASSES: dict[str, type[ReductionOp]] = {
    "sum": SumOp,
    "prod": ProdOp,
    "max": MaxOp,
    "min": MinOp,
}


@irdl_op_definition
class VarMeanOp(FuserOp):
    """Variance and mean over ``dims`` with a Bessel ``correction`` (torch.var_mean).
    ``fuser.var`` is the same op with only the variance used; both are here one op
    with one or two results."""

    name = "fuser.var_mean"
    input = operand_def()
    dims = prop_def(DenseArrayBase.constr(I64))
    correction = prop_def(FloatAttr)
    keepdim = opt_prop_def(BoolAttr)
    var = result_def()
    mean = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, input: SSAValue, dims: Sequence[int], correction: float = 1.0, keepdim: bool = False
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        out = TensorType(reduced_shape(t.get_shape(), dims, keepdim), float_result(t.dtype))
        props: dict[str, Attribute] = {
            "dims": _i64_array(dims),
            "correction": FloatAttr(correction, 64),
        }
        if keepdim:
            props["keepdim"] = _bool_attr(True)
        super().__init__(operands=[input], properties=props, result_types=[out, out])

    def infer(self) -> list[Attribute]:
        t = _real_only(_tensor_operand(self, self.input, "input"), "input")
        out = TensorType(
            reduced_shape(t.get_shape(), _ints(self.dims), _bool(self.keepdim)),
            float_result(t.dtype),
        )
        return [out, out]


@irdl_op_definition
class VarOp(FuserOp):
    """Variance over ``dims`` with a Bessel ``correction`` (torch.var)."""

    name = "fuser.var"
    input = operand_def()
    dims = prop_def(DenseArrayBase.constr(I64))
    correction = prop_def(FloatAttr)
    keepdim = opt_prop_def(BoolAttr)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, input: SSAValue, dims: Sequence[int], correction: float = 1.0, keepdim: bool = False
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        props: dict[str, Attribute] = {
            "dims": _i64_array(dims),
            "correction": FloatAttr(correction, 64),
        }
        if keepdim:
            props["keepdim"] = _bool_attr(True)
        out = TensorType(reduced_shape(t.get_shape(), dims, keepdim), float_result(t.dtype))
        super().__init__(operands=[input], properties=props, result_types=[out])

    def infer(self) -> list[Attribute]:
        t = _real_only(_tensor_operand(self, self.input, "input"), "input")
        return [
            TensorType(
                reduced_shape(t.get_shape(), _ints(self.dims), _bool(self.keepdim)),
                float_result(t.dtype),
            )
        ]


@irdl_op_definition
class WelfordOp(FuserOp):
    """Welford over ``dims``: ``(avg, var_sum, n)`` with ``var_sum = sum((x-avg)^2)``
    and ``n`` the (int64) count of reduced elements."""

    name = "fuser.welford"
    input = operand_def()
    dims = prop_def(DenseArrayBase.constr(I64))
    avg = result_def()
    var_sum = result_def()
    n = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, dims: Sequence[int]) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        shape = reduced_shape(t.get_shape(), dims, False)
        f = TensorType(shape, float_result(t.dtype))
        super().__init__(
            operands=[input],
            properties={"dims": _i64_array(dims)},
            result_types=[f, f, TensorType(shape, DType.int64)],
        )

    def infer(self) -> list[Attribute]:
        t = _real_only(_tensor_operand(self, self.input, "input"), "input")
        shape = reduced_shape(t.get_shape(), _ints(self.dims), False)
        f = TensorType(shape, float_result(t.dtype))
        return [f, f, TensorType(shape, DType.int64)]


# =====================================================================================
# Shape ops (views in nvFuser's sense: they only move or relabel data)
# =====================================================================================


class ViewLikeOp(FuserOp):
    """Marker base of ops that only change shape metadata (candidates for host views)."""


@irdl_op_definition
class BroadcastOp(ViewLikeOp):
    """Insert new extent-1 axes where ``is_broadcast_dim`` is true (nvFuser's
    ``broadcast``); the output rank is ``len(is_broadcast_dim)``."""

    name = "fuser.broadcast"
    INFER_FROM_TYPES: ClassVar[bool] = True
    input = operand_def()
    is_broadcast_dim = prop_def(DenseArrayBase.constr(IntegerType(1)))
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, is_broadcast_dim: Sequence[bool]) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        props = {
            "is_broadcast_dim": DenseArrayBase.from_list(
                IntegerType(1), [int(b) for b in is_broadcast_dim]
            )
        }
        super().__init__(
            operands=[input],
            properties=props,
            result_types=[t.with_shape(self.out_shape(t.get_shape(), is_broadcast_dim))],
        )

    def get_flags(self) -> list[bool]:
        return [bool(b) for b in self.is_broadcast_dim.get_values()]

    @staticmethod
    def out_shape(shape: Sequence[int], flags: Sequence[bool]) -> list[int]:
        n_in = sum(1 for f in flags if not f)
        if n_in != len(shape):
            raise InferError(
                f"is_broadcast_dim {list(flags)} keeps {n_in} axes but the input {fmt_shape(shape)} has {len(shape)}"
            )
        it = iter(shape)
        return [1 if f else next(it) for f in flags]

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        return [t.with_shape(self.out_shape(t.get_shape(), self.get_flags()))]


def check_broadcast_in_dim(in_shape: Sequence[int], shape: Sequence[int], bdims: Sequence[int]) -> None:
    """Raise InferError unless input axis ``i`` can become output axis ``bdims[i]``
    of ``shape`` (``bdims`` increasing; extent-1 input axes may expand)."""
    bdims = list(bdims)
    if len(bdims) != len(in_shape):
        raise InferError(f"broadcast_dims {bdims} has {len(bdims)} entries for input rank {len(in_shape)}")
    if sorted(set(bdims)) != bdims or any(not 0 <= d < len(shape) for d in bdims):
        raise InferError(f"broadcast_dims {bdims} must be increasing and within rank {len(shape)}")
    for i, d in enumerate(bdims):
        e = in_shape[i]
        if e not in (1, DYN) and shape[d] not in (e, DYN):
            raise InferError(f"input axis {i} of extent {e} cannot become output axis {d} of extent {shape[d]}")


@irdl_op_definition
class BroadcastInDimOp(ViewLikeOp):
    """``broadcast_in_dim(x, shape, broadcast_dims)``: input axis ``i`` becomes output
    axis ``broadcast_dims[i]``; other output axes are new; extent-1 input axes may be
    expanded to the output extent."""

    name = "fuser.broadcast_in_dim"
    input = operand_def()
    sizes = var_operand_def()
    shape = prop_def(DenseArrayBase.constr(I64))
    broadcast_dims = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = "$input (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($input) `->` type($result)"

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

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        shape = _shape_with_operands(self, _ints(self.shape), self.sizes)
        check_broadcast_in_dim(t.get_shape(), shape, _ints(self.broadcast_dims))
        return [t.with_shape(shape)]


@irdl_op_definition
class ExpandOp(ViewLikeOp):
    """Expand extent-1 axes to ``shape`` (``-1`` entries keep the input extent when no
    size operand is given in ``sizes``, as torch.expand)."""

    name = "fuser.expand"
    input = operand_def()
    sizes = var_operand_def()
    shape = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = "$input (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue, shape: Sequence[int], sizes: Sequence[SSAValue] = ()
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        super().__init__(
            operands=[input, sizes],
            properties={"shape": _i64_array(shape)},
            result_types=[t.with_shape(shape)],
        )

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        shape = _shape_with_operands(self, _ints(self.shape), self.sizes)
        if len(shape) != t.rank:
            raise InferError(f"expand to rank {len(shape)} from rank {t.rank}")
        for i, (a, b) in enumerate(zip(t.get_shape(), shape, strict=True)):
            if a not in (1, DYN) and b not in (a, DYN):
                raise InferError(f"axis {i} of extent {a} cannot be expanded to {b}")
        return [t.with_shape(shape)]


@irdl_op_definition
class ReshapeOp(ViewLikeOp):
    """Reshape to ``new_shape``. A static reshape carries its keep/merge/split
    decomposition in ``view``; a symbolic one (``-1`` entries bound to ``sizes``
    operands) has none until sizes are known and ``concretize`` runs."""

    name = "fuser.reshape"
    input = operand_def()
    sizes = var_operand_def()
    new_shape = prop_def(DenseArrayBase.constr(I64))
    view = opt_prop_def(ViewAttr)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = "$input (`sizes` `(` $sizes^ `:` type($sizes) `)`)? attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue, new_shape: Sequence[int], sizes: Sequence[SSAValue] = ()
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        props: dict[str, Attribute] = {"new_shape": _i64_array(new_shape)}
        if not sizes and DYN not in t.get_shape() and DYN not in new_shape:
            props["view"] = ViewAttr(analyze_reshape(t.get_shape(), new_shape))
        super().__init__(
            operands=[input, sizes], properties=props, result_types=[t.with_shape(new_shape)]
        )

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        shape = _shape_with_operands(self, _ints(self.new_shape), self.sizes)
        if self.view is not None:
            if self.sizes:
                raise InferError("a reshape with size operands cannot carry a static view")
            steps = self.view.get_steps()
            got = apply_steps(t.get_shape(), self.view.resolved_steps(t.get_shape()))
            if got != list(shape):
                raise InferError(
                    f"view <{', '.join(map(str, steps))}> takes "
                    f"{fmt_shape(t.get_shape())} to {fmt_shape(got)}, not {fmt_shape(shape)}"
                )
        elif DYN not in t.get_shape() and DYN not in shape:
            if prod(t.get_shape()) != prod(shape):
                raise InferError(
                    f"sizes {fmt_shape(t.get_shape())} and {fmt_shape(shape)} do not multiply out"
                )
        return [t.with_shape(shape)]


def _resolve_view_sizes(in_shape: Sequence[int], steps: Sequence[ReshapeStep]) -> list[ReshapeStep]:
    """Fill the implicit output extent of keep and merge steps from the input."""
    out: list[ReshapeStep] = []
    i = 0
    for s in steps:
        axes = in_shape[i : i + s.num_inputs]
        i += s.num_inputs
        if s.kind in ("keep", "merge") and s.out_sizes == (0,) and len(axes) == s.num_inputs:
            ext = DYN if DYN in axes else prod(axes)
            out.append(ReshapeStep(s.kind, s.num_inputs, (ext,)))
        else:
            out.append(s)
    return out


@irdl_op_definition
class PermuteOp(ViewLikeOp):
    """Permute axes: output axis ``i`` is input axis ``dims[i]``."""

    name = "fuser.permute"
    input = operand_def()
    dims = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, dims: Sequence[int]) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        shape = t.get_shape()
        super().__init__(
            operands=[input],
            properties={"dims": _i64_array(dims)},
            result_types=[t.with_shape([shape[d] for d in dims])],
        )

    def get_dims(self) -> list[int]:
        t = self.input.type
        assert isinstance(t, TensorType)
        return [normalize_dim(d, t.rank) for d in _ints(self.dims)]

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        dims = [normalize_dim(d, t.rank) for d in _ints(self.dims)]
        if sorted(dims) != list(range(t.rank)):
            raise InferError(f"dims {_ints(self.dims)} is not a permutation of rank {t.rank}")
        return [t.with_shape([t.get_shape()[d] for d in dims])]


@irdl_op_definition
class SqueezeOp(ViewLikeOp):
    """Remove the extent-1 axes listed in ``dims``."""

    name = "fuser.squeeze"
    input = operand_def()
    dims = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, dims: Sequence[int]) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        norm = {normalize_dim(d, t.rank) for d in dims}
        shape = [e for i, e in enumerate(t.get_shape()) if i not in norm]
        super().__init__(
            operands=[input],
            properties={"dims": _i64_array(dims)},
            result_types=[t.with_shape(shape)],
        )

    def get_dims(self) -> list[int]:
        t = self.input.type
        assert isinstance(t, TensorType)
        return sorted({normalize_dim(d, t.rank) for d in _ints(self.dims)})

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        norm = [normalize_dim(d, t.rank) for d in _ints(self.dims)]
        for d in norm:
            if t.get_shape()[d] not in (1, DYN):
                raise InferError(f"cannot squeeze axis {d} of extent {t.get_shape()[d]}")
        return [t.with_shape([e for i, e in enumerate(t.get_shape()) if i not in norm])]


def slice_extent(extent: int, start: int, stop: int, step: int) -> int:
    if extent == DYN:
        return DYN
    return len(range(*slice(start, stop, step).indices(extent)))


def slice_properties(
    starts: Sequence[int], ends: Sequence[int], strides: Sequence[int] | None
) -> dict[str, Attribute]:
    """The ``starts``/``ends``/``strides`` properties of a slice (strides default to 1)."""
    strides = list(strides) if strides is not None else [1] * len(starts)
    return {"starts": _i64_array(starts), "ends": _i64_array(ends), "strides": _i64_array(strides)}


def sliced_shape(
    shape: Sequence[int], starts: Sequence[int], ends: Sequence[int], strides: Sequence[int]
) -> list[int]:
    """The shape of ``x[starts:ends:strides]`` (per axis, clamped like Python); raises
    InferError on a wrong number of entries or a non-positive stride."""
    if not len(starts) == len(ends) == len(strides) == len(shape):
        raise InferError(f"starts, ends and strides need {len(shape)} entries each")
    if any(s <= 0 for s in strides):
        raise InferError(f"strides {list(strides)} must be positive")
    return [slice_extent(e, a, b, s) for e, a, b, s in zip(shape, starts, ends, strides, strict=True)]


@irdl_op_definition
class SliceOp(ViewLikeOp):
    """``x[starts:ends:strides]`` per axis (static bounds, clamped like Python)."""

    name = "fuser.slice"
    input = operand_def()
    starts = prop_def(DenseArrayBase.constr(I64))
    ends = prop_def(DenseArrayBase.constr(I64))
    strides = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

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

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        return [t.with_shape(sliced_shape(t.get_shape(), _ints(self.starts), _ints(self.ends), _ints(self.strides)))]


@irdl_op_definition
class PadOp(FuserOp):
    """Constant padding; ``widths`` is in torch.nn.functional.pad order: pairs
    ``(before, after)`` starting from the last axis. Negative widths crop."""

    name = "fuser.pad"
    input = operand_def()
    pad_value = operand_def()
    widths = prop_def(DenseArrayBase.constr(I64))
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input `,` $pad_value attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, widths: Sequence[int], pad_value: SSAValue) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        super().__init__(
            operands=[input, pad_value],
            properties={"widths": _i64_array(widths)},
            result_types=[t.with_shape(self.out_shape(t.get_shape(), widths))],
        )

    @staticmethod
    def per_axis(rank: int, widths: Sequence[int]) -> list[tuple[int, int]]:
        if len(widths) % 2 or len(widths) // 2 > rank:
            raise InferError(f"pad widths {list(widths)} must be pairs for at most {rank} axes")
        pads = [(0, 0)] * rank
        for k in range(len(widths) // 2):
            pads[rank - 1 - k] = (widths[2 * k], widths[2 * k + 1])
        return pads

    @staticmethod
    def out_shape(shape: Sequence[int], widths: Sequence[int]) -> list[int]:
        pads = PadOp.per_axis(len(shape), widths)
        out = []
        for i, (e, (a, b)) in enumerate(zip(shape, pads, strict=True)):
            if e == DYN:
                out.append(DYN)
                continue
            n = e + a + b
            if n < 0:
                raise InferError(f"pad of axis {i} (extent {e}) by ({a}, {b}) is negative")
            out.append(n)
        return out

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        _scalar_operand(self.pad_value, "pad value")
        return [t.with_shape(self.out_shape(t.get_shape(), _ints(self.widths)))]


def _index_operands(values: Sequence[SSAValue], what: str) -> None:
    """Raise InferError unless every value is an integer scalar."""
    for i, v in enumerate(values):
        if isinstance(v.type, TensorType) or not dtype_of(v.type).is_integer:
            raise InferError(f"{what} operand #{i} must be an integer scalar, got {v.type}")


@irdl_op_definition
class DynamicSliceOp(FuserOp):
    """``x[starts[i]:ends[i]]`` per axis with run-time bounds: one integer scalar
    ``starts`` and one ``ends`` operand per axis, step 1. The bounds are normalized as
    Python (and nvFuser's ``slice``) do: a negative bound counts from the end, then both
    are clamped to ``[0, extent]`` and the end to at least the start. Every result axis
    is symbolic. The frontend builds it where a bound is only known at run time; a
    concretized fusion has a static ``fuser.slice`` instead."""

    name = "fuser.dynamic_slice"
    input = operand_def()
    starts = var_operand_def()
    ends = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$input `starts` `(` $starts `:` type($starts) `)` `ends` `(` $ends `:` type($ends) `)` "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, starts: Sequence[SSAValue], ends: Sequence[SSAValue]
    ) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[input, starts, ends], result_types=[self.out_type(t)])

    @staticmethod
    def out_type(t: TensorType) -> TensorType:
        return t.with_shape([DYN] * t.rank)

    @staticmethod
    def normalize(extent: int, start: int, end: int) -> tuple[int, int]:
        """The bounds ``[start, end)`` taken on an axis of ``extent`` (Python's rules)."""
        lo, hi, _ = slice(start, end).indices(extent)
        return lo, max(lo, hi)

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        if not len(self.starts) == len(self.ends) == t.rank:
            raise InferError(
                f"needs {t.rank} starts and ends for an input of rank {t.rank}, "
                f"got {len(self.starts)} and {len(self.ends)}"
            )
        _index_operands(self.starts, "starts")
        _index_operands(self.ends, "ends")
        return [self.out_type(t)]


@irdl_op_definition
class DynamicPadOp(FuserOp):
    """``fuser.pad`` with run-time widths: one integer scalar ``widths`` operand per
    entry, in torch.nn.functional.pad order (pairs ``(before, after)`` from the last
    axis; negative widths crop). A padded axis is symbolic in the result; an axis with
    no pair keeps its extent. A negative result extent is an error at run time. The
    frontend builds it where a width is only known at run time; a concretized fusion
    has a static ``fuser.pad`` instead."""

    name = "fuser.dynamic_pad"
    input = operand_def()
    pad_value = operand_def()
    widths = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $pad_value `widths` `(` $widths `)` attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(self, input: SSAValue, widths: Sequence[SSAValue], pad_value: SSAValue) -> None:
        t = input.type
        assert isinstance(t, TensorType)
        super().__init__(
            operands=[input, pad_value, widths],
            result_types=[self.out_type(t, len(widths))],
        )

    @staticmethod
    def out_type(t: TensorType, n_widths: int) -> TensorType:
        if n_widths % 2 or n_widths // 2 > t.rank:
            raise InferError(f"{n_widths} pad widths must be pairs for at most {t.rank} axes")
        shape = list(t.get_shape())
        for k in range(n_widths // 2):
            shape[t.rank - 1 - k] = DYN
        return t.with_shape(shape)

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        _scalar_operand(self.pad_value, "pad value")
        _index_operands(self.widths, "widths")
        return [self.out_type(t, len(self.widths))]


@irdl_op_definition
class CatOp(FuserOp):
    """Concatenate tensors along ``dim``; dtypes are promoted."""

    name = "fuser.cat"
    inputs = var_operand_def()
    dim = prop_def(IntegerAttr[I64])
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], dim: int) -> None:
        super().__init__(
            operands=[inputs],
            properties={"dim": IntegerAttr(dim, i64)},
            result_types=[self.out_type([v.type for v in inputs], dim)],
        )

    @staticmethod
    def out_type(types: Sequence[Attribute], dim: int) -> TensorType:
        if not types:
            raise InferError("cat needs at least one tensor")
        ts = []
        for i, t in enumerate(types):
            if not isinstance(t, TensorType):
                raise InferError(f"operand #{i} must be a tensor, got {t}")
            ts.append(t)
        rank = ts[0].rank
        d = normalize_dim(dim, rank)
        shape = list(ts[0].get_shape())
        total = 0
        for i, t in enumerate(ts):
            if t.rank != rank:
                raise InferError(f"operand #{i} has rank {t.rank}, expected {rank}")
            for a in range(rank):
                if a == d:
                    continue
                e = t.get_shape()[a]
                if shape[a] == DYN:
                    shape[a] = e
                elif e not in (DYN, shape[a]):
                    raise InferError(
                        f"operand #{i} has extent {e} on axis {a}, expected {shape[a]}"
                    )
            e = t.get_shape()[d]
            total = DYN if DYN in (total, e) else total + e
        shape[d] = total
        return TensorType(shape, result_type([t.dtype for t in ts]))

    def infer(self) -> list[Attribute]:
        return [self.out_type([v.type for v in self.inputs], self.dim.value.data)]


# =====================================================================================
# Indexing
# =====================================================================================


def _index_tensor(v: SSAValue, what: str) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType) or not t.dtype.is_integer:
        raise InferError(f"{what} must be an integer tensor, got {t}")
    return t


class _IndexingOp(FuserOp):
    input = operand_def()
    index = operand_def()
    dim = prop_def(IntegerAttr[I64])
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input `,` $index attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, index: SSAValue, dim: int) -> None:
        super().__init__(
            operands=[input, index],
            properties={"dim": IntegerAttr(dim, i64)},
            result_types=[self.out_type(input.type, index.type, dim)],
        )

    @classmethod
    def out_type(cls, x: Attribute, index: Attribute, dim: int) -> TensorType:  # pragma: no cover
        raise NotImplementedError

    def get_dim(self) -> int:
        t = self.input.type
        assert isinstance(t, TensorType)
        return normalize_dim(self.dim.value.data, t.rank)

    def infer(self) -> list[Attribute]:
        _tensor_operand(self, self.input, "input")
        return [self.out_type(self.input.type, self.index.type, self.dim.value.data)]


@irdl_op_definition
class IndexSelectOp(_IndexingOp):
    """``index_select(x, index, dim)``: pick the entries ``index`` (1-D) along ``dim``; a
    0-D index picks one entry and keeps the axis (extent 1), as in torch."""

    name = "fuser.index_select"

    @classmethod
    def out_type(cls, x: Attribute, index: Attribute, dim: int) -> TensorType:
        assert isinstance(x, TensorType)
        if not isinstance(index, TensorType) or index.rank > 1 or not index.dtype.is_integer:
            raise InferError(f"index must be a 1-D (or 0-D) integer tensor, got {index}")
        d = normalize_dim(dim, x.rank)
        shape = list(x.get_shape())
        shape[d] = index.get_shape()[0] if index.rank else 1
        return x.with_shape(shape)


@irdl_op_definition
class SelectOp(_IndexingOp):
    """``select(x, index, dim)``: the slice at scalar ``index`` along ``dim`` (removed)."""

    name = "fuser.select"

    @classmethod
    def out_type(cls, x: Attribute, index: Attribute, dim: int) -> TensorType:
        assert isinstance(x, TensorType)
        if isinstance(index, TensorType) or not DType.from_xdsl(index).is_integer:
            raise InferError(f"index must be an integer scalar, got {index}")
        d = normalize_dim(dim, x.rank)
        return x.with_shape([e for i, e in enumerate(x.get_shape()) if i != d])


@irdl_op_definition
class GatherOp(_IndexingOp):
    """torch.gather: ``out[i][j] = x[index[i][j]][j]`` for ``dim = 0``; the output has
    the index's shape (index extents may be smaller than the input's)."""

    name = "fuser.gather"

    @classmethod
    def out_type(cls, x: Attribute, index: Attribute, dim: int) -> TensorType:
        assert isinstance(x, TensorType)
        if not isinstance(index, TensorType) or not index.dtype.is_integer:
            raise InferError(f"index must be an integer tensor, got {index}")
        if index.rank != x.rank:
            raise InferError(f"index rank {index.rank} differs from input rank {x.rank}")
        normalize_dim(dim, x.rank)
        return x.with_shape(index.get_shape())


@irdl_op_definition
class TakeAlongAxisOp(_IndexingOp):
    """numpy.take_along_axis: like gather, but the index's other axes must match the
    input's (or broadcast)."""

    name = "fuser.take_along_axis"

    @classmethod
    def out_type(cls, x: Attribute, index: Attribute, dim: int) -> TensorType:
        assert isinstance(x, TensorType)
        if not isinstance(index, TensorType) or not index.dtype.is_integer:
            raise InferError(f"index must be an integer tensor, got {index}")
        if index.rank != x.rank:
            raise InferError(f"index rank {index.rank} differs from input rank {x.rank}")
        d = normalize_dim(dim, x.rank)
        shape = []
        for a, (e, i) in enumerate(zip(x.get_shape(), index.get_shape(), strict=True)):
            if a == d:
                shape.append(i)
                continue
            try:
                shape.append(broadcast_shapes([e], [i])[0])
            except ShapeError as err:
                raise InferError(
                    f"index extent {i} on axis {a} does not match input extent {e}"
                ) from err
        return x.with_shape(shape)


@irdl_op_definition
class CumsumOp(FuserOp):
    """``cumsum(x, dim)``: inclusive prefix sums along ``dim`` (nvFuser's ``cumsum``); the
    result keeps the input's dtype, floats accumulate in their compute type (f32 for
    half/bfloat16)."""

    name = "fuser.cumsum"
    input = operand_def()
    dim = prop_def(IntegerAttr[I64])
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, dim: int) -> None:
        super().__init__(
            operands=[input],
            properties={"dim": IntegerAttr(dim, i64)},
            result_types=[self.out_type(input.type, dim)],
        )

    @staticmethod
    def out_type(x: Attribute, dim: int) -> TensorType:
        if not isinstance(x, TensorType):
            raise InferError(f"input must be a tensor, got {x}")
        if x.rank == 0:
            raise InferError("input must have at least 1 dimension, got a 0-d tensor")
        if x.dtype == DType.bool:
            raise InferError("input must be a number tensor, got bool")
        normalize_dim(dim, x.rank)
        return x

    def get_dim(self) -> int:
        t = self.input.type
        assert isinstance(t, TensorType)
        return normalize_dim(self.dim.value.data, t.rank)

    def infer(self) -> list[Attribute]:
        _real_only(_tensor_operand(self, self.input, "input"), "input")
        return [self.out_type(self.input.type, self.dim.value.data)]


@irdl_op_definition
class ScatterOp(FuserOp):
    """``scatter(input, index, src, dim)`` (nvFuser's ``scatter``, ``torch.scatter``): a
    copy of ``input`` where, for every position ``p`` of ``index``, the entry at ``p``
    with axis ``dim`` replaced by ``index[p]`` is ``src[p]`` (``src`` a tensor of the
    input's dtype, or a scalar converted to it). ``index`` and a tensor ``src`` have
    the input's rank; ``index`` may be smaller than ``input`` on the other axes and
    than ``src`` on every axis. Indices are in ``[0, extent)``; where several
    positions along ``dim`` name the same entry, the last one wins (torch leaves
    that order undefined on the GPU; fuser's kernel and reference agree on it)."""

    name = "fuser.scatter"
    input = operand_def()
    index = operand_def()
    src = operand_def()
    dim = prop_def(IntegerAttr[I64])
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input `,` $index `,` $src attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, index: SSAValue, src: SSAValue, dim: int) -> None:
        super().__init__(
            operands=[input, index, src],
            properties={"dim": IntegerAttr(dim, i64)},
            result_types=[self.out_type(input.type, index.type, src.type, dim)],
        )

    @staticmethod
    def out_type(x: Attribute, index: Attribute, src: Attribute, dim: int) -> TensorType:
        if not isinstance(x, TensorType):
            raise InferError(f"input must be a tensor, got {x}")
        if x.rank == 0:
            raise InferError("input must have at least 1 dimension, got a 0-d tensor")
        d = normalize_dim(dim, x.rank)
        if not isinstance(index, TensorType) or not index.dtype.is_integer:
            raise InferError(f"index must be an integer tensor, got {index}")
        if index.rank != x.rank:
            raise InferError(f"index rank {index.rank} differs from input rank {x.rank}")
        if isinstance(src, TensorType):
            if src.rank != x.rank:
                raise InferError(f"src rank {src.rank} differs from input rank {x.rank}")
            if src.dtype != x.dtype:
                raise InferError(f"src dtype {src.dtype} differs from input dtype {x.dtype}")
        for a, ie in enumerate(index.get_shape()):
            if ie == DYN:
                continue
            xe = x.get_shape()[a]
            if a != d and xe != DYN and ie > xe:
                raise InferError(f"index extent {ie} exceeds input extent {xe} on axis {a}")
            se = src.get_shape()[a] if isinstance(src, TensorType) else DYN
            if se != DYN and ie > se:
                raise InferError(f"index extent {ie} exceeds src extent {se} on axis {a}")
        return x

    def get_dim(self) -> int:
        t = self.input.type
        assert isinstance(t, TensorType)
        return normalize_dim(self.dim.value.data, t.rank)

    def infer(self) -> list[Attribute]:
        _tensor_operand(self, self.input, "input")
        return [self.out_type(self.input.type, self.index.type, self.src.type, self.dim.value.data)]


# =====================================================================================
# Library ops: a BLAS library runs them (the ``matmul`` scheduler), not a generated kernel
# =====================================================================================

MATMUL_DTYPES = (DType.float16, DType.bfloat16, DType.float32, DType.float64)
"""Element types of ``matmul`` and ``linear`` (cuBLAS's; half types accumulate in f32)."""


def _matmul_operand(v: Attribute, what: str) -> TensorType:
    if not isinstance(v, TensorType):
        raise InferError(f"{what} must be a tensor, got {v}")
    if v.rank == 0:
        raise InferError(f"{what} must have at least 1 dimension, got a 0-d tensor")
    if v.dtype not in MATMUL_DTYPES:
        names = ", ".join(str(d) for d in MATMUL_DTYPES)
        raise InferError(f"{what} has dtype {v.dtype}; matrix products take {names}")
    return v


def _same_dtype(types: Sequence[tuple[str, TensorType]]) -> DType:
    (first, t0), *rest = types
    for what, t in rest:
        if t.dtype != t0.dtype:
            raise InferError(f"{what} has dtype {t.dtype}, but {first} has {t0.dtype}; they must agree")
    return t0.dtype


def _contract(ka: int, kb: int, a: str, b: str) -> None:
    if ka != DYN and kb != DYN and ka != kb:
        raise InferError(f"the contracted extents differ: {ka} in {a}, {kb} in {b}")


@irdl_op_definition
class MatmulOp(FuserOp):
    """``matmul(a, b)`` with ``torch.matmul``'s shape rules (nvFuser's ``matmul``): 1-D
    by 1-D is a dot product (0-d result); a 1-D ``a`` is a row, a 1-D ``b`` a column,
    both dropped from the result; otherwise ``[..., M, K] x [..., K, N]`` with the
    batch axes broadcast. ``a`` and ``b`` have one floating dtype, which the result
    keeps; half types accumulate in float32::

        %c = fuser.matmul %a, %b : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4x16xbf16>) -> !fuser.tensor<8x16xbf16>
    """

    name = "fuser.matmul"
    INFER_FROM_TYPES: ClassVar[bool] = True
    a = operand_def()
    b = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$a `,` $b attr-dict `:` functional-type(operands, results)"

    def __init__(self, a: SSAValue, b: SSAValue) -> None:
        super().__init__(operands=[a, b], result_types=[self.out_type(a.type, b.type)])

    @staticmethod
    def out_type(a: Attribute, b: Attribute) -> TensorType:
        ta, tb = _matmul_operand(a, "operand a"), _matmul_operand(b, "operand b")
        dtype = _same_dtype([("operand a", ta), ("operand b", tb)])
        sa, sb = ta.get_shape(), tb.get_shape()
        _contract(sa[-1], sb[0] if len(sb) == 1 else sb[-2], "operand a", "operand b")
        if len(sa) == 1 and len(sb) == 1:
            return TensorType([], dtype)
        if len(sb) == 1:
            return TensorType(sa[:-1], dtype)
        if len(sa) == 1:
            return TensorType([*sb[:-2], sb[-1]], dtype)
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        return TensorType([*batch, sa[-2], sb[-1]], dtype)

    def infer(self) -> list[Attribute]:
        return [self.out_type(self.a.type, self.b.type)]


@irdl_op_definition
class LinearOp(FuserOp):
    """``linear(input, weight, bias?)``: ``input @ weight.T + bias`` (``torch.nn.functional
    .linear``, nvFuser's ``linear``). ``input`` is ``[..., K]``; ``weight`` is ``[N, K]``
    (result ``[..., N]``) or ``[K]`` (result ``[...]``); ``bias`` is ``[N]`` or 0-d. One
    floating dtype for all; half types accumulate in float32::

        %y = fuser.linear %x, %w, %b : (!fuser.tensor<8x4xbf16>, !fuser.tensor<16x4xbf16>, !fuser.tensor<16xbf16>) -> !fuser.tensor<8x16xbf16>
    """

    name = "fuser.linear"
    INFER_FROM_TYPES: ClassVar[bool] = True
    input = operand_def()
    weight = operand_def()
    bias = opt_operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, weight: SSAValue, bias: SSAValue | None = None) -> None:
        super().__init__(
            operands=[input, weight, [] if bias is None else [bias]],
            result_types=[self.out_type(input.type, weight.type, None if bias is None else bias.type)],
        )

    @staticmethod
    def out_type(x: Attribute, w: Attribute, bias: Attribute | None) -> TensorType:
        tx, tw = _matmul_operand(x, "input"), _matmul_operand(w, "weight")
        named = [("input", tx), ("weight", tw)]
        if tw.rank > 2:
            raise InferError(f"weight must be 1-D or 2-D, got rank {tw.rank}")
        sx, sw = tx.get_shape(), tw.get_shape()
        _contract(sx[-1], sw[-1], "input", "weight")
        out = list(sx[:-1]) + ([sw[0]] if tw.rank == 2 else [])
        if bias is not None:
            if not isinstance(bias, TensorType):
                raise InferError(f"bias must be a tensor, got {bias}")
            named.append(("bias", bias))
            n = sw[0] if tw.rank == 2 else 1
            if bias.rank > 1 or (bias.rank == 1 and bias.get_shape()[0] not in (n, DYN) and n != DYN):
                raise InferError(
                    f"bias has shape {fmt_shape(bias.get_shape())}; it must be 0-d or {fmt_shape([n])} "
                    "(the weight's output features)"
                )
        return TensorType(out, _same_dtype(named))

    def infer(self) -> list[Attribute]:
        return [self.out_type(self.input.type, self.weight.type, None if self.bias is None else self.bias.type)]


# =====================================================================================
# Resharding (multi-device fusions)
# =====================================================================================


@irdl_op_definition
class ReshardOp(FuserOp):
    """``%y = fuser.reshard %x {from = #iterdomain.sharding<[0, 1], DIDx = 0>,
    to = #iterdomain.sharding<[0, 1]>} : (T) -> T``: ``%x`` distributed another way
    (nvFuser's resharding ``set``). On one device it is a copy; across the devices of
    the mesh it is a communication, by the pair of shardings (``kind``):

    ===================  ====================  ==================================
    from                 to                    kind
    ===================  ====================  ==================================
    ``DIDx = a``         replicated            ``allgather`` along ``a``
    ``partial``          replicated            ``allreduce`` (sum)
    ``partial``          ``DIDx = a``          ``reduce_scatter`` along ``a``
    replicated           ``DIDx = a``          ``slice``: each device keeps its part
    ===================  ====================  ==================================

    ``propagate-shardings`` makes every resharding such an op, segmentation gives each
    one a segment of its own and ``lower-communications`` turns it into the ``hir``
    communication. Types are global (operand and result alike) until
    ``localize-shardings`` marks the op ``local``: then they are per-device shapes,
    and the op is a communication that only a host program with a communicator runs.
    """

    name = "fuser.reshard"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    src = prop_def(ShardingAttr, prop_name="from")
    dst = prop_def(ShardingAttr, prop_name="to")
    local = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(
        self, input: SSAValue, src: ShardingAttr, dst: ShardingAttr, result_type: Attribute | None = None
    ) -> None:
        props: dict[str, Attribute] = {"from": src, "to": dst}
        super().__init__(operands=[input], properties=props, result_types=[result_type or input.type])

    @property
    def is_local(self) -> bool:
        return self.local is not None

    @property
    def kind(self) -> str:
        """``allgather``, ``allreduce``, ``reduce_scatter`` or ``slice``."""
        src, dst = self.src, self.dst
        if src.is_partial:
            return "allreduce" if dst.is_replicated else "reduce_scatter"
        return "allgather" if dst.is_replicated else "slice"

    def infer(self) -> list[Attribute]:
        t = _tensor_operand(self, self.input, "input")
        try:
            if not self.is_local:
                self.src.local_shape(t.get_shape())
                self.dst.local_shape(t.get_shape())
                return [TensorType(t.get_shape(), t.element_type)]
            shape = self.dst.local_shape(self.src.global_shape(t.get_shape()))
        except ShardingError as e:
            raise InferError(str(e)) from None
        return [TensorType(shape, t.element_type)]

    def verify_(self) -> None:
        src, dst = self.src, self.dst
        if src.mesh != dst.mesh:
            raise VerifyException(
                f"fuser.reshard: from mesh {src.mesh.devices} and to mesh {dst.mesh.devices} "
                "differ; resharding across meshes is not supported"
            )
        if dst.is_partial:
            raise VerifyException("fuser.reshard: the result cannot be partial sums")
        if src == dst:
            raise VerifyException(f"fuser.reshard: from and to are the same sharding ({src.describe()})")
        if src.axis is not None and dst.axis is not None:
            raise VerifyException(
                f"fuser.reshard: from axis {src.axis} to axis {dst.axis} is an all-to-all, "
                "which is not supported; gather first"
            )
        super().verify_()


COMMUNICATION_OPS: tuple[type[Operation], ...] = (ReshardOp,)
"""Ops that move data between devices: a segment of their own, lowered to ``hir``
communications (``lower-communications``)."""


LIBRARY_OPS: tuple[type[Operation], ...] = (MatmulOp, LinearOp)
"""Ops that a library call runs in a segment of their own (never a generated kernel)."""


def communication_ops(fusion: FusionOp) -> list[Operation]:
    """The ops of ``fusion`` that move data between devices (``COMMUNICATION_OPS``)."""
    return [op for op in fusion.body.block.ops if isinstance(op, COMMUNICATION_OPS)]


def library_ops(fusion: FusionOp) -> list[Operation]:
    """The ops of ``fusion`` that only a library runs (``LIBRARY_OPS``)."""
    return [op for op in fusion.body.block.ops if isinstance(op, LIBRARY_OPS)]


VIEW_OPS: tuple[type[Operation], ...] = (
    BroadcastOp,
    BroadcastInDimOp,
    ExpandOp,
    ReshapeOp,
    PermuteOp,
    SqueezeOp,
    SliceOp,
)

Fuser = Dialect(
    "fuser",
    [
        FusionOp,
        OutputOp,
        ConstantOp,
        FullOp,
        IotaOp,
        SizeOp,
        ReshardOp,
        UniformOp,
        NormalOp,
        *UNARY_OP_CLASSES.values(),
        *BINARY_OP_CLASSES.values(),
        WhereOp,
        ClampOp,
        LerpOp,
        ThresholdOp,
        AddcmulOp,
        CastOp,
        SumOp,
        ProdOp,
        MaxOp,
        MinOp,
        VarOp,
        VarMeanOp,
        WelfordOp,
        BroadcastOp,
        BroadcastInDimOp,
        ExpandOp,
        ReshapeOp,
        PermuteOp,
        SqueezeOp,
        SliceOp,
        PadOp,
        DynamicSliceOp,
        DynamicPadOp,
        CatOp,
        IndexSelectOp,
        SelectOp,
        GatherOp,
        TakeAlongAxisOp,
        CumsumOp,
        ScatterOp,
        MatmulOp,
        LinearOp,
    ],
    [TensorType, ViewAttr, TargetAttr],
)
