"""Run kernel-level IR (``kernel.func``) on the CPU, for small shapes, without a GPU.

The model is CUDA's: a grid of blocks, run one after the other (the blocks of a
thread-block cluster, ``cluster_size``, together); in a block, every
thread is a Python generator over the kernel body, and the threads run in lockstep
from one synchronization point to the next. Synchronization points are
``kernel.barrier``, ``kernel.shuffle``, ``kernel.warp_reduce``,
``kernel.block_reduce``, and across a cluster ``kernel.cluster_reduce`` and
``kernel.cluster_barrier``: when every thread of the block (cluster) has stopped at the same op,
the op is resolved for all of them at once (shuffles and warp reductions exchange
values between the 32 lanes of each warp, block reductions through the block), and
the threads go on. A thread that reaches a barrier that another thread skips, or
threads stopped at different barriers, is an error (undefined behaviour on a GPU);
only whole warps may have returned before a warp-level op (a kernel whose hoisted
row guard failed for their rows, ``codegen/uniform_guard.py``).

Memory: global tensors are 1-D numpy arrays (the caller's buffers, written in
place; a strided tensor is its flat buffer plus stride arguments); shared tiles
(``kernel.shared_alloc``) are numpy arrays per block; ``memref.alloca`` arrays per
thread. Every access is bounds-checked; a bad one raises :class:`KernelError` naming
the kernel, the op, the index, the block and the thread. ``vector.load``/``store``
also check that the address is aligned to the vector's size (``lanes * itemsize``).

Numerics follow the GPU: values keep their IR type (``np.float32``,
``np.float16``, ``ml_dtypes.bfloat16``, ...), so f16/bf16 are rounded at each
``arith.truncf``; reductions combine in the same order as the CUDA helpers of
``codegen/cuda_printer.py`` (butterfly within a warp, then warp partials in order).
``index`` values are checked against the kernel's ``index_bits``.

Usage::

    run_kernel(module, "softmax", [x.reshape(-1), y.reshape(-1), cols, cols, cols],
               grid=(rows, 1, 1))
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects import complex as cx
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    ComplexType,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from fuser.ir import fp8
from fuser.ir.dialects import kernel as k
from fuser.ir.dtypes import DType
from fuser.ir.intrinsics import INTRINSICS

WARP = k.WARP_SIZE
Gen = Generator[tuple[Operation, Any], Any, list[Any]]


class KernelError(Exception):
    """A kernel did something undefined: out-of-bounds or misaligned access, divergent
    barrier, index overflow, an op the interpreter does not know."""


def np_dtype(t: Attribute) -> Any:
    if isinstance(t, ComplexType):
        return np.complex64 if isinstance(t.element_type, Float32Type) else np.complex128
    if isinstance(t, Float32Type):
        return np.float32
    if isinstance(t, Float64Type):
        return np.float64
    if isinstance(t, Float16Type):
        return np.float16
    if isinstance(t, BFloat16Type):
        return ml_dtypes.bfloat16
    if isinstance(t, Float8E4M3FNType):
        return ml_dtypes.float8_e4m3fn
    if isinstance(t, Float8E5M2Type):
        return ml_dtypes.float8_e5m2
    if isinstance(t, IntegerType):
        return {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[t.width.data]
    if isinstance(t, IndexType):
        return np.int64
    raise KernelError(f"no numpy type for {t}")


def float_cast(t: Attribute) -> Callable[[Any], Any]:
    """The conversion of a scalar to float type ``t`` (``arith.truncf/extf/sitofp``):
    numpy's, except that float8 rounds as torch does (``fuser.ir.fp8``; ml_dtypes
    gives NaN where torch saturates)."""
    if isinstance(t, Float8E4M3FNType | Float8E5M2Type):
        dt = DType.float8_e4m3fn if isinstance(t, Float8E4M3FNType) else DType.float8_e5m2
        return lambda x: fp8.to_fp8(np.float32(x), dt)[()]
    return np_dtype(t)


def _complex_const(op: Operation, ins: list[Any]) -> Any:
    assert isinstance(op, cx.ConstantOp) and isinstance(op.value, ArrayAttr)
    re, im = (float(x.value.data) for x in op.value.data)  # type: ignore[attr-defined]
    return np_dtype(op.results[0].type)(complex(re, im))


def _complex_create(op: Operation, ins: list[Any]) -> Any:
    return np_dtype(op.results[0].type)(complex(float(ins[0]), float(ins[1])))


def _complex_div(op: Operation, ins: list[Any]) -> Any:
    with np.errstate(all="ignore"):  # x / 0 is inf/nan, as on the GPU
        return ins[0] / ins[1]


def _complex_fn(fn: Callable[[Any], Any]) -> Callable[[Operation, list[Any]], Any]:
    def run(op: Operation, ins: list[Any]) -> Any:
        with np.errstate(all="ignore"):
            return fn(ins[0])

    return run


_COMPLEX_EVAL: dict[type[Operation], Callable[[Operation, list[Any]], Any]] = {
    cx.ConstantOp: _complex_const,
    cx.CreateOp: _complex_create,
    cx.ReOp: lambda op, ins: ins[0].real,
    cx.ImOp: lambda op, ins: ins[0].imag,
    cx.AbsOp: _complex_fn(np.abs),
    cx.NegOp: lambda op, ins: -ins[0],
    cx.AddOp: lambda op, ins: ins[0] + ins[1],
    cx.SubOp: lambda op, ins: ins[0] - ins[1],
    cx.MulOp: lambda op, ins: ins[0] * ins[1],
    cx.DivOp: _complex_div,
    cx.EqualOp: lambda op, ins: bool(ins[0] == ins[1]),
    cx.NotEqualOp: lambda op, ins: bool(ins[0] != ins[1]),
    cx.ExpOp: _complex_fn(np.exp),
    cx.LogOp: _complex_fn(np.log),
    cx.SqrtOp: _complex_fn(np.sqrt),
    cx.RsqrtOp: _complex_fn(lambda x: type(x)(1) / np.sqrt(x)),
    cx.SinOp: _complex_fn(np.sin),
    cx.CosOp: _complex_fn(np.cos),
    cx.TanOp: _complex_fn(np.tan),
    cx.TanhOp: _complex_fn(np.tanh),
}
"""The ``complex`` dialect on numpy's complex64/complex128 scalars (the reference
interpreter's semantics; the CUDA preamble implements the same formulas)."""


