// RUN: fuser-opt %s -p schedule-fusions | filecheck %s
// RUN: fuser-opt %s -p schedule-fusions,lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA

// A plain reduction of a row no vector divides (a 1-D sum of squares of 1027 floats)
// with `aligned_vectors = true` in its schedule, what the reduction heuristic picks for
// rows of at least 128 full vectors (written here with one block of 64 threads). The
// reduced axis is walked in groups of 4 (`iterdomain.align` by 4, then split by 4);
// the lowering folds a group whose first and last lanes are in the row as one vector
// load, and the group at the row's end lane by lane, each lane under its own predicate.

fuser.fusion @sumsq(%x : !fuser.tensor<1027xf32>) -> !fuser.tensor<f32> attributes {fuser.schedule = {kind = "reduction", fastest_dim = true, vectorization = 4 : i64, threads_per_row = 64 : i64, rows_per_block = 1 : i64, persistent_batch = 1 : i64, cross_block = true, cross_grid = false, block = array<i64: 64, 1, 1>, grid = array<i64: 1, 1, 1>, aligned_vectors = true}} {
  %q = fuser.mul %x, %x : (!fuser.tensor<1027xf32>, !fuser.tensor<1027xf32>) -> !fuser.tensor<1027xf32>
  %s = fuser.sum %q {dims = array<i64: 0>} : (!fuser.tensor<1027xf32>) -> !fuser.tensor<f32>
  fuser.output %s : !fuser.tensor<f32>
}

// CHECK-LABEL: fuser.fusion @sumsq
// CHECK:         %0 = iterdomain.logical %s : !fuser.tensor<f32> -> !iterdomain.id<1027, reduction>
// CHECK-NEXT:    %1 = iterdomain.align %0 by 4 : !iterdomain.id<1027, reduction> -> !iterdomain.id<1030, reduction>
// CHECK-NEXT:    %2, %3 = iterdomain.split %1 by 4 : !iterdomain.id<1030, reduction> -> !iterdomain.id<258, reduction>, !iterdomain.id<4, reduction>
// CHECK-NEXT:    %4, %5 = iterdomain.split %2 by 64 : !iterdomain.id<258, reduction> -> !iterdomain.id<5, reduction>, !iterdomain.id<64, reduction>

// CUDA-LABEL: __global__ void __launch_bounds__(64) sumsq_kernel(
// CUDA:         bool t13 = t7 && t12;
// CUDA-NEXT:    float t14;
// CUDA-NEXT:    if (t13) {
// CUDA-NEXT:      Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>(&x[t3]);
// CUDA:         } else {
// CUDA:           if (t30) {
// CUDA-NEXT:        float x_1 = x[t29];
