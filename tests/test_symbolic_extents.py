"""Kernels with symbolic extents (issue 14, build item 2; issue 15, item 5): the batch
extent is a kernel parameter, so launches that differ only in it print the same CUDA
and share one compiled binary, and that binary is exact for every one of them.

The sharing test runs the kernel text lowered for one batch size on the inputs of
another (the launch shape and arguments of the other), in the CPU kernel
interpreter, against the reference: that is what the GPU runtime does when the
kernel cache hits on the text.
"""

from __future__ import annotations

import operator
import random
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.kernel_builders import KernelBuilder
from fuser.codegen.lower.common import (
    LoweredFusion,
    LoweredKernel,
    TensorLayout,
    extent_symbols,
    symbolic_layouts,
    symbolize,
)
from fuser.frontend.execution import lowered_segments
from fuser.ir.reference import run_fusion
from fuser.ir.schedule import Var
from fuser.ir.symbolic import SymInt, evaluate
from fuser.runtime import signature
from fuser.runtime.cpu_runner import run_segment_on_cpu
from tests.kernel_check import assert_close

# ---- SymInt ------------------------------------------------------------------------


def test_symint_arithmetic_keeps_value_and_formula() -> None:
    """Random chains of integer ops on a SymInt: the value is the ints' result, and
    the formula gives the ints' result at other values of the extent too."""
    rng = random.Random(0)
    ops: list[Callable[[Any, Any], Any]] = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod]
    checked = 0
    for _ in range(300):
        steps = [(rng.choice(ops), rng.randint(1, 600), rng.random() < 0.7) for _ in range(4)]

        def run(x: Any, steps: list[tuple[Callable[[Any, Any], Any], int, bool]] = steps) -> Any:
            for fn, c, left in steps:
                x = fn(x, c) if left or fn in (operator.floordiv, operator.mod) else fn(c, x)
                if int(x) < 0:
                    return None
            return x

        n, m = rng.randint(2, 5000), rng.randint(2, 5000)
        sym, at_n, at_m = run(SymInt(n, Var("n0"))), run(n), run(m)
        if sym is None or at_n is None or at_m is None:
            continue
        assert isinstance(sym, SymInt) and int(sym) == at_n
        assert evaluate(sym.expr, {"n0": n}) == at_n and evaluate(sym.expr, {"n0": m}) == at_m
        checked += 1
    assert checked > 100


def test_symint_ceil_div_and_decisions_use_the_value() -> None:
    n = SymInt(4097, Var("n0"))
    m = (n * 1024 + 511) // 512
    assert int(m) == 8194 and isinstance(m, SymInt)
    assert evaluate(m.expr, {"n0": 10}) == (10 * 1024 + 511) // 512
    c = n.ceil_div(128)
    assert int(c) == 33 and evaluate(c.expr, {"n0": 129}) == 2
    # comparisons, hashing and printing are the value's
    assert n == 4097 and n > 4096 and hash(n) == hash(4097) and {4097: "x"}[n] == "x"
    assert str(n) == "4097" and f"{n}" == "4097" and f"{n:>6}" == "  4097"
    assert max(n, 1) is n and int(n) == 4097 and type(int(n)) is int
    # C division truncates: negative operands give plain ints (the value), never a formula
    assert type(-n // 3) is int and -n // 3 == -4097 // 3


# ---- symbolic layouts ----------------------------------------------------------------


def test_symbolic_layouts_one_symbol_per_value_and_not_for_shared_values() -> None:
    lays = [TensorLayout.contiguous((64, 1024)), TensorLayout.contiguous((64, 32)), None]
    out = symbolic_layouts(lays, [(0, 0), (1, 0)])
    assert isinstance(out[0].shape[0], SymInt) and out[0].shape[0] is out[1].shape[0]
    assert str(out[0].shape[0].expr) == "n0" and not isinstance(out[0].shape[1], SymInt)
    assert out[2] is None
    # a batch of 1024 rows of 1024 stays concrete; so do extents 0 and 1
    same = symbolic_layouts([TensorLayout.contiguous((1024, 1024))], [(0, 0)])
    assert not isinstance(same[0].shape[0], SymInt)
    assert extent_symbols(symbolic_layouts([TensorLayout.contiguous((1, 8))], [(0, 0)])) == {}
    table = extent_symbols(out)
    assert symbolize((64, 3, [64]), table) == (64, 3, [64])
    assert isinstance(symbolize((64, 3), table)[0], SymInt) and not isinstance(symbolize((64, 3), table)[1], SymInt)


def test_symbolic_axes_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    assert signature.symbolic_axes([(8, 16), (16,), None, (4, 16)]) == [(0, 0), (3, 0)]
    assert signature.symbolic_axes([None, ()]) == []
    monkeypatch.setattr(signature, "SYMBOLIC_EXTENTS", False)
    assert signature.symbolic_axes([(8, 16)]) == []


# ---- the kernel builder ---------------------------------------------------------------


def test_builder_emits_the_formula_once_at_entry_and_checks_the_value() -> None:
    from xdsl.dialects.builtin import IntegerType

    b = KernelBuilder("k", [("extent_n0", IntegerType(64))], (32, 1, 1))
    b.declare_symbol("n0", "extent_n0", 100)
    n = SymInt(100, Var("n0"))
    rows = (n + 7) // 8
    tid = b.thread_id()
    b.cmp("slt", tid, rows)
    b.cmp("slt", tid, rows)  # memoized: the formula is emitted once
    stale = SymInt(5, Var("n0"))  # a formula that does not give its value here: the value
    b.cmp("slt", tid, stale)
    ops = list(b.func.body.block.ops)
    casts = [op for op in ops if isinstance(op, arith.IndexCastOp)]
    divs = [op for op in ops if isinstance(op, arith.DivSIOp)]
    assert len(casts) == 1 and len(divs) == 1
    assert ops.index(casts[0]) == 0 and ops.index(divs[0]) < ops.index(next(o for o in ops if isinstance(o, arith.CmpiOp)))
    consts = [op.value.value.data for op in ops if isinstance(op, arith.ConstantOp)]
    assert 5 in consts and 13 not in consts  # the stale one is baked; (100 + 7) / 8 is not
    b.finish()


# ---- one kernel text for many batch sizes ---------------------------------------------


def _softmax(fd: FusionDefinition) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    m = fd.ops.max(x, dims=[1], keepdim=True)
    e = fd.ops.exp(x - m)
    fd.add_output(e / fd.ops.sum(e, dims=[1], keepdim=True))


def _layernorm(fd: FusionDefinition) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    g = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    mean = fd.ops.mul(fd.ops.sum(x, dims=[1], keepdim=True), 1.0 / 256)
    xc = fd.ops.sub(x, mean)
    var = fd.ops.mul(fd.ops.sum(fd.ops.mul(xc, xc), dims=[1], keepdim=True), 1.0 / 256)
    fd.add_output(xc * fd.ops.rsqrt(var + 1e-5) * fd.ops.broadcast(g, [True, False]))


def _pointwise(fd: FusionDefinition) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    y = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.tanh(x) * y + x)


