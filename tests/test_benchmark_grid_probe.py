"""``benchmarks/outer_norm_grid_probe.py``: every variant it would time compiles with
NVRTC for sm_90 (no GPU needed) at every shape of both dtypes, and the shared-memory
check keeps out the variants whose static shared memory exceeds 48 KiB (which ptxas
rejects: a whole device call was lost to one)."""

from __future__ import annotations

import pytest

from benchmarks.outer_norm_grid_probe import SHAPES, VARIANTS, shared_bytes, source


def test_the_shared_memory_check() -> None:
    assert shared_bytes(128, 32) == 4 * (2 * 32 * 128 + 32 + 2 * 128)  # 33.9 KB: kept
    assert shared_bytes(128, 64) > 48 * 1024  # 64 rows of threads over 128 columns: out
    assert shared_bytes(64, 64) <= 48 * 1024


@pytest.mark.parametrize("dtype", sorted(SHAPES))
def test_the_probe_kernels_compile(dtype: str) -> None:
    nvrtc = pytest.importorskip("fuser.codegen.nvrtc")
    opts = nvrtc.CompileOptions(arch="sm_90")
    bf16 = dtype == "bfloat16"
    vec = 8 if bf16 else 4
    compiled = 0
    for n, c in SHAPES[dtype][:1]:
        for lanes, ty, _cap, u, rev, policy, stats_only in VARIANTS:
            if c % (lanes * vec) or shared_bytes(lanes * vec, ty) > 48 * 1024:
                continue
            nvrtc.compile_cuda(source(n, c, lanes, ty, 16, u, rev, bf16, policy, stats_only),
                               name="outer_grid", options=opts)
            compiled += 1
    assert compiled == len(VARIANTS)
