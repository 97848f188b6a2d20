"""``segment`` and the Python side of segmentation (``fuser.runtime.segmented``): the
segmented program gives the reference's outputs, segments follow the registry,
index maps point at the right original values; random fusions go through the
whole pipeline (strip-bookend-views, mark-aliases, segment)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Region, SSAValue
from xdsl.passes import ModulePass

from fuser.ir.context import make_context, parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.ir.reference import run_fusion
from fuser.passes.bind_sizes import BindSizes
from fuser.passes.host_rewrites import HostPassError
from fuser.passes.mark_aliases import MarkAliases
from fuser.passes.segment import SegmentPass, forwarded_ops
from fuser.passes.sizes_option import SizesOptionError, parse_sizes
from fuser.passes.strip_bookend_views import StripBookendViews
from fuser.runtime.host_evaluator import run_program
from fuser.runtime.segmented import execute_segmented, execute_with_maps, segment_fusion

SEED000 = """
fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}
"""

# Seed 000 with the boundary nvFuser's segmenter chose, marked by the user with a
# segment_set: fuser's registry runs the plain seed as one inner-persistent kernel,
# so the two-segment tests mark the cut explicitly. Original indices: T0=0, T1=1,
# T2=2 (sum), T3=3 (broadcast), T4=4 (segment_set), T5=5 (add).
SUM_BROADCAST_ADD = """
fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t3s = fuser.segment_set %t3 : (!fuser.tensor<?x1xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3s : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}
"""


def fusion_of(module: ModuleOp) -> F.FusionOp:
    return next(op for op in module.ops if isinstance(op, F.FusionOp))


def random_inputs(fusion: F.FusionOp, shapes: Sequence[Sequence[int]] | None, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for i, t in enumerate(fusion.function_type.inputs.data):
        assert isinstance(t, F.TensorType)
        shape = shapes[i] if shapes is not None else t.get_shape()
        out.append(rng.standard_normal(shape).astype(t.dtype.to_numpy()))
    return out


def check_pipeline(
    text_or_module: str | ModuleOp,
    passes: Sequence[ModulePass],
    shapes: Sequence[Sequence[int]] | None = None,
    seed: int = 0,
) -> ModuleOp:
    """Run the passes; the whole module through the host evaluator equals the
    reference on the original fusion (outputs and in-place updated inputs)."""
    if isinstance(text_or_module, str):
        before, module = parse_module(text_or_module), parse_module(text_or_module)
    else:
        before, module = text_or_module.clone(), text_or_module
    fusion = fusion_of(before)
    inputs = random_inputs(fusion, shapes, seed)
    ref_inputs = [x.copy() for x in inputs]
    expected = run_fusion(fusion, ref_inputs)
    ctx: Context = make_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()
    got_inputs = [x.copy() for x in inputs]
    got = run_program(module, got_inputs)
    assert len(got) == len(expected)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    for e, g in zip(ref_inputs, got_inputs, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    return module


def launches(module: ModuleOp) -> list[H.LaunchOp]:
    return [op for op in module.walk() if isinstance(op, H.LaunchOp)]


# ---- seed 000 ----------------------------------------------------------------------


def test_seed000_two_segments_and_maps() -> None:
    fusion = fusion_of(parse_module(SUM_BROADCAST_ADD))
    module, infos = segment_fusion(fusion, [(16, 32), (16, 32)])
    module.verify()
    assert [i.scheduler for i in infos] == ["reduction", "pointwise"]
    assert all(i.launches_kernel for i in infos)
    first, second = infos
    assert first.input_map == (0,)
    assert first.output_map == (3,)  # the broadcast, as in seed 000's first segment
    assert second.input_map == (1, 3)
    assert second.output_map == (5,)
    # the segment's own numbering maps back: its inputs, then its op results
    assert first.fid_map[0] == 0 and first.fid_map[1] == 2 and first.fid_map[2] == 3
    assert second.fid_map[0] == 1 and max(second.fid_map.values()) == 5
    x, y = random_inputs(fusion, [(16, 32), (16, 32)])
    (expected,) = run_fusion(fusion, [x, y])
    np.testing.assert_allclose(execute_segmented(module, [x, y])[0], expected, rtol=1e-5)
    np.testing.assert_allclose(execute_with_maps(fusion, infos, [x, y])[0], expected, rtol=1e-5)


def test_plain_seed000_is_one_persistent_kernel() -> None:
    fusion = fusion_of(parse_module(SEED000))
    module, infos = segment_fusion(fusion, [(16, 32), (16, 32)])
    assert [i.scheduler for i in infos] == ["inner_persistent"]
    x, y = random_inputs(fusion, [(16, 32), (16, 32)])
    np.testing.assert_allclose(execute_segmented(module, [x, y])[0], run_fusion(fusion, [x, y])[0], rtol=1e-5)


def test_seed000_program_deallocates_the_intermediate() -> None:
    module = check_pipeline(
        SUM_BROADCAST_ADD, [BindSizes("0=8x16,1=8x16"), SegmentPass()], [(8, 16), (8, 16)]
    )
    program = next(op for op in module.ops if isinstance(op, H.ProgramOp))
    ops = list(program.body.block.ops)
    kinds = [op.name for op in ops]
    assert kinds.count("hir.launch") == 2
    dealloc = next(op for op in ops if isinstance(op, H.DeallocateOp))
    # dropped right after the launch that reads it last, before the return
    assert ops.index(dealloc) == kinds.index("hir.return") - 1
    assert ops[ops.index(dealloc) - 1] is launches(module)[-1]


def test_execute_segmented_with_a_preallocated_output() -> None:
    fusion = fusion_of(parse_module(SUM_BROADCAST_ADD))
    module, _ = segment_fusion(fusion, [(4, 8), (4, 8)])
    x, y = random_inputs(fusion, [(4, 8), (4, 8)])
    out = np.zeros((4, 8), np.float32)
    (got,) = execute_segmented(module, [x, y], [out])
    assert got is out
    np.testing.assert_allclose(out, run_fusion(fusion, [x, y])[0], rtol=1e-5)


# ---- the A/B/C table -----------------------------------------------------------------


def abc_fusion(a: bool, b: bool, c: bool, shapes: tuple[str, str] = ("48x32", "4x12x32")) -> str:
    cur, other = shapes
    arrays = {s: ", ".join(s.split("x")) for s in shapes}
    lines: list[str] = []
    v = "%t0"

    def view(v: str, tag: str) -> str:
        nonlocal cur, other
        lines.append(
            f"  %{tag} = fuser.reshape {v} {{new_shape = array<i64: {arrays[other]}>}} : "
            f"!fuser.tensor<{cur}xf32> -> !fuser.tensor<{other}xf32>"
        )
        cur, other = other, cur
        return f"%{tag}"

    first = cur
    if a:
        v = view(v, "A")
    lines.append(f"  %add = fuser.add {v}, {v} : (!fuser.tensor<{cur}xf32>, !fuser.tensor<{cur}xf32>) -> !fuser.tensor<{cur}xf32>")
    v = "%add"
    if b:
        v = view(v, "B")
    lines.append(f"  %mul = fuser.mul {v}, {v} : (!fuser.tensor<{cur}xf32>, !fuser.tensor<{cur}xf32>) -> !fuser.tensor<{cur}xf32>")
    v = "%mul"
    if c:
        v = view(v, "C")
    body = "\n".join(lines)
    return (
        f"fuser.fusion @abc(%t0 : !fuser.tensor<{first}xf32>) -> !fuser.tensor<{cur}xf32> {{\n"
        f"{body}\n  fuser.output {v} : !fuser.tensor<{cur}xf32>\n}}\n"
    )


@pytest.mark.parametrize("abc", list(itertools.product([True, False], repeat=3)))
def test_abc_table_is_one_kernel(abc: tuple[bool, bool, bool]) -> None:
    text = abc_fusion(*abc)
    full = check_pipeline(text, [StripBookendViews(), MarkAliases(), SegmentPass()])
    assert len(launches(full)) == 1
    alone = check_pipeline(text, [SegmentPass()])
    assert len(launches(alone)) == 1


def test_view_only_fusion_launches_nothing() -> None:
    text = """
