"""The ``hir`` communication ops run by ``GpuEvaluator`` with a ``Communicator`` over
NCCL, one process per GPU (skipped unless there are enough GPUs): the program of
tests/multidevice/programs.py on torch CUDA tensors, checked against numpy.

Stream order is part of the check: each rank runs the program on a stream of its own
(``cuda_driver.use_stream``; torch's current stream is another) whose inputs are
written only after a long ``torch.cuda._sleep`` on that stream, so a collective that
did not wait for the work queued on the evaluator's stream before it would send stale
memory (``-1``); the broadcasts run on the evaluator's pool streams, joined back by
``hir.synchronize_stream``; the outputs are read by copies queued on that stream.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np
import pytest

from tests.multidevice.harness import run_ranks
from tests.multidevice.programs import (
    RESULTS,
    all_communications,
    expected_outputs,
    local_inputs,
    parse,
)

pytestmark = pytest.mark.gpu


def _no_launch(*args: Any) -> list[Any]:
    raise AssertionError("the program launches nothing")


def run_gpu_communications(rank: int, size: int, replay: bool = False) -> list[np.ndarray]:
    """A rank of ``test_every_communication_on_gpus``: its outputs, on the host.
    ``replay``: the program with the ring's peers from ``hir.mesh_position``, walked
    once, then run by its replay (``fuser.runtime.gpu_replay``) on the late inputs."""
    import torch

    from fuser.runtime import cuda_driver as drv
    from fuser.runtime.communicator import Communicator
    from fuser.runtime.gpu_evaluator import GpuEvaluator
    from fuser.runtime.gpu_replay import Replay
    from fuser.runtime.torch_arrays import numpy_to_torch, torch_to_numpy

    comm = Communicator()
    assert (comm.rank, comm.backend) == (rank, "nccl")
    device = torch.device("cuda", rank)
    local = local_inputs(rank, size)
    host = [numpy_to_torch(a).pin_memory() for a in local[:3]]
    stream = torch.cuda.Stream(device)  # not torch's current stream below
    with torch.cuda.stream(stream):
        inputs: list[Any] = [torch.full(tuple(h.shape), -1, dtype=h.dtype, device=device)
                             for h in host]
    scalars = [] if replay else local[3:]
    module = parse(all_communications(size, peers="computed" if replay else "inputs"))
    ev = GpuEvaluator(module, _no_launch, device=rank, communicator=comm)
    run: Any = ev.run
    if replay:
        with drv.use_stream(stream.cuda_stream):
            ev.run(inputs)  # the walk, on the -1 inputs
        program = ev.program("main")
        run = Replay.after_walk(ev, program, inputs)
        assert run is not None and run.communicator is comm
    with torch.cuda.stream(stream):
        torch.cuda._sleep(200_000_000)  # ~0.1 s: the inputs are written late
        for x, h in zip(inputs, host, strict=True):
            x.copy_(h, non_blocking=True)
    # The walk runs on the cuda_driver stream (not torch's current one); the replay of
    # torch buffers on torch's current stream: both `stream`.
    with drv.use_stream(stream.cuda_stream), torch.cuda.stream(stream) if replay else nullcontext():
        outs = run([*inputs, *scalars])
    with torch.cuda.stream(stream):
        copies = [o.to("cpu") for o in outs]
    return [torch_to_numpy(c) for c in copies]


def _replayed(rank: int, size: int) -> list[np.ndarray]:
    return run_gpu_communications(rank, size, replay=True)


@pytest.mark.parametrize("replay", [False, True], ids=["walk", "replay"])
@pytest.mark.parametrize("d", [2, 4])
def test_every_communication_on_gpus(d: int, replay: bool) -> None:
    import torch

    if torch.cuda.device_count() < d:
        pytest.skip(f"needs {d} GPUs, found {torch.cuda.device_count()}")
    fn = _replayed if replay else run_gpu_communications
    for rank, outs in enumerate(run_ranks(d, fn, backend="nccl")):
        want = expected_outputs(rank, d)
        for name, got in zip(RESULTS, outs, strict=True):
            assert got.dtype == want[name].dtype, name
            np.testing.assert_array_equal(got, want[name], err_msg=f"rank {rank}: %{name}")
