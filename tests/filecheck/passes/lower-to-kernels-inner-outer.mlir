// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=2048x256,1=2048x256,2=2048x1,3=2048x1"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=2048x256,1=2048x256,2=2048x1,3=2048x1"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two
// RUN: filecheck %s --check-prefix=SCHED < %t.scheduled.mlir

// The inner-outer persistent kind (layer-norm backward: dx from two row sums, dw and
// db column sums) from its written schedule, saved and lowered by a second call: the
// same CUDA. The row sums and the column sums have different loop nests, so each
// nest is its own kernel group (codegen/lower/loop_nest_groups.py): nest0 is the row
// half (the row sums computed at the rows' loop, dy and the normalized x held in
// registers), nest1 the column half (dw and db are sibling reductions folded by one
// loop nest, their 4 x 2 accumulators combined over TIDy through one shared tile,
// each block's partial sums finished by nest1_finish).

// SCHED: rows_kind = "inner_persistent"
// SCHED-SAME: cols_kind = "reduction"
// SCHED: iterdomain.loop %dw [{{.*}}] : !fuser.tensor<256xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<32, reduction, BIDy>,
// SCHED: iterdomain.loop %db [{{.*}}] : !fuser.tensor<256xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<32, reduction, BIDy>,
// SCHED: iterdomain.loop %a [{{.*}}] {compute_at = 2 : i64}

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
// CHECK-LABEL: void __launch_bounds__(128) ln_bwd_kernel_nest0(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ out0) {
// CHECK:         fuser_warp_reduce
// CHECK:         *reinterpret_cast<Vec<float, 4>*>(&out0[{{t[0-9]+}}]) =
// CHECK-LABEL: void __launch_bounds__(256) ln_bwd_kernel_nest1({{.*}}, float* __restrict__ partial0, float* __restrict__ partial1) {
// CHECK-NEXT:    __shared__ __align__(16) float slots_tile[8][8][32];
// CHECK:         float [[DW:t[0-9]+]] = slots_tile[0][0][tidx_2];
// CHECK-NEXT:    float [[DB:t[0-9]+]] = slots_tile[0][1][tidx_2];
// CHECK:         partial0[[[OFF:t[0-9]+]]] = {{t[0-9]+}};
// CHECK-NEXT:    partial1[[[OFF]]] = {{t[0-9]+}};
// CHECK-LABEL: void __launch_bounds__(256) ln_bwd_kernel_nest1_finish(
// CHECK:         = fuser_block_reduce<false, true, false>(
// CHECK-NEXT:    = fuser_block_reduce<false, true, false>(
// CHECK:         out0[t1] =
// CHECK-NEXT:    out1[t1] =