def _fmax(a: Any, b: Any) -> Any:
    return a if (a != a or a > b) else b


def _fmin(a: Any, b: Any) -> Any:
    return a if (a != a or a < b) else b


def _welford(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
    if b[2] == 0:
        return a
    if a[2] == 0:
        return b
    n = a[2] + b[2]
    delta = b[0] - a[0]
    nb_n = b[2] / n
    return (a[0] + delta * nb_n, a[1] + b[1] + delta * delta * a[2] * nb_n, n)


def _identity(kind: str, like: tuple[Any, ...]) -> tuple[Any, ...]:
    """The identity of ``kind`` in the types of ``like`` (a reduction's operands)."""
    t = type(like[0])
    if kind == "welford":
        return tuple(type(v)(0) for v in like)
    if kind in ("add", "mul"):
        return (t(0 if kind == "add" else 1),)
    if np.issubdtype(t, np.integer):
        info = np.iinfo(t)
        return (t(info.min if kind == "max" else info.max),)
    return (t(-np.inf if kind == "max" else np.inf),)


def _combine(kind: str) -> Callable[[Any, Any], Any]:
    if kind == "welford":
        return _welford
    one = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": _fmax, "min": _fmin}[kind]
    return lambda a, b: (one(a[0], b[0]),)


_CMP = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
}


def _rng(op: k.RngOp, ins: Sequence[Any]) -> Any:
    """One element of ``kernel.rng``: ``fuser.ir.philox`` at the element's index, in
    the compute type (the half or bfloat16 value as f32)."""
    from fuser.ir.dtypes import DType
    from fuser.ir.philox import random_values

    seed, offset, index, a, b = ins
    dt = DType.from_xdsl(op.dtype)
    v = random_values(
        op.distribution.data, dt, int(seed), int(offset), np.array([int(index)]), a, b
    )[0]
    return np_dtype(op.result.type)(v)


def _cmpf(pred: str, a: Any, b: Any) -> bool:
    nan = bool(a != a or b != b)
    if pred in ("false", "true"):
        return pred == "true"
    if pred == "ord":
        return not nan
    if pred == "uno":
        return nan
    base = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[
        pred[1:]
    ]
    return bool(base) and not nan if pred[0] == "o" else bool(base) or nan


_MATH: dict[type[Operation], Callable[..., Any]] = {
    mathd.ExpOp: np.exp,
    mathd.Exp2Op: np.exp2,
    mathd.ExpM1Op: np.expm1,
    mathd.LogOp: np.log,
    mathd.Log2Op: np.log2,
    mathd.Log10Op: np.log10,
    mathd.Log1pOp: np.log1p,
    mathd.SqrtOp: np.sqrt,
    mathd.TanhOp: np.tanh,
    mathd.SinOp: np.sin,
    mathd.CosOp: np.cos,
    mathd.TanOp: np.tan,
    mathd.AbsFOp: np.abs,
    mathd.CeilOp: np.ceil,
    mathd.FloorOp: np.floor,
    mathd.AtanOp: np.arctan,
    mathd.SinhOp: np.sinh,
    mathd.CoshOp: np.cosh,
    mathd.AsinOp: np.arcsin,
    mathd.AcosOp: np.arccos,
    mathd.RoundEvenOp: np.rint,
    mathd.TruncOp: np.trunc,
    mathd.PowFOp: np.power,
    mathd.Atan2Op: np.arctan2,
}


