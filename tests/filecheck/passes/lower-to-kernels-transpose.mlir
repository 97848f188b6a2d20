// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x96,1=96x64"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x96,1=96x64"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s --check-prefix=PLACED < %t.scheduled.mlir
// RUN: filecheck %s < %t.two

// The transpose kind from its written schedule: x.T + b. schedule-fusions gives the
// transposed group (%x) its own loops over the 32x32 tile, along its innermost axis,
// and computes it at the tile's loop (BIDx) in shared memory; %b and the output run
// along theirs. Lowered from the saved IR by a second call: the same CUDA.

fuser.fusion @tr(%x : !fuser.tensor<?x?xf32>, %b : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %y = fuser.add %t, %b : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}

// PLACED-LABEL: fuser.fusion @tr
// PLACED-SAME:    kind = "transpose"
// PLACED:         iterdomain.loop %y [%y_bidx, %y_unroll, %y_tidx, %y_vec] : !fuser.tensor<96x64xf32> [!iterdomain.id<6, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// PLACED:         iterdomain.loop %x [%x_bidx, %x_unroll, %x_tidx, %x_vec] {compute_at = 1 : i64, memory = "shared"} : !fuser.tensor<64x96xf32>
// PLACED:         iterdomain.loop %b [{{.*}}] : !fuser.tensor<96x64xf32>

// CHECK-LABEL: void __launch_bounds__(128) tr_kernel(
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    __shared__ __align__(16) float x_tile[32][33];  // padded by 1
// CHECK:         Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>(&x[
// CHECK:         x_tile[{{.*}}] = t11;
// CHECK:         Vec<float, 4> x_v_1 = *reinterpret_cast<const Vec<float, 4>*>(&x[
// CHECK:         __syncthreads();
// CHECK-NOT:     &x[
// CHECK:         Vec<float, 4> b_v = *reinterpret_cast<const Vec<float, 4>*>(&b[
// CHECK:         = x_tile[
// CHECK:         *reinterpret_cast<Vec<float, 4>*>(&out0[
// CHECK:         *reinterpret_cast<Vec<float, 4>*>(&out0[
// CHECK-NEXT:  }
