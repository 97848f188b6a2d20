// RUN: fuser-opt %s --canonicalize | filecheck %s

// Pure ops whose results are unused are erased, transitively; outputs, including
// those aliased to inputs, are kept.

fuser.fusion @dead(%a : !fuser.tensor<4xf32>, %acc : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %0 = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  %1 = fuser.log %0 : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  %2 = fuser.sum %1 {dims = array<i64: 0>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<f32>
  %c = fuser.constant 2.000000e+00 : f64
  %3 = fuser.mul %a, %c : (!fuser.tensor<4xf32>, f64) -> !fuser.tensor<4xf32>
  %4 = fuser.add %acc, %a : (!fuser.tensor<4xf32>, !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %3, %4 : !fuser.tensor<4xf32>, !fuser.tensor<4xf32> {alias_inputs = array<i64: -1, 1>}
}

// CHECK-LABEL: fuser.fusion @dead
// CHECK-NEXT:    %c = fuser.constant 2.000000e+00 : f64
// CHECK-NEXT:    %0 = fuser.mul %a, %c
// CHECK-NEXT:    %1 = fuser.add %acc, %a
// CHECK-NEXT:    fuser.output %0, %1 : !fuser.tensor<4xf32>, !fuser.tensor<4xf32> {alias_inputs = array<i64: -1, 1>}
// CHECK-NOT:     fuser.exp
