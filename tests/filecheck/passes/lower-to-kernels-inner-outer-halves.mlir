// RUN: fuser-opt %s -p 'schedule-fusions,lower-to-kernels' -t cuda | filecheck %s

// The inner-outer persistent kind as two kernel groups: the schedule attribute below
// says `single_kernel = false` (the default when left out, as in schedules written
// before the one-kernel kind; lower-to-kernels-inner-outer.mlir is the one kernel,
// what select-schedulers picks). The row sums and the column sums then have different loop
// nests, so each nest is its own kernel group (codegen/lower/loop_nest_groups.py):
// nest0 is the row half (the row sums computed at the rows' loop, dy and the
// normalized x held in registers), nest1 the column half (dw and db are sibling
// reductions folded by one loop nest, their 4 x 2 accumulators combined over TIDy
// through one shared tile, each block's partial sums finished by nest1_finish).

fuser.fusion @ln_bwd(%dy: !fuser.tensor<2048x256xf32>, %x: !fuser.tensor<2048x256xf32>, %mean: !fuser.tensor<2048x1xf32>, %rstd: !fuser.tensor<2048x1xf32>) -> (!fuser.tensor<2048x256xf32>, !fuser.tensor<256xf32>, !fuser.tensor<256xf32>) attributes {fuser.schedule = {kind = "inner_outer_persistent", inner = {fastest_dim = true, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 4 : i64, persistent_batch = 2 : i64, cross_block = false, cross_grid = true, block = array<i64: 32, 4, 1>, grid = array<i64: 132, 1, 1>, project_to_inputs = false, use_shared_memory = false, buffer_bytes_per_row = 2048 : i64}, outer_vectorization = 4 : i64, outer_threads_per_column = 2 : i64, partial_buffer_bytes = 2048 : i64, rows_kind = "inner_persistent", rows = {fastest_dim = true, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 4 : i64, persistent_batch = 2 : i64, cross_block = false, cross_grid = false, block = array<i64: 32, 4, 1>, grid = array<i64: 512, 1, 1>, project_to_inputs = false, use_shared_memory = false, buffer_bytes_per_row = 2048 : i64}, cols_kind = "reduction", cols = {fastest_dim = false, vectorization = 4 : i64, threads_per_row = 8 : i64, rows_per_block = 128 : i64, persistent_batch = 1 : i64, cross_block = true, cross_grid = true, block = array<i64: 32, 8, 1>, grid = array<i64: 2, 32, 1>, project_to_inputs = false, use_shared_memory = false, buffer_bytes_per_row = 0 : i64}, single_kernel = false}} {
  %d = fuser.sub %x, %mean : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x1xf32>) -> !fuser.tensor<2048x256xf32>
  %xhat = fuser.mul %d, %rstd : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x1xf32>) -> !fuser.tensor<2048x256xf32>
  %a = fuser.sum %dy {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<2048x256xf32>) -> !fuser.tensor<2048x1xf32>
  %gx = fuser.mul %dy, %xhat : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x256xf32>) -> !fuser.tensor<2048x256xf32>
  %c = fuser.sum %gx {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<2048x256xf32>) -> !fuser.tensor<2048x1xf32>
  %t0 = fuser.sub %dy, %a : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x1xf32>) -> !fuser.tensor<2048x256xf32>
  %t1 = fuser.mul %xhat, %c : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x1xf32>) -> !fuser.tensor<2048x256xf32>
  %t2 = fuser.sub %t0, %t1 : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x256xf32>) -> !fuser.tensor<2048x256xf32>
  %dx = fuser.mul %t2, %rstd : (!fuser.tensor<2048x256xf32>, !fuser.tensor<2048x1xf32>) -> !fuser.tensor<2048x256xf32>
  %dw = fuser.sum %gx {dims = array<i64: 0>} : (!fuser.tensor<2048x256xf32>) -> !fuser.tensor<256xf32>
  %db = fuser.sum %dy {dims = array<i64: 0>} : (!fuser.tensor<2048x256xf32>) -> !fuser.tensor<256xf32>
  fuser.output %dx, %dw, %db : !fuser.tensor<2048x256xf32>, !fuser.tensor<256xf32>, !fuser.tensor<256xf32>
}
// CHECK-LABEL: void __launch_bounds__(128) ln_bwd_kernel_nest0(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ out0) {
// CHECK:         fuser_warp_reduce
// CHECK:         *reinterpret_cast<Vec<float, 4>*>(&out0[{{t[0-9]+}}]) =
// CHECK-LABEL: void __launch_bounds__(256) ln_bwd_kernel_nest1({{.*}}, float* __restrict__ partial0, float* __restrict__ partial1) {
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    __shared__ __align__(16) float slots_tile[8][8][32];
// CHECK:         float [[DW:t[0-9]+]] = slots_tile[0][0][tidx_2];
// CHECK-NEXT:    float [[DB:t[0-9]+]] = slots_tile[0][1][tidx_2];
// CHECK:         partial0[[[OFF:t[0-9]+]]] = {{t[0-9]+}};
// CHECK-NEXT:    partial1[[[OFF]]] = {{t[0-9]+}};
// CHECK-LABEL: void __launch_bounds__(64) ln_bwd_kernel_nest1_finish(
// CHECK:         = fuser_block_reduce<false, true, false, {{[0-9]+}}, {{[0-9]+}}>(
// CHECK-NEXT:    = fuser_block_reduce<false, true, false, {{[0-9]+}}, {{[0-9]+}}>(
// CHECK:         out0[t1] =
// CHECK-NEXT:    out1[t1] =
