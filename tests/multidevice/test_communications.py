"""The ``hir`` communication ops run by ``HostEvaluator`` with a ``Communicator``
(fuser.runtime.communicator) between 2 and 4 CPU processes joined by gloo
(tests/multidevice/harness.py), checked against numpy: every rank's inputs are known
to the test (tests/multidevice/programs.py), so the expected outputs are computed here.

One spawned run per world size holds all the checks (each process imports torch):
allgather along axes 0 and 1 (and into a strided ``hir.slice`` view), allreduce (and
in place), reduce_scatter along axes 0 and 1, ``hir.shard``, ``hir.broadcast_from`` from
every root in turn inside an ``hir.for`` on pool streams, writing ``hir.alias_select``
parts of one buffer (the overlapped allgather pattern), and into a column slice, a
send/recv ring, and bfloat16 allgather and allreduce; then direct ``Communicator``
calls on torch tensors (the GPU evaluator's arrays, here on the CPU) and float8
numpy arrays. The error checks (a mesh larger than the world,
a reordered mesh, a send to oneself) run in the 2-rank processes; those that need no
process group (no communicator, no group) in the test process.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from fuser.ir.dialects import hir as H
from fuser.runtime.host_evaluator import HostEvaluator, HostIrError, run_program
from tests.multidevice.harness import run_ranks
from tests.multidevice.programs import (
    RESULTS,
    all_communications,
    expected_outputs,
    local_inputs,
    mesh,
    parse,
    ty,
)

# =====================================================================================
# Every communication, on d ranks
# =====================================================================================


def run_all_communications(rank: int, size: int) -> tuple[list[np.ndarray], list[tuple[str, int]]]:
    """A rank of ``test_every_communication``: its outputs and its stream log."""
    from fuser.runtime.communicator import Communicator

    comm = Communicator()
    assert (comm.rank, comm.size, comm.backend) == (rank, size, "gloo")
    ev = HostEvaluator(parse(all_communications(size)), communicator=comm)
    return ev.run(local_inputs(rank, size)), ev.stream_log


@pytest.mark.parametrize("d", [2, 4])
def test_every_communication(d: int) -> None:
    for rank, (outs, log) in enumerate(run_ranks(d, run_all_communications)):
        want = expected_outputs(rank, d)
        assert len(outs) == len(RESULTS)
        for name, got in zip(RESULTS, outs, strict=True):
            assert got.dtype == want[name].dtype, name
            np.testing.assert_array_equal(got, want[name], err_msg=f"rank {rank}: %{name}")
        loop = []
        for j in range(d):  # hir.stream_for_index %j: pool stream 1 + j % 4
            s = 1 + j % 4
            loop += [("get_current_stream", 0), ("set_current_stream", s),
                     ("synchronize_stream", 0), ("broadcast_from", s),
                     ("set_current_stream", 0), ("synchronize_stream", s)]
        on_user_stream = (
            ["allgather"] * 3 + ["allreduce"] * 3 + ["reduce_scatter"] * 2 + ["shard"] * 2
        )
        tail = ["broadcast_from", "send", "recv", "allgather", "allreduce"]
        assert log == [(e, 0) for e in on_user_stream] + loop + [(e, 0) for e in tail]


# =====================================================================================
# The communicator on torch tensors (the GPU evaluator's arrays) and float8
# =====================================================================================


def run_communicator_calls(rank: int, size: int) -> dict[str, Any]:
    """A rank of ``test_communicator_on_torch_tensors_and_float8``: direct calls on CPU
    torch tensors (strided inputs and outputs, bfloat16) and float8 numpy arrays."""
    import torch

    from fuser.runtime.communicator import Communicator

    comm = Communicator()
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 100 * rank
    got: dict[str, Any] = {}
    wide = torch.zeros(2, 3 * size + 1)
    comm.allgather(x, wide[:, 1:], axis=1, stream=None)  # into a strided view
    got["g1"] = wide.numpy()
    gt = torch.empty(3 * size, 2)
    comm.allgather(x.t(), gt, axis=0)  # from a strided input
    got["gt"] = gt.numpy()
    big = torch.arange(2 * 3 * size, dtype=torch.float32).reshape(2, 3 * size) * (rank + 1)
    rs = torch.empty(3, 2)
    comm.reduce_scatter(big, rs.t(), axis=1)  # into a transposed view
    got["rs"] = rs.numpy()
    hb = torch.full((4,), 1.5 + rank, dtype=torch.bfloat16)
    comm.allreduce(hb, hb)  # in place, in bfloat16
    got["hb"] = hb.float().numpy()
    f8 = (np.arange(4, dtype=np.float32) + rank).astype(ml_dtypes.float8_e4m3fn)
    f8_root = np.zeros(4, ml_dtypes.float8_e4m3fn)
    comm.broadcast(f8, f8_root, root_position=1)  # moved as bytes
    got["f8_root"] = f8_root
    f8_sum = np.zeros(4, ml_dtypes.float8_e4m3fn)
    comm.allreduce(f8, f8_sum)  # summed in float32
    got["f8_sum"] = f8_sum
    back = torch.empty(2, 3)
    comm.exchange([(x, 1 - rank)], [(back, 1 - rank)])
    got["back"] = back.numpy()
    try:
        comm.allgather(x, torch.empty(2, 3), axis=0)
    except ValueError as e:
        got["error"] = str(e)
    return got


def test_communicator_on_torch_tensors_and_float8() -> None:
    d = 2
    xs = [np.arange(6, dtype=np.float32).reshape(2, 3) + 100 * r for r in range(d)]
    big_sum = sum(np.arange(6 * d, dtype=np.float32).reshape(2, 3 * d) * (r + 1) for r in range(d))
    f8 = [(np.arange(4, dtype=np.float32) + r).astype(ml_dtypes.float8_e4m3fn) for r in range(d)]
    for rank, got in enumerate(run_ranks(d, run_communicator_calls)):
        want_wide = np.zeros((2, 3 * d + 1), np.float32)
        want_wide[:, 1:] = np.concatenate(xs, axis=1)
        np.testing.assert_array_equal(got["g1"], want_wide)
        np.testing.assert_array_equal(got["gt"], np.concatenate([x.T for x in xs], axis=0))
        np.testing.assert_array_equal(got["rs"], big_sum[:, 3 * rank : 3 * rank + 3].T)
        np.testing.assert_array_equal(got["hb"], np.full(4, 4.0, np.float32))  # 1.5 + 2.5
        assert got["f8_root"].dtype == ml_dtypes.float8_e4m3fn
        np.testing.assert_array_equal(got["f8_root"], f8[1])
        np.testing.assert_array_equal(
            got["f8_sum"], (f8[0].astype(np.float32) + f8[1].astype(np.float32)).astype(f8[0].dtype)
        )
        np.testing.assert_array_equal(got["back"], xs[1 - rank])
        assert got["error"] == (
            "the output has shape [2, 3]; the input [2, 3] with axis 0 times 2 needs [4, 3]"
        )


# =====================================================================================
# Errors
# =====================================================================================

ADD = """
  fuser.fusion @add(%a : !fuser.tensor<2x3xf32>, %b : !fuser.tensor<2x3xf32>) -> !fuser.tensor<2x3xf32> {
    %c = fuser.add %a, %b : (!fuser.tensor<2x3xf32>, !fuser.tensor<2x3xf32>) -> !fuser.tensor<2x3xf32>
    fuser.output %c : !fuser.tensor<2x3xf32>
  }
