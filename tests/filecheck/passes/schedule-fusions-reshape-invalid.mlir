// RUN: not fuser-opt %s -p 'schedule-fusions' 2>&1 | filecheck %s

// A pointwise schedule on a fusion whose outputs cover disjoint inputs: no output's
// loop nest visits every input axis, even with the reshape's transforms replayed.

// CHECK: fuser-opt: error: schedule-fusions: @disjoint: no output covers every input axis, even with the reshapes' transforms replayed, and the outputs differ in shape (no pointwise reference)

fuser.fusion @disjoint(%x : !fuser.tensor<4x6xf32>, %y : !fuser.tensor<8xf32>) -> (!fuser.tensor<24xf32>, !fuser.tensor<8xf32>) attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 1 : i64, unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 1, 1, 1>}} {
  %r = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  %e = fuser.exp %r : (!fuser.tensor<24xf32>) -> !fuser.tensor<24xf32>
  %n = fuser.neg %y : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %e, %n : !fuser.tensor<24xf32>, !fuser.tensor<8xf32>
}
