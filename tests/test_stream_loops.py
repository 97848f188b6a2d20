"""``lower-stream-loops`` and ``shrink-stream-buffers`` on the CPU: the lowered host
programs give the reference interpreter's results (differential), with the loop
structure and stream order of seed 001."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.ir.reference import run_fusion
from fuser.passes.host_rewrites import HostPassError
from fuser.passes.lower_stream_loops import lower_stream_loops
from fuser.passes.shrink_stream_buffers import shrink_stream_buffers
from fuser.runtime.host_evaluator import HostEvaluator

CASES = Path(__file__).parent / "filecheck" / "passes"


def _fusion_text(path: Path) -> str:
    """The input fusion(s) of a FileCheck test (its non-comment lines)."""
    return "\n".join(
        line for line in path.read_text().splitlines() if not line.lstrip().startswith("//")
    )


def _module(path: Path) -> ModuleOp:
    return parse_module(_fusion_text(path))


def _reference(path: Path, name: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    m = _module(path)
    fusion = next(
        op for op in m.ops if isinstance(op, F.FusionOp) and op.sym_name.data == name
    )
    return run_fusion(fusion, [x.copy() for x in inputs])


def _loops(module: ModuleOp) -> list[H.ForOp]:
    return [op for op in module.walk() if isinstance(op, H.ForOp)]


SEED_CASES = [
    ("lower-stream-loops-single.mlir", "single", 1),
    ("lower-stream-loops-two.mlir", "two", 1),
    ("lower-stream-loops-three.mlir", "three", 2),
    ("lower-stream-loops-reduction.mlir", "sq_rowsum", 1),
]


@pytest.mark.parametrize("join_after_loop", [False, True])
@pytest.mark.parametrize("num_streams", [1, 2, 4, 8])
@pytest.mark.parametrize(("file", "name", "loops"), SEED_CASES)
def test_lowered_program_matches_reference(
    file: str, name: str, loops: int, num_streams: int, join_after_loop: bool
) -> None:
    m = _module(CASES / file)
    lower_stream_loops(m, num_streams, join_after_loop)
    m.verify()
    assert len([lp for lp in _loops(m) if lp.stream_axis is not None]) == loops
    assert len(_loops(m)) == loops * (2 if join_after_loop else 1)
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    ev = HostEvaluator(m, num_streams)
    (out,) = ev.run([x])
    (ref,) = _reference(CASES / file, name, [x])
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    # every launch inside a loop runs on pool stream 1 + i % num_streams, in order
    workers = [s for e, s in ev.stream_log if e.startswith("launch") and s != 0]
    per_iteration = len(workers) // (6 * loops)
    assert per_iteration >= 1
    assert workers == [
        1 + (i % num_streams) for _ in range(loops) for i in range(6) for _ in range(per_iteration)
    ]


def test_stream_order_of_one_iteration() -> None:
    m = _module(CASES / "lower-stream-loops-single.mlir")
    lower_stream_loops(m, 2)
    ev = HostEvaluator(m, 2)
    ev.run([np.ones((3, 4), np.float32)])
    assert ev.stream_log[:6] == [
        ("get_current_stream", 0),
        ("set_current_stream", 1),
        ("synchronize_stream", 0),
        ("launch @single_set", 1),
        ("set_current_stream", 0),
        ("synchronize_stream", 1),
    ]
    assert ev.stream_log[6:8] == [("get_current_stream", 0), ("set_current_stream", 2)]


def test_preallocated_output_is_written_in_place() -> None:
    m = _module(CASES / "lower-stream-loops-two.mlir")
    lower_stream_loops(m, 4)
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    buf = np.zeros((4, 5), np.float32)
    (out,) = HostEvaluator(m, 4).run([x], preallocated_outputs=[buf])
    assert out is buf
    np.testing.assert_array_equal(buf, x)


def test_inputs_cannot_be_aliased() -> None:
    text = """
    fuser.fusion @id(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
      %b = fuser.set %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
      fuser.output %b : !fuser.tensor<4xf32>
    }
    hir.program @main(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
      %y = hir.allocate : !fuser.tensor<4xf32>
      hir.alias %x, %y : !fuser.tensor<4xf32>, !fuser.tensor<4xf32>
      hir.return %y : !fuser.tensor<4xf32>
    }
    """
    with pytest.raises(VerifyException, match="program input #0; inputs cannot be aliased"):
        parse_module(text).verify()


def test_keepdim_reduction_streams_on_kept_axis() -> None:
    text = """
    fuser.fusion @colsum(%t0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<1x4xf32> {
      %t1 = fuser.sum %t0 {dims = array<i64: 0>, keepdim = true} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<1x4xf32>
      %r0, %i1 = iterdomain.logical %t1 : !fuser.tensor<1x4xf32> -> !iterdomain.id<8, reduction>, !iterdomain.id<4>
      %s = iterdomain.parallelize %i1 to stream : !iterdomain.id<4> -> !iterdomain.id<4, stream>
      iterdomain.loop %t1 [%r0, %s] : !fuser.tensor<1x4xf32> [!iterdomain.id<8, reduction>, !iterdomain.id<4, stream>]
      fuser.output %t1 : !fuser.tensor<1x4xf32>
    }
    """
    m = parse_module(text)
    lower_stream_loops(m, 3)
    m.verify()
    (loop,) = _loops(m)
    assert loop.stream_axis is not None and loop.stream_axis.data == "t1[1]"
    x = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)
    (out,) = HostEvaluator(m, 3).run([x])
    np.testing.assert_allclose(out, x.sum(0, keepdims=True), rtol=1e-5)


def test_scalar_and_right_broadcast_operands() -> None:
    """A constant and a rank-1 operand lacking the stream axis are passed whole."""
    text = """
    fuser.fusion @affine(%t0 : !fuser.tensor<?x?xf32>, %b : !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32> {
      %c = fuser.constant 2.0 : f32
      %t1 = fuser.mul %t0, %c : (!fuser.tensor<?x?xf32>, f32) -> !fuser.tensor<?x?xf32>
      %t2 = fuser.add %t1, %b : (!fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32>
      %a0, %a1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
      %as = iterdomain.parallelize %a0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
      iterdomain.loop %t1 [%as, %a1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
      %b0, %b1 = iterdomain.logical %t2 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
      %bs = iterdomain.parallelize %b0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
      iterdomain.loop %t2 [%bs, %b1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
      fuser.output %t2 : !fuser.tensor<?x?xf32>
    }
    """
    m = parse_module(text)
    lower_stream_loops(m, 2)
    m.verify()
    assert len(_loops(m)) == 1
    selects = [op for op in m.walk() if isinstance(op, H.AliasSelectOp)]
    assert {op.input.name_hint for op in selects} == {"t0", "t1", "t2"}
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    (out,) = HostEvaluator(m, 2).run([x, b])
    np.testing.assert_allclose(out, x * 2 + b, rtol=1e-6)


def test_different_extents_do_not_merge() -> None:
    """Stream axes of different extents (axis 0 of t1, axis 1 of t2) get two loops."""
    text = """
    fuser.fusion @f(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
      %t1 = fuser.neg %t0 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
      %t2 = fuser.abs %t1 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
      %a0, %a1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
      %as = iterdomain.parallelize %a0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
      iterdomain.loop %t1 [%as, %a1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
      %b0, %b1 = iterdomain.logical %t2 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
      %bs = iterdomain.parallelize %b1 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
      iterdomain.loop %t2 [%b0, %bs] : !fuser.tensor<?x?xf32> [!iterdomain.id<?>, !iterdomain.id<?, stream>]
      fuser.output %t2 : !fuser.tensor<?x?xf32>
    }
    """
    m = parse_module(text)
    lower_stream_loops(m, 4)
    m.verify()
    loops = _loops(m)
    assert [lp.stream_axis.data for lp in loops if lp.stream_axis] == ["t1[0]", "t2[1]"]
    x = np.random.default_rng(3).standard_normal((3, 7)).astype(np.float32)
    (out,) = HostEvaluator(m, 4).run([x])
    np.testing.assert_array_equal(out, np.abs(-x))


@pytest.mark.parametrize("num_streams", [1, 2, 3])
def test_shrunk_buffers_keep_results(num_streams: int) -> None:
    m = _module(CASES / "lower-stream-loops-two.mlir")
    lower_stream_loops(m, num_streams)
    assert shrink_stream_buffers(m) == 1
    m.verify()
    allocs = [op for op in m.walk() if isinstance(op, H.AllocateOp)]
    shapes = sorted(str(op.result.type) for op in allocs)
    assert f"!fuser.tensor<{num_streams}x?xf32>" in shapes
    x = np.random.default_rng(4).standard_normal((7, 5)).astype(np.float32)
    (out,) = HostEvaluator(m, num_streams).run([x])
    np.testing.assert_array_equal(out, x)


def test_shrink_is_skipped_when_unsafe() -> None:
    m = _module(CASES / "lower-stream-loops-three.mlir")
    lower_stream_loops(m, 2)
    assert shrink_stream_buffers(m) == 0  # t1 is read after its loop
    m = _module(CASES / "lower-stream-loops-two.mlir")
    lower_stream_loops(m, None)
    assert shrink_stream_buffers(m) == 0  # the stream count is the runtime's


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("split", "comes from iterdomain.split"),
        ("merged", "comes from iterdomain.merge"),
        ("input", "input %t0 is stream-parallel"),
        ("view", "fuser.permute cannot be stream-parallel"),
        ("bcast", "operand %b broadcasts along stream axis 0"),
    ],
)
def test_unsupported_cases_are_diagnosed(snippet: str, message: str) -> None:
    chunks = (CASES / "lower-stream-loops-invalid.mlir").read_text().split("// -----")
    (chunk,) = [c for c in chunks if f"fuser.fusion @{snippet}(" in c]
    text = "\n".join(ln for ln in chunk.splitlines() if not ln.lstrip().startswith("//"))
    m = parse_module(text)
    with pytest.raises(HostPassError, match=message):
        lower_stream_loops(m, 4)


def test_frontend_marks_stream_axes() -> None:
    from fuser.frontend.fusion_definition import FusionDefinition
    from fuser.frontend.streams import parallelize_stream, stream_axes_of, stream_module

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1])
        t1 = fd.ops.mul(t0, t0)
        t2 = fd.ops.sum(t1, dims=[1])
        fd.add_output(t2)
    parallelize_stream(fd, t1, 0)
    parallelize_stream(fd, t2, -1)
    assert sorted(stream_axes_of(fd).values()) == [0, 0]
    m = stream_module(fd)
    m.verify()
    text = str(m)
    assert text.count("to stream") == 2
    lower_stream_loops(m, 2)
    m.verify()
    assert len(_loops(m)) == 1
    x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)
    (out,) = HostEvaluator(m, 2).run([x])
    (ref,) = fd.execute([x])
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    with pytest.raises(ValueError, match="stream axis"):
        parallelize_stream(fd, t1, 5)


@pytest.mark.parametrize("num_streams", [1, 3])
def test_stream_launches_run_their_written_loop_nests(num_streams: int) -> None:
    """Every launch of a stream program is scheduled (``stream_passes`` ends with
    ``schedule-fusions``: the GPU lowers only loop nests); its generated kernels, run by
    the CPU kernel interpreter, give the reference's result."""
    from fuser import DataType, FusionDefinition
    from fuser.codegen.lower.loop_nest import has_loop_nest
    from fuser.frontend.streams import _stream_fusion, stream_passes
    from fuser.runtime.driver import Signature, compile

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.set(t0)
        t2 = fd.ops.mul(t1, 2.0)
        fd.add_output(t2)
    fd.parallelize_stream(t1, 0)
    fd.parallelize_stream(t2, 0)
    assert stream_passes(num_streams)[-1] == "schedule-fusions"
    x = np.random.default_rng(0).standard_normal((6, 16)).astype(np.float32)
    fusion = _stream_fusion(fd)
    exe = compile(fusion, Signature.of(fusion, [x]), passes=stream_passes(num_streams))
    assert exe.launches and all(has_loop_nest(exe.callee(op)) for op in exe.launches)
    (out,) = exe.run_on_cpu([x], kernels=True)
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(fd.execute([x], num_streams=num_streams)[0], 2 * x, rtol=1e-6)
