// RUN: fuser-opt %s --canonicalize | filecheck %s

// reshape of reshape is one reshape with a recomputed view; permute of permute is
// one permute; set of set is one set; a reshape chain that comes back is nothing.

fuser.fusion @chains(%a : !fuser.tensor<2x10x40xf32>, %b : !fuser.tensor<2x3x4x5xf32>) -> (!fuser.tensor<20x2x20xf32>, !fuser.tensor<5x2x4x3xf32>, !fuser.tensor<2x3x4x5xf32>, !fuser.tensor<2x10x40xf32>) {
  %0 = fuser.reshape %a {new_shape = array<i64: 800>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<800xf32>
  %1 = fuser.reshape %0 {new_shape = array<i64: 20, 2, 20>} : !fuser.tensor<800xf32> -> !fuser.tensor<20x2x20xf32>
  %2 = fuser.permute %b {dims = array<i64: 3, 2, 1, 0>} : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<5x4x3x2xf32>
  %3 = fuser.permute %2 {dims = array<i64: 0, 3, 1, 2>} : (!fuser.tensor<5x4x3x2xf32>) -> !fuser.tensor<5x2x4x3xf32>
  %4 = fuser.set %b : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<2x3x4x5xf32>
  %5 = fuser.set %4 : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<2x3x4x5xf32>
  %6 = fuser.set %5 : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<2x3x4x5xf32>
  %7 = fuser.reshape %a {new_shape = array<i64: 20, 40>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<20x40xf32>
  %8 = fuser.reshape %7 {new_shape = array<i64: 2, 10, 40>} : !fuser.tensor<20x40xf32> -> !fuser.tensor<2x10x40xf32>
  fuser.output %1, %3, %6, %8 : !fuser.tensor<20x2x20xf32>, !fuser.tensor<5x2x4x3xf32>, !fuser.tensor<2x3x4x5xf32>, !fuser.tensor<2x10x40xf32>
}

// CHECK-LABEL: fuser.fusion @chains
// CHECK-NEXT:    %[[R:.*]] = fuser.reshape %a {new_shape = array<i64: 20, 2, 20>, view = #fuser.view<merge 2, split [2, 20]>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<20x2x20xf32>
// CHECK-NEXT:    %[[P:.*]] = fuser.permute %b {dims = array<i64: 3, 0, 2, 1>} : (!fuser.tensor<2x3x4x5xf32>) -> !fuser.tensor<5x2x4x3xf32>
// CHECK-NEXT:    %[[S:.*]] = fuser.set %b
// CHECK-NEXT:    fuser.output %[[R]], %[[P]], %[[S]], %a :
