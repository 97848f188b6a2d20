"""The next iteration's loads in registers (``codegen/pipeline_loads.py``): what a
kernel computes is unchanged bit for bit, every load the loop carries is issued under
the conditions the original load had (the kernel interpreter checks each address
against its tensor), and loads the top of the loop cannot compute stay where they
are."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import f32

from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.kernel_interpreter import run_kernel
from fuser.codegen.pipeline_loads import PIPELINE_ATTR, pipeline_loads, pipeline_setting
from fuser.ir.context import parse_module
from fuser.ir.dialects import kernel as k
from fuser.runtime.cpu_runner import run_segment_on_cpu
from tests.test_prefetch_loads import assert_bitwise_then_reference, persistent_layer_norm_backward


def _pipelined_loops(lowered) -> list[scf.ForOp]:  # noqa: ANN001
    return [op for m in lowered.modules() for op in m.walk() if isinstance(op, scf.ForOp) and PIPELINE_ATTR in op.attributes]


def _loads_in(loop: scf.ForOp) -> list[str]:
    return [
        op.operands[0].name_hint or "?" for op in loop.body.walk() if isinstance(op, memref.LoadOp | vector.LoadOp)
    ]


@pytest.mark.parametrize("rows,cols", [(300, 24), (301, 64)])
def test_layer_norm_backward_carries_the_next_row_and_matches(
    rows: int, cols: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``FUSER_PIPELINE_LOADS=1``, the persistent kernel's row loop (16 blocks of
    4 rows, a warp reduction a row) carries dy, x, mean and rstd of its next row in
    registers: their loads inside the loop are the next row's, at its top, and the
    first row's are before the loop. On 300 and 301 rows the blocks' last iterations
    are partial, so the guards matter: an address past a tensor fails the
    interpreter. The outputs are bit for bit those of the kernel without it, and
    match the reference; the kernel compiles with NVRTC."""
    monkeypatch.setenv("FUSER_PIPELINE_LOADS", "1")
    fusion, xs, sched = persistent_layer_norm_backward(rows, cols)
    ours, lowered = run_segment_on_cpu(sched, xs)
    (loop,) = [lp for lp in _pipelined_loops(lowered) if any(isinstance(o, k.WarpReduceOp | k.BlockReduceOp) for o in lp.walk())]
    carried = [a.name_hint for a in loop.body.block.args[1:]]
    assert len(carried) >= 4, carried
    # Every input row load in the loop is the next row's (in the scf.if at the top).
    top = [op for op in loop.body.block.ops if isinstance(op, scf.IfOp)]
    assert set(_loads_in(loop)) >= {"in0", "in1", "in2", "in3"}
    for op in loop.body.walk():
        if isinstance(op, memref.LoadOp | vector.LoadOp) and op.operands[0].name_hint in ("in0", "in1", "in2", "in3"):
            assert any(t.is_ancestor(op) for t in top[: len(carried)]), op
    monkeypatch.setenv("FUSER_PIPELINE_LOADS", "0")
    plain, lowered0 = run_segment_on_cpu(sched, xs)
    assert not _pipelined_loops(lowered0)
    assert_bitwise_then_reference(ours, plain, fusion, xs)


KERNEL = """
builtin.module {
  kernel.func @rows(%x : memref<?xf32>, %idx : memref<?xi32>, %y : memref<?xf32>, %rows : index) attributes {block_size = array<i32: 32, 1, 1>, index_bits = 32 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.000000e+00 : f32
    %bidx = kernel.block_id x
    %base = arith.muli %bidx, %c3 : index
    %total = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f32) {
      %tidx = kernel.thread_id x
      %row = arith.addi %base, %i : index
      %p = arith.cmpi slt, %row, %rows : index
      %v = scf.if %p -> (f32) {
        %rowoff = arith.muli %row, %c32 : index
        %off = arith.addi %rowoff, %tidx : index
        %xv = memref.load %x[%off] : memref<?xf32>
        %again = memref.load %x[%off] : memref<?xf32>
        %j = memref.load %idx[%off] : memref<?xi32>
        %ji = arith.index_cast %j : i32 to index
        %g = memref.load %x[%ji] : memref<?xf32>
        %a = arith.mulf %xv, %again : f32
        %b = arith.addf %a, %g : f32
        scf.yield %b : f32
      } else {
        scf.yield %zero : f32
      }
      %s = kernel.block_reduce %v {kind = "add", dims = array<i64: 0>} : (f32) -> f32
      scf.if %p {
        memref.store %s, %y[%row] : memref<?xf32>
        scf.yield
      }
      %acc2 = arith.addf %acc, %s : f32
      scf.yield %acc2 : f32
    }
    %t0 = arith.cmpi eq, %bidx, %c0 : index
    scf.if %t0 {
      memref.store %total, %y[%rows] : memref<?xf32>
      scf.yield
    }
    kernel.return
  }
}
"""


