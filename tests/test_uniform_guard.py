"""The warp-uniform guard of a kernel's stores becomes one ``if`` around its body
(``codegen/uniform_guard.py``), and only when that cannot change what the kernel does:
every global store guarded by it, the same value in every lane of a warp, nothing
that synchronizes the block. The CPU kernel interpreter runs each kernel, and lets
whole warps return before a warp collective (never a block one)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerType, f32

from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.kernel_builders import KernelBuilder, global_memref
from fuser.codegen.kernel_interpreter import KernelError, run_kernel
from fuser.ir.dialects import kernel as k
from fuser.ir.dtypes import DType


def _rows_kernel(
    block: tuple[int, int, int] = (32, 4, 1), guard_x: bool = False, barrier: bool = False,
    unguarded_store: bool = False, warp_sum: bool = False,
) -> KernelBuilder:
    """out[row, tidx] = 1 (or the warp's sum of tidx) for row = bidx * by + tidy < n."""
    b = KernelBuilder("rows", [("out", global_memref(DType.float32)), ("n", IntegerType(64))], block)
    n = b.val(arith.IndexCastOp(b.arg("n"), b.index(0).type))
    tidx, tidy = b.thread_id("x"), b.thread_id("y")
    row = b.add(b.mul(b.block_id("x"), block[1]), tidy)
    p = b.cmp("slt", tidx if guard_x else row, n)
    value = b.const(1.0, f32)
    if warp_sum:
        (value,) = b.warp_reduce([b.val(arith.SIToFPOp(b.val(arith.IndexCastOp(tidx, IntegerType(32))), f32))], "add")
    if barrier:
        b.barrier()
    offset = b.add(b.mul(row, block[0]), tidx)
    b.if_(p, lambda: (b.store(value, b.arg("out"), [offset]), [])[1])
    if unguarded_store:
        b.store(value, b.arg("out"), [tidx])
    return b


def _top_ifs(b: KernelBuilder) -> list[scf.IfOp]:
    return [op for op in b.func.body.block.ops if isinstance(op, scf.IfOp)]


def _run(b: KernelBuilder, rows: int, grid: int) -> np.ndarray:
    out = np.full(grid * b.func.get_block_size()[1] * b.func.get_block_size()[0], np.nan, np.float32)
    run_kernel(b.module, "rows", [out, rows], (grid, 1, 1))
    return out


def test_the_row_guard_wraps_the_body_and_its_copies_fold() -> None:
    b = _rows_kernel()
    b.finish()
    (guard,) = _top_ifs(b)
    assert isinstance(guard.cond.owner, arith.CmpiOp)
    inner = [op for op in guard.true_region.walk() if isinstance(op, scf.IfOp | arith.CmpiOp)]
    assert inner == []  # the store's own predicate folded away
    text = print_cuda(b.module)
    body = text[text.index('extern "C" __global__') :]
    assert body.count("if (") == 1
    out = _run(b, rows=7, grid=2)
    assert np.all(out[: 7 * 32] == 1.0) and np.all(np.isnan(out[7 * 32 :]))


@pytest.mark.parametrize(
    "why",
    ["barrier", "guard_x", "unguarded_store", "narrow_block"],
)
def test_no_hoisting_when_it_could_change_the_kernel(why: str) -> None:
    block = (16, 4, 1) if why == "narrow_block" else (32, 4, 1)
    b = _rows_kernel(block, guard_x=why == "guard_x", barrier=why == "barrier", unguarded_store=why == "unguarded_store")
    # the ops whose results are read (``finish`` erases index arithmetic left unread)
    before = [op.name for op in b.func.body.block.ops if not op.results or any(r.uses for r in op.results)]
    b.finish()
    after = [op.name for op in b.func.body.block.ops]
    assert after == [*before, "kernel.return"]
    if why == "narrow_block":  # two rows share a warp: tidy is not warp-uniform
        out = _run(b, rows=5, grid=2)
        assert np.all(out[: 5 * 16] == 1.0) and np.all(np.isnan(out[5 * 16 :]))


def test_whole_warps_may_return_before_a_warp_collective() -> None:
    b = _rows_kernel((32, 2, 1), warp_sum=True)
    b.finish()
    assert len(_top_ifs(b)) == 1
    out = _run(b, rows=3, grid=2)  # the last block's second warp returns
    assert np.all(out[: 3 * 32] == sum(range(32))) and np.all(np.isnan(out[3 * 32 :]))


def test_the_interpreter_still_rejects_divergent_block_synchronization() -> None:
    b = KernelBuilder("rows", [("out", global_memref(DType.float32))], (32, 2, 1))
    tidy = b.thread_id("y")
    p = b.cmp("eq", tidy, 0)
    b.if_(p, lambda: (b.barrier(), [])[1])
    b.b.insert(k.ReturnOp())
    with pytest.raises(KernelError, match="divergent"):
        run_kernel(b.module, "rows", [np.zeros(64, np.float32)], (1, 1, 1))
