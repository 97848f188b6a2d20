// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=1003"},select-schedulers,schedule-fusions' | filecheck %s
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=1003"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA

// @odd: a 1-D pointwise space of 1003 elements (one moving axis, 250 vectors and a
// partial one): full vectors of 4 anyway. The split by 4 does not divide 1003, and
// both global tensors still vectorize it; the kernel stores whole vectors where both
// end lanes are in bounds and the last group lane by lane.
// Rows of 1003 are refused: schedule-fusions-pointwise-partial-invalid.mlir.

fuser.fusion @odd(%x : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
  %y = fuser.exp %x : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %y : !fuser.tensor<?xf32>
}

// CHECK-LABEL: fuser.fusion @odd
// CHECK-SAME:    vectorization = 4 : i64
// CHECK:         %1, %2 = iterdomain.split %0 by 4 : !iterdomain.id<1003> -> !iterdomain.id<251>, !iterdomain.id<4>
// CHECK:         %y_vec = iterdomain.parallelize %2 to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
// CHECK-NEXT:    iterdomain.loop %y [%y_bidx, %y_tidx, %y_vec] : !fuser.tensor<1003xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:         %x_vec = iterdomain.parallelize %{{.*}} to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>

// CUDA-LABEL: void __launch_bounds__(128) odd_kernel(
// CUDA:         int t7 = t6 + 3;
// CUDA-NEXT:    bool t8 = t7 < 1003;
// CUDA-NEXT:    bool t9 = t3 && t8;
// CUDA-NEXT:    if (t9) {
// CUDA-NEXT:      Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>(&x[t2]);
// CUDA:           *reinterpret_cast<Vec<float, 4>*>(&out0[t2]) =
// CUDA-NEXT:    } else {
// CUDA:           if (
// CUDA-NEXT:        float {{.*}} = x[
// CUDA-NOT:     Vec<float
// CUDA:       }
