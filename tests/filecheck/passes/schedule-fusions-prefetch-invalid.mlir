// RUN: not fuser-opt %s -p schedule-fusions 2>&1 | filecheck %s

// `prefetch` is lowered only where a schedule places it (the held inputs of the
// one-kernel inner_outer_persistent kind); written into another kind's schedule it
// would be dropped without a word, so schedule-fusions says so.

// CHECK: error: schedule-fusions: @rows: prefetch = 'L2' in the inner_persistent schedule: only the one-kernel inner_outer_persistent schedule's inner.prefetch is lowered (its held inputs)
fuser.fusion @rows(%x : !fuser.tensor<64x32xf32>) -> !fuser.tensor<64xf32> attributes {fuser.schedule = {kind = "inner_persistent", fastest_dim = true, vectorization = 4 : i64, threads_per_row = 8 : i64, rows_per_block = 1 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = false, block = array<i64: 8, 1, 1>, grid = array<i64: 64, 1, 1>, prefetch = "L2"}} {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<64x32xf32>) -> !fuser.tensor<64xf32>
  fuser.output %s : !fuser.tensor<64xf32>
}
