"""The hir dialect's CPU evaluator (runtime/host_evaluator.py) on seed 001's host
programs and on views, aliases, preallocated outputs, deallocation and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Region

from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.dtypes import DType
from fuser.runtime.host_evaluator import HostEvaluator, HostIrError, run_program

HIR_DIR = Path(__file__).parent / "filecheck" / "hir"


def seed(name: str) -> ModuleOp:
    return parse_module((HIR_DIR / name).read_text())


def x_input(rows: int = 5, cols: int = 3) -> np.ndarray:
    return np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) * 0.5 - 2.0


# =====================================================================================
# Seed 001 host programs
# =====================================================================================


def test_single_set_op_computes_copy_and_streams() -> None:
    x = x_input(5, 3)
    ev = HostEvaluator(seed("seed001-single-set-op.mlir"), num_streams=2)
    (out,) = ev.run([x])
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)
    expected: list[tuple[str, int]] = []
    for i in range(5):
        s = 1 + i % 2
        expected += [
            ("get_current_stream", 0),
            ("set_current_stream", s),
            ("synchronize_stream", 0),
            ("launch @set", s),
            ("set_current_stream", 0),
            ("synchronize_stream", s),
        ]
    assert ev.stream_log == expected


def test_single_set_op_writes_preallocated_output_in_place() -> None:
    x = x_input(4, 6)
    out = np.full((4, 6), np.nan, dtype=np.float32)
    (res,) = run_program(seed("seed001-single-set-op.mlir"), [x], preallocated_outputs=[out])
    assert res is out
    np.testing.assert_array_equal(out, x)


def test_two_set_ops_merged_loop() -> None:
    x = x_input(7, 2)
    ev = HostEvaluator(seed("seed001-two-set-ops.mlir"), num_streams=3)
    (out,) = ev.run([x])
    np.testing.assert_array_equal(out, x)
    launches = [e for e in ev.stream_log if e[0].startswith("launch")]
    # one merged loop: two launches per iteration, both on the iteration's stream
    assert launches == [("launch @set", 1 + i % 3) for i in range(7) for _ in range(2)]


def test_three_set_ops_disjoint_loops() -> None:
    x = x_input(3, 4)
    ev = HostEvaluator(seed("seed001-three-set-ops-disjoint-loops.mlir"), num_streams=4)
    out_buf = np.zeros((3, 4), dtype=np.float32)
    (out,) = ev.run([x], preallocated_outputs=[out_buf])
    assert out is out_buf
    np.testing.assert_array_equal(out, x)
    launches = [e for e in ev.stream_log if e[0].startswith("launch")]
    # the middle set2d runs between the loops, on the user's stream
    assert launches == [("launch @set", 1 + i) for i in range(3)] + [("launch @set2d", 0)] + [
        ("launch @set", 1 + i) for i in range(3)
    ]


# =====================================================================================
# Views
# =====================================================================================

VIEWS = """
builtin.module {
  hir.program @main(%x : !fuser.tensor<4x6xf32>, %n : index) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<2x12xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x4x6xf32>, !fuser.tensor<2x3xf32>, !fuser.tensor<6xf32>) {
    %p = hir.permute %x {dims = array<i64: 1, 0>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<6x4xf32>
    %r = hir.reshape %x {new_shape = array<i64: 2, 12>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<2x12xf32>
    %e = hir.reshape %x {new_shape = array<i64: 4, 1, 6>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<4x1x6xf32>
    %q = hir.squeeze %e {dims = array<i64: 1>} : !fuser.tensor<4x1x6xf32> -> !fuser.tensor<4x6xf32>
    %b = hir.broadcast %x sizes(%n : index) {shape = array<i64: -1, 4, 6>, broadcast_dims = array<i64: 1, 2>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<?x4x6xf32>
    %s = hir.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 4, 6>, strides = array<i64: 2, 2>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<2x3xf32>
    %c2 = arith.constant 2 : index
    %a = hir.alias_select %x[axis = 0, %c2] : !fuser.tensor<4x6xf32>, index -> !fuser.tensor<6xf32>
    hir.return %p, %r, %q, %b, %s, %a : !fuser.tensor<6x4xf32>, !fuser.tensor<2x12xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x4x6xf32>, !fuser.tensor<2x3xf32>, !fuser.tensor<6xf32>
  }
}
"""


def test_views_share_memory_and_match_numpy() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    p, r, q, b, s, a = run_program(parse_module(VIEWS), [x, 3])
    expected = [x.T, x.reshape(2, 12), x, np.broadcast_to(x, (3, 4, 6)), x[1:4:2, 0:6:2], x[2]]
    for got, want in zip([p, r, q, b, s, a], expected, strict=True):
        np.testing.assert_array_equal(got, want)
        assert np.shares_memory(got, x)
    assert not b.flags.writeable  # broadcast views are read-only
    a[...] = -1.0  # alias_select is a writable view
    np.testing.assert_array_equal(x[2], np.full(6, -1.0, np.float32))


def test_reshape_that_needs_a_copy_is_an_error() -> None:
    text = """
    builtin.module {
      hir.program @main(%x : !fuser.tensor<4x6xf32>) -> !fuser.tensor<24xf32> {
        %p = hir.permute %x {dims = array<i64: 1, 0>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<6x4xf32>
        %r = hir.reshape %p {new_shape = array<i64: 24>} : !fuser.tensor<6x4xf32> -> !fuser.tensor<24xf32>
        hir.return %r : !fuser.tensor<24xf32>
      }
    }"""
    with pytest.raises(HostIrError, match=r"hir.reshape: cannot view shape \[6, 4\]"):
        run_program(parse_module(text), [np.zeros((4, 6), np.float32)])


# A fusion writing into a slice of a preallocated output (written through the view).
ADD_INTO_SLICE = """
builtin.module {
  fuser.fusion @add(%a : !fuser.tensor<2x3xf32>, %b : !fuser.tensor<2x3xf32>) -> !fuser.tensor<2x3xf32> {
    %c = fuser.add %a, %b : (!fuser.tensor<2x3xf32>, !fuser.tensor<2x3xf32>) -> !fuser.tensor<2x3xf32>
    fuser.output %c : !fuser.tensor<2x3xf32>
  }
  hir.program @main(%x : !fuser.tensor<2x3xf32>) -> !fuser.tensor<4x3xf32> {
    %out = hir.allocate {zero_init, preallocated} : !fuser.tensor<4x3xf32>
    %lo = hir.slice %out {starts = array<i64: 2, 0>, ends = array<i64: 4, 3>, strides = array<i64: 1, 1>} : !fuser.tensor<4x3xf32> -> !fuser.tensor<2x3xf32>
    %r = hir.launch @add(%x, %x) outs(%lo : !fuser.tensor<2x3xf32>) : (!fuser.tensor<2x3xf32>, !fuser.tensor<2x3xf32>) -> !fuser.tensor<2x3xf32>
    hir.return %out : !fuser.tensor<4x3xf32>
  }
}
"""


def test_launch_writes_through_slice_into_preallocated_output() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    buf = np.full((4, 3), 7.0, dtype=np.float32)
    (out,) = run_program(parse_module(ADD_INTO_SLICE), [x], preallocated_outputs=[buf])
    assert out is buf
    np.testing.assert_array_equal(buf[:2], np.zeros((2, 3), np.float32))  # zero_init
    np.testing.assert_array_equal(buf[2:], 2 * x)
    (fresh,) = run_program(parse_module(ADD_INTO_SLICE), [x])
    np.testing.assert_array_equal(fresh, buf)


# =====================================================================================
# Aliases
# =====================================================================================

ALIAS_TO_INPUT = """
builtin.module {
  fuser.fusion @double(%a : !fuser.tensor<5xf32>) -> !fuser.tensor<5xf32> {
    %c = fuser.add %a, %a : (!fuser.tensor<5xf32>, !fuser.tensor<5xf32>) -> !fuser.tensor<5xf32>
    fuser.output %c : !fuser.tensor<5xf32>
  }
  hir.program @main(%x : !fuser.tensor<5xf32>) -> (!fuser.tensor<5xf32>, !fuser.tensor<5xf32>) {
    %r = hir.launch @double(%x) : (!fuser.tensor<5xf32>) -> !fuser.tensor<5xf32>
    hir.alias %r, %x : !fuser.tensor<5xf32>, !fuser.tensor<5xf32>
    %buf = hir.allocate : !fuser.tensor<5xf32>
    hir.alias %buf, %x : !fuser.tensor<5xf32>, !fuser.tensor<5xf32>
    %s = hir.launch @double(%r) outs(%buf : !fuser.tensor<5xf32>) : (!fuser.tensor<5xf32>) -> !fuser.tensor<5xf32>
    hir.return %r, %buf : !fuser.tensor<5xf32>, !fuser.tensor<5xf32>
  }
}
"""


def test_output_aliasing_an_input_is_written_in_place() -> None:
    x = np.arange(5, dtype=np.float32)
    x0 = x.copy()
    r, buf = run_program(parse_module(ALIAS_TO_INPUT), [x])
    # %r = 2x is stored into %x; %buf is %x, so the second launch makes it 4x
    np.testing.assert_array_equal(x, 4 * x0)
    assert r is x and buf is x


def test_inputs_cannot_be_aliased() -> None:
    text = """
    builtin.module {
      hir.program @main(%x : !fuser.tensor<5xf32>) -> !fuser.tensor<5xf32> {
        %y = hir.allocate : !fuser.tensor<5xf32>
        hir.alias %x, %y : !fuser.tensor<5xf32>, !fuser.tensor<5xf32>
        hir.return %y : !fuser.tensor<5xf32>
      }
    }"""
    with pytest.raises(Exception, match="inputs cannot be aliased"):
        parse_module(text)


# =====================================================================================
# Deallocation
# =====================================================================================


def test_read_after_deallocate_is_an_error() -> None:
    text = """
    builtin.module {
      fuser.fusion @id(%a : !fuser.tensor<3xf32>) -> !fuser.tensor<3xf32> {
        %b = fuser.set %a : (!fuser.tensor<3xf32>) -> !fuser.tensor<3xf32>
        fuser.output %b : !fuser.tensor<3xf32>
      }
      hir.program @main(%x : !fuser.tensor<3xf32>) -> !fuser.tensor<3xf32> {
        %t = hir.launch @id(%x) : (!fuser.tensor<3xf32>) -> !fuser.tensor<3xf32>
        hir.deallocate %t : !fuser.tensor<3xf32>
        %u = hir.launch @id(%t) : (!fuser.tensor<3xf32>) -> !fuser.tensor<3xf32>
        hir.return %u : !fuser.tensor<3xf32>
      }
    }"""
    with pytest.raises(HostIrError, match=r"hir.launch: %t is read after hir.deallocate dropped it"):
        run_program(parse_module(text), [np.ones(3, np.float32)])


def test_deallocated_intermediate_is_dropped() -> None:
    ev = HostEvaluator(seed("seed001-two-set-ops.mlir"))
    ev.run([x_input(2, 2)])
    program = ev.program("main")
    t1 = next(op for op in program.walk() if isinstance(op, H.AllocateOp)).result
    assert t1.name_hint == "t1"
    assert t1 not in ev._env and t1 in ev._dropped


def test_a_walker_keeps_nothing_of_its_run() -> None:
    """A walker outlives its run (a GPU program keeps its evaluator): after the run it
    holds none of the run's values, so its buffers are freed when the caller drops them."""
    import gc
    import weakref

    ev = HostEvaluator(seed("seed001-two-set-ops.mlir"))
    x = x_input(2, 2)
    (out,) = ev.run([x])
    assert ev._env == {} and ev._prealloc == {}
    gone = weakref.ref(out)
    del out
    gc.collect()
    assert gone() is None


# =====================================================================================
# Typed constructors
# =====================================================================================


def test_program_built_with_typed_constructors() -> None:
    t = F.TensorType([-1, 4], DType.float32)
    row = F.TensorType([4], DType.float32)
    fusion = F.FusionOp("neg", [row], [row])
    neg = F.UNARY_OP_CLASSES["neg"](fusion.inputs[0])
    fusion.body.block.add_ops([neg, F.OutputOp([neg.result])])

    program = H.ProgramOp("main", [t], [t])
    (x,) = program.inputs
    block = program.body.block
    n = F.SizeOp(x, 0)
    alloc = H.AllocateOp(t, [n.result], preallocated=True)
    c0 = arith.ConstantOp(IntegerAttr(0, 64))
    c1 = arith.ConstantOp(IntegerAttr(1, 64))
    loop = H.ForOp(c0.result, n.result, c1.result, stream_axis="iStreamIdx0")
    i = loop.induction_var
    src = H.AliasSelectOp(x, 0, i)
    dst = H.AliasSelectOp(alloc.result, 0, i)
    launch = H.LaunchOp(fusion, [src.result], [dst.result])
    loop.body.block.add_ops([src, dst, launch])
    block.add_ops([n, alloc, c0, c1, loop, H.ReturnOp([alloc.result])])
    module = ModuleOp([fusion, program])
    module.verify()
    assert src.result.type == row and launch.res[0].type == row

    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = run_program(module, [xs])
    np.testing.assert_array_equal(out, -xs)


def test_for_with_index_bounds_and_step() -> None:
    program = H.ProgramOp("main", [], [])
    lb, ub, st = (arith.ConstantOp(IntegerAttr(v, IndexType())) for v in (1, 8, 3))
    loop = H.ForOp(lb.result, ub.result, st.result)
    s = H.StreamForIndexOp(loop.induction_var, num_streams=5)
    loop.body.block.add_ops([s, H.SetCurrentStreamOp(s.result)])
    program.body.block.add_ops([lb, ub, st, loop, H.ReturnOp([])])
    module = ModuleOp([program])
    module.verify()
    ev = HostEvaluator(module)
    assert ev.run([]) == []
    assert ev.stream_log == [("set_current_stream", 1 + i % 5) for i in (1, 4, 7)]


# =====================================================================================
# Bad input
# =====================================================================================


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([], r"hir.program @main takes 1 inputs, got 0"),
        ([np.zeros((2, 2), np.float64)], r"input #0 \(%t0\) must have dtype float32, got float64"),
        ([np.zeros(4, np.float32)], r"input #0 \(%t0\) must have rank 2, got shape \[4\]"),
        ([[1.0, 2.0]], r"input #0 \(%t0\) must be a numpy array, got list"),
    ],
)
def test_wrong_inputs_name_the_input(inputs: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_program(seed("seed001-single-set-op.mlir"), inputs)


def test_wrong_static_extent_and_scalar_inputs() -> None:
    with pytest.raises(ValueError, match=r"input #0 \(%x\) must have extent 6 on axis 1"):
        run_program(parse_module(VIEWS), [np.zeros((4, 5), np.float32), 3])
    with pytest.raises(ValueError, match=r"input #1 \(%n\) must be an integer, got 2.5"):
        run_program(parse_module(VIEWS), [np.zeros((4, 6), np.float32), 2.5])


def test_bad_preallocated_outputs() -> None:
    module = seed("seed001-single-set-op.mlir")
    x = x_input(2, 3)
    with pytest.raises(ValueError, match=r"preallocated output for hir.allocate must have shape \[2, 3\]"):
        run_program(module, [x], preallocated_outputs=[np.zeros((3, 2), np.float32)])
    with pytest.raises(ValueError, match=r"preallocated output #0 must be a rank-2 float32 array"):
        run_program(module, [x], preallocated_outputs=[np.zeros((2, 3), np.float64)])
    with pytest.raises(ValueError, match=r"has 1 results, got 2 preallocated outputs"):
        run_program(module, [x], preallocated_outputs=[None, None])
    views = parse_module(VIEWS)
    with pytest.raises(ValueError, match=r"preallocated output #0: result #0 is not a hir.allocate"):
        run_program(
            views,
            [np.zeros((4, 6), np.float32), 3],
            preallocated_outputs=[np.zeros((6, 4), np.float32)] + [None] * 5,
        )


def test_unknown_program_and_out_of_range_select() -> None:
    with pytest.raises(ValueError, match=r"no hir.program named @other"):
        run_program(seed("seed001-single-set-op.mlir"), [x_input()], name="other")
    text = """
    builtin.module {
      hir.program @main(%x : !fuser.tensor<4xf32>, %i : i64) -> !fuser.tensor<f32> {
        %a = hir.alias_select %x[axis = 0, %i] : !fuser.tensor<4xf32>, i64 -> !fuser.tensor<f32>
        hir.return %a : !fuser.tensor<f32>
      }
    }"""
    with pytest.raises(HostIrError, match=r"hir.alias_select: index 4 is out of range for axis 0"):
        run_program(parse_module(text), [np.zeros(4, np.float32), 4])


def test_block_helper_is_region_of_one_block() -> None:
    # ProgramOp and ForOp build their single block from the argument types.
    p = H.ProgramOp("p", [IndexType()], [])
    assert isinstance(p.body, Region) and isinstance(p.body.block, Block)
    assert [a.type for a in p.inputs] == [IndexType()]