_KIND_PLAIN, _KIND_RETURN, _KIND_CONTROL = 0, 1, 2
_KINDS: dict[type[Operation], int] = {}
_Fast = tuple[Callable[["_Thread", list[Any]], Any], tuple[SSAValue, ...], SSAValue | None]
"""A plain op decoded for the hot path: ``(fn(thread, operand values) -> result,
operands, result value or None)``."""


def _control_kind(t: type[Operation]) -> int:
    """How ``exec_block`` treats ops of type ``t``: a block terminator, a control or
    synchronization op (handled in ``exec_block``), or a plain op (cached per type)."""
    kind = _KINDS.get(t)
    if kind is None:
        if issubclass(t, scf.YieldOp | k.ReturnOp):
            kind = _KIND_RETURN
        elif issubclass(
            t, scf.ForOp | scf.IfOp | k.BarrierOp | k.ShuffleOp | k.WarpReduceOp | k.BlockReduceOp
            | k.ClusterReduceOp | k.ClusterBarrierOp,
        ):
            kind = _KIND_CONTROL
        else:
            kind = _KIND_PLAIN
        _KINDS[t] = kind
    return kind


_BINARY_FAST: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AndIOp: operator.and_,
    arith.OrIOp: operator.or_,
    arith.XOrIOp: operator.xor,
    arith.AddfOp: operator.add,
    arith.SubfOp: operator.sub,
    arith.MulfOp: operator.mul,
    arith.DivfOp: operator.truediv,
    arith.MaximumfOp: _fmax,
    arith.MinimumfOp: _fmin,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
}


def _div_trunc(a: Any, b: Any) -> Any:
    """C's truncating integer division (``b != 0``)."""
    return abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)


def _rem_trunc(a: Any, b: Any) -> Any:
    """C's remainder, the sign of ``a`` (``b != 0``)."""
    return a - b * _div_trunc(a, b)


_INT_FAST: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.DivSIOp: _div_trunc,
    arith.RemSIOp: _rem_trunc,
}


@dataclass
class _Block:
    func: k.FuncOp
    idx: tuple[int, int, int]
    grid: tuple[int, int, int]
    bdim: tuple[int, int, int]
    shared: dict[Operation, np.ndarray] = field(default_factory=dict)


@dataclass
class _Thread:
    blk: _Block
    tid: tuple[int, int, int]
    env: dict[SSAValue, Any] = field(default_factory=dict)

    @property
    def linear(self) -> int:
        x, y, z = self.tid
        bx, by, _ = self.blk.bdim
        return x + bx * (y + by * z)