def _inputs(name: str, n: int, width: int, rng: np.random.Generator) -> list[np.ndarray]:
    x = rng.standard_normal((n, width)).astype(np.float32)
    if name == "layernorm":
        return [x, rng.standard_normal(width).astype(np.float32)]
    if name == "pointwise":
        return [x, rng.standard_normal((n, width)).astype(np.float32)]
    return [x]


DEFS = {"softmax": _softmax, "layernorm": _layernorm, "pointwise": _pointwise}


def _lowered(name: str, n: int, width: int, rng: np.random.Generator) -> tuple[Any, list[np.ndarray]]:
    with FusionDefinition() as fd:
        DEFS[name](fd)
    ins = _inputs(name, n, width, rng)
    segs = lowered_segments(fd._entry, ins)  # type: ignore[arg-type]
    assert len(segs) == 1
    return segs[0], ins


def _text(low: LoweredFusion) -> str:
    return print_cuda(*low.modules())


def _params(seg: Any) -> str:
    """The segment's scheduler parameters but the grid (which follows the batch)."""
    return re.sub(r"grid = array<[^>]*>", "", str(seg.attributes.get("fuser.schedule")))


@pytest.mark.parametrize("name", sorted(DEFS))
def test_batch_sizes_with_the_same_parameters_share_one_kernel_text(name: str) -> None:
    rng = np.random.default_rng(1)
    by_params: dict[str, set[str]] = {}
    for n in [2, 3, 8, 17, 64, 100, 130]:
        (seg, low), _ = _lowered(name, n, 256, rng)
        by_params.setdefault(_params(seg), set()).add(_text(low))
    assert all(len(texts) == 1 for texts in by_params.values())
    assert len(by_params) <= 2
    assert all("extent_n0" in t for texts in by_params.values() for t in texts)


def test_twelve_batch_sizes_of_a_softmax_need_at_most_three_kernels() -> None:
    """Issue 15's acceptance: a 12-size sweep of one fusion compiles at most 3 kernels."""
    rng = np.random.default_rng(2)
    sizes = [1, 2, 3, 8, 17, 64, 100, 255, 256, 1000, 1024, 3000]
    texts = {_text(_lowered("softmax", n, 512, rng)[0][1]) for n in sizes}
    assert len(texts) <= 3, len(texts)


@pytest.mark.parametrize("name", sorted(DEFS))
@pytest.mark.parametrize(("compiled_at", "run_at"), [(8, 5), (9, 40), (100, 17)])
def test_a_kernel_text_serves_another_batch_size_exactly(name: str, compiled_at: int, run_at: int) -> None:
    rng = np.random.default_rng(compiled_at * 100 + run_at)
    (_, low_a), _ = _lowered(name, compiled_at, 64, rng)
    (seg_b, low_b), ins_b = _lowered(name, run_at, 64, rng)
    assert _text(low_a) == _text(low_b)
    # the binary of ``compiled_at`` launched with ``run_at``'s grid and arguments
    mixed = LoweredFusion(
        low_b.scheduler,
        [LoweredKernel(ka.module, ka.name, kb.block, kb.grid, kb.args, kb.shared_bytes)
         for ka, kb in zip(low_a.kernels, low_b.kernels, strict=True)],
        low_b.scratch,
    )
    extents = [a for k in mixed.kernels for a in k.args if a.kind == "extent"]
    assert extents and all(a.value == run_at for a in extents)
    # the segment reads the broadcast weight as its stripped view: [1, width]
    ranks = [len(t.get_shape()) for t in seg_b.function_type.inputs.data]
    ins_b = [x.reshape((1,) * (r - x.ndim) + x.shape) for x, r in zip(ins_b, ranks, strict=True)]
    ours, _ = run_segment_on_cpu(seg_b, ins_b, lowered=mixed, nvrtc=False)
    ref = [np.asarray(r) for r in run_fusion(seg_b, [x.copy() for x in ins_b])]
    assert_close(ours, ref, rtol=1e-5, atol=1e-5)


def test_static_extents_bake_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(signature, "SYMBOLIC_EXTENTS", False)
    rng = np.random.default_rng(3)
    a = _text(_lowered("softmax", 8, 256, rng)[0][1])
    b = _text(_lowered("softmax", 17, 256, rng)[0][1])
    assert a != b and "extent_n0" not in a