ROWS = 7


def _rows_inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(ROWS * 32).astype(np.float32)
    return x, rng.integers(0, ROWS * 32, size=ROWS * 32).astype(np.int32)


def _run_rows(module, x: np.ndarray, idx: np.ndarray) -> np.ndarray:  # noqa: ANN001
    """``@rows`` over 7 rows in 3 blocks of 3 (the last block's last two rows are
    outside); the row sums, then the total."""
    y = np.zeros(ROWS + 1, np.float32)
    run_kernel(module, "rows", [x, idx, y, ROWS], grid=(3, 1, 1))
    return y


def test_a_hand_written_loop_carries_what_it_can_and_keeps_its_results() -> None:
    """A loop that already carries a value (the running total) gains one carried
    value for the row's two loads of one element of %x (shared) and one for %idx; the
    gather through a loaded index stays in the loop. Over 7 rows in blocks of 3 (the
    last block's second and third rows are outside), the outputs equal the original
    kernel's; running the transform again adds nothing; the CUDA compiles."""
    x, idx = _rows_inputs(0)
    before = _run_rows(parse_module(KERNEL), x, idx)
    module = parse_module(KERNEL)
    func = next(op for op in module.walk() if isinstance(op, k.FuncOp))
    assert pipeline_loads(func) == 2
    module.verify()
    (loop,) = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert PIPELINE_ATTR in loop.attributes
    assert len(loop.iter_args) == 3 and len(loop.results) == 3
    assert sorted(_loads_in(loop)) == ["idx", "x", "x"]  # the next row's two, the gather
    np.testing.assert_array_equal(_run_rows(module, x, idx), before)
    assert pipeline_loads(func) == 0
    assert "memref" not in print_cuda(module).split("__global__")[0]  # it prints


def test_the_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUSER_PIPELINE_LOADS", raising=False)
    assert pipeline_setting() == (False, None)
    monkeypatch.setenv("FUSER_PIPELINE_LOADS", "1")
    assert pipeline_setting() == (True, None)
    monkeypatch.setenv("FUSER_PIPELINE_LOADS", "bytes=8")
    assert pipeline_setting() == (True, 8)
    for bad in ("yes", "bytes=0", "bytes=x"):
        monkeypatch.setenv("FUSER_PIPELINE_LOADS", bad)
        with pytest.raises(ValueError, match="FUSER_PIPELINE_LOADS"):
            pipeline_setting()


def test_a_cap_carries_the_first_loads_that_fit() -> None:
    """``max_bytes=4`` carries the f32 load of %x (4 bytes) and not the i32 index
    after it; the kernel still computes what it did."""
    x, idx = _rows_inputs(1)
    module = parse_module(KERNEL)
    func = next(op for op in module.walk() if isinstance(op, k.FuncOp))
    assert pipeline_loads(func, max_bytes=4) == 1
    (loop,) = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert [a.type for a in loop.body.block.args[1:]] == [f32, f32]  # the running total, %x's element
    assert [a.name_hint for a in loop.body.block.args[1:]] == ["acc", "xv_cur"]
    np.testing.assert_array_equal(_run_rows(module, x, idx), _run_rows(parse_module(KERNEL), x, idx))
