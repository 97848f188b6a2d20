// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=8192x256,1=8192x256,2=8192x1,3=8192x1"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=8192x256,1=8192x256,2=8192x1,3=8192x1"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two
// RUN: filecheck %s --check-prefix=SCHED < %t.scheduled.mlir

// The inner-outer persistent kind (layer-norm backward: dx from two row sums, dw and
// db column sums) as one kernel over the inputs, from its written schedule, saved and
// lowered by a second call: the same CUDA. The 8192 rows run on a persistent grid of
// 528 blocks (4 an SM) of 4 rows, each block looping over its rows (`i1`, 4 times); dy and x are loaded once per row into
// registers; the row sums a and c are computed at the rows' loop (compute_at = 3),
// and the column sums dw and db are placed at the same loop, their rows being the
// reduced ids [BIDx, i1, TIDy]: each thread folds its 2 x 4 columns of every row it
// holds into accumulators carried through the loop, the block combines them over
// TIDy through one shared tile and stores its partial sums, and ln_bwd_kernel_finish
// adds up the 528 blocks' partials. The two-kernel-group form is
// lower-to-kernels-inner-outer-halves.mlir.

// SCHED: single_kernel = true
// SCHED: iterdomain.loop %a [{{.*}}] {compute_at = 3 : i64} : !fuser.tensor<8192x1xf32> [!iterdomain.id<528, BIDx>, !iterdomain.id<4>, !iterdomain.id<4, TIDy>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<32, reduction, TIDx>, !iterdomain.id<4, reduction>]
// SCHED: iterdomain.loop %dy [{{.*}}] {compute_at = 3 : i64, memory = "registers"}
// SCHED: iterdomain.loop %dw [{{.*}}] {compute_at = 3 : i64} : !fuser.tensor<256xf32> [!iterdomain.id<528, reduction, BIDx>, !iterdomain.id<4, reduction>, !iterdomain.id<4, reduction, TIDy>, !iterdomain.id<2, unroll>, !iterdomain.id<32, TIDx>, !iterdomain.id<4, vectorize>]
// SCHED: iterdomain.loop %db [{{.*}}] {compute_at = 3 : i64} : !fuser.tensor<256xf32> [!iterdomain.id<528, reduction, BIDx>,

fuser.fusion @ln_bwd(%dy : !fuser.tensor<?x?xf32>, %x : !fuser.tensor<?x?xf32>, %mean : !fuser.tensor<?x1xf32>, %rstd : !fuser.tensor<?x1xf32>) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>) {
  %d = fuser.sub %x, %mean : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %xhat = fuser.mul %d, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %a = fuser.sum %dy {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %gx = fuser.mul %dy, %xhat : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %c = fuser.sum %gx {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %t0 = fuser.sub %dy, %a : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t1 = fuser.mul %xhat, %c : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.sub %t0, %t1 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %dx = fuser.mul %t2, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %dw = fuser.sum %gx {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %db = fuser.sum %dy {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %dx, %dw, %db : !fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
}
// CHECK-LABEL: void __launch_bounds__(128) ln_bwd_kernel(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ out0, const float* __restrict__ out1, const float* __restrict__ out2, float* __restrict__ partial0, float* __restrict__ partial1) {
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    __shared__ __align__(16) float across_tile[4][16][32];
// CHECK:         for (int i1 = 0; i1 < 4; ++i1) {
// CHECK:         Vec<float, 4> dy_v = *reinterpret_cast<const Vec<float, 4>*>(&dy[{{t[0-9]+}}]);
// CHECK:         Vec<float, 4> dy_v_1 = *reinterpret_cast<const Vec<float, 4>*>(&dy[{{t[0-9]+}}]);
// CHECK-NOT:     &dy[
// CHECK:         fuser_warp_reduce
// CHECK:         *reinterpret_cast<Vec<float, 4>*>(&out0[{{t[0-9]+}}]) =
// CHECK-NOT:     &dy[
// CHECK:         across_tile[{{tidy_[0-9]+}}][15][{{tidx_[0-9]+}}] = t15;
// CHECK-NEXT:    __syncthreads();
// CHECK:         partial0[[[OFF:t[0-9]+]]] = {{t[0-9]+}};
// CHECK-NEXT:    partial1[[[OFF]]] = {{t[0-9]+}};
// CHECK-LABEL: void __launch_bounds__(256) ln_bwd_kernel_finish(
// CHECK:         for (int j = 0; j < 17; ++j) {
// CHECK:         = fuser_block_reduce<false, true, false, {{[0-9]+}}, {{[0-9]+}}>(
// CHECK-NEXT:    = fuser_block_reduce<false, true, false, {{[0-9]+}}, {{[0-9]+}}>(
// CHECK:         out1[t1] =
// CHECK-NEXT:    out2[t1] =
