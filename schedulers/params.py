"""Typed scheduler parameters, and their attribute form.

Each scheduler's heuristic returns one frozen dataclass; codegen consumes it. The
``select-schedulers`` pass stores them as a dictionary attribute (integers as
``i64``, flags as ``true``/``false``, shapes as ``array<i64: ...>``), and
``params_from_attr`` reads them back::

    fuser.schedule = {kind = "pointwise", break_point = 1 : i64, vectorization = 4 : i64,
                      unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 8, 4, 1>}
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute

from fuser.ir.dialects.fuser import FusionOp
from fuser.ir.dialects.iterdomain import PREFETCH_LEVELS

Dim3 = tuple[int, int, int]

SCHEDULE_ATTR = "fuser.schedule"
"""The attribute ``select-schedulers`` writes on a fusion (``{kind = ..., <params>}``)
and the lowering reads (``read_schedule``)."""
REJECTIONS_ATTR = "fuser.schedule_rejections"
"""``select-schedulers{debug=true}``: why each scheduler tried before the chosen one
rejected the fusion (``{kind = "reason", ...}``); ``fd.plan`` reads it."""


@dataclass(frozen=True)
class NoParams:
    """no_op and expr_eval launch no kernel and take no parameters."""


@dataclass(frozen=True)
class PointwiseParams:
    break_point: int
    """0: one flat (1-D) iteration space; k > 0: a 2-D schedule with the axes
    ``[0, k)`` on ``grid.y`` and ``[k, rank)`` on ``x`` (broadcast inputs along one
    side are then loaded once per block row/column)."""
    vectorization: int
    """Elements per vector access (16 bytes / element size by default)."""
    unroll: int
    block: Dim3
    grid: Dim3


@dataclass(frozen=True)
class ReductionParams:
    """Reduction and persistent schedules (inner, outer)."""

    fastest_dim: bool
    """Inner reduction: the reduced axis is the fastest-varying one."""
    vectorization: int
    threads_per_row: int
    """Threads cooperating on one reduction row (inner: ``block.x``; outer:
    ``block.y``, the threads along the reduced axis)."""
    rows_per_block: int
    """Iteration elements handled by one block (inner: ``block.y``; outer: the
    columns ``block.x * vectorization``)."""
    persistent_batch: int
    """Elements (in vectors) each thread keeps live; 1 for a plain reduction."""
    cross_block: bool
    """More than one warp reduces a row (a block-level reduction)."""
    cross_grid: bool
    """More than one block reduces a row (a grid reduction; ``grid.y`` blocks)."""
    block: Dim3
    grid: Dim3
    project_to_inputs: bool = False
    hold_buffers: bool = False
    """Hold the persistent buffers computed in the fusion (a layer-norm backward's
    ``xhat`` and ``dy * w``) in registers at the reductions' loop, as
    ``schedule-fusions`` does by itself only when recomputing them from the held
    inputs would cost too much: fewer instructions an element, more registers."""
    use_shared_memory: bool = False
    """The heuristic's judgement that the row's buffers do not fit registers and
    would fit shared memory. No lowering reads it yet: the buffers are held in
    registers, and what does not fit spills to local memory."""
    buffer_bytes_per_row: int = 0
    aligned_vectors: bool = False
    """Inner rows whose width ``vectorization`` does not divide: each row's places are
    shifted (``iterdomain.align``) so that its groups of ``vectorization`` elements
    start at aligned row-major positions; a group inside the row is one vector
    access, the row's two edge groups are predicated element by element."""
    prefetch: str = ""
    """The cache level (``L2`` or ``L1``; empty: none) into which a persistent grid's
    row loop prefetches the next row of the inputs it holds (``iterdomain.loop
    {prefetch}``)."""


