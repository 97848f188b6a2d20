"""The replay of stream-parallel, communicating host programs (``fuser.runtime.
gpu_replay``), built on the CPU: ``hir.for`` loops unrolled, host integers and
``hir.mesh_position`` folded for the rank, streams switched and joined by steps, each
communication one step with the windows of its buffers, in program order. The GPU
tests (``test_gpu_fusions``, ``test_gpu_communications``) run these replays."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.runtime.gpu_arrays import DeviceArray
from fuser.runtime.gpu_evaluator import GpuEvaluator
from fuser.runtime.gpu_replay import Place, Replay
from tests.multidevice.harness import run_ranks
from tests.multidevice.programs import (
    RESULTS,
    all_communications,
    expected_outputs,
    local_inputs,
    parse,
)
from tests.multidevice.test_multidevice_fusions import _full_inputs, _fusion

AG_LINEAR = """
fuser.fusion @ag_linear(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x8xf32> {
  %xg = fuser.set %x : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  %y = fuser.linear %xg, %w : (!fuser.tensor<8x16xf32>, !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x8xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %xg {sharding = #iterdomain.sharding<MESH>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<MESH, DIDx = 0>} : !fuser.tensor<8x16xf32>
  fuser.output %y : !fuser.tensor<8x8xf32>
}
"""


class _Comm:
    """What the build reads of a communicator: this process's mesh position, and the
    methods its steps call (never on the CPU)."""

    def __init__(self, rank: int) -> None:
        self.rank = rank

    def position(self, mesh: Any) -> int:
        return mesh.position(self.rank)

    def _not_on_the_cpu(self, *args: Any) -> None:
        raise AssertionError("a replay step ran on the CPU")

    allgather = allreduce = reduce_scatter = broadcast = exchange = _not_on_the_cpu


def _build(module: Any, flat: list[Any], rank: int, num_streams: int = 4, comm: Any = None) -> Replay | None:
    ev = GpuEvaluator(module, lambda *a: [], num_streams, 0)

    def view(op: H.HostViewOp, x: DeviceArray) -> DeviceArray:
        hook, args = ev._view_call(op, list(x.shape))  # noqa: SLF001
        return hook(x, *args)

    program = next(op for op in module.walk() if isinstance(op, H.ProgramOp))
    places = [
        Place(k, 0, x.shape, tuple(s // x.itemsize for s in x.strides)) if hasattr(x, "strides") else None
        for k, x in enumerate(flat)
    ]
    launched, library = {}, {}
    for f in module.ops:
        if isinstance(f, F.FusionOp):
            lib = next(iter(F.library_ops(f)), None)
            if lib is None:
                launched[f.sym_name.data] = types.SimpleNamespace(fusion=f)
            else:
                library[f.sym_name.data] = types.SimpleNamespace(
                    fusion=f, operand_inputs=[v.index for v in lib.operands]
                )
    return Replay.build(
        program, places, launched, view, "torch", 0, library,
        pool=lambda k: 1000 + k, num_streams=num_streams, communicator=comm or _Comm(rank),
    )


def _overlapped(rank: int) -> Replay:
    from fuser.runtime.multidevice import MultiDeviceFusion

    md = MultiDeviceFusion(_fusion(AG_LINEAR, 2), overlap_chunks=1)
    local = md.shard_inputs(_full_inputs(md.fusion), rank)
    replay = _build(md.executable(local).module, local, rank)
    assert replay is not None
    return replay


def _seg(replay: Replay) -> str:
    return next(s[1].fusion.sym_name.data for s in replay.steps if hasattr(s[1], "operand_inputs"))


@pytest.mark.parametrize("rank", [0, 1])
def test_the_overlapped_allgather_matmul_replays_as_its_loops(rank: int) -> None:
    """``overlap-allgather-matmul{chunks=1}`` on 2 devices (x: 8x16 global rows, this
    rank's 4x16 in r0; w: this rank's 4x16 in r1; the gathered x r2, 8x16; the output
    r3, 8x4): the exchange on pool stream 1 (stream 2) after the caller's stream,
    this rank's GEMM on pool stream 0 meanwhile, the peer's rows' GEMM on the
    exchange's stream, each joined back to the caller's stream."""
    replay = _overlapped(rank)
    peer = 1 - rank
    seg = _seg(replay)
    assert replay.describe().splitlines() == [
        "allocate r2",
        "allocate r3",
        "stream 2",
        "wait for stream 0",
        f"hir.send/hir.recv to {peer} from {peer}(r0, r2+{64 * peer}:4x16)",
        "stream 0",
        "stream 1",
        "wait for stream 0",
        f"library @{seg}(r0, r1) outs(r3+{16 * rank}:4x4)",
        "stream 0",
        "wait for stream 1",
        "stream 2",
        f"library @{seg}(r2+{64 * peer}:4x16, r1) outs(r3+{16 * peer}:4x4)",
        "stream 0",
        "wait for stream 2",
        "free r2",
    ]
    assert replay.pool == [1000, 1001] and replay.num_events == 4
    assert replay.communicator is not None and replay.communicator.rank == rank


def test_a_program_without_communications_keeps_no_communicator() -> None:
    """A single-device stream loop (seed 001's shape): unrolled, pool streams round
    robin, no communicator kept."""
    module = parse(
        """
builtin.module {
  hir.program @main(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4x3xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %out = hir.allocate : !fuser.tensor<4x3xf32>
    %t = hir.permute %out {dims = array<i64: 1, 0>} : !fuser.tensor<4x3xf32> -> !fuser.tensor<3x4xf32>
    %s0 = hir.get_current_stream : !hir.stream
    hir.for %i = %c0 to %c3 step %c1 {
      %s = hir.stream_for_index %i : index
      hir.set_current_stream %s
      %row = hir.alias_select %t[axis = 0, %i] : !fuser.tensor<3x4xf32>, index -> !fuser.tensor<4xf32>
      hir.set_current_stream %s0
      hir.synchronize_stream %s
    }
    hir.return %out : !fuser.tensor<4x3xf32>
  }
}
"""
    )
    replay = _build(module, [np.zeros(4, np.float32)], 0, num_streams=2)
    assert replay is not None and replay.communicator is None
    # Pool streams 0, 1, 0 (two streams): the third iteration's wait is on stream 1 again.
    assert replay.describe().splitlines() == [
        "allocate r1",
        "stream 1", "stream 0", "wait for stream 1",
        "stream 2", "stream 0", "wait for stream 2",
        "stream 1", "stream 0", "wait for stream 1",
    ]
    assert replay.pool == [1000, 1001] and replay.num_events == 3
    # The frontend's generated hot launcher models one stream: it leaves this
    # program to the replay.
    import torch

    from fuser.runtime import hot_launch

    inputs = [torch.zeros(4)]
    assert hot_launch.build(replay, None, inputs, launch=lambda *a: 0, stream=lambda d: 0) is None


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_every_communication_is_one_step_with_its_windows(rank: int) -> None:
    """``all_communications`` with the ring's peers computed from
    ``hir.mesh_position`` (3 devices): the broadcast loop unrolled on pool streams 0,
    1, 2 with each iteration's root, the slices as windows, the shard as this
    rank's part of ``%big``."""
    d = 3
    module = parse(all_communications(d, peers="computed"))
    flat = local_inputs(rank, d)[:3]
    replay = _build(module, flat, rank)
    assert replay is not None
    lines = replay.describe().splitlines()
    calls = [x for x in lines if x.startswith("hir.")]
    g0, g1, w = 3, 4, 5  # the allocations' roots (after the 3 inputs), in program order
    assert calls[:3] == [f"hir.allgather axis 0(r0, r{g0})", f"hir.allgather axis 1(r0, r{g1})",
                         f"hir.allgather axis 0(r0, r{w}+1:6x3/5,1)"]
    # hir.shard along rows and columns: rank r's 2 rows (of 6, row stride 9) or 3
    # columns of %big, copied.
    assert f"hir.shard(r1+{18 * rank}:2x9, r10)" in calls
    assert f"hir.shard(r1+{3 * rank}:6x3/9,1, r11)" in calls
    broadcasts = [x for x in calls if x.startswith("hir.broadcast_from root")]
    assert broadcasts == [f"hir.broadcast_from root {j}(r0, r12+{6 * j}:2x3)" for j in range(d)] + [
        "hir.broadcast_from root 2(r0, r13+1:2x3/5,1)"
    ]
    assert f"hir.send/hir.recv to {(rank + 1) % d} from {(rank - 1) % d}(r0, r14)" in calls
    loop = lines[lines.index("allocate r12") + 1 :][: 5 * d]
    assert loop == [
        x
        for j in range(d)
        for x in (f"stream {j + 1}", "wait for stream 0", f"hir.broadcast_from root {j}(r0, r12+{6 * j}:2x3)",
                  "stream 0", f"wait for stream {j + 1}")
    ]


def test_programs_the_replay_cannot_model_are_walked() -> None:
    """A ring whose peers are scalar inputs (not fixed by the signature), a
    communication without a communicator, a stream program without its pool: None."""
    d = 2
    flat = local_inputs(0, d)
    assert _build(parse(all_communications(d)), flat, 0) is None  # %next, %prev: inputs
    module = parse(all_communications(d, peers="computed"))
    program = next(op for op in module.walk() if isinstance(op, H.ProgramOp))
    places = [Place(k, 0, x.shape, tuple(s // x.itemsize for s in x.strides)) for k, x in enumerate(flat[:3])]
    assert Replay.build(program, places, {}, lambda op, x: x, "torch", 0, {}, pool=lambda k: k) is None
    assert Replay.build(program, places, {}, lambda op, x: x, "torch", 0, {}, communicator=_Comm(0)) is None


def _window(roots: list[Any], window: tuple[int, Place | None]) -> Any:
    root, place = roots[window[0]], window[1]
    if place is None:
        return root
    flat = root.reshape(-1)[place.offset :]
    strides = tuple(st * root.itemsize for st in place.strides)
    return np.lib.stride_tricks.as_strided(flat, place.shape, strides)


def _run_steps_on_the_cpu(rank: int, size: int) -> list[np.ndarray]:
    """The replay of ``all_communications`` built for this rank, its steps run on
    numpy buffers with the gloo communicator (no launches in it; streams are no-ops on
    the CPU): each communication step calls the communicator on its windows."""
    from fuser.runtime.communicator import Communicator
    from fuser.runtime.gpu_replay import _ALLOCATE, _CALL, _FREE, _STREAM, _SYNC

    comm = Communicator()
    flat = local_inputs(rank, size)[:3]
    replay = _build(parse(all_communications(size, peers="computed")), flat, rank, comm=comm)
    assert replay is not None and replay.communicator is comm
    roots: list[Any] = [*flat, *([None] * (replay.num_roots - len(flat)))]
    for step in replay.steps:
        if step[0] == _ALLOCATE:
            shape, strides, dtype = replay.buffers[step[1]]
            assert strides == tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
            # never-written memory reads as NaN (-1 in the zeroed ones would show too)
            roots[step[1]] = (np.zeros if step[3] else np.full)(shape, *(() if step[3] else (np.nan,)),
                                                                dtype=dtype.to_numpy())
        elif step[0] == _CALL:
            step[2]([_window(roots, w) for w in step[3]], None)
        elif step[0] == _FREE:
            roots[step[1]] = None
        else:
            assert step[0] in (_STREAM, _SYNC), step
    return [np.array(_window(roots, w)) for w in replay.returns]


@pytest.mark.parametrize("size", [2, 3])
def test_the_communication_steps_compute_every_result_over_gloo(size: int) -> None:
    """The replay's communication steps (their windows, peers, roots and axes) on CPU
    ranks give what every ``hir`` communication should (``expected_outputs``): the
    CPU half of ``test_gpu_communications``'s replay case."""
    for rank, outs in enumerate(run_ranks(size, _run_steps_on_the_cpu, timeout=120)):
        want = expected_outputs(rank, size)
        for name, got in zip(RESULTS, outs, strict=True):
            np.testing.assert_array_equal(got, want[name], err_msg=f"rank {rank}: %{name}")

