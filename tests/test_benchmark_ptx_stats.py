"""``benchmarks/ptx_stats.py``: the instruction mix of a kernel's main loop in NVRTC's
PTX (no GPU)."""

from __future__ import annotations

from benchmarks.ptx_stats import loop_mix

_SOURCE = r"""
extern "C" __global__ void looped(const float* __restrict__ x, float* __restrict__ y, int n) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += 32) {
    s = s * x[i] + x[i + 1];
  }
  y[threadIdx.x] = s;
}
extern "C" __global__ void straight(const float* __restrict__ x, float* __restrict__ y) {
  y[threadIdx.x] = x[threadIdx.x] * 2.0f;
}
"""


def test_the_loop_of_a_kernel_is_counted_and_a_straight_kernel_has_none() -> None:
    mix = loop_mix(_SOURCE, "looped")
    assert mix["global_loads"] >= 2 and mix["f32_arith"] >= 1 and mix["instructions"] > mix["global_loads"], mix
    assert loop_mix(_SOURCE, "straight") == {"instructions": 0, "f32_arith": 0, "global_loads": 0}