@dataclass(frozen=True)
class OuterPersistentParams:
    """An outer normalization (statistics over the outer axes, then outputs at the
    input's shape computed from them) as fuser runs it: two passes over the input.
    The statistics are an outer reduction (the ``reduction`` kind's shape: column
    vectors on ``TIDx``, rows on ``TIDy`` and split over ``grid.y``, a finishing
    kernel), and the outputs at the input's shape are a pointwise loop nest of their
    own that reads the statistics back. nvFuser's single-pass kernel (the buffers
    held on chip across a grid synchronization) is not implemented: hand-written
    probes of it, rows held in registers over thread-block clusters
    (``benchmarks/outer_norm_cluster_probe.py``) and a grid barrier with the second
    read from L2 (``benchmarks/outer_norm_grid_probe.py``), were slower than these
    three kernels on the H200 but for one shape."""

    stats: ReductionParams
    """The statistics' loop nest (the reductions and what is computed at their shape)."""
    apply: PointwiseParams
    """The loop nest of the tensors at the input's shape (the normalized outputs)."""
    reverse_apply: bool = False
    """The apply kernel's blocks walk the rows backwards (``iterdomain.reverse`` on its
    outermost block id): its first blocks read the rows the statistics kernel read
    last, which are still in L2."""


@dataclass(frozen=True)
class InnerOuterParams:
    """The combined schedule: rows are normalized in a persistent inner reduction,
    and each block accumulates partial column (outer) reductions that a second
    grid-wide step finishes."""

    inner: ReductionParams
    outer_vectorization: int
    outer_threads_per_column: int
    partial_buffer_bytes: int
    """Shared memory per block for the partial outer-reduction results."""
    rows_kind: str
    """The kernels the segment runs as, one per reduction loop nest: the row half's
    scheduler (the outputs computed from no column reduction: ``inner_persistent`` or
    ``reduction``) and its parameters ..."""
    rows: ReductionParams
    cols_kind: str
    """... and the column half's (``outer_persistent`` or ``reduction``)."""
    cols: ReductionParams
    single_kernel: bool = False
    """One kernel over the inputs instead of the halves: ``inner`` with a persistent
    grid of ``inner.grid`` blocks, each looping over its rows, the row sums per
    iteration and the column sums folded across the iterations into per-block partial
    results, which a small finishing kernel adds up."""


@dataclass(frozen=True)
class TransposeParams:
    tile1: int
    """Tile extent along group 1's innermost axis."""
    tile2: int
    """Tile extent along group 2's innermost axis."""
    vectorization1: int
    vectorization2: int
    block: Dim3
    grid: Dim3


Params = (
    NoParams | PointwiseParams | ReductionParams | OuterPersistentParams | InnerOuterParams | TransposeParams
)

PARAMS_TYPES: dict[str, type] = {
    "no_op": NoParams,
    "expr_eval": NoParams,
    "matmul": NoParams,
    "communication": NoParams,
    "pointwise": PointwiseParams,
    "reduction": ReductionParams,
    "inner_persistent": ReductionParams,
    "outer_persistent": OuterPersistentParams,
    "inner_outer_persistent": InnerOuterParams,
    "transpose": TransposeParams,
}


def _to_attr(value: object) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, tuple):
        return DenseArrayBase.from_list(i64, [int(v) for v in value])
    if hasattr(value, "__dataclass_fields__"):
        return DictionaryAttr(params_entries(value))
    raise TypeError(f"cannot store {value!r} as an attribute")


def params_entries(params: object) -> dict[str, Attribute]:
    return {f.name: _to_attr(getattr(params, f.name)) for f in fields(params)}  # type: ignore[arg-type]


def schedule_attr(kind: str, params: object) -> DictionaryAttr:
    """The ``fuser.schedule`` attribute recording scheduler ``kind`` with ``params``
    (``read_schedule``'s inverse)."""
    return DictionaryAttr({"kind": StringAttr(kind)} | params_entries(params))


