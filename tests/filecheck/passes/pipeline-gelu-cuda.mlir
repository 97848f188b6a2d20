// The full pipeline of issue 6 on the GELU with bookend views: the views go to the
// host, one segment, scheduled, lowered, printed as CUDA: exactly one kernel.
// RUN: fuser-opt --strip-bookend-views --segment -p select-schedulers,schedule-fusions,lower-to-kernels %S/../../../examples/gelu_bookend_views.mlir -t cuda | filecheck %s

// An f32 kernel: neither half-precision header (NVRTC compiles faster without them).
// CHECK-NOT: #include <cuda_
// CHECK:     extern "C" __global__ void __launch_bounds__(128) gelu_seg0_kernel(const float* __restrict__ {{[a-z0-9_]+}}, float* __restrict__ out0) {
// CHECK:       Vec<float, 4>
// CHECK:       erff(
// CHECK-NOT: __global__
