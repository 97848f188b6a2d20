"""Builders of kernel-level IR (``kernel.func`` + scf/arith/math/memref/vector).

:class:`KernelBuilder` is a thin layer over xDSL's ``Builder`` with one method per op
the schedulers need, constant folding for Python ints, and value names (``name_hint``)
that the CUDA printer turns into variable names. On top of it, one builder per kernel
shape the schedulers emit; each returns a ``builtin.module`` holding one
``kernel.func`` and documents its argument order and launch grid:

* :class:`PointwiseKernelBuilder`: rank-N elementwise, grid-stride over tiles of
  ``block * vector * unroll`` elements; full tiles use 128-bit ``vector.load``/
  ``vector.store`` (contiguous tensors) with all loads issued before the compute,
  the last partial tile is a guarded scalar loop. Strided (and broadcast, stride 0)
  tensors are indexed through the sizes and their strides.
* :func:`inner_reduction_kernel`: one row per ``threadIdx.y`` of a block (a warp per
  row when ``block = (32, R)``: warp shuffles only; else warp shuffles + shared
  memory), kinds add/mul/max/min and welford (var and mean, numerically stable).
* :func:`outer_reduction_kernel`: column reduction, threads along the contiguous axis
  (coalesced), a loop over rows, then a block reduction over ``threadIdx.y``.
* :func:`inner_persistent_softmax_kernel`: one row per block kept in registers
  (``memref.alloca``, unrolled loops): one read, max, exp-sum, normalize, one write.
* :func:`transpose_kernel`: 32x32 tiles through a shared tile padded by one column.

The body of a pointwise kernel is a callback ``body(b, loaded) -> outputs`` that
emits scalar IR on the loaded input values (already extended to f32 for half and
bfloat16) and returns one value per output, so a lowering maps any expression DAG
of fuser ops onto it::

    def gelu(b: KernelBuilder, xs: list[SSAValue]) -> list[SSAValue]:
        (x,) = xs
        half = b.const(0.5, f32)
        inner = b.mulf(x, b.const(0.7071067811865476, f32))
        return [b.mulf(b.mulf(half, x), b.addf(b.const(1.0, f32), b.math("erf", inner)))]

    module = PointwiseKernelBuilder("gelu", [TensorArg("x", DType.float32)],
                                    [TensorArg("y", DType.float32)], rank=1,
                                    body=gelu).build()
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, scf, vector
from xdsl.dialects import math as mathd
from xdsl.dialects import memref as memrefd
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BFloat16Type,
    ComplexType,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    VectorType,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from fuser.codegen.lowering_error import LoweringError
from fuser.ir.dialects import kernel as k
from fuser.ir.dtypes import DType
from fuser.ir.schedule import BinOp, Const, Expr, Var
from fuser.ir.symbolic import SymInt, evaluate, symbols_of

Value = SSAValue | int
BodyFn = Callable[["KernelBuilder", list[SSAValue]], list[SSAValue]]

MATH_OPS: dict[str, type[Operation]] = {
    "exp": mathd.ExpOp, "exp2": mathd.Exp2Op, "expm1": mathd.ExpM1Op, "log": mathd.LogOp,
    "log2": mathd.Log2Op, "log10": mathd.Log10Op, "log1p": mathd.Log1pOp,
    "sqrt": mathd.SqrtOp, "rsqrt": mathd.RsqrtOp, "tanh": mathd.TanhOp, "sin": mathd.SinOp,
    "cos": mathd.CosOp, "tan": mathd.TanOp, "erf": mathd.ErfOp, "absf": mathd.AbsFOp,
    "ceil": mathd.CeilOp, "floor": mathd.FloorOp, "atan": mathd.AtanOp,
    "sinh": mathd.SinhOp, "cosh": mathd.CoshOp, "asin": mathd.AsinOp, "acos": mathd.AcosOp,
    "round": mathd.RoundEvenOp, "trunc": mathd.TruncOp,
}


def global_memref(dtype: DType) -> MemRefType:
    """The kernel-argument type of a global tensor: a flat ``memref<?xT>``."""
    return MemRefType(dtype.to_xdsl(), [DYNAMIC_INDEX])


def is_half(t: Attribute) -> bool:
    """A storage float narrower than f32 (half, bfloat16, float8): computed in f32."""
    return isinstance(t, Float16Type | BFloat16Type | Float8E4M3FNType | Float8E5M2Type)


_DEFAULTS: dict[type[Operation], tuple[dict[str, Attribute], dict[str, Attribute]] | None] = {}


def same_type_op(cls: type[Operation], *operands: SSAValue) -> Operation:
    """``cls(*operands)`` for an op whose result has its first operand's type and
    whose properties are its constructor's defaults (arith and math arithmetic),
    built through ``Operation.create`` with the properties and attributes the
    constructor gave the first one of its class: the same op at a third of the cost
    (the lowering of a large fusion builds hundreds of thousands of them)."""
    defaults = _DEFAULTS.get(cls, False)
    if defaults is False:
        op = cls(*operands)  # type: ignore[call-arg]
        typed = len(op.results) == 1 and op.results[0].type == operands[0].type
        _DEFAULTS[cls] = (dict(op.properties), dict(op.attributes)) if typed else None
        return op
    if defaults is None:
        return cls(*operands)  # type: ignore[call-arg]
    props, attrs = defaults
    return cls.create(operands=operands, result_types=[operands[0].type], properties=props, attributes=attrs)


_INDEX = IndexType()
_INDEX_ATTRS: dict[int, IntegerAttr] = {}


def index_constant(value: int) -> arith.ConstantOp:
    """``arith.constant value : index`` (its attribute made once per value)."""
    attr = _INDEX_ATTRS.get(value)
    if attr is None:
        attr = _INDEX_ATTRS[value] = IntegerAttr(value, _INDEX)
    return arith.ConstantOp.create(properties={"value": attr}, result_types=[_INDEX])


def constant(attr: IntegerAttr | FloatAttr) -> arith.ConstantOp:
    """``arith.constant`` of ``attr`` (without the constructor's argument handling)."""
    return arith.ConstantOp.create(properties={"value": attr}, result_types=[attr.type])


def _int_value(v: Value) -> int | None:
    """``v`` as an int when it is one or an integer ``arith.constant``."""
    if isinstance(v, int):
        return v
    if isinstance(v, SSAValue) and isinstance(v.owner, arith.ConstantOp) and isinstance(v.owner.value, IntegerAttr):
        return v.owner.value.value.data
    return None


def _same_value(a: Value, b: Value) -> bool:
    if a is b:
        return True
    ia = _int_value(a)
    return ia is not None and ia == _int_value(b)


def recombined(a: Value, b: Value) -> SSAValue | None:
    """``x`` when ``a + b`` (either order) is ``(x / c) * c + x % c``: the merge of a
    split, as an index goes through a reshape and back (the loop nest splits a flat
    index into a view's axes, a reshape merges them again). The identity holds for
    C's truncating division at every sign. GPT-2's loss backward spent half its
    instructions on such divisions."""
    for q, r in ((a, b), (b, a)):
        if not (isinstance(q, SSAValue) and isinstance(q.owner, arith.MuliOp)):
            continue
        if not (isinstance(r, SSAValue) and isinstance(r.owner, arith.RemSIOp)):
            continue
        x, c = r.owner.lhs, r.owner.rhs
        for quot, factor in ((q.owner.lhs, q.owner.rhs), (q.owner.rhs, q.owner.lhs)):
            div = quot.owner
            if (
                _same_value(factor, c)
                and isinstance(div, arith.DivSIOp)
                and div.lhs is x
                and _same_value(div.rhs, c)
            ):
                return x
    return None


class KernelBuilder:
    """Builds one ``kernel.func``: arguments by name, then ops at the insertion point."""

    def __init__(self, name: str, args: Sequence[tuple[str, Attribute]],
                 block_size: Sequence[int], index_bits: int = 64,
                 cluster_size: Sequence[int] | None = None) -> None:
        self.func = k.FuncOp(name, [t for _, t in args], block_size, index_bits, cluster_size)
        self.module = ModuleOp([self.func])
        self.block_size = self.func.get_block_size()
        self._args: dict[str, SSAValue] = {}
        for (n, _), a in zip(args, self.func.args, strict=True):
            a.name_hint = n
            self._args[n] = a
        self.b = Builder(InsertPoint.at_end(self.func.body.block))
        self.symbols: dict[str, tuple[SSAValue, int]] = {}
        """Symbolic extents (``fuser.ir.symbolic``): name -> (its int64 argument, its
        value at the launch being lowered)."""
        self._entry: list[Operation] = []
        self._sym_memo: dict[object, SSAValue] = {}
        self.prefetched: dict[SSAValue, str] = {}
        """Kernel arguments whose loads ``finish`` prefetches one iteration ahead, to
        their cache level (the inputs a schedule's ``iterdomain.loop {prefetch}``
        names)."""

    def declare_symbol(self, name: str, arg: str, value: int) -> None:
        """The kernel argument ``arg`` holds symbolic extent ``name`` (``value`` here)."""
        self.symbols[name] = (self._args[arg], int(value))

    # ---- basics --------------------------------------------------------------------
    def arg(self, name: str) -> SSAValue:
        return self._args[name]

    def op(self, op: Operation, name: str | None = None) -> Operation:
        self.b.insert(op)
        if name is not None and len(op.results) == 1:
            op.results[0].name_hint = name
        return op

    def val(self, op: Operation, name: str | None = None) -> SSAValue:
        return self.op(op, name).results[0]

    def finish(self) -> ModuleOp:
        """The kernel; a warp-uniform guard of all its stores (the rows of a batch)
        becomes one ``if`` around its body (``codegen/uniform_guard.py``); pure ops
        nothing reads are erased (``codegen/dead_ops.py``); with
        ``FUSER_PIPELINE_LOADS=1``, a loop that waits for other threads loads its next
        iteration's inputs into registers (``codegen/pipeline_loads.py``, off by
        default); the loads of the inputs in ``prefetched`` (the schedule's
        ``iterdomain.loop {prefetch}``) are prefetched one iteration ahead
        (``codegen/prefetch_loads.py``; ``FUSER_PREFETCH`` overrides). It is
        verified when ``FUSER_VERIFY_KERNELS`` is set (the test suite sets it; it
        costs a third of the lowering of a large fusion), as ``fuser-opt`` verifies
        the module after ``lower-to-kernels``. A kernel whose shared tiles and
        block-reduction workspace exceed ``kernel.STATIC_SHARED_LIMIT`` is a
        ``LoweringError`` here, not a ptxas error later."""
        from fuser.codegen.dead_ops import erase_dead_ops
        from fuser.codegen.pipeline_loads import pipeline_loads, pipeline_setting
        from fuser.codegen.prefetch_loads import prefetch_kernel
        from fuser.codegen.uniform_guard import hoist_uniform_guard

        self.b.insert(k.ReturnOp())
        if over := self.func.shared_memory_overflow():
            raise LoweringError(
                f"kernel {self.func.sym_name.data}: its shared tiles and reduction workspace take "
                f"{over[0]} bytes ({over[1]}), more than the {k.STATIC_SHARED_LIMIT} bytes of "
                "static shared memory: a smaller block, or fewer slots a tile")
        hoist_uniform_guard(self.func)
        erase_dead_ops(self.func.body.block)
        pipelined, cap = pipeline_setting()
        if pipelined:
            pipeline_loads(self.func, cap)
        prefetch_kernel(self.func, self.prefetched)
        if os.environ.get("FUSER_VERIFY_KERNELS", "") not in ("", "0"):
            self.module.verify()
        return self.module

    # ---- constants and index arithmetic (Python ints fold) ---------------------------
    def index(self, v: Value) -> SSAValue:
        if isinstance(v, SymInt):
            sym = self._symbolic(v)
            if sym is not None:
                return sym
        if isinstance(v, int):
            return self.val(index_constant(int(v)))
        return v

    def _symbolic(self, v: SymInt) -> SSAValue | None:
        """``v``'s formula over the kernel's extent arguments, computed once at the
        kernel's entry; None (use the value) when the formula reads an extent this
        kernel does not take, or does not give ``v``'s value here."""
        names = symbols_of(v.expr)
        if not names or not names <= self.symbols.keys():
            return None
        if evaluate(v.expr, {n: self.symbols[n][1] for n in names}) != int(v):
            return None
        return self._entry_value(v.expr)

    def _entry_value(self, e: Expr) -> SSAValue:
        hit = self._sym_memo.get(e)
        if hit is not None:
            return hit
        if isinstance(e, Var):
            op: Operation = arith.IndexCastOp(self.symbols[e.name][0], IndexType())
            op.results[0].name_hint = f"{e.name}_idx"
        elif isinstance(e, Const):
            op = arith.ConstantOp(IntegerAttr(int(e.value), IndexType()))
        else:
            assert isinstance(e, BinOp)
            if e.op == "ceilDiv":  # (lhs + rhs - 1) / rhs: extents are non-negative
                num = self._entry_value(BinOp("-", BinOp("+", e.lhs, e.rhs), Const(1)))
                op = arith.DivSIOp(num, self._entry_value(e.rhs))
            else:
                lhs, rhs = self._entry_value(e.lhs), self._entry_value(e.rhs)
                cls = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "/": arith.DivSIOp,
                       "%": arith.RemSIOp}[e.op]
                op = cls(lhs, rhs)  # type: ignore[call-arg]
        block = self.func.body.block
        if self._entry:
            block.insert_op_after(op, self._entry[-1])
        elif block.first_op is not None:
            block.insert_op_before(op, block.first_op)
        else:
            block.add_op(op)
        self._entry.append(op)
        out = self._sym_memo[e] = op.results[0]
        return out

    def const(self, value: float | int | bool, ty: Attribute) -> SSAValue:
        if isinstance(ty, AnyFloat):
            return self.val(constant(FloatAttr(float(value), ty)))
        if isinstance(ty, IndexType):
            return self.val(index_constant(int(value)))
        return self.val(constant(IntegerAttr(int(value), ty)))

    def _ibin(self, cls: type[Operation], a: Value, b: Value, fold: Callable[[int, int], int],
              name: str | None, unit: int | None = None, zero: int | None = None) -> Value:
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        if unit is not None and b == unit:
            return a
        if unit is not None and a == unit and cls in (arith.AddiOp, arith.MuliOp):
            return b
        if zero is not None and (a == zero or b == zero) and cls is arith.MuliOp:
            return 0
        return self.val(same_type_op(cls, self.index(a), self.index(b)), name)

    def add(self, a: Value, b: Value, name: str | None = None) -> Value:
        whole = recombined(a, b)
        if whole is not None:
            return whole
        return self._ibin(arith.AddiOp, a, b, lambda x, y: x + y, name, unit=0)

    def sub(self, a: Value, b: Value, name: str | None = None) -> Value:
        return self._ibin(arith.SubiOp, a, b, lambda x, y: x - y, name, unit=0)

    def mul(self, a: Value, b: Value, name: str | None = None) -> Value:
        return self._ibin(arith.MuliOp, a, b, lambda x, y: x * y, name, unit=1, zero=0)

    def div(self, a: Value, b: Value, name: str | None = None) -> Value:
        return self._ibin(arith.DivSIOp, a, b, lambda x, y: x // y, name, unit=1)

    def rem(self, a: Value, b: Value, name: str | None = None) -> Value:
        return self._ibin(arith.RemSIOp, a, b, lambda x, y: x % y, name)

    def ceil_div(self, a: Value, b: Value, name: str | None = None) -> Value:
        return self.div(self.add(a, self.sub(b, 1)), b, name)

    def cmp(self, pred: str, a: Value, b: Value, name: str | None = None) -> SSAValue:
        """Integer/index compare, ``pred`` one of slt, sle, sgt, sge, eq, ne."""
        return self.val(arith.CmpiOp(self.index(a), self.index(b), pred), name)

    def and_(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.AndIOp(a, b), name)

    def select(self, c: SSAValue, a: Value, b: Value, name: str | None = None) -> SSAValue:
        return self.val(arith.SelectOp(c, self.index(a), self.index(b)), name)

    # ---- float arithmetic ----------------------------------------------------------
    def addf(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.AddfOp(a, b), name)

    def subf(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.SubfOp(a, b), name)

    def mulf(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.MulfOp(a, b), name)

    def divf(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.DivfOp(a, b), name)

    def maxf(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.MaximumfOp(a, b), name)

    def minf(self, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.MinimumfOp(a, b), name)

    def cmpf(self, pred: str, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(arith.CmpfOp(a, b, pred), name)

    def math(self, fn: str, a: SSAValue, name: str | None = None) -> SSAValue:
        return self.val(MATH_OPS[fn](a), name)  # type: ignore[call-arg]

    def combine(self, kind: str, a: SSAValue, b: SSAValue, name: str | None = None) -> SSAValue:
        """``a kind b`` for a reduction kind (add, mul, max, min) on floats."""
        ops = {"add": self.addf, "mul": self.mulf, "max": self.maxf, "min": self.minf}
        return ops[kind](a, b, name)

    def to_compute(self, v: SSAValue) -> SSAValue:
        """f16/bf16 -> f32 (compute in float); other types unchanged."""
        return self.val(arith.ExtFOp(v, f32)) if is_half(v.type) else v

    def to_storage(self, v: SSAValue, ty: Attribute) -> SSAValue:
        """A computed value to a tensor's element type (rounding to nearest even). A
        value widened exactly from that type (a bf16 value computed in f32) is that
        value: widening then rounding back gives it again."""
        if v.type == ty:
            return v
        if isinstance(v.owner, arith.ExtFOp) and v.owner.input.type == ty:
            return v.owner.input
        if isinstance(v.type, AnyFloat) and isinstance(ty, AnyFloat):
            if v.type.bitwidth > ty.bitwidth:
                return self.val(arith.TruncFOp(v, ty))
            return self.val(arith.ExtFOp(v, ty))
        if isinstance(v.type, AnyFloat) and isinstance(ty, IntegerType):
            return self.val(arith.FPToSIOp(v, ty))
        if isinstance(v.type, IntegerType) and isinstance(ty, AnyFloat):
            return self.val(arith.SIToFPOp(v, ty))
        raise ValueError(f"no conversion from {v.type} to {ty}")

    # ---- launch indices ------------------------------------------------------------
    def thread_id(self, d: str = "x") -> Value:
        if self.block_size["xyz".index(d)] == 1:
            return 0
        return self.val(k.ThreadIdOp(d), f"tid{d}")

    def block_id(self, d: str = "x") -> SSAValue:
        return self.val(k.BlockIdOp(d), f"bid{d}")

    def grid_dim(self, d: str = "x") -> SSAValue:
        return self.val(k.GridDimOp(d), f"nblocks{d}")

    # ---- memory --------------------------------------------------------------------
    def load(self, mem: SSAValue, idx: Sequence[Value], name: str | None = None) -> SSAValue:
        return self.val(memrefd.LoadOp.get(mem, [self.index(i) for i in idx]), name)

    def store(self, v: SSAValue, mem: SSAValue, idx: Sequence[Value]) -> None:
        self.op(memrefd.StoreOp.get(v, mem, [self.index(i) for i in idx]))

    def vload(self, mem: SSAValue, offset: Value, lanes: int,
              name: str | None = None) -> list[SSAValue]:
        """A ``lanes``-wide vector load at ``offset``, returned as its lanes. xDSL's
        vectors hold no complex elements: complex lanes are loaded one by one."""
        assert isinstance(mem.type, MemRefType)
        if isinstance(mem.type.element_type, ComplexType):
            return [self.load(mem, [self.add(offset, j)]) for j in range(lanes)]
        vt = VectorType(mem.type.element_type, [lanes])
        v = self.val(vector.LoadOp(mem, [self.index(offset)], vt), name)
        return [self.val(vector.ExtractOp(v, [j], mem.type.element_type)) for j in range(lanes)]

    def vstore(self, values: Sequence[SSAValue], mem: SSAValue, offset: Value) -> None:
        """Store ``values`` to consecutive elements from ``offset`` (one vector store;
        complex values one by one, as in ``vload``)."""
        if isinstance(values[0].type, ComplexType):
            for j, v in enumerate(values):
                self.store(v, mem, [self.add(offset, j)])
            return
        v = self.val(k.FromElementsOp(list(values)))
        self.op(vector.StoreOp(v, mem, [self.index(offset)]))

    def alloca(self, shape: Sequence[int], ty: Attribute, name: str | None = None) -> SSAValue:
        return self.val(memrefd.AllocaOp.get(ty, shape=list(shape)), name)

    def shared(self, shape: Sequence[int], ty: Attribute, padding: int = 0,
               name: str | None = None) -> SSAValue:
        return self.val(k.SharedAllocOp(shape, ty, padding), name)

    def barrier(self) -> None:
        self.op(k.BarrierOp())

    def warp_reduce(self, values: Sequence[SSAValue], kind: str) -> list[SSAValue]:
        return list(self.op(k.WarpReduceOp(values, kind)).results)

    def block_reduce(self, values: Sequence[SSAValue], kind: str,
                     dims: Sequence[int] = (0,)) -> list[SSAValue]:
        return list(self.op(k.BlockReduceOp(values, kind, dims)).results)

    def cluster_reduce(self, values: Sequence[SSAValue], kind: str) -> list[SSAValue]:
        return list(self.op(k.ClusterReduceOp(values, kind)).results)

    def cluster_barrier(self) -> None:
        self.op(k.ClusterBarrierOp())

    # ---- control flow --------------------------------------------------------------
    def for_(self, lb: Value, ub: Value, step: Value,
             body: Callable[[SSAValue, list[SSAValue]], Sequence[SSAValue]],
             inits: Sequence[SSAValue] = (), unroll: bool = False,
             iv_name: str | None = None) -> list[SSAValue]:
        """``scf.for``; ``body(iv, carried)`` returns the next carried values."""
        blk = Block(arg_types=[IndexType()] + [v.type for v in inits])
        if iv_name:
            blk.args[0].name_hint = iv_name
        for a, v in zip(blk.args[1:], inits, strict=True):
            a.name_hint = v.name_hint
        op = scf.ForOp(self.index(lb), self.index(ub), self.index(step), list(inits),
                       Region(blk))
        if unroll:
            op.attributes[k.UNROLL_ATTR] = UnitAttr()
        self.b.insert(op)
        saved = self.b.insertion_point
        self.b.insertion_point = InsertPoint.at_end(blk)
        nxt = body(blk.args[0], list(blk.args[1:]))
        self.b.insert(scf.YieldOp(*nxt))
        self.b.insertion_point = saved
        for r, v in zip(op.results, inits, strict=True):
            r.name_hint = v.name_hint
        return list(op.results)

    def if_(self, cond: SSAValue | bool, then: Callable[[], Sequence[SSAValue]],
            else_: Callable[[], Sequence[SSAValue]] | None = None,
            result_types: Sequence[Attribute] = (), names: Sequence[str] = ()) -> list[SSAValue]:
        """``scf.if``; each branch callback returns the yielded values. A condition
        folded to a Python bool emits only the branch taken, inline."""
        if isinstance(cond, bool):
            fn = then if cond else else_
            return list(fn()) if fn is not None else []
        regions = []
        for fn in (then, else_):
            if fn is None:
                regions.append(Region())
                continue
            blk = Block()
            saved = self.b.insertion_point
            self.b.insertion_point = InsertPoint.at_end(blk)
            vals = fn()
            self.b.insert(scf.YieldOp(*vals))
            self.b.insertion_point = saved
            regions.append(Region(blk))
        op = scf.IfOp(cond, list(result_types), regions[0], regions[1])
        self.b.insert(op)
        for r, n in zip(op.results, names, strict=False):
            r.name_hint = n
        return list(op.results)


# ---- argument descriptions -------------------------------------------------------------


@dataclass(frozen=True)
class TensorArg:
    """A global tensor of a pointwise kernel: contiguous (flat index = linear index of
    the iteration space) or strided (one ``NAME_stride{d}`` argument per dimension)."""

    name: str
    dtype: DType
    contiguous: bool = True


@dataclass
class PointwiseKernelBuilder:
    """Elementwise ``outputs = body(inputs)`` over a rank-``rank`` iteration space.

    Arguments, in order: input pointers, output pointers, ``n`` (the number of
    elements), then when any tensor is strided ``size0..size{rank-1}`` and each
    strided tensor's ``NAME_stride0..``. Launch: 1-D grid of any size (grid-stride),
    block ``(block_size, 1, 1)``; contiguous tensors must be aligned to
    ``vector_width`` elements (the interpreter checks it).
    """

    name: str
    inputs: list[TensorArg]
    outputs: list[TensorArg]
    rank: int
    body: BodyFn
    vector_width: int = 4
    unroll: int = 2
    block_size: int = 128
    index_bits: int = 64
    _offsets: dict[tuple[int, str], Value] = field(default_factory=dict, repr=False)

    def arg_names(self) -> list[str]:
        names = [t.name for t in self.inputs + self.outputs] + ["n"]
        if any(not t.contiguous for t in self.inputs + self.outputs):
            names += [f"size{d}" for d in range(self.rank)]
            for t in self.inputs + self.outputs:
                if not t.contiguous:
                    names += [f"{t.name}_stride{d}" for d in range(self.rank)]
        return names

    def build(self) -> ModuleOp:
        tensors = {t.name: t for t in self.inputs + self.outputs}
        args = [(n, global_memref(tensors[n].dtype) if n in tensors else IndexType())
                for n in self.arg_names()]
        b = KernelBuilder(self.name, args, (self.block_size, 1, 1), self.index_bits)
        V, U, B = self.vector_width, self.unroll, self.block_size
        tile = B * V * U
        n = b.arg("n")
        tid = b.thread_id("x")
        ntiles = b.ceil_div(n, tile, "ntiles")

        def tile_body(t: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            start = b.mul(t, tile, "start")
            full = b.cmp("sle", b.add(start, tile), n, "full")

            def fast() -> list[SSAValue]:
                loaded: list[list[list[SSAValue]]] = []  # [unroll][input][lane]
                offs = [b.add(start, b.mul(b.add(tid, u * B), V), f"off{u}") for u in range(U)]
                for off in offs:  # every load in flight before the first use
                    loaded.append([self._load_lanes(b, t_, off, V) for t_ in self.inputs])
                for u, off in enumerate(offs):
                    lanes = [self._compute(b, [loaded[u][i][j] for i in range(len(self.inputs))])
                             for j in range(V)]
                    for o, t_ in enumerate(self.outputs):
                        self._store_lanes(b, t_, [lanes[j][o] for j in range(V)], off)
                return []

            def tail() -> list[SSAValue]:
                def elem(j: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                    i = b.add(start, j, "i")

                    def in_bounds() -> list[SSAValue]:
                        vals = [self._load_lanes(b, t_, i, 1)[0] for t_ in self.inputs]
                        outs = self._compute(b, vals)
                        for o, t_ in enumerate(self.outputs):
                            self._store_lanes(b, t_, [outs[o]], i)
                        return []

                    b.if_(b.cmp("slt", i, n), in_bounds)
                    return []

                b.for_(tid, tile, B, elem, iv_name="j")
                return []

            b.if_(full, fast, tail)
            return []

        b.for_(b.block_id("x"), ntiles, b.grid_dim("x"), tile_body, iv_name="t")
        return b.finish()

    def _compute(self, b: KernelBuilder, vals: list[SSAValue]) -> list[SSAValue]:
        outs = self.body(b, [b.to_compute(v) for v in vals])
        if len(outs) != len(self.outputs):
            raise ValueError(f"pointwise kernel {self.name}: the body returned {len(outs)} "
                             f"values for {len(self.outputs)} outputs")
        return [b.to_storage(v, t.dtype.to_xdsl()) for v, t in zip(outs, self.outputs,
                                                                   strict=True)]

    def _strided_offset(self, b: KernelBuilder, t: TensorArg, i: Value) -> Value:
        rem: Value = i
        off: Value = 0
        for d in reversed(range(self.rank)):
            size = b.arg(f"size{d}")
            idx = b.rem(rem, size) if d > 0 else rem
            off = b.add(off, b.mul(idx, b.arg(f"{t.name}_stride{d}")))
            if d > 0:
                rem = b.div(rem, size)
        return off

    def _load_lanes(self, b: KernelBuilder, t: TensorArg, off: Value, lanes: int) -> list[SSAValue]:
        mem = b.arg(t.name)
        if t.contiguous and lanes > 1:
            return b.vload(mem, off, lanes, f"{t.name}_v")
        if t.contiguous:
            return [b.load(mem, [off])]
        return [b.load(mem, [self._strided_offset(b, t, b.add(off, j))]) for j in range(lanes)]

    def _store_lanes(self, b: KernelBuilder, t: TensorArg, vals: list[SSAValue],
                     off: Value) -> None:
        mem = b.arg(t.name)
        if t.contiguous and len(vals) > 1:
            b.vstore(vals, mem, off)
        elif t.contiguous:
            b.store(vals[0], mem, [off])
        else:
            for j, v in enumerate(vals):
                b.store(v, mem, [self._strided_offset(b, t, b.add(off, j))])


# ---- reductions ------------------------------------------------------------------------


def _identity(kind: str) -> float:
    return {"add": 0.0, "mul": 1.0, "max": -math.inf, "min": math.inf}[kind]


def _welford_update(b: KernelBuilder, acc: list[SSAValue], x: SSAValue) -> list[SSAValue]:
    mean, m2, cnt = acc
    cnt1 = b.addf(cnt, b.const(1.0, f32), "count")
    delta = b.subf(x, mean, "delta")
    mean1 = b.addf(mean, b.divf(delta, cnt1), "mean")
    m21 = b.addf(m2, b.mulf(delta, b.subf(x, mean1)), "m2")
    return [mean1, m21, cnt1]


def inner_reduction_kernel(name: str, in_dtype: DType, out_dtype: DType, kind: str,
                           block: tuple[int, int] = (128, 1), index_bits: int = 64,
                           correction: int = 1) -> ModuleOp:
    """Reduce each row of ``x[rows, cols]`` (strides ``x_stride0``, ``x_stride1``).

    Arguments: ``x, y, rows, cols, x_stride0, x_stride1`` (``welford``: ``x, var, mean,
    ...``, var with ``correction``). Block ``(bx, by)``: ``by`` rows per block, ``bx``
    threads per row; grid ``ceil(rows / by)``. ``bx == 32`` reduces with warp shuffles
    only; otherwise ``bx`` must be a multiple of 32 (warp shuffles + shared memory).
    """
    bx, by = block
    ty_out = out_dtype.to_xdsl()
    outs = ["var", "mean"] if kind == "welford" else ["y"]
    args: list[tuple[str, Attribute]] = [("x", global_memref(in_dtype))]
    args += [(o, global_memref(out_dtype)) for o in outs]
    args += [(n, IndexType()) for n in ("rows", "cols", "x_stride0", "x_stride1")]
    b = KernelBuilder(name, args, (bx, by, 1), index_bits)
    x, rows, cols = b.arg("x"), b.arg("rows"), b.arg("cols")
    tx, ty = b.thread_id("x"), b.thread_id("y")
    row = b.add(b.mul(b.block_id("x"), by), ty, "row")
    row_ok = b.cmp("slt", row, rows, "row_ok")
    # Threads of a row past the end still join the reductions (they are barriers).
    ub = b.select(row_ok, cols, 0, "row_cols")
    row_off = b.mul(row, b.arg("x_stride0"), "row_off")
    if kind == "welford":
        inits = [b.const(0.0, f32) for _ in range(3)]
    else:
        inits = [b.const(_identity(kind), f32)]
    for v, n in zip(inits, ["acc_mean", "acc_m2", "acc_n"] if kind == "welford" else ["acc"],
                    strict=True):
        v.name_hint = n

    def body(c: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        v = b.to_compute(b.load(x, [b.add(row_off, b.mul(c, b.arg("x_stride1")))], "v"))
        if kind == "welford":
            return _welford_update(b, acc, v)
        return [b.combine(kind, acc[0], v)]

    acc = b.for_(tx, ub, bx, body, inits, iv_name="c")
    if bx == 32:
        red = b.warp_reduce(acc, kind)
    else:
        red = b.block_reduce(acc, kind, (0,))
    store_ok = b.and_(b.cmp("eq", tx, 0), row_ok, "store_ok")

    def store() -> list[SSAValue]:
        if kind == "welford":
            mean, m2, cnt = red
            var = b.divf(m2, b.subf(cnt, b.const(float(correction), f32)), "var")
            b.store(b.to_storage(var, ty_out), b.arg("var"), [row])
            b.store(b.to_storage(mean, ty_out), b.arg("mean"), [row])
        else:
            b.store(b.to_storage(red[0], ty_out), b.arg("y"), [row])
        return []

    b.if_(store_ok, store)
    return b.finish()


def outer_reduction_kernel(name: str, in_dtype: DType, out_dtype: DType, kind: str,
                           block: tuple[int, int] = (32, 8), index_bits: int = 64) -> ModuleOp:
    """Reduce the columns of ``x[rows, cols]``: ``y[c] = reduce_r x[r, c]``.

    Arguments: ``x, y, rows, cols, x_stride0, x_stride1``. Block ``(bx, by)``: ``bx``
    consecutive columns (coalesced when ``x_stride1 == 1``), ``by`` threads stride over
    the rows, then a block reduction over ``threadIdx.y``; grid ``ceil(cols / bx)``.
    """
    bx, by = block
    args: list[tuple[str, Attribute]] = [("x", global_memref(in_dtype)),
                                         ("y", global_memref(out_dtype))]
    args += [(n, IndexType()) for n in ("rows", "cols", "x_stride0", "x_stride1")]
    b = KernelBuilder(name, args, (bx, by, 1), index_bits)
    x, rows, cols = b.arg("x"), b.arg("rows"), b.arg("cols")
    tx, ty = b.thread_id("x"), b.thread_id("y")
    col = b.add(b.mul(b.block_id("x"), bx), tx, "col")
    col_ok = b.cmp("slt", col, cols, "col_ok")
    ub = b.select(col_ok, rows, 0, "col_rows")
    col_off = b.mul(col, b.arg("x_stride1"), "col_off")
    init = b.const(_identity(kind), f32)
    init.name_hint = "acc"

    def body(r: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        v = b.to_compute(b.load(x, [b.add(b.mul(r, b.arg("x_stride0")), col_off)], "v"))
        return [b.combine(kind, acc[0], v)]

    (acc,) = b.for_(ty, ub, by, body, [init], iv_name="r")
    red = b.block_reduce([acc], kind, (1,))[0] if by > 1 else acc
    ok = col_ok if by == 1 else b.and_(b.cmp("eq", ty, 0), col_ok, "store_ok")
    b.if_(ok, lambda: (b.store(b.to_storage(red, out_dtype.to_xdsl()), b.arg("y"), [col]), [])[1])
    return b.finish()


def inner_persistent_softmax_kernel(name: str, dtype: DType, block_size: int = 128,
                                    elems_per_thread: int = 4,
                                    index_bits: int = 64) -> ModuleOp:
    """``y = softmax(x, dim=-1)`` for ``x[rows, cols]``, ``cols <= block_size *
    elems_per_thread`` (the launcher's precondition). One row per block, grid ``rows``.

    Arguments: ``x, y, cols, x_stride0, y_stride0`` (rows contiguous). The row lives in
    a per-thread register array: global memory is read once and written once.
    """
    B, K = block_size, elems_per_thread
    ty = dtype.to_xdsl()
    args: list[tuple[str, Attribute]] = [("x", global_memref(dtype)), ("y", global_memref(dtype))]
    args += [(n, IndexType()) for n in ("cols", "x_stride0", "y_stride0")]
    b = KernelBuilder(name, args, (B, 1, 1), index_bits)
    x, y, cols = b.arg("x"), b.arg("y"), b.arg("cols")
    tx = b.thread_id("x")
    row = b.block_id("x")
    xrow = b.mul(row, b.arg("x_stride0"), "x_row")
    yrow = b.mul(row, b.arg("y_stride0"), "y_row")
    buf = b.alloca([K], f32, "buf")
    neg_inf = b.const(-math.inf, f32)
    neg_inf.name_hint = "row_max"

    def load(kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        c = b.add(b.mul(kk, B), tx, "c")
        v = b.if_(b.cmp("slt", c, cols),
                  lambda: [b.to_compute(b.load(x, [b.add(xrow, c)]))],
                  lambda: [b.const(-math.inf, f32)], [f32], ["v"])[0]
        b.store(v, buf, [kk])
        return [b.maxf(acc[0], v)]

    (local_max,) = b.for_(0, K, 1, load, [neg_inf], unroll=True, iv_name="k")
    (row_max,) = b.block_reduce([local_max], "max", (0,))
    zero = b.const(0.0, f32)
    zero.name_hint = "row_sum"

    def exp_sum(kk: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
        e = b.math("exp", b.subf(b.load(buf, [kk]), row_max), "e")  # exp(-inf) = 0 past cols
        b.store(e, buf, [kk])
        return [b.addf(acc[0], e)]

    (local_sum,) = b.for_(0, K, 1, exp_sum, [zero], unroll=True, iv_name="k")
    (row_sum,) = b.block_reduce([local_sum], "add", (0,))
    inv = b.divf(b.const(1.0, f32), row_sum, "inv_sum")

    def store(kk: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        c = b.add(b.mul(kk, B), tx, "c")

        def st() -> list[SSAValue]:
            b.store(b.to_storage(b.mulf(b.load(buf, [kk]), inv), ty), y, [b.add(yrow, c)])
            return []

        b.if_(b.cmp("slt", c, cols), st)
        return []

    b.for_(0, K, 1, store, unroll=True, iv_name="k")
    return b.finish()


def transpose_kernel(name: str, dtype: DType, tile: int = 32, block_rows: int = 8,
                     padding: int = 1, index_bits: int = 64) -> ModuleOp:
    """``y[c, r] = x[r, c]`` for ``x[rows, cols]`` through a ``tile x (tile+padding)``
    shared tile. Arguments: ``x, y, rows, cols, x_stride0, x_stride1, y_stride0,
    y_stride1``. Block ``(tile, block_rows)``, grid ``(ceil(cols/tile), ceil(rows/tile))``.
    Reads are coalesced along ``x``'s columns, writes along ``y``'s columns."""
    T, R = tile, block_rows
    ty = dtype.to_xdsl()
    args: list[tuple[str, Attribute]] = [("x", global_memref(dtype)), ("y", global_memref(dtype))]
    args += [(n, IndexType()) for n in ("rows", "cols", "x_stride0", "x_stride1",
                                        "y_stride0", "y_stride1")]
    b = KernelBuilder(name, args, (T, R, 1), index_bits)
    x, y, rows, cols = b.arg("x"), b.arg("y"), b.arg("rows"), b.arg("cols")
    tx, tyy = b.thread_id("x"), b.thread_id("y")
    r0 = b.mul(b.block_id("y"), T, "r0")
    c0 = b.mul(b.block_id("x"), T, "c0")
    smem = b.shared([T, T], ty, padding, "tile")

    def load(j: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        tr = b.add(tyy, j, "tr")
        r, c = b.add(r0, tr, "r"), b.add(c0, tx, "c")
        ok = b.and_(b.cmp("slt", r, rows), b.cmp("slt", c, cols))

        def ld() -> list[SSAValue]:
            off = b.add(b.mul(r, b.arg("x_stride0")), b.mul(c, b.arg("x_stride1")))
            b.store(b.load(x, [off]), smem, [tr, tx])
            return []

        b.if_(ok, ld)
        return []

    b.for_(0, T, R, load, unroll=True, iv_name="j")
    b.barrier()

    def store(j: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        tr = b.add(tyy, j, "tr")
        oc, orr = b.add(c0, tr, "oc"), b.add(r0, tx, "orow")
        ok = b.and_(b.cmp("slt", oc, cols), b.cmp("slt", orr, rows))

        def st() -> list[SSAValue]:
            off = b.add(b.mul(oc, b.arg("y_stride0")), b.mul(orr, b.arg("y_stride1")))
            b.store(b.load(smem, [tx, tr]), y, [off])
            return []

        b.if_(ok, st)
        return []

    b.for_(0, T, R, store, unroll=True, iv_name="j")
    return b.finish()


__all__ = [
    "KernelBuilder", "PointwiseKernelBuilder", "TensorArg", "global_memref",
    "inner_reduction_kernel", "outer_reduction_kernel", "inner_persistent_softmax_kernel",
    "transpose_kernel",
]
