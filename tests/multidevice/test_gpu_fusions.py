"""Issue 17 on GPUs: the fusions of ``test_multidevice_fusions`` (tensor-parallel MLP,
sequence-parallel layer norm, allgather + linear and linear + reduce-scatter, plain
and overlapped) on 2 GPUs over
NCCL, one process per GPU, each rank's outputs equal to the slice of the single-GPU
result (fuser's own generated kernels and cuBLAS on the full inputs). Skipped without
two GPUs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.multidevice.harness import run_ranks
from tests.multidevice.test_multidevice_fusions import (
    CASES,
    _full_inputs,
    _fusion,
    _rank_dtensors,
    _strip,
)

pytestmark = pytest.mark.gpu


def _rank(rank: int, size: int) -> dict[str, Any]:
    import torch
    from xdsl.dialects.builtin import ModuleOp

    from fuser.frontend.fusion_definition import FusionDefinition
    from fuser.runtime.communicator import Communicator
    from fuser.runtime.multidevice import MultiDeviceFusion, shard_array

    comm = Communicator()
    out: dict[str, Any] = {}
    for name, text in CASES.items():
        fusion = _fusion(text, size)
        for overlap in {"ag_matmul": (None, 1, 2), "mm_rs": (None, 1)}.get(name, (None,)):
            md = MultiDeviceFusion(
                fusion, overlap_chunks=overlap if name == "ag_matmul" else None,
                overlap_reduce_scatter=name == "mm_rs" and overlap is not None,
            )
            # The first run walks the host program; the later ones replay it
            # (gpu_replay), on other values in the same buffers' shapes.
            for run, seed in enumerate((0, 1, 2)):
                full = [torch.from_numpy(x).cuda() for x in _full_inputs(fusion, seed)]
                single = FusionDefinition.from_mlir(str(ModuleOp([_strip(fusion)]))).execute(full)
                got = md.run(md.shard_inputs(full, rank), comm)
                want = [shard_array(w, s, rank) for w, s in zip(single, md.output_shardings, strict=True)]
                out[f"{name}/{overlap}/run {run}"] = ([g.cpu().numpy() for g in got], [w.cpu().numpy() for w in want])
            out[f"{name}/{overlap}/replayed"] = md.replayed(md.shard_inputs(full, rank))
            # The same shapes in other strides (column-major shards): another program,
            # not the replay built for row-major ones.
            local = [x.t().contiguous().t() if x.dim() == 2 else x for x in md.shard_inputs(full, rank)]
            got = md.run(local, comm)
            out[f"{name}/{overlap}/column-major"] = ([g.cpu().numpy() for g in got], out[f"{name}/{overlap}/run 2"][1])
    return out


def test_fusions_on_two_gpus_equal_one_gpu() -> None:
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs, found {torch.cuda.device_count()}")
    for rank, cases in enumerate(run_ranks(2, _rank, backend="nccl", timeout=300)):
        for name, result in cases.items():
            if name.endswith("/replayed"):
                assert result is True, f"{name} on rank {rank}: the program was walked, not replayed"
                continue
            got, want = result
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3, err_msg=f"{name} on rank {rank}")


def _rank_dtensors_on_gpus(rank: int, size: int) -> dict[str, Any]:
    return _rank_dtensors(rank, size, "cuda")


def test_dtensors_through_the_wrapper_on_two_gpus() -> None:
    """nvFuser's ``FusionDefinitionWrapper`` on CUDA DTensors: the MLP's outputs are
    DTensors with the propagated placements, computed on each rank's GPU."""
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs, found {torch.cuda.device_count()}")
    for rank, out in enumerate(run_ranks(2, _rank_dtensors_on_gpus, backend="nccl", timeout=300)):
        for name in ("y", "y again", "h"):
            got, want = out[name]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{name} on rank {rank}")
        assert out["placements"] == (["Replicate()"], ["Shard(dim=1)"])
        assert out["compiled"] == 1 and out["local device"] == f"cuda:{rank}"

