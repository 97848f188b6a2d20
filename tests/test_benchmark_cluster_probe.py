"""``benchmarks/outer_norm_cluster_probe.py``: every variant it would time compiles
with NVRTC for sm_90 (no GPU needed), in both dtypes, and the register check keeps
out the variants whose held rows exceed 256 bytes a thread."""

from __future__ import annotations

import pytest

from benchmarks.outer_norm_cluster_probe import VARIANTS, fits, source


def test_the_register_budget_check() -> None:
    assert fits(16384, 8, 4, 512)  # 16 rows of one vector a thread: 256 bytes
    assert not fits(32768, 8, 4, 512)  # 32 rows: 512 bytes
    assert not fits(16384, 8, 3, 512)  # 170 rows of threads do not divide 2048 rows


@pytest.mark.parametrize("bf16", [True, False])
def test_the_probe_kernels_compile(bf16: bool) -> None:
    nvrtc = pytest.importorskip("fuser.codegen.nvrtc")
    opts = nvrtc.CompileOptions(arch="sm_90")
    compiled = 0
    for cs, vectors, threads, _ in VARIANTS:
        if fits(16384, cs, vectors, threads):
            width = vectors * (8 if bf16 else 4)
            nvrtc.compile_cuda(source(16384, 1024, cs, width, threads, bf16), name="outer_probe", options=opts)
            compiled += 1
    assert compiled == 3  # the three variants of 512 threads with at most 16 rows a thread