"""


def launch_then_allgather(devices: list[int]) -> str:
    """A launch, then an allgather on the mesh of ``devices``."""
    x, g = ty([2, 3]), ty([2 * len(devices), 3])
    return f"""
builtin.module {{
{ADD}
  hir.program @main(%x : {x}) -> {g} {{
    %y = hir.launch @add(%x, %x) : ({x}, {x}) -> {x}
    %g = hir.allocate : {g}
    hir.allgather %y, %g {{mesh = {mesh(devices)}, axis = 0 : i64}} : {x}, {g}
    hir.return %g : {g}
  }}
}}
"""


SEND_TO = f"""
builtin.module {{
  hir.program @main(%x : {ty([2, 3])}, %p : index) {{
    hir.send %x to(%p : index) {{mesh = {mesh([0, 1])}}} : {ty([2, 3])}
    hir.return
  }}
}}
"""


def run_bad_programs(rank: int, size: int) -> list[tuple[str, list[tuple[str, int]]]]:
    """A rank of ``test_errors_before_any_transfer``: each bad program's error message
    and the stream log up to it."""
    from fuser.runtime.communicator import Communicator

    comm = Communicator()
    x = np.zeros((2, 3), np.float32)
    got: list[tuple[str, list[tuple[str, int]]]] = []
    for text, inputs in [
        (launch_then_allgather([0, 1, 2, 3]), [x]),
        (launch_then_allgather([1, 0]), [x]),
        (SEND_TO, [x, rank]),
        (SEND_TO, [x, 2]),
    ]:
        ev = HostEvaluator(parse(text), communicator=comm)
        try:
            ev.run(inputs)
        except HostIrError as e:
            got.append((str(e), ev.stream_log))
        else:
            raise AssertionError("the program ran")
    return got


def test_errors_before_any_transfer() -> None:
    for rank, got in enumerate(run_ranks(2, run_bad_programs)):
        (big, big_log), (order, order_log), (me, me_log), (far, _) = got
        assert big == "hir.allgather: mesh [0, 1, 2, 3] needs 4 processes; the world has 2"
        assert big_log == []  # checked before the launch
        assert order.startswith("hir.allgather: mesh [1, 0] is not the ranks 0..1 of the world")
        assert "not supported" in order and order_log == []
        assert me == f"hir.send: peer {rank} is this device's own position"
        assert far == "hir.send: peer 2 is not a position of mesh [0, 1] (0..1)"


def test_communication_without_a_communicator_is_an_error() -> None:
    ev = HostEvaluator(parse(launch_then_allgather([0, 1])))
    with pytest.raises(
        HostIrError,
        match=r"^hir.allgather: this program communicates between devices; run it with a "
        r"communicator \(fuser.runtime.communicator.Communicator",
    ):
        ev.run([np.zeros((2, 3), np.float32)])
    assert ev.stream_log == []  # nothing ran
    with pytest.raises(HostIrError, match=r"^hir.send: this program communicates"):
        run_program(parse(SEND_TO), [np.zeros((2, 3), np.float32), 1])


def test_communicator_needs_a_process_group() -> None:
    import torch.distributed as dist

    from fuser.runtime.communicator import Communicator

    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match=r"call torch.distributed.init_process_group"):
        Communicator()


def test_gpu_evaluator_communicates_torch_tensors_only() -> None:
    from fuser.runtime.gpu_evaluator import GpuEvaluator, GpuStream

    module = parse(launch_then_allgather([0, 1]))
    op = next(o for o in module.walk() if isinstance(o, H.AllgatherOp))
    ev = GpuEvaluator(module, launcher=lambda *a: [], communicator=None)
    with pytest.raises(
        HostIrError,
        match=r"^hir.allgather: the input is a ndarray; communication on the GPU needs torch "
        r"CUDA tensors",
    ):
        ev._communication_array(np.zeros(3), op, "input")
    ev._current = GpuStream(2, 1234)
    assert ev._communication_stream() == 1234  # the current stream's handle