fuser.fusion @v(%x : !fuser.tensor<8x1x6xf32>) -> !fuser.tensor<2x3x8xf32> {
  %s = fuser.squeeze %x {dims = array<i64: 1>} : (!fuser.tensor<8x1x6xf32>) -> !fuser.tensor<8x6xf32>
  %r = fuser.reshape %s {new_shape = array<i64: 2, 3, 8>} : !fuser.tensor<8x6xf32> -> !fuser.tensor<2x3x8xf32>
  fuser.output %r : !fuser.tensor<2x3x8xf32>
}
"""
    module = check_pipeline(text, [SegmentPass()])
    assert launches(module) == []
    assert not any(isinstance(op, F.FusionOp) for op in module.ops)
    x = np.arange(48, dtype=np.float32).reshape(8, 1, 6)
    (out,) = run_program(module, [x])
    assert np.shares_memory(out, x)


def test_segment_set_is_a_boundary() -> None:
    text = """
fuser.fusion @cut(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %a = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %b = fuser.segment_set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.neg %b : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %c : !fuser.tensor<4x8xf32>
}
"""
    module = check_pipeline(text, [SegmentPass()])
    assert [la.callee.string_value() for la in launches(module)] == ["cut_seg0", "cut_seg1"]


def test_layer_norm_differential() -> None:
    text = open("examples/layer_norm.mlir").read().replace("256x", "16x").replace("256, ", "16, ")
    module = check_pipeline(text, [StripBookendViews(), MarkAliases(), SegmentPass()])
    assert len(launches(module)) >= 1


def test_bad_sizes_are_diagnostics() -> None:
    with pytest.raises(SizesOptionError, match="bind-sizes: bad sizes entry 'q'"):
        parse_sizes("q", "bind-sizes")
    module = parse_module(SUM_BROADCAST_ADD)
    with pytest.raises(HostPassError, match="symbolic extents.*bind-sizes"):
        SegmentPass().apply(make_context(), module)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("0=128x1024,1=128x1024", {0: (128, 1024), 1: (128, 1024)}),
        ("128x1024,-,7", {0: (128, 1024), 2: (7,)}),  # by position; a scalar's value
        ("1=4,0=", {1: (4,), 0: ()}),  # rank 0
        ("", {}),
    ],
)
def test_one_sizes_grammar(text: str, parsed: dict[int, tuple[int, ...]]) -> None:
    assert parse_sizes(text, "bind-sizes") == parsed


@pytest.mark.parametrize("text", ["q", "0=4xq", "-1=4", "0=-4", "0=4,0=8", "1=4,4"])
def test_bad_sizes_name_the_pass(text: str) -> None:
    """``sizes_option.parse_sizes`` (bind-sizes' option) names the pass it reads for."""
    with pytest.raises(SizesOptionError, match="^bind-sizes: "):
        parse_sizes(text, "bind-sizes")


# ---- random fusions through the whole pipeline ---------------------------------------


@st.composite
def random_fusions(draw: st.DrawFn) -> str:
    """Pointwise ops, broadcasts, reductions and views over a [m, n] base."""
    m = draw(st.sampled_from([2, 3, 4]))
    n = draw(st.sampled_from([2, 4, 6]))
    block = Block()
    pool: list[SSAValue] = [block.insert_arg(F.TensorType([m, n], DType.float32), 0)]
    if draw(st.booleans()):
        pool.append(block.insert_arg(F.TensorType([n], DType.float32), 1))

    def full(v: SSAValue) -> bool:
        return isinstance(v.type, F.TensorType) and v.type.get_shape() == (m, n)

    for _ in range(draw(st.integers(2, 6))):
        x = draw(st.sampled_from(pool))
        xt = x.type
        assert isinstance(xt, F.TensorType)
        kind = draw(st.sampled_from(["unary", "binary", "reshape", "permute", "sum", "bcast"]))
        op: F.FuserOp | None = None
        if kind == "unary":
            op = F.UNARY_OP_CLASSES[draw(st.sampled_from(["neg", "abs", "exp", "set"]))](x)
        elif kind == "binary":
            others = [v for v in pool if v.type.get_shape()[-1:] == xt.get_shape()[-1:]]  # type: ignore[union-attr]
            y = draw(st.sampled_from(others))
            op = F.BINARY_OP_CLASSES[draw(st.sampled_from(["add", "mul", "sub"]))](x, y)
        elif kind == "reshape" and xt.rank == 2:
            op = F.ReshapeOp(x, [xt.get_shape()[0] * xt.get_shape()[1]])
        elif kind == "reshape" and xt.rank == 1 and xt.get_shape()[0] == m * n:
            op = F.ReshapeOp(x, [m, n])
        elif kind == "permute" and xt.rank == 2:
            op = F.PermuteOp(x, [1, 0])
        elif kind == "sum" and xt.rank == 2:
            op = F.SumOp(x, [draw(st.sampled_from([0, 1]))])
        elif kind == "bcast" and xt.rank == 1 and xt.get_shape()[0] in (m, n):
            flags = [False, True] if xt.get_shape()[0] == m else [True, False]
            b = F.BroadcastOp(x, flags)
            block.add_op(b)
            op = F.BINARY_OP_CLASSES["add"](b.results[0], pool[0])
        if op is None:
            continue
        block.add_op(op)
        pool.append(op.results[0])
    outs = [pool[-1]]
    extra = draw(st.sampled_from(pool))
    if extra not in outs and extra.owner is not block:
        outs.append(extra)
    block.add_op(F.OutputOp(outs))
    fusion = F.FusionOp("rand", list(block.arg_types), [v.type for v in outs], Region(block))
    module = ModuleOp([fusion])
    module.verify()
    return str(module)  # text: hypothesis prints a readable, parseable counterexample


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_fusions(), st.integers(0, 3))
def test_random_fusions_through_the_pipeline(text: str, seed: int) -> None:
    check_pipeline(text, [StripBookendViews(), MarkAliases(), SegmentPass()], seed=seed)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_fusions())
