"""``benchmarks/transformer_step.py --profile`` sorts a step's kernels into families
by name: the names below are the H200 profile's of GPT-2 small (eager, inductor and
fuser)."""

from __future__ import annotations

import pytest

from benchmarks.transformer_step import busy_us, graph_counts, kernel_kind


@pytest.mark.parametrize(("name", "kind"), [
    ("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT", "gemm"),
    ("cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_32x2_nn_align2", "gemm"),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_3", "attention"),
    ("triton_red_fused__log_softmax__log_softmax_backward_data_0", "triton"),
    ("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<...>>", "aten"),
    ("Memcpy DtoD (Device -> Device)", "copy"),
    ("nvfuser_fusion_id9_seg3_kernel", "generated"),
])
def test_kernel_families(name: str, kind: str) -> None:
    assert kernel_kind(name) == kind


def test_graph_counts_report_the_memory_the_graphs_own() -> None:
    """With private pools each captured graph keeps its own intermediates: a launcher
    with 3 graphs of 1 GiB owns 3 GiB; with pools shared per stream, the graphs keep
    at least the largest graph's; a launcher without graphs owns nothing."""
    from types import SimpleNamespace

    graphs = SimpleNamespace(owned=2**30, execs={1: None, 2: None, 3: None}, off=False, why="")
    small = SimpleNamespace(owned=2**20, execs={1: None}, off=False, why="")
    launchers = [SimpleNamespace(graphs=graphs), SimpleNamespace(graphs=small), SimpleNamespace(graphs=None)]
    line = graph_counts(launchers, shared=False)
    assert line == "hot launchers 3, with graphs 2, graphs 4, owning 3.00 GB, off 0 []"
    line = graph_counts(launchers, shared=True)
    assert line == "hot launchers 3, with graphs 2, graphs 4, owning >= 1.00 GB (shared pools), off 0 []"


def test_busy_time_counts_overlapping_kernels_once() -> None:
    """A dependent launch's kernel starts before the one it waits for ends: the busy
    time is the union of the spans, not their sum (0-10 and 8-12 are 12 us, then a
    gap, a span inside another, and a later one)."""
    assert busy_us([(8.0, 12.0), (0.0, 10.0)]) == 12.0
    assert busy_us([(0.0, 10.0), (2.0, 3.0), (20.0, 25.0)]) == 15.0
    assert busy_us([]) == 0.0
