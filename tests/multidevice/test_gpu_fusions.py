"""Issue 17 on GPUs: the fusions of ``test_multidevice_fusions`` (tensor-parallel MLP,
sequence-parallel layer norm, allgather + linear plain and overlapped) on 2 GPUs over
NCCL, one process per GPU, each rank's outputs equal to the slice of the single-GPU
result (fuser's own generated kernels and cuBLAS on the full inputs). Skipped without
two GPUs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.multidevice.harness import run_ranks
from tests.multidevice.test_multidevice_fusions import CASES, _full_inputs, _fusion, _strip

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
        full = [torch.from_numpy(x).cuda() for x in _full_inputs(fusion)]
        single = FusionDefinition.from_mlir(str(ModuleOp([_strip(fusion)]))).execute(full)
        for overlap in (None, 2) if name == "ag_matmul" else (None,):
            md = MultiDeviceFusion(fusion, overlap_chunks=overlap)
            got = md.run(md.shard_inputs(full, rank), comm)
            want = [shard_array(w, s, rank) for w, s in zip(single, md.output_shardings, strict=True)]
            out[f"{name}/{overlap}"] = ([g.cpu().numpy() for g in got], [w.cpu().numpy() for w in want])
    return out


def test_fusions_on_two_gpus_equal_one_gpu() -> None:
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs, found {torch.cuda.device_count()}")
    for rank, cases in enumerate(run_ranks(2, _rank, backend="nccl", timeout=300)):
        for name, (got, want) in cases.items():
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3, err_msg=f"{name} on rank {rank}")
