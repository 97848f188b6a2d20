"""The next iteration's prefetches of a waiting loop (``codegen/prefetch_loads.py``):
what a kernel computes is unchanged, every prefetched address is one the next
iteration loads (the kernel interpreter checks each against its tensor), and only
loads whose address the top of the loop can compute are prefetched."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType

from fuser import DataType
from fuser.codegen.kernel_interpreter import KernelError, run_kernel
from fuser.codegen.prefetch_loads import (
    OFF,
    PREFETCH_ATTR,
    prefetch_next_iteration,
    prefetch_setting,
)
from fuser.ir.context import parse_module
from fuser.ir.dialects import kernel as k
from fuser.ir.dialects.iterdomain import LoopOp
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu
from fuser.runtime.schedule_segment import schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.inner_outer_persistent import InnerOuterPersistentScheduler
from fuser.schedulers.target import H100
from tests.test_inner_outer_kernels import inputs, layer_norm_backward


def _prefetches(lowered) -> list[k.PrefetchOp]:  # noqa: ANN001
    return [op for m in lowered.modules() for op in m.walk() if isinstance(op, k.PrefetchOp)]


def _loop_of(op: k.PrefetchOp) -> scf.ForOp:
    parent = op.parent_op()
    while not isinstance(parent, scf.ForOp):
        assert parent is not None
        parent = parent.parent_op()
    return parent


def persistent_layer_norm_backward(rows: int, cols: int) -> tuple:
    """(fusion, inputs, scheduled segment) of a layer-norm backward over ``rows`` x
    ``cols`` as one inner-outer persistent kernel of 16 blocks: a row loop of several
    iterations, a partial last one when 16 does not divide the rows' groups."""
    fusion = layer_norm_backward()
    xs = inputs(rows, cols)
    params = InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, [x.shape for x in xs]), H100)
    params = replace(params, inner=replace(params.inner, grid=(16, 1, 1)))  # 16 blocks of 4 rows: 5 iterations
    return fusion, xs, schedule_segment(fusion, Signature.of(fusion, xs), H100, ("inner_outer_persistent", params))


def assert_bitwise_then_reference(ours: list, plain: list, fusion, xs: list) -> None:  # noqa: ANN001
    """``ours`` equals the untransformed kernels' ``plain`` bit for bit and the
    reference interpreter to 2e-5."""
    for o, p, r in zip(ours, plain, run_fusion(fusion, [x.copy() for x in xs]), strict=True):
        np.testing.assert_array_equal(o, p)
        np.testing.assert_allclose(o, r, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("rows,cols", [(300, 24), (301, 64)])
def test_layer_norm_backward_prefetches_the_next_row_and_matches(
    rows: int, cols: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``FUSER_PREFETCH=L2``, the persistent kernel's row loop (16 blocks of 4
    rows, a warp reduction a row) prefetches dy, x, mean and rstd of its next row; on 300 and 301 rows the blocks'
    last iterations are partial, so the prefetch guards matter: an address past the tensors fails the
    interpreter. The outputs are bit for bit those of the kernel without prefetches,
    and match the reference."""
    monkeypatch.setenv("FUSER_PREFETCH", "L2")
    fusion, xs, sched = persistent_layer_norm_backward(rows, cols)
    ours, lowered = run_segment_on_cpu(sched, xs)
    pfs = _prefetches(lowered)
    assert {op.mem.name_hint for op in pfs} >= {"in0", "in1", "in2", "in3"}, [op.mem.name_hint for op in pfs]
    assert all(op.level.data == "L2" for op in pfs)
    (loop,) = {_loop_of(op) for op in pfs}
    assert loop.attributes[PREFETCH_ATTR].data == "L2"  # type: ignore[attr-defined]
    monkeypatch.setenv("FUSER_PREFETCH", "0")
    plain, lowered0 = run_segment_on_cpu(sched, xs)
    assert not _prefetches(lowered0)
    assert_bitwise_then_reference(ours, plain, fusion, xs)


def test_setting_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset: the schedule decides (None); 0/off/none: no prefetch at all; L1/L2:
    every waiting loop."""
    monkeypatch.delenv("FUSER_PREFETCH", raising=False)
    assert prefetch_setting() is None
    for value, setting in (("L1", "L1"), ("L2", "L2"), ("0", OFF), ("off", OFF), ("none", OFF), ("", None)):
        monkeypatch.setenv("FUSER_PREFETCH", value)
        assert prefetch_setting() == setting
    monkeypatch.setenv("FUSER_PREFETCH", "L3")
    with pytest.raises(ValueError, match="FUSER_PREFETCH must be one of L1, L2 or 0, got 'L3'"):
        prefetch_setting()


def test_the_schedule_prefetches_its_held_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """``inner.prefetch = "L2"`` in the one-kernel schedule: the inputs held at the
    rows' loop carry ``iterdomain.loop {prefetch = "L2"}``, the kernel prefetches their
    loads and no other (mean and rstd are read where they are used, w does not change
    with the row), the results are the unprefetched kernel's bit for bit, and
    ``FUSER_PREFETCH=0`` turns the schedule's prefetches off."""
    monkeypatch.delenv("FUSER_PREFETCH", raising=False)
    fusion = layer_norm_backward()
    xs = inputs(301, 64)
    params = InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, [x.shape for x in xs]), H100)
    assert params.inner.prefetch == ""  # f32 rows: test_the_heuristic_prefetches_16_bit_rows
    params = replace(params, inner=replace(params.inner, grid=(16, 1, 1), prefetch="L2"))
    sched = schedule_segment(fusion, Signature.of(fusion, xs), H100, ("inner_outer_persistent", params))
    marked = {op.tensor for op in sched.body.block.ops if isinstance(op, LoopOp) and op.prefetch == "L2"}
    held = {op.tensor for op in sched.body.block.ops if isinstance(op, LoopOp) and op.compute_at is not None}
    assert marked and marked == held & set(sched.inputs)
    ours, lowered = run_segment_on_cpu(sched, xs)
    prefetched = {op.mem for op in _prefetches(lowered)}
    main = lowered.kernels[0].module
    (func,) = [op for op in main.walk() if isinstance(op, k.FuncOp)]
    assert prefetched == {func.args[list(sched.inputs).index(v)] for v in marked}
    monkeypatch.setenv("FUSER_PREFETCH", "0")
    plain, lowered0 = run_segment_on_cpu(sched, xs)
    assert not _prefetches(lowered0)
    assert_bitwise_then_reference(ours, plain, fusion, xs)
    # The two kernel groups (single_kernel false) do not use ``inner``: no input is marked.
    halves = schedule_segment(fusion, Signature.of(fusion, xs), H100, ("inner_outer_persistent", replace(params, single_kernel=False)))
    assert not [op for op in halves.body.block.ops if isinstance(op, LoopOp) and op.prefetch]


