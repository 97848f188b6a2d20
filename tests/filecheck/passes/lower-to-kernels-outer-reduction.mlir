// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4096x256"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4096x256"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two

// The reduction kind over a slow axis (a column sum) from its written schedule, saved
// and lowered by a second call: the same CUDA. The loop nest [BIDx, BIDy, serial,
// unroll, TIDy, TIDx, vectorize] interleaves reduction and iteration loops: each
// thread folds 4 unrolled rows per iteration into 4 accumulators (one per vector
// lane, an iteration loop inside the reduction loops), the accumulators are combined
// across TIDy through one shared tile, and the rows split over BIDy make it a grid
// reduction: one partial result per split in a scratch buffer, then a finishing
// kernel that combines them (a block reduction over its TIDy) and stores.

fuser.fusion @col(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}

// CHECK-LABEL: void __launch_bounds__(256) col_kernel(const float* __restrict__ x, const float* __restrict__ out0, float* __restrict__ partial0) {
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    __shared__ __align__(16) float slots_tile[8][4][32];
// CHECK:         for (int i2 = 0; i2 < 2; ++i2) {
// CHECK:           #pragma unroll
// CHECK-NEXT:      for (int i3 = 0; i3 < 4; ++i3) {
// CHECK:             Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>(&x[
// CHECK:         __syncthreads();
// CHECK-NEXT:    slots_tile[tidy_1][0][tidx_1] = t0;
// CHECK:         slots_tile[tidy_1][3][tidx_1] = t3;
// CHECK-NEXT:    __syncthreads();
// CHECK-NOT:     fuser_block_reduce
// CHECK:         partial0[{{.*}}] = {{.*}};
// CHECK:         partial0[{{.*}}] = {{.*}};
// CHECK:         partial0[{{.*}}] = {{.*}};
// CHECK:         partial0[{{.*}}] = {{.*}};
// CHECK-NOT:     partial0[
// CHECK-LABEL: void __launch_bounds__(128) col_kernel_finish(const float* __restrict__ x, float* __restrict__ out0, const float* __restrict__ partial0) {
// CHECK:         for (int j = 0; j < 4; ++j) {
// CHECK:         fuser_block_reduce<false, true, false, {{[0-9]+}}, {{[0-9]+}}>(
// CHECK:         out0[t1] =
