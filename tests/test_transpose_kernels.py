"""Transposes scheduled as the driver schedules a segment (the ``transpose`` kind:
``fuser.runtime.schedule_segment``) and lowered from their loop nest: the inputs of
the second group (innermost axis not the outputs') are computed at the tile's loop in
a padded shared-memory tile, loaded along their own innermost axis and read by the
outputs along theirs, with a barrier between; global loads and stores are vectors on
both sides.

Generated kernels, run by the CPU kernel interpreter, equal the reference interpreter;
every kernel compiles with NVRTC for sm_90 (through the kernel cache, in
``run_segment_on_cpu``). Shapes are kept small (the interpreter runs every thread in
Python) but above the transpose scheduler's minimum innermost extent.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import memref, vector

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower.common import LoweredFusion
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import kernel as k
from fuser.ir.dialects.iterdomain import LoopOp, MemoryType
from fuser.runtime.schedule_segment import schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.params import SCHEDULE_ATTR, read_schedule
from tests.kernel_check import kernels_and_reference

NP = {DataType.Float: np.float32, DataType.Half: np.float16, DataType.BFloat16: ml_dtypes.bfloat16,
      DataType.Int32: np.int32}


def define(body: Callable[[FusionDefinition], None]) -> F.FusionOp:
    with FusionDefinition() as fd:
        body(fd)
    return fd.fusion()


def rand(shape: list[int], dt: object, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    npdt = NP[dt]  # type: ignore[index]
    if np.issubdtype(np.dtype(npdt), np.integer):
        return rng.integers(-50, 50, size=shape).astype(npdt)
    return rng.uniform(-3, 3, size=shape).astype(npdt)


def check(
    fusion: F.FusionOp, inputs: list, kind: str = "transpose"
) -> tuple[LoweredFusion, str, list[np.ndarray], F.FusionOp]:
    """Kernel outputs == reference outputs (exact: transposes and adds round alike);
    the lowering, its kernel's CUDA, the outputs and the scheduled copy."""
    sched = schedule_segment(fusion, Signature.of(fusion, inputs))
    assert read_schedule(sched.attributes[SCHEDULE_ATTR])[0] == kind
    ours, ref, lowered = kernels_and_reference(fusion, inputs, kind, sched)
    for o, r in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(np.asarray(o, np.float64), np.asarray(r, np.float64))
    (kern,) = lowered.kernels
    return lowered, print_cuda(kern.module), ours, sched


def staged_inputs(sched: F.FusionOp) -> list[int]:
    """The fusion inputs the written schedule computes in shared memory."""
    args = list(sched.body.block.args)
    return sorted(
        args.index(op.tensor)
        for op in sched.body.block.ops
        if isinstance(op, LoopOp) and op.tensor in args and op.compute_at is not None
        and op.memory == MemoryType.shared
    )


def ops_of(lowered: LoweredFusion, cls: type) -> list:
    return [op for op in lowered.kernels[0].module.walk() if isinstance(op, cls)]


def permute_add(dt: object) -> Callable[[FusionDefinition], None]:
    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dt)
        fd.add_output(fd.ops.add(fd.ops.permute(a, [1, 0]), b))

    return body


def test_permute_add_2d_uses_a_padded_tile_and_a_barrier() -> None:
    fusion = define(permute_add(DataType.Float))
    inputs = [rand([96, 64], DataType.Float), rand([64, 96], DataType.Float, 1)]
    lowered, src, _, sched = check(fusion, inputs)
    assert staged_inputs(sched) == [0]
    (tile,) = ops_of(lowered, k.SharedAllocOp)
    assert tile.get_padding() == 1 and tile.result.type.get_shape() == (32, 33)
    assert len(ops_of(lowered, k.BarrierOp)) == 1
    # Both sides 128-bit: the staged input's reads, the other input's reads, the store.
    assert len(ops_of(lowered, vector.LoadOp)) == 4 and len(ops_of(lowered, vector.StoreOp)) == 2
    assert {k.vector_lanes(op.result.type) for op in ops_of(lowered, vector.LoadOp)} == {4}
    assert "__syncthreads();" in src and "[32][33];  // padded by 1" in src
    assert lowered.kernels[0].grid == (6, 1, 1)