class KernelInterpreter:
    """Executes one ``kernel.func`` over a grid."""

    def __init__(self, func: k.FuncOp) -> None:
        self.func = func
        self.name = func.sym_name.data
        self.bits = func.get_index_bits()
        # Decoded once per op, not once per thread (the interpreter's hot path): the
        # control kind of every op of a block, and the fast handler of a plain op.
        self._block_plans: dict[Block, list[tuple[int, Operation, _Fast | None]]] = {}

    def error(self, th: _Thread | None, op: Operation | None, msg: str) -> KernelError:
        where = f"kernel '{self.name}'"
        if op is not None:
            where += f", {op.name}"
        if th is not None:
            where += f", block {th.blk.idx}, thread {th.tid}"
        return KernelError(f"{where}: {msg}")

    # ---- launch ----------------------------------------------------------------------
    def run(self, args: Sequence[Any], grid: Sequence[int]) -> None:
        params = self.func.args
        if len(args) != len(params):
            raise self.error(None, None, f"expected {len(params)} arguments, got {len(args)}")
        values: list[Any] = []
        for i, (p, a) in enumerate(zip(params, args, strict=True)):
            if isinstance(p.type, MemRefType):
                want = np.dtype(np_dtype(p.type.element_type))
                if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype != want:
                    raise self.error(
                        None,
                        None,
                        f"argument #{i} ({p.name_hint}) must be a 1-D "
                        f"{want} numpy array, got {type(a).__name__}"
                        f"{getattr(a, 'shape', '')} {getattr(a, 'dtype', '')}",
                    )
                values.append(a)
            elif isinstance(p.type, IndexType):
                values.append(self.check_index(None, None, int(a)))
            else:
                values.append(np_dtype(p.type)(a))
        g = (tuple(grid) + (1, 1, 1))[:3]
        bdim = self.func.get_block_size()
        cs = self.func.get_cluster_size() or (1, 1, 1)
        if any(n % c for n, c in zip(g, cs, strict=True)):
            raise self.error(None, None, f"grid {list(g)} is not a multiple of the cluster size {list(cs)}")
        with np.errstate(all="ignore"):
            for cz in range(0, g[2], cs[2]):
                for cy in range(0, g[1], cs[1]):
                    for cx in range(0, g[0], cs[0]):
                        blocks = [
                            _Block(self.func, (cx + x, cy + y, cz + z), g, bdim)
                            for z in range(cs[2]) for y in range(cs[1]) for x in range(cs[0])
                        ]  # in cluster-rank order
                        self.run_cluster(blocks, values)

    def run_cluster(self, blocks: list[_Block], values: list[Any]) -> None:
        """The threads of ``blocks`` (one cluster, in rank order; one block without
        clusters) in lockstep from one synchronization point to the next."""
        threads: list[_Thread] = []
        for blk in blocks:
            bx, by, bz = blk.bdim
            threads += [_Thread(blk, (x, y, z)) for z in range(bz) for y in range(by) for x in range(bx)]
        per_block = len(threads) // len(blocks)
        gens = []
        for th in threads:
            th.env.update(zip(self.func.args, values, strict=True))
            gens.append(self.exec_block(self.func.body.block, th))
        pending: list[Any] = [None] * len(gens)
        done = [False] * len(gens)
        while True:
            stops: list[tuple[Operation, Any] | None] = []
            for i, g in enumerate(gens):
                if done[i]:
                    stops.append(None)
                    continue
                try:
                    stops.append(g.send(pending[i]))
                except StopIteration:
                    done[i] = True
                    stops.append(None)
            live = [i for i, s in enumerate(stops) if s is not None]
            if not live:
                return
            first = stops[live[0]][0]  # type: ignore[index]
            for i in live:
                s = stops[i]
                assert s is not None
                if s[0] is not first:
                    raise self.error(
                        threads[i],
                        s[0],
                        f"threads of one {'cluster' if len(blocks) > 1 else 'block'} stopped at different "
                        f"synchronization points ({first.name} and {s[0].name})",
                    )
            if len(live) != len(stops):
                # Warps that returned as a whole may miss a warp-level collective (a
                # kernel whose guard failed for their rows); anything else diverges.
                warps = {(i // per_block, (i % per_block) - (i % per_block) % WARP) for i in live}
                whole = all(
                    stops[b * per_block + j] is not None
                    for b, w in warps for j in range(w, min(w + WARP, per_block))
                )
                if not (whole and isinstance(first, k.ShuffleOp | k.WarpReduceOp)):
                    done_i = stops.index(None)
                    raise self.error(
                        threads[done_i],
                        first,
                        f"reached by some threads of the {'cluster' if len(blocks) > 1 else 'block'} but not by "
                        "this one (it returned): divergent synchronization",
                    )
            pending = [None] * len(gens)
            if len(blocks) == 1 or isinstance(first, k.ClusterReduceOp | k.ClusterBarrierOp):
                groups = [live]
            else:  # block-level: each block on its own
                groups = [[i for i in live if i // per_block == b] for b in range(len(blocks))]
            for grp in groups:
                if not grp:
                    continue
                res = self.resolve(first, [threads[i] for i in grp], [stops[i][1] for i in grp])  # type: ignore[index]
                for j, i in enumerate(grp):
                    pending[i] = res[j]

    # ---- synchronization -------------------------------------------------------------
    def resolve(self, op: Operation, threads: list[_Thread], payloads: list[Any]) -> list[Any]:
        n = len(threads)
        if isinstance(op, k.BarrierOp):
            return [None] * n
        if isinstance(op, k.ShuffleOp):
            out = []
            for i, (v, off) in enumerate(payloads):
                lane, base = i % WARP, i - i % WARP
                src = {"xor": lane ^ off, "down": lane + off, "up": lane - off, "idx": off}[
                    op.mode.data
                ]
                ok = 0 <= src < WARP and base + src < n
                out.append(payloads[base + src][0] if ok else v)
            return out
        if isinstance(op, k.WarpReduceOp):
            return self.warp_reduce(op, threads, [tuple(p) for p in payloads], op.kind.data)
        if isinstance(op, k.BlockReduceOp):
            return self.block_reduce(op, threads, [tuple(p) for p in payloads])
        if isinstance(op, k.ClusterBarrierOp):
            return [None] * n
        if isinstance(op, k.ClusterReduceOp):
            return self.cluster_reduce(op, threads, [tuple(p) for p in payloads])
        raise self.error(threads[0], op, "not a synchronization op")

    def cluster_reduce(
        self, op: k.ClusterReduceOp, threads: list[_Thread], vals: list[tuple[Any, ...]]
    ) -> list[Any]:
        """Every thread's value over the cluster, as ``fuser_cluster_reduce`` combines
        them: each warp's butterfly (lane 0's result is the warp's partial, rank-major
        ``p = rank * W + warp``), then lane ``l`` folds partials ``l, l + 32, ...`` into
        the identity and the warp's butterfly combines the lanes (per-lane results, as
        on the GPU)."""
        kind = op.kind.data
        comb = _combine(kind)
        per_block = math.prod(threads[0].blk.bdim)
        if per_block % WARP or len(threads) % per_block:
            raise self.error(threads[0], op, f"needs whole warps in whole blocks, the block has {per_block} threads")
        warped = self.warp_reduce(op, threads, vals, kind)
        partials = warped[::WARP]  # rank-major: blocks in rank order, warps in order
        ident = _identity(kind, vals[0])
        lanes = []
        for lane in range(WARP):
            acc = ident
            for p in range(lane, -(-len(partials) // WARP) * WARP, WARP):  # K loads a lane, past the end: ident
                acc = comb(acc, partials[p] if p < len(partials) else ident)
            lanes.append(acc)
        result = self.warp_reduce(op, threads[:WARP], lanes, kind)
        return [result[i % WARP] for i in range(len(threads))]

    def warp_reduce(
        self, op: Operation, threads: list[_Thread], vals: list[tuple[Any, ...]], kind: str
    ) -> list[Any]:
        if len(vals) % WARP:
            raise self.error(
                threads[-1],
                op,
                f"needs full warps of {WARP} lanes, the block has {len(vals)} threads",
            )
        comb = _combine(kind)
        cur = list(vals)
        off = WARP // 2
        while off:
            cur = [comb(cur[i], cur[i ^ off]) for i in range(len(cur))]
            off //= 2
        return cur

    def block_reduce(
        self, op: k.BlockReduceOp, threads: list[_Thread], vals: list[tuple[Any, ...]]
    ) -> list[Any]:
        dims = op.get_dims()
        comb = _combine(op.kind.data)
        bx, by, bz = threads[0].blk.bdim
        if dims == (0,) and bx % WARP == 0:
            warped = self.warp_reduce(op, threads, vals, op.kind.data)
            nwarps = bx // WARP
            out = []
            for th in threads:
                row = th.linear // bx
                acc = warped[row * bx]
                for w in range(1, nwarps):
                    acc = comb(acc, warped[row * bx + w * WARP])
                out.append(acc)
            return out
        ext = [bx if 0 in dims else 1, by if 1 in dims else 1, bz if 2 in dims else 1]
        results: dict[int, Any] = {}
        out = []
        for th in threads:
            lead = [0 if d in dims else th.tid[d] for d in range(3)]
            li = lead[0] + bx * (lead[1] + by * lead[2])
            if li not in results:
                acc = vals[li]
                for z in range(ext[2]):
                    for y in range(ext[1]):
                        for x in range(ext[0]):
                            if x + y + z:
                                acc = comb(acc, vals[li + x + bx * (y + by * z)])
                results[li] = acc
            out.append(results[li])
        return out

    # ---- execution -------------------------------------------------------------------
    def block_plan(self, blk: Block) -> list[tuple[int, Operation, _Fast | None]]:
        """The ops of ``blk`` with their control kind (``_KIND_*``) and, for plain ops,
        their fast handler, decoded once per kernel."""
        plan = self._block_plans.get(blk)
        if plan is None:
            plan = []
            for op in blk.ops:
                kind = _control_kind(type(op))
                fast = None
                if kind == _KIND_PLAIN:
                    try:
                        fast = self.fast_handler(op)
                    except KernelError:
                        fast = None  # exec_op reports it if the op runs
                plan.append((kind, op, fast))
            self._block_plans[blk] = plan
        return plan

    def exec_block(self, blk: Block, th: _Thread) -> Gen:
        env = th.env
        for kind, op, fast in self.block_plan(blk):
            if kind == _KIND_PLAIN:
                if fast is None:
                    self.exec_op(op, th)
                    continue
                fn, operands, result = fast
                try:
                    ins = [env[v] for v in operands]
                except KeyError:
                    ins = [env[v] if v in env else self.constant(v) for v in operands]
                res = fn(th, ins)
                if result is not None:
                    env[result] = res
                continue
            if kind == _KIND_RETURN:
                return [env[v] for v in op.operands]
            if isinstance(op, scf.ForOp):
                lb, ub, step = env[op.lb], env[op.ub], env[op.step]
                if step <= 0:
                    raise self.error(th, op, f"step must be positive, got {step}")
                carried = [env[v] for v in op.iter_args]
                body = op.body.block
                i = lb
                while i < ub:
                    env[body.args[0]] = i
                    env.update(zip(body.args[1:], carried, strict=True))
                    carried = yield from self.exec_block(body, th)
                    i += step
                env.update(zip(op.res, carried, strict=True))
            elif isinstance(op, scf.IfOp):
                region = op.true_region if env[op.cond] else op.false_region
                res = (yield from self.exec_block(region.block, th)) if region.blocks else []
                env.update(zip(op.output, res, strict=True))
            elif isinstance(op, k.BarrierOp | k.ClusterBarrierOp):
                yield (op, None)
            elif isinstance(op, k.ShuffleOp):
                env[op.result] = yield (op, (env[op.value], int(env[op.offset])))
            elif isinstance(op, k.WarpReduceOp | k.BlockReduceOp | k.ClusterReduceOp):
                res = yield (op, tuple(env[v] for v in op.values))
                env.update(zip(op.results_, res, strict=True))
            else:
                self.exec_op(op, th)
        return []

    def fast_handler(self, op: Operation) -> _Fast | None:  # noqa: C901
        """The hot-path form of a plain op whose semantics are those of its branch in
        :meth:`exec_op` (decoded once: result types, predicates, constants), or None
        for ops that always go through :meth:`exec_op`."""
        t = type(op)
        operands = tuple(op.operands)
        result = op.results[0] if op.results else None
        fn: Callable[[_Thread, list[Any]], Any]
        if t is arith.ConstantOp:
            c = self.constant(op.results[0])
            fn = lambda th, ins: c  # noqa: E731
        elif t in _INT_FAST:
            f2 = _INT_FAST[t]
            assert result is not None
            divides = t is arith.DivSIOp or t is arith.RemSIOp
            if isinstance(result.type, IndexType):
                lim = 1 << (self.bits - 1)

                def fn(th: _Thread, ins: list[Any]) -> Any:
                    if divides and ins[1] == 0:
                        raise self.error(th, op, "integer division by zero")
                    r = int(f2(ins[0], ins[1]))
                    if not -lim <= r < lim:
                        self.check_index(th, op, r)  # raises
                    return r
            else:
                rt = np_dtype(result.type)

                def fn(th: _Thread, ins: list[Any]) -> Any:
                    if divides and ins[1] == 0:
                        raise self.error(th, op, "integer division by zero")
                    return rt(f2(ins[0], ins[1]))
        elif t is arith.MaxSIOp:
            fn = lambda th, ins: max(ins)  # noqa: E731
        elif t is arith.MinSIOp:
            fn = lambda th, ins: min(ins)  # noqa: E731
        elif t is mathd.ErfOp:
            fn = lambda th, ins: type(ins[0])(math.erf(float(ins[0])))  # noqa: E731
        elif t is vector.ExtractOp:
            assert isinstance(op, vector.ExtractOp)
            (pos,) = op.static_position.get_values()
            fn = lambda th, ins: ins[0][pos]  # noqa: E731
        elif t in _BINARY_FAST:
            f2 = _BINARY_FAST[t]
            fn = lambda th, ins: f2(ins[0], ins[1])  # noqa: E731
        elif t is arith.NegfOp:
            fn = lambda th, ins: -ins[0]  # noqa: E731
        elif t is arith.CmpiOp:
            assert isinstance(op, arith.CmpiOp)
            cmp = _CMP[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
            fn = lambda th, ins: bool(cmp(ins[0], ins[1]))  # noqa: E731
        elif t is arith.CmpfOp:
            assert isinstance(op, arith.CmpfOp)
            pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            fn = lambda th, ins: _cmpf(pred, ins[0], ins[1])  # noqa: E731
        elif t is arith.SelectOp:
            fn = lambda th, ins: ins[1] if ins[0] else ins[2]  # noqa: E731
        elif t in (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp):
            ft = float_cast(op.results[0].type)
            fn = lambda th, ins: ft(ins[0])  # noqa: E731
        elif t in (arith.FPToSIOp, arith.ExtSIOp, arith.TruncIOp, arith.IndexCastOp, arith.ExtUIOp):
            rty = op.results[0].type
            conv: Callable[[Any], Any] = int if isinstance(rty, IndexType) else np_dtype(rty)
            fn = lambda th, ins: conv(ins[0])  # noqa: E731
        elif t in _MATH:
            fm = _MATH[t]
            fn = lambda th, ins: fm(*ins)  # noqa: E731
        elif t in (k.ThreadIdOp, k.BlockIdOp, k.BlockDimOp, k.GridDimOp):
            axis = op.axis()  # type: ignore[attr-defined]
            if t is k.ThreadIdOp:
                fn = lambda th, ins: th.tid[axis]  # noqa: E731
            elif t is k.BlockIdOp:
                fn = lambda th, ins: th.blk.idx[axis]  # noqa: E731
            elif t is k.BlockDimOp:
                fn = lambda th, ins: th.blk.bdim[axis]  # noqa: E731
            else:
                fn = lambda th, ins: th.blk.grid[axis]  # noqa: E731
        elif t is memref.LoadOp:

            def fn(th: _Thread, ins: list[Any]) -> Any:
                arr = ins[0]
                return arr[self.checked(th, op, arr, ins[1:])]
        elif t is memref.StoreOp:
            result = None

            def fn(th: _Thread, ins: list[Any]) -> Any:
                arr = ins[1]
                arr[self.checked(th, op, arr, ins[2:])] = ins[0]
        else:
            return None
        return fn, operands, result

    def check_index(self, th: _Thread | None, op: Operation | None, v: int) -> int:
        lim = 1 << (self.bits - 1)
        if not -lim <= v < lim:
            raise self.error(th, op, f"index value {v} overflows {self.bits}-bit index math")
        return v

    def exec_op(self, op: Operation, th: _Thread) -> None:  # noqa: C901
        env = th.env
        ins = [env[v] if v in env else self.constant(v) for v in op.operands]
        if isinstance(op, arith.ConstantOp):
            env[op.result] = self.constant(op.result)
            return
        res: Any
        if isinstance(
            op, arith.AddiOp | arith.SubiOp | arith.MuliOp | arith.DivSIOp | arith.RemSIOp
        ):
            a, b = ins
            if isinstance(op, arith.DivSIOp | arith.RemSIOp) and b == 0:
                raise self.error(th, op, "integer division by zero")
            if isinstance(op, arith.AddiOp):
                res = a + b
            elif isinstance(op, arith.SubiOp):
                res = a - b
            elif isinstance(op, arith.MuliOp):
                res = a * b
            elif isinstance(op, arith.DivSIOp):
                res = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncation
            else:
                res = a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1))
            if isinstance(op.result.type, IndexType):
                res = self.check_index(th, op, int(res))
            else:
                res = np_dtype(op.result.type)(res)
        elif isinstance(op, arith.AndIOp):
            res = ins[0] & ins[1]
        elif isinstance(op, arith.OrIOp):
            res = ins[0] | ins[1]
        elif isinstance(op, arith.XOrIOp):
            res = ins[0] ^ ins[1]
        elif isinstance(op, arith.AddfOp):
            res = ins[0] + ins[1]
        elif isinstance(op, arith.SubfOp):
            res = ins[0] - ins[1]
        elif isinstance(op, arith.MulfOp):
            res = ins[0] * ins[1]
        elif isinstance(op, arith.DivfOp):
            res = ins[0] / ins[1]
        elif isinstance(op, arith.NegfOp):
            res = -ins[0]
        elif isinstance(op, arith.MaximumfOp):
            res = _fmax(*ins)
        elif isinstance(op, arith.MinimumfOp):
            res = _fmin(*ins)
        elif isinstance(op, arith.MaxnumfOp | arith.MinnumfOp):
            fn = np.fmax if isinstance(op, arith.MaxnumfOp) else np.fmin
            res = fn(*ins)
        elif isinstance(op, arith.MaxSIOp):
            res = max(ins)
        elif isinstance(op, arith.MinSIOp):
            res = min(ins)
        elif isinstance(op, arith.CmpiOp):
            pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            res = bool(_CMP[pred](*ins))
        elif isinstance(op, arith.CmpfOp):
            res = _cmpf(arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data], *ins)
        elif isinstance(op, arith.SelectOp):
            res = ins[1] if ins[0] else ins[2]
        elif isinstance(op, arith.ExtFOp | arith.TruncFOp | arith.SIToFPOp):
            res = float_cast(op.results[0].type)(ins[0])
        elif isinstance(
            op, arith.FPToSIOp | arith.ExtSIOp | arith.TruncIOp | arith.IndexCastOp | arith.ExtUIOp
        ):
            t = op.results[0].type
            res = int(ins[0]) if isinstance(t, IndexType) else np_dtype(t)(ins[0])
        elif type(op) in _MATH:
            res = _MATH[type(op)](*ins)
        elif isinstance(op, mathd.RsqrtOp):
            x = ins[0]
            res = type(x)(1) / np.sqrt(x)
        elif isinstance(op, mathd.ErfOp):
            res = type(ins[0])(math.erf(float(ins[0])))
        elif isinstance(op, k.IntrinsicOp):
            res = INTRINSICS[op.callee.data].numpy(*ins)
        elif isinstance(op, k.RngOp):
            res = _rng(op, ins)
        elif isinstance(op, mathd.FmaOp):
            a, b, c = ins
            res = type(a)(float(a) * float(b) + float(c))
        elif isinstance(op, k.ThreadIdOp):
            res = th.tid[op.axis()]
        elif isinstance(op, k.BlockIdOp):
            res = th.blk.idx[op.axis()]
        elif isinstance(op, k.BlockDimOp):
            res = th.blk.bdim[op.axis()]
        elif isinstance(op, k.GridDimOp):
            res = th.blk.grid[op.axis()]
        elif isinstance(op, memref.LoadOp):
            arr = ins[0]
            idx = self.checked(th, op, arr, ins[1:])
            res = arr[idx]
        elif isinstance(op, memref.StoreOp):
            arr = ins[1]
            arr[self.checked(th, op, arr, ins[2:])] = ins[0]
            return
        elif isinstance(op, memref.AllocaOp):
            t = op.memref.type
            assert isinstance(t, MemRefType)
            res = np.zeros(t.get_shape(), np_dtype(t.element_type))
        elif isinstance(op, k.SharedAllocOp):
            t = op.result.type
            assert isinstance(t, MemRefType)
            if op not in th.blk.shared:  # garbage-initialized on a GPU: NaN-fill floats
                arr = np.zeros(t.get_shape(), np_dtype(t.element_type))
                if arr.dtype.kind in "fc" or arr.dtype == ml_dtypes.bfloat16:
                    arr[...] = np.nan
                th.blk.shared[op] = arr
            res = th.blk.shared[op]
        elif isinstance(op, vector.LoadOp):
            arr, off = ins[0], ins[1]
            lanes = k.vector_lanes(op.result.type)
            self.check_vector(th, op, arr, off, lanes)
            res = arr[off : off + lanes].copy()
        elif isinstance(op, vector.StoreOp):
            vec, arr, off = ins[0], ins[1], ins[2]
            self.check_vector(th, op, arr, off, len(vec))
            arr[off : off + len(vec)] = vec
            return
        elif isinstance(op, k.PrefetchOp):
            # No effect on values; an address outside the tensor is a bug of the
            # transform that issued it (the GPU would ignore it silently).
            self.check_vector(th, op, ins[0], ins[1], 1)
            return
        elif isinstance(op, vector.ExtractOp):
            (pos,) = op.static_position.get_values()
            res = ins[0][pos]
        elif isinstance(op, k.FromElementsOp):
            assert isinstance(op.result.type, VectorType)
            res = np.array(ins, dtype=np_dtype(op.result.type.element_type))
        elif type(op) in _COMPLEX_EVAL:
            res = _COMPLEX_EVAL[type(op)](op, ins)
        else:
            raise self.error(th, op, "the kernel interpreter does not know this op")
        env[op.results[0]] = res

    def constant(self, v: SSAValue) -> Any:
        op = v.owner
        if not isinstance(op, arith.ConstantOp):
            raise self.error(
                None,
                op if isinstance(op, Operation) else None,
                f"value {v} used before its definition",
            )
        attr = op.value
        if isinstance(attr, IntegerAttr):
            if isinstance(v.type, IndexType):
                return attr.value.data
            if v.type == IntegerType(1):
                return bool(attr.value.data)
            return np_dtype(v.type)(attr.value.data)
        if isinstance(attr, FloatAttr):
            return np_dtype(v.type)(attr.value.data)
        raise self.error(None, op, f"unsupported constant {attr}")

    def checked(
        self, th: _Thread, op: Operation, arr: np.ndarray, idx: Sequence[int]
    ) -> tuple[int, ...]:
        if len(idx) != arr.ndim or any(not 0 <= i < s for i, s in zip(idx, arr.shape, strict=True)):
            raise self.error(
                th, op, f"index {list(idx)} out of bounds for a buffer of shape {list(arr.shape)}"
            )
        return tuple(idx)

    def check_vector(
        self, th: _Thread, op: Operation, arr: np.ndarray, off: int, lanes: int
    ) -> None:
        if not (0 <= off and off + lanes <= arr.shape[0]):
            raise self.error(
                th,
                op,
                f"vector of {lanes} at index {off} out of bounds for a "
                f"buffer of {arr.shape[0]} elements",
            )
        nbytes = lanes * arr.itemsize
        addr = arr.ctypes.data + off * arr.itemsize
        if addr % nbytes:
            raise self.error(
                th,
                op,
                f"misaligned {nbytes * 8}-bit access at index {off} "
                f"(address {addr:#x} is not a multiple of {nbytes})",
            )


def find_kernel(module: ModuleOp | k.FuncOp, name: str | None = None) -> k.FuncOp:
    if isinstance(module, k.FuncOp):
        return module
    funcs = [op for op in module.walk() if isinstance(op, k.FuncOp)]
    for f in funcs:
        if name is None or f.sym_name.data == name:
            return f
    raise KernelError(
        f"no kernel.func @{name} in the module (has {[f.sym_name.data for f in funcs]})"
    )


def run_kernel(
    module: ModuleOp | k.FuncOp, name: str | None, args: Sequence[Any], grid: Sequence[int]
) -> None:
    """Run kernel ``name`` of ``module`` on ``grid`` blocks (its ``block_size``); numpy
    array arguments are global memory, written in place."""
    KernelInterpreter(find_kernel(module, name)).run(args, grid)
