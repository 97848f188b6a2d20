"""Property: every plan fuser accepts can be lowered (issue 10, item 2).

Random fusions (``tests/fuzz/fusion_gen.py``, their own sizes: odd, extent-1 and up to
256 per axis): ``fd.plan`` never raises and has a scheduler for every segment, ``fd.cuda_code_for``
prints the kernels of every segment (as many ``__global__`` functions as
``plan.num_kernels``), and every 10th fusion's CUDA compiles with NVRTC (no GPU needed).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from codegen.cuda_printer import print_cuda
from codegen.nvrtc import compile_cuda
from fuser_ir.frontend.execution import lowered_segments
from tests.fuzz.fusion_gen import random_case

SEEDS = range(0, 500)
def _check(fd: object, ins: list[np.ndarray], nvrtc: bool) -> None:
    plan = fd.plan(ins)  # type: ignore[attr-defined]
    assert plan.is_complete, str(plan)
    code = fd.cuda_code_for(ins)  # type: ignore[attr-defined]
    kernels = re.findall(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)', code)
    if plan.segmented or plan.segments[0].launches_kernel:
        assert len(kernels) == plan.num_kernels, str(plan)
    if nvrtc:
        entry = fd._ensure_defined()  # type: ignore[attr-defined]
        for _, lowered in lowered_segments(entry, ins):
            for k in lowered.kernels:
                compile_cuda(print_cuda(k.module), name=k.name)


@pytest.mark.parametrize("chunk", range(10))
def test_random_plans_lower(chunk: int) -> None:
    for seed in SEEDS[chunk::10]:
        case = random_case(seed)
        ins = case.numpy_inputs()
        _check(case.fd, ins, nvrtc=seed % 10 == 0)
