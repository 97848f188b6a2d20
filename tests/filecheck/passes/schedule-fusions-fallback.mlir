// RUN: fuser-opt %s -p 'schedule-fusions{fallback=true}' | filecheck %s

// With fallback (the compiler driver's pipeline), a fusion whose schedule cannot be
// written (here: no output's loop nest visits every input axis) is left without
// iterdomain ops, the reason recorded; its fuser.schedule is lowered by the
// per-scheduler lowering. schedule-fusions-reshape-invalid.mlir is the same fusion
// without fallback: an error.

// CHECK-LABEL: fuser.fusion @disjoint
// CHECK-SAME: fuser.schedule_fallback = "schedule-fusions: @disjoint: no output covers every input axis
// CHECK-NOT: iterdomain.
// CHECK: fuser.output

fuser.fusion @disjoint(%x : !fuser.tensor<4x6xf32>, %y : !fuser.tensor<8xf32>) -> (!fuser.tensor<24xf32>, !fuser.tensor<8xf32>) attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 1 : i64, unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 1, 1, 1>}} {
  %r = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  %e = fuser.exp %r : (!fuser.tensor<24xf32>) -> !fuser.tensor<24xf32>
  %n = fuser.neg %y : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %e, %n : !fuser.tensor<24xf32>, !fuser.tensor<8xf32>
}
