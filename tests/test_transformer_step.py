"""``benchmarks/transformer_step.py --profile`` sorts a step's kernels into families
by name: the names below are the H200 profile's of GPT-2 small (eager, inductor and
fuser)."""

from __future__ import annotations

import pytest

from benchmarks.transformer_step import kernel_kind


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
