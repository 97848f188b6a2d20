// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Nonsense fuser.schedule values are verifier errors (the kinds and parameter records
// of schedulers/params.py).

fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "TIDx"}} {
  fuser.output %x : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.schedule: kind must be one of no_op, expr_eval, matmul, communication, pointwise, reduction, inner_persistent, outer_persistent, inner_outer_persistent, transpose, got "TIDx"

// -----

fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 4 : i64, unroll = 1 : i64, block = array<i64: -128, 1, 1>, grid = array<i64: 1, 1, 1>}} {
  fuser.output %x : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.schedule: bad pointwise parameters: block must be 3 positive extents, got [-128, 1, 1]

// -----

fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 0 : i64, unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 1, 1, 1>}} {
  fuser.output %x : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.schedule: bad pointwise parameters: vectorization must be at least 1, got 0

// -----

fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "pointwise", vectorization = 4 : i64}} {
  fuser.output %x : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.schedule: bad pointwise parameters: missing fields

// -----

fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 4 : i64, unroll = 1 : i64, block = array<i64: 2048, 1, 1>, grid = array<i64: 1, 1, 1>}} {
  fuser.output %x : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.schedule: bad pointwise parameters: block [2048, 1, 1] has more than 1024 threads

// -----

fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "inner_persistent", fastest_dim = true, vectorization = 4 : i64, threads_per_row = 2 : i64, rows_per_block = 1 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = false, block = array<i64: 2, 1, 1>, grid = array<i64: 4, 1, 1>, prefetch = "L3"}} {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  fuser.output %s : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.schedule: bad inner_persistent parameters: prefetch must be empty or one of L1, L2, got 'L3'
