// RUN: fuser-opt %s -p select-schedulers,schedule-fusions | filecheck %s
// RUN: fuser-opt %s -p select-schedulers,schedule-fusions,lower-to-kernels | filecheck %s --check-prefix=KERNELS

// A column reduction whose columns meet the rows' reduced axis only through a
// broadcast: %c = min(%b) over the rows, and %b reaches the row reduction of %a only
// as `maximum(%m, %b)`, whose %m is the rows' keepdim max (its axis 1 a broadcast, not
// %a's columns). No op maps %b's columns to %a's, so the single-kernel inner-outer
// schedule lines %c up with the row nest by equal static extents (32 and 32), as
// propagation does elsewhere (`alignment(by_extent=True)`). It used to fail here:
// random fusion 166 planned for a GPU of 4 SMs, and the same fusion at 140 rows on an
// H100 (`cannot compile ... does not line up with the row reductions' loop nest`).

fuser.fusion @cols(%a : !fuser.tensor<264x32xf32>, %b : !fuser.tensor<264x32xf32>) -> (!fuser.tensor<264x32xf32>, !fuser.tensor<32xf32>) {
  %m = fuser.max %a {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<264x32xf32>) -> !fuser.tensor<264x1xf32>
  %y = fuser.maximum %m, %b : (!fuser.tensor<264x1xf32>, !fuser.tensor<264x32xf32>) -> !fuser.tensor<264x32xf32>
  %c = fuser.min %b {dims = array<i64: 0>} : (!fuser.tensor<264x32xf32>) -> !fuser.tensor<32xf32>
  fuser.output %y, %c : !fuser.tensor<264x32xf32>, !fuser.tensor<32xf32>
}

// CHECK-LABEL: fuser.fusion @cols
// CHECK-SAME:  kind = "inner_outer_persistent"
// CHECK-SAME:  single_kernel = true
// CHECK:       iterdomain.loop %m [%m_bidx, %{{[0-9]+}}, %m_tidy, %m_unroll, %m_tidx, %{{[0-9]+}}] {compute_at = 3 : i64}
// CHECK:       iterdomain.loop %c [%c_bidx, %{{[0-9]+}}, %c_tidy, %c_unroll, %c_tidx, %c_vec] {compute_at = 3 : i64} : !fuser.tensor<32xf32> [!iterdomain.id<66, reduction, BIDx>, !iterdomain.id<1, reduction>, !iterdomain.id<4, reduction, TIDy>

// KERNELS: kernel.func @cols_kernel(
// KERNELS: kernel.func @cols_kernel_finish(