def _from_attr(attr: Attribute, typ: object) -> object:
    if isinstance(attr, IntegerAttr):
        if attr.type == IntegerType(1):
            return bool(attr.value.data)
        return int(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(int(v) for v in attr.get_values())
    if isinstance(attr, DictionaryAttr) and isinstance(typ, type):
        return params_from_entries(typ, attr.data)
    raise ValueError(f"unexpected attribute {attr} in scheduler parameters")


_NESTED: dict[str, type] = {
    "inner": ReductionParams,
    "rows": ReductionParams,
    "cols": ReductionParams,
    "stats": ReductionParams,
    "apply": PointwiseParams,
}
"""The parameter records nested in others, by field name."""


def params_from_entries(typ: type, entries: dict[str, Attribute]) -> object:
    kwargs: dict[str, object] = {}
    for f in fields(typ):
        if f.name not in entries:
            continue
        kwargs[f.name] = _from_attr(entries[f.name], _NESTED.get(f.name))
    unknown = set(entries) - {f.name for f in fields(typ)}
    if unknown:
        raise ValueError(f"unknown {typ.__name__} fields: {', '.join(sorted(unknown))}")
    return typ(**kwargs)


_POSITIVE = {
    "vectorization", "unroll", "threads_per_row", "rows_per_block", "persistent_batch",
    "tile1", "tile2", "vectorization1", "vectorization2", "outer_vectorization",
    "outer_threads_per_column",
}
"""Fields that must be at least 1; the other integers must be at least 0."""


def _range_problem(params: object) -> str | None:
    for f in fields(params):  # type: ignore[arg-type]
        value = getattr(params, f.name)
        if hasattr(value, "__dataclass_fields__"):
            if (problem := _range_problem(value)) is not None:
                return f"{f.name}.{problem}"
        elif isinstance(value, tuple):
            if len(value) != 3 or any(not isinstance(v, int) or v < 1 for v in value):
                return f"{f.name} must be 3 positive extents, got {list(value)}"
            if f.name == "block" and value[0] * value[1] * value[2] > 1024:
                return f"block {list(value)} has more than 1024 threads"
        elif f.name == "prefetch" and value not in ("", *PREFETCH_LEVELS):
            return f"prefetch must be empty or one of {', '.join(PREFETCH_LEVELS)}, got '{value}'"
        elif isinstance(value, int) and not isinstance(value, bool):
            low = 1 if f.name in _POSITIVE else 0
            if value < low:
                return f"{f.name} must be at least {low}, got {value}"
    return None


class ScheduleAttrError(ValueError):
    """A ``fuser.schedule`` attribute that is not a scheduler's parameters."""


def read_schedule(attr: Attribute) -> tuple[str, object]:
    """``(kind, params)`` of a ``fuser.schedule`` attribute: a dictionary with a known
    ``kind`` and that scheduler's parameters, every field present and in range. The one
    reader: the verifier (``schedule_problem``), ``schedule-fusions`` and
    ``lower-to-kernels`` all use it, so they agree on what is valid and say it alike.
    Raises ``ScheduleAttrError`` naming the problem."""
    if not isinstance(attr, DictionaryAttr):
        raise ScheduleAttrError(f"must be a dictionary, got {attr}")
    entries = dict(attr.data)
    kind = entries.pop("kind", None)
    if not isinstance(kind, StringAttr) or kind.data not in PARAMS_TYPES:
        raise ScheduleAttrError(f"kind must be one of {', '.join(PARAMS_TYPES)}, got {kind}")
    try:
        params = params_from_entries(PARAMS_TYPES[kind.data], entries)
    except (ValueError, TypeError) as e:
        msg = str(e)
        if isinstance(e, TypeError) and "missing" in msg:  # the dataclass constructor's
            msg = "missing fields " + msg.split("missing", 1)[1].split(":", 1)[-1].strip()
        raise ScheduleAttrError(f"bad {kind.data} parameters: {msg}") from None
    if (problem := _range_problem(params)) is not None:
        raise ScheduleAttrError(f"bad {kind.data} parameters: {problem}")
    return kind.data, params


def schedule_problem(attr: Attribute) -> str | None:
    """What is wrong with a ``fuser.schedule`` attribute (``read_schedule``), or None."""
    try:
        read_schedule(attr)
    except ScheduleAttrError as e:
        return str(e)
    return None


FusionOp.SCHEDULE_CHECK = schedule_problem