@pytest.mark.parametrize("dtype,level", [(DataType.Float, ""), (DataType.BFloat16, "L2"), (DataType.Half, "L2")])
def test_the_heuristic_prefetches_16_bit_rows(dtype: DataType, level: str) -> None:
    """The one-kernel schedule prefetches the rows of 16-bit inputs
    (``SINGLE_KERNEL_PREFETCH_ITEMSIZE``: measured faster on the H200), not of f32
    ones (measured slower), both for rows under and over the wide-row bytes."""
    for cols in (1024, 4096):
        fusion = layer_norm_backward(dtype)
        shapes = [(4096, cols), (4096, cols), (4096, 1), (4096, 1), (cols,)]
        params = InnerOuterPersistentScheduler.heuristic(fusion, bind_sizes(fusion, shapes), H100)
        assert params.single_kernel and params.inner.prefetch == level, (cols, params.inner)


_KERNEL = """
builtin.module {
  kernel.func @rows(%x : memref<?xf32>, %y : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, index_bits = 32 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    scf.for %i = %c0 to %c3 step %c1 {
      %tidx = kernel.thread_id x
      %rowoff = arith.muli %i, %c32 : index
      %off = arith.addi %rowoff, %tidx : index
      %v = memref.load %x[%off] : memref<?xf32>
      %s = kernel.warp_reduce %v {kind = "add"} : (f32) -> f32
      memref.store %s, %y[%i] : memref<?xf32>
      scf.yield
    }
    kernel.return
  }
}
"""


def _kernel(text: str = _KERNEL) -> k.FuncOp:
    (func,) = [op for op in parse_module(text).walk() if isinstance(op, k.FuncOp)]
    return func


def test_a_warp_reducing_loop_prefetches_and_the_interpreter_checks_the_addresses() -> None:
    """Three rows of 32: the prefetch of row i + 1 is issued in iterations 0 and 1
    only (``next < 3``); the sums are unchanged. Without that guard (an off-by-one in
    the transform) the last iteration prefetches past the tensor, and the interpreter
    says so."""
    func = _kernel()
    assert prefetch_next_iteration(func, "L2") == 1
    assert prefetch_next_iteration(func, "L2") == 0  # marked: not done twice
    x = np.arange(96, dtype=np.float32)
    y = np.zeros(3, np.float32)
    run_kernel(func, None, [x, y], (1, 1, 1))
    np.testing.assert_array_equal(y, x.reshape(3, 32).sum(1))
    (more,) = [op for op in func.walk() if isinstance(op, arith.CmpiOp) and op.result.name_hint == "more"]
    four = arith.ConstantOp.from_int_and_width(4, IndexType())
    func.body.block.insert_op_before(four, func.body.block.first_op)
    more.operands[1] = four.result  # next < 4: iteration 2 prefetches row 3, past the tensor
    with pytest.raises(KernelError, match="kernel.prefetch.*out of bounds"):
        run_kernel(func, None, [x, np.zeros(3, np.float32)], (1, 1, 1))


def test_a_loop_without_a_wait_is_left_alone() -> None:
    func = _kernel()
    for op in list(func.walk()):
        if isinstance(op, k.WarpReduceOp):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.detach()
            op.erase()
    assert prefetch_next_iteration(func, "L2") == 0
    assert not any(isinstance(op, k.PrefetchOp) for op in func.walk())


def test_off_adds_nothing() -> None:
    func = _kernel()
    assert prefetch_next_iteration(func, None) == 0
    loop = next(op for op in func.walk() if isinstance(op, scf.ForOp))
    assert PREFETCH_ATTR not in loop.attributes


def test_a_division_by_a_runtime_value_keeps_its_load_out() -> None:
    """The copied index runs before the guards the original may sit under, so a
    division is copied only when its divisor is a non-zero constant: an index divided
    by a kernel argument gets no prefetch."""
    text = _KERNEL.replace("%y : memref<?xf32>)", "%y : memref<?xf32>, %d : index)").replace(
        "%off = arith.addi %rowoff, %tidx : index", "%sum = arith.addi %rowoff, %tidx : index\n      %off = arith.divsi %sum, %d : index"
    )
    assert prefetch_next_iteration(_kernel(text), "L2") == 0
    const = _KERNEL.replace("%off = arith.addi %rowoff, %tidx : index",
                            "%sum = arith.addi %rowoff, %tidx : index\n      %off = arith.divsi %sum, %c1 : index")
    assert prefetch_next_iteration(_kernel(const), "L2") == 1
