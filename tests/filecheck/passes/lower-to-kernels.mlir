// RUN: fuser-opt %s --split-input-file -p 'select-schedulers,schedule-fusions,lower-to-kernels' | filecheck %s
// RUN: fuser-opt %s --split-input-file -p 'select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA

// A pointwise fusion: one vectorized grid-stride kernel, added after the fusion,
// which lists it; the fusion itself is unchanged.
fuser.fusion @gelu(%x : !fuser.tensor<64x256xf32>) -> !fuser.tensor<64x256xf32> {
  %h = fuser.constant 5.000000e-01 : f64
  %a = fuser.mul %x, %h : (!fuser.tensor<64x256xf32>, f64) -> !fuser.tensor<64x256xf32>
  %e = fuser.erf %a : (!fuser.tensor<64x256xf32>) -> !fuser.tensor<64x256xf32>
  fuser.output %e : !fuser.tensor<64x256xf32>
}

// CHECK-LABEL: fuser.fusion @gelu(%x: !fuser.tensor<64x256xf32>) -> !fuser.tensor<64x256xf32> attributes {fuser.schedule = {kind = "pointwise"
// CHECK-SAME:    fuser.kernels = [@gelu_kernel]
// CHECK:       kernel.func @gelu_kernel(%x: memref<?xf32>, %out0: memref<?xf32>)
// CHECK-SAME:    fuser.grid = array<i64: 32, 1, 1>, fuser.launch_args = ["input 0", "output 0"]
// CHECK:         vector.load %x
// CHECK:         math.erf
// CHECK:         vector.store
// CHECK:         kernel.return

// CUDA: extern "C" __global__ void __launch_bounds__(128) gelu_kernel(const float* __restrict__ x, float* __restrict__ out0) {
// CUDA:   Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>(&x[
// CUDA:   erff(

// -----

// Softmax over rows: one inner-persistent kernel with two block reductions.
fuser.fusion @softmax(%x : !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1024xf32> {
  %m = fuser.max %x {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1xf32>
  %d = fuser.sub %x, %m : (!fuser.tensor<128x1024xf32>, !fuser.tensor<128x1xf32>) -> !fuser.tensor<128x1024xf32>
  %e = fuser.exp %d : (!fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1024xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1xf32>
  %y = fuser.div %e, %s : (!fuser.tensor<128x1024xf32>, !fuser.tensor<128x1xf32>) -> !fuser.tensor<128x1024xf32>
  fuser.output %y : !fuser.tensor<128x1024xf32>
}

// CHECK-LABEL: fuser.fusion @softmax
// CHECK-SAME:    kind = "inner_persistent"
// CHECK-SAME:    fuser.kernels = [@softmax_kernel]
// CHECK:       kernel.func @softmax_kernel(
// CHECK:         kernel.block_reduce {{.*}}kind = "max"
// CHECK:         kernel.block_reduce {{.*}}kind = "add"
// CHECK:         kernel.return

// CUDA: extern "C" __global__ void __launch_bounds__({{[0-9]+}}) softmax_kernel(const float* __restrict__ x, float* __restrict__ out0) {
