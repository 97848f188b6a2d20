// RUN: not fuser-opt %s -p schedule-fusions 2>&1 | filecheck %s

// `aligned_vectors` shifts the innermost axis of rows reduced over it: a column sum
// (reduced over axis 0) cannot be walked in aligned groups, and says so.

// CHECK: error: schedule-fusions: @col_aligned: aligned_vectors needs rows reduced over their innermost axis alone (fastest_dim, one reduced axis, the last); %s reduces axes [0] of 2
fuser.fusion @col_aligned(%x : !fuser.tensor<64x13xf32>) -> !fuser.tensor<13xf32> attributes {fuser.schedule = {kind = "inner_persistent", fastest_dim = true, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 1 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = false, block = array<i64: 32, 1, 1>, grid = array<i64: 13, 1, 1>, aligned_vectors = true}} {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<64x13xf32>) -> !fuser.tensor<13xf32>
  fuser.output %s : !fuser.tensor<13xf32>
}