def test_tails_take_the_guarded_path() -> None:
    fusion = define(permute_add(DataType.Float))
    inputs = [rand([70, 45], DataType.Float), rand([45, 70], DataType.Float, 1)]
    lowered, _, _, sched = check(fusion, inputs)
    assert staged_inputs(sched) == [0]
    assert lowered.kernels[0].grid == (3 * 2, 1, 1)
    assert ops_of(lowered, k.BarrierOp)


def test_bf16_permute_add_with_64_wide_tiles() -> None:
    fusion = define(permute_add(DataType.BFloat16))
    inputs = [rand([64, 72], DataType.BFloat16), rand([72, 64], DataType.BFloat16, 1)]
    lowered, src, _, _ = check(fusion, inputs)
    (tile,) = ops_of(lowered, k.SharedAllocOp)
    assert tile.result.type.get_shape()[-1] in (33, 65)
    assert "__nv_bfloat16 " in src and "__syncthreads();" in src


def test_transposed_copy_3d() -> None:
    """``a.permute(0, 2, 1).contiguous()`` on [B, M, N]: the batch axis goes to the grid."""

    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.set(fd.ops.permute(a, [0, 2, 1])))

    fusion = define(body)
    inputs = [rand([2, 40, 36], DataType.Float)]
    lowered, _, _, sched = check(fusion, inputs)
    assert staged_inputs(sched) == [0]
    assert lowered.kernels[0].grid == (2 * 2 * 2, 1, 1)
    assert len(ops_of(lowered, k.SharedAllocOp)) == 1


def test_3d_permute_add_with_broadcast_bias_and_int32() -> None:
    """A bias broadcast along the staged axis is loaded directly; ints stay exact."""

    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Int32)
        b = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Int32)
        bias = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int32)
        p = fd.ops.permute(a, [2, 0, 1])
        fd.add_output(fd.ops.mul(fd.ops.add(p, b), bias))

    fusion = define(body)
    inputs = [rand([2, 40, 34], DataType.Int32), rand([34, 2, 40], DataType.Int32, 1),
              rand([40], DataType.Int32, 2)]
    _, _, _, sched = check(fusion, inputs)
    assert staged_inputs(sched) == [0]


def test_outputs_in_both_layouts_are_stored_as_vectors() -> None:
    """Outputs in both layouts: each is stored with vectors along its own innermost
    axis (the column-major one in the staged input's order, reading the tile along its
    rows and the other input element by element), from one tile and one barrier."""

    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.add(fd.ops.permute(a, [1, 0]), b)
        fd.add_output(s)
        fd.add_output(fd.ops.mul(s, 2.0), stride_order=[0, 1])

    fusion = define(body)
    inputs = [rand([64, 40], DataType.Float), rand([40, 64], DataType.Float, 1)]
    lowered, src, ours, sched = check(fusion, inputs)
    assert staged_inputs(sched) == [0]
    assert ours[1].strides[0] < ours[1].strides[1]  # really written column-major
    assert "Vec<float, 4>*>(&out0[" in src and "Vec<float, 4>*>(&out1[" in src
    assert len(ops_of(lowered, k.SharedAllocOp)) == 1 and len(ops_of(lowered, k.BarrierOp)) == 1


def test_shared_innermost_axis_keeps_the_pointwise_kernel() -> None:
    """Seed 002's bookend transpose: the groups share their innermost axis, so the
    pointwise kind takes it (no tile)."""

    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True] * 4, dtype=DataType.Float)
        fd.add_output(fd.ops.set(fd.ops.permute(a, [0, 2, 1, 3])))

    fusion = define(body)
    inputs = [rand([2, 4, 3, 32], DataType.Float)]
    lowered, _, ours, _ = check(fusion, inputs, kind="pointwise")
    assert not ops_of(lowered, k.SharedAllocOp)
    np.testing.assert_array_equal(ours[0], inputs[0].transpose(0, 2, 1, 3))