def test_random_fusions_maps(text: str) -> None:
    """The argument manager (index maps only) equals the reference."""
    fusion = fusion_of(parse_module(text))
    shapes = [a.type.get_shape() for a in fusion.inputs]  # type: ignore[union-attr]
    module, infos = segment_fusion(fusion, shapes)
    inputs = random_inputs(fusion, None)
    expected = run_fusion(fusion, [x.copy() for x in inputs])
    got = execute_segmented(module, [x.copy() for x in inputs])
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    try:
        mapped = execute_with_maps(fusion, infos, inputs)
    except ValueError as e:
        assert "produced by no segment" in str(e)  # outputs hoisted to host views
        return
    for e, g in zip(expected, mapped, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


BF16_SOFTMAX = """
fuser.fusion @softmax(%x : !fuser.tensor<4x2097152xbf16>) -> !fuser.tensor<4x2097152xbf16> {
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<4x2097152xbf16>) -> !fuser.tensor<4x2097152xf32>
  %m = fuser.max %xf {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4x2097152xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %xf, %m : (!fuser.tensor<4x2097152xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x2097152xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x2097152xf32>) -> !fuser.tensor<4x2097152xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4x2097152xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %s : (!fuser.tensor<4x2097152xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x2097152xf32>
  %yb = fuser.cast %y {dtype = bf16} : (!fuser.tensor<4x2097152xf32>) -> !fuser.tensor<4x2097152xbf16>
  fuser.output %yb : !fuser.tensor<4x2097152xbf16>
}
"""


def test_input_forwarding_recomputes_the_cast_of_an_input() -> None:
    """A segmented bf16 softmax: the segments that read cast(x) recompute it from the
    bf16 input (no f32 copy of x between segments), with the reference's outputs."""
    module = check_pipeline(BF16_SOFTMAX, [SegmentPass()])
    segs = [op for op in module.ops if isinstance(op, F.FusionOp)]
    assert len(segs) >= 2
    readers = [s for s in segs if any(isinstance(op, F.CastOp) and isinstance(op.operands[0], BlockArgument)
                                      for op in s.body.block.ops)]
    assert len(readers) >= 2  # the cast is in every segment that needs it
    # the first segment reads only x and writes no f32 copy of it
    first = segs[0]
    assert [t.get_shape() for t in first.function_type.inputs.data] == [(4, 2097152)]  # type: ignore[attr-defined]
    assert all(t.get_shape() != (4, 2097152) for t in first.function_type.outputs.data)  # type: ignore[attr-defined]
    fusion = fusion_of(parse_module(BF16_SOFTMAX))
    (cast,) = [op for op in fusion.body.block.ops if isinstance(op, F.CastOp) and op.operands[0] in fusion.inputs]
    assert cast in forwarded_ops(fusion)


def test_no_forwarding_of_returned_values_or_segment_set_boundaries() -> None:
    text = """
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
  %a = fuser.neg %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %b = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.segment_set %b : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %d = fuser.tanh %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %e = fuser.add %d, %c : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %a, %e : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
}
"""
    fusion = fusion_of(parse_module(text))
    names = {op.results[0].name_hint for op in forwarded_ops(fusion)}
    assert names == {"d"}  # %a is returned, %b feeds a segment_set, %c is one
    check_pipeline(text, [SegmentPass()])


CROSS_ENTROPY_BACKWARD = """
fuser.fusion @xent_bwd(%g : !fuser.tensor<f32>, %valid : !fuser.tensor<32xi1>, %labels : !fuser.tensor<2x17xi64>,
                       %logits : !fuser.tensor<2x16x50257xbf16>, %amax : !fuser.tensor<32x1xf32>,
                       %lse : !fuser.tensor<32x1xf32>) -> !fuser.tensor<2x16x50257xbf16> {
  %ng = fuser.neg %g : (!fuser.tensor<f32>) -> !fuser.tensor<f32>
  %n = fuser.sum %valid {dims = array<i64: 0>} : (!fuser.tensor<32xi1>) -> !fuser.tensor<i64>
  %nf = fuser.cast %n : (!fuser.tensor<i64>) -> !fuser.tensor<f32>
  %scale = fuser.truediv %ng, %nf : (!fuser.tensor<f32>, !fuser.tensor<f32>) -> !fuser.tensor<f32>
  %shifted = fuser.slice %labels {starts = array<i64: 0, 1>, ends = array<i64: 2, 17>, strides = array<i64: 1, 1>} : (!fuser.tensor<2x17xi64>) -> !fuser.tensor<2x16xi64>
  %copied = fuser.set %shifted : (!fuser.tensor<2x16xi64>) -> !fuser.tensor<2x16xi64>
  %t = fuser.reshape %copied {new_shape = array<i64: 32>, view = #fuser.view<merge 2>} : !fuser.tensor<2x16xi64> -> !fuser.tensor<32xi64>
  %c50257 = fuser.constant 50257 : i64
  %c0 = fuser.constant 0 : i64
  %c1 = fuser.constant 1 : i64
  %classes = fuser.iota %c50257, %c0, %c1 : (i64, i64, i64) -> !fuser.tensor<50257xi64>
  %none = fuser.constant -1 : i64
  %none_t = fuser.full %none {shape = array<i64>} : i64 -> !fuser.tensor<i64>
  %tv = fuser.where %valid, %t, %none_t : (!fuser.tensor<32xi1>, !fuser.tensor<32xi64>, !fuser.tensor<i64>) -> !fuser.tensor<32xi64>
  %cb = fuser.reshape %classes {new_shape = array<i64: 1, 50257>, view = #fuser.view<broadcast, keep>} : !fuser.tensor<50257xi64> -> !fuser.tensor<1x50257xi64>
  %tb = fuser.reshape %tv {new_shape = array<i64: 32, 1>, view = #fuser.view<keep, broadcast>} : !fuser.tensor<32xi64> -> !fuser.tensor<32x1xi64>
  %hit = fuser.eq %cb, %tb : (!fuser.tensor<1x50257xi64>, !fuser.tensor<32x1xi64>) -> !fuser.tensor<32x50257xi1>
  %zero = fuser.constant 0.000000e+00 : f64
  %zero_t = fuser.full %zero {shape = array<i64>} : f64 -> !fuser.tensor<f32>
  %dy = fuser.where %hit, %scale, %zero_t : (!fuser.tensor<32x50257xi1>, !fuser.tensor<f32>, !fuser.tensor<f32>) -> !fuser.tensor<32x50257xf32>
  %xf = fuser.cast %logits : (!fuser.tensor<2x16x50257xbf16>) -> !fuser.tensor<2x16x50257xf32>
  %x = fuser.reshape %xf {new_shape = array<i64: 32, 50257>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x16x50257xf32> -> !fuser.tensor<32x50257xf32>
  %d = fuser.sub %x, %amax : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x1xf32>) -> !fuser.tensor<32x50257xf32>
  %logp = fuser.sub %d, %lse : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x1xf32>) -> !fuser.tensor<32x50257xf32>
  %p = fuser.exp %logp : (!fuser.tensor<32x50257xf32>) -> !fuser.tensor<32x50257xf32>
  %s = fuser.sum %dy {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<32x50257xf32>) -> !fuser.tensor<32x1xf32>
  %m = fuser.mul %p, %s : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x1xf32>) -> !fuser.tensor<32x50257xf32>
  %dx = fuser.sub %dy, %m : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x50257xf32>) -> !fuser.tensor<32x50257xf32>
  %dx3 = fuser.reshape %dx {new_shape = array<i64: 2, 16, 50257>, view = #fuser.view<split [2, 16], keep>} : !fuser.tensor<32x50257xf32> -> !fuser.tensor<2x16x50257xf32>
  %out = fuser.cast %dx3 : (!fuser.tensor<2x16x50257xf32>) -> !fuser.tensor<2x16x50257xbf16>
  fuser.output %out : !fuser.tensor<2x16x50257xbf16>
}
"""


def test_values_built_from_small_tensors_are_recomputed_not_written() -> None:
    """A tiny GPT-2's loss backward partition as the torch backend defines it
    (``frontend/loss_decompositions.py``): the gradient of the picked
    log-probabilities is a [N, C] ``where`` of an iota compared with each row's
    target, reduced by one segment and subtracted by another. It is built from small
    tensors only (the targets, a 0-d scale), so both segments recompute it: no segment
    writes an [N, C] intermediate (without the rule, one wrote it in float32; GPT-2
    small wrote and read back 823 MB), and the program computes what the reference
    does."""
    from fuser.schedulers.analysis.sizes import bind_sizes

    module = check_pipeline(CROSS_ENTROPY_BACKWARD, [SegmentPass()])
    segs = [op for op in module.ops if isinstance(op, F.FusionOp)]
    assert len(segs) >= 2
    wide = [(s.sym_name.data, t.get_shape()) for s in segs for t in s.function_type.outputs.data  # type: ignore[attr-defined]
            if t.get_shape() == (32, 50257)]  # type: ignore[attr-defined]
    assert not wide, wide
    fusion = fusion_of(parse_module(CROSS_ENTROPY_BACKWARD))
    sizes = bind_sizes(fusion, [[], [32], [2, 17], [2, 16, 50257], [32, 1], [32, 1]])
    names = {op.results[0].name_hint for op in forwarded_ops(fusion, sizes)}
    # the [N, C] mask and gradient and what they are built of; not the reductions or
    # what reads the logits (xf, rule 1: a unary op of an input)
    assert {"classes", "hit", "dy"} <= names and not names & {"m", "dx", "s", "n"}, names
    assert "dy" not in {op.results[0].name_hint for op in forwarded_ops(fusion)}  # rule 2 needs sizes
