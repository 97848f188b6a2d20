"""One fusion reduction as a thread's accumulator: its identity, the dtype it
accumulates in, the fold of a chunk of elements into it, the merge of two partial
states, the combine across threads and the op's results from the final state.

Semantics follow ``fuser_ir/reference.py``: sum/prod accumulate in
``compute_dtype(result dtype)`` (f32 for half/bfloat16, rounded once at the end; int64
for integer sums), max/min in ``compute_dtype(input dtype)`` (int32 for bool) and
propagate NaN, ``var``/``var_mean``/``welford`` accumulate a Welford state (mean, M2,
count) in f32 (f64 for f64): a two-pass fold of each chunk's registers merged by Chan's
formula; ``var = M2 / max(0, n - correction)``; welford's ``n`` is int64. Masked
elements contribute the identity to sums and products and nothing to variances.

Every kernel lowering that reduces uses it: the loop nests of a written schedule
(``loop_nest_reduction.py``, ``loop_nest_compute_at.py``) and the element evaluator
for a reduction over axes of extent 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from fuser.codegen.kernel_builders import same_type_op
from fuser.codegen.lower import complex_ops
from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType, compute_dtype

if TYPE_CHECKING:
    from fuser.codegen.lower.elementwise import ElementEvaluator


def _identity(kind: str, dt: DType) -> float | int:
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dt.is_float:
        return -math.inf if kind == "max" else math.inf
    bits = 32 if dt == DType.int32 else 64
    return -(2 ** (bits - 1)) if kind == "max" else 2 ** (bits - 1) - 1


def _identity_value(ev: ElementEvaluator, kind: str, dt: DType) -> SSAValue:
    """The identity as a constant; the most negative integer is built as ``-MAX - 1``
    (a C literal ``-2147483648`` is not an ``int``)."""
    value = _identity(kind, dt)
    if isinstance(value, int) and not dt.is_float and value < -(2**31 - 1):
        b = ev.b
        return b.val(arith.SubiOp(ev.em.const(value + 1, dt), ev.em.const(1, dt)))
    return ev.em.const(value, dt)


_CROSS_KIND = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "var": "welford"}


def accumulator_dtype(op: Operation) -> DType:
    """The dtype a reduction accumulates in: the compute type of the result for sum
    and prod, of the input for max and min (int32 for bool), f32 (f64 for an f64
    input) for Welford/variance."""
    in_dt = F.dtype_of(op.input.type)  # type: ignore[attr-defined]
    if isinstance(op, F.ReductionOp):
        if op.name.split(".", 1)[1] in ("sum", "prod"):
            return compute_dtype(F.dtype_of(op.result.type))
        return DType.int32 if in_dt.is_bool else compute_dtype(in_dt)
    return DType.float64 if in_dt == DType.float64 else DType.float32


class RowReduction:
    """One fusion reduction as a per-thread accumulator, its cross-thread combine and
    its results (see the module docstring for the dtypes)."""

    def __init__(self, op: Operation, ev: ElementEvaluator, cols: int) -> None:
        self.op = op
        self.ev = ev
        self.b = ev.b
        self.cols = cols
        self.in_dt = F.dtype_of(op.input.type)  # type: ignore[attr-defined]
        self.kind = op.name.split(".", 1)[1] if isinstance(op, F.ReductionOp) else "var"
        self.acc_dt = accumulator_dtype(op)
        self.is_float = self.acc_dt.is_float

    def count_positions(self) -> list[int]:
        """Where the state holds an element count (a Welford state's third value)."""
        return [2] if self.kind == "var" else []

    # -- per thread --
    def init(self) -> list[SSAValue]:
        em = self.ev.em
        if self.kind == "var":
            return [em.const(0.0, self.acc_dt) for _ in range(3)]
        return [_identity_value(self.ev, self.kind, self.acc_dt)]

    def _combine(self, a: SSAValue, v: SSAValue) -> SSAValue:
        b = self.b
        if self.acc_dt.is_complex:
            return complex_ops.combine(b, self.kind, a, v)
        if self.is_float:
            cls = {"sum": arith.AddfOp, "prod": arith.MulfOp, "max": arith.MaximumfOp,
                   "min": arith.MinimumfOp}[self.kind]
        else:
            cls = {"sum": arith.AddiOp, "prod": arith.MuliOp, "max": arith.MaxSIOp,
                   "min": arith.MinSIOp}[self.kind]
        return b.val(same_type_op(cls, a, v))

    def merge(self, a: list[SSAValue], b: list[SSAValue]) -> list[SSAValue]:
        """Two partial states as one (a Welford state (mean, M2, count) by Chan's
        formula)."""
        if self.kind == "var":
            return self._chan(a, b)
        return [self._combine(a[0], b[0])]

    def _chan(self, a: list[SSAValue], c: list[SSAValue]) -> list[SSAValue]:
        """Chan's merge of Welford states ``a`` and ``c`` (an empty one, count 0,
        leaves the other unchanged)."""
        b, em, dt = self.b, self.ev.em, self.acc_dt
        mean_a, m2_a, na = a
        mean_b, m2_b, nb = c
        n = b.addf(na, nb)
        # A count is never NaN: fmax, which the CUDA compiler folds when the counts
        # are constants (fuser_max is an asm max.NaN it cannot see through).
        safe_n = b.val(arith.MaxnumfOp(n, em.const(1.0, dt)))
        ratio = b.divf(nb, safe_n)
        delta = b.subf(mean_b, mean_a)
        mean = b.addf(mean_a, b.mulf(delta, ratio), "mean")
        m2 = b.addf(b.addf(m2_a, m2_b), b.mulf(b.mulf(b.mulf(delta, delta), na), ratio), "m2")
        return [mean, m2, n]

    def update(
        self, state: list[SSAValue] | None, items: Sequence[tuple[SSAValue, SSAValue | None]], duplicates: bool = True
    ) -> list[SSAValue]:
        """Fold the chunk ``items`` (value in the input's compute type, in-bounds
        predicate or None) into ``state`` (None: nothing accumulated yet).
        ``duplicates``: a masked lane holds an element of the same row (a clamped
        load), which leaves max/min unchanged; otherwise (a lane outside the row
        holding anything) max/min select the identity too."""
        b, em = self.b, self.ev.em
        vals = [(em.convert(v, self.in_dt, self.acc_dt), p) for v, p in items]
        if self.kind != "var":
            acc = state[0] if state is not None else None
            ident = None
            for v, p in vals:
                if p is not None and (self.kind in ("sum", "prod") or not duplicates):
                    ident = ident or _identity_value(self.ev, self.kind, self.acc_dt)
                    v = b.select(p, v, ident)
                acc = v if acc is None else self._combine(acc, v)
            assert acc is not None
            return [acc]
        return self._var_update(state, vals)

    def _var_update(self, state: list[SSAValue] | None, vals: list[tuple[SSAValue, SSAValue | None]]) -> list[SSAValue]:
        """Two passes over the chunk's registers (mean, then squared deviations), then
        Chan's merge into ``state``."""
        b, em, dt = self.b, self.ev.em, self.acc_dt
        zero, one = em.const(0.0, dt), em.const(1.0, dt)
        total: SSAValue | None = None
        count: SSAValue | None = None
        static = 0
        for v, p in vals:
            if p is not None:
                v = b.select(p, v, zero)
                c = b.select(p, one, zero)
                count = c if count is None else b.addf(count, c)
            else:
                static += 1
            total = v if total is None else b.addf(total, v)
        assert total is not None
        if count is None:
            nb: SSAValue = em.const(float(static), dt)
            mean_b = b.divf(total, nb, "chunk_mean")
        else:
            nb = count if not static else b.addf(count, em.const(float(static), dt))
            safe = b.val(arith.MaxnumfOp(nb, one))  # a count: see _chan
            mean_b = b.divf(total, safe, "chunk_mean")
        m2_b: SSAValue | None = None
        for v, p in vals:
            d = b.subf(v, mean_b)
            sq = b.mulf(d, d)
            if p is not None:
                sq = b.select(p, sq, zero)
            m2_b = sq if m2_b is None else b.addf(m2_b, sq)
        assert m2_b is not None
        if state is None:
            return [mean_b, m2_b, nb]
        return self._chan(state, [mean_b, m2_b, nb])

    # -- across the row --
    def cross(self, state: list[SSAValue], threads_per_row: int, dims: Sequence[int] = (0,)) -> list[SSAValue]:
        """Combine ``state`` (one or more accumulators) across the threads that differ
        only in the thread axes ``dims`` (``threads_per_row`` of them); every thread
        gets its group's result."""
        kind = _CROSS_KIND[self.kind]
        if threads_per_row == 1:
            return state
        if threads_per_row == 32 and tuple(dims) == (0,):
            return self.b.warp_reduce(state, kind)
        return self.b.block_reduce(state, kind, tuple(dims))

    def cross_cluster(self, state: list[SSAValue]) -> list[SSAValue]:
        """Combine every thread's ``state`` over the blocks of the thread-block cluster
        (instead of ``cross``: its threads are the cluster's); every thread gets the
        result."""
        return self.b.cluster_reduce(state, _CROSS_KIND[self.kind])

    def results(self, state: list[SSAValue]) -> list[SSAValue]:
        """The op's results (compute types of their dtypes, rounded)."""
        b, em = self.b, self.ev.em
        op = self.op
        if self.kind != "var":
            return [em.convert(state[0], self.acc_dt, F.dtype_of(op.results[0].type))]
        mean, m2, _ = state
        if isinstance(op, F.WelfordOp):
            dt = F.dtype_of(op.avg.type)
            return [em.convert(mean, self.acc_dt, dt), em.convert(m2, self.acc_dt, dt),
                    em.const(self.cols, DType.int64)]
        denom = max(self.cols - float(op.correction.value.data), 0.0)  # type: ignore[attr-defined]
        var = b.divf(m2, em.const(denom, self.acc_dt), "var")
        dt = F.dtype_of(op.results[0].type)
        outs = [em.convert(var, self.acc_dt, dt)]
        if isinstance(op, F.VarMeanOp):
            outs.append(em.convert(mean, self.acc_dt, dt))
        return outs