def test_strided_input_loads_scalar_but_stays_correct() -> None:
    """An input whose rows are not 16-byte aligned is read with narrower vectors."""
    dt = DataType.Half
    fusion = define(permute_add(dt))
    big = rand([44, 45], dt)
    inputs = [big[:, :34], rand([34, 44], dt, 1)]
    lowered, src, _, sched = check(fusion, inputs)
    assert staged_inputs(sched) == [0]
    # Rows of 45 elements: the staged input is read element by element; the other
    # input's rows of 44 halves allow 8-byte vectors only (rows 88 bytes apart).
    widths = {k.vector_lanes(op.result.type) for op in ops_of(lowered, vector.LoadOp)}
    assert widths == {4}
    assert ops_of(lowered, memref.LoadOp)
    assert "Vec<__half, 4> in1_v = " in src and "in0_v" not in src and "= in0[" in src


def cat_of_transposed(transposed_first: bool) -> Callable[[FusionDefinition], None]:
    def body(fd: FusionDefinition) -> None:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        t = fd.ops.silu(fd.ops.permute(a, [1, 0]))
        fd.add_output(fd.ops.cat([t, b] if transposed_first else [b, t], 0))

    return body


@pytest.mark.parametrize(
    ("transposed_first", "a_shape", "b_rows"),
    [(True, [33, 256], 1), (False, [40, 34], 1), (False, [64, 64], 64), (True, [48, 96], 7)],
)
def test_a_resize_along_the_tiles_takes_the_pointwise_kernel(
    transposed_first: bool, a_shape: list[int], b_rows: int
) -> None:
    """A ``cat`` of a transposed input along the tiled axis: the output has more row
    tiles than the input (seed 618 of the random fusions on the GPU: 257 rows of tiles
    of 64 against 256, a schedule the lowering rejected), its rows may start mid-tile
    (``[b, t]``), and the vector width of the output's extent need not divide the
    input's (``vectorization2 = 2`` against 33 rows, rejected by ``schedule-fusions``).
    The transpose kind rejects resizes and names the op; the pointwise kernel computes
    the reference."""
    from fuser.schedulers.transpose import TransposeScheduler

    fusion = define(cat_of_transposed(transposed_first))
    reject = TransposeScheduler.can_schedule_compile_time(fusion)
    assert reject is not None and "fuser.cat changes an extent" in str(reject)
    inputs = [rand(a_shape, DataType.Half), rand([b_rows, a_shape[0]], DataType.Half, 1)]
    lowered, _, ours, _ = check(fusion, inputs, kind="pointwise")
    assert not ops_of(lowered, k.SharedAllocOp)
    assert ours[0].shape == (a_shape[1] + b_rows, a_shape[0])


def test_an_input_broadcast_along_a_tiled_axis_is_read_in_place() -> None:
    """``maximum(x, permute(y))`` with ``y`` broadcast along the output's first axis:
    the transposed input has 2 tiles where the kernel has 66, so staging it at the
    tile's loop would share loops that differ (random fusion seed 13013, rejected by
    the lowering). It is read in place; the other input still takes the kernel's
    loops, and the kernel computes the reference."""

    def body(fd: FusionDefinition) -> None:
        x = fd.define_tensor(shape=[-1, -1, 1], contiguity=[True, True, None], dtype=DataType.Float)
        fd.add_output(fd.ops.maximum(x, fd.ops.permute(x, [2, 1, 0])))

    fusion = define(body)
    _, _, ours, sched = check(fusion, [rand([33, 32, 1], DataType.Float)])
    assert staged_inputs(sched) == []
    assert ours[0].shape == (33, 32, 33)
