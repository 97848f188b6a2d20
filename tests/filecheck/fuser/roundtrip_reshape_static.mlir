// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Static reshapes carry their keep/merge/split view (seed 003):
// [2,10,40] -> [2,10,2,20] is keep, keep, split; merges, a merge_split, squeeze and
// broadcast steps.

fuser.fusion @reshape_static(%0: !fuser.tensor<2x10x40xf32>, %1: !fuser.tensor<6x4xf32>, %2: !fuser.tensor<3x1x5xf32>) -> (!fuser.tensor<2x10x2x20xf32>, !fuser.tensor<800xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<3x5xf32>, !fuser.tensor<3x5x1xf32>, !fuser.tensor<20x40xf32>) {
  %3 = fuser.reshape %0 {new_shape = array<i64: 2, 10, 2, 20>, view = #fuser.view<keep, keep, split [2, 20]>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
  %4 = fuser.reshape %0 {new_shape = array<i64: 800>, view = #fuser.view<merge 3>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<800xf32>
  %5 = fuser.reshape %1 {new_shape = array<i64: 4, 6>, view = #fuser.view<merge_split 2 [4, 6]>} : !fuser.tensor<6x4xf32> -> !fuser.tensor<4x6xf32>
  %6 = fuser.reshape %2 {new_shape = array<i64: 3, 5>, view = #fuser.view<keep, squeeze, keep>} : !fuser.tensor<3x1x5xf32> -> !fuser.tensor<3x5xf32>
  %7 = fuser.reshape %2 {new_shape = array<i64: 3, 5, 1>, view = #fuser.view<keep, squeeze, keep, broadcast>} : !fuser.tensor<3x1x5xf32> -> !fuser.tensor<3x5x1xf32>
  %8 = fuser.reshape %0 {new_shape = array<i64: 20, 40>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<20x40xf32>
  fuser.output %3, %4, %5, %6, %7, %8 : !fuser.tensor<2x10x2x20xf32>, !fuser.tensor<800xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<3x5xf32>, !fuser.tensor<3x5x1xf32>, !fuser.tensor<20x40xf32>
}

// CHECK-LABEL: fuser.fusion @reshape_static(%0: !fuser.tensor<2x10x40xf32>, %1: !fuser.tensor<6x4xf32>, %2: !fuser.tensor<3x1x5xf32>) -> (!fuser.tensor<2x10x2x20xf32>, !fuser.tensor<800xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<3x5xf32>, !fuser.tensor<3x5x1xf32>, !fuser.tensor<20x40xf32>) {
// CHECK-NEXT:  %3 = fuser.reshape %0 {new_shape = array<i64: 2, 10, 2, 20>, view = #fuser.view<keep, keep, split [2, 20]>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
// CHECK-NEXT:  %4 = fuser.reshape %0 {new_shape = array<i64: 800>, view = #fuser.view<merge 3>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<800xf32>
// CHECK-NEXT:  %5 = fuser.reshape %1 {new_shape = array<i64: 4, 6>, view = #fuser.view<merge_split 2 [4, 6]>} : !fuser.tensor<6x4xf32> -> !fuser.tensor<4x6xf32>
// CHECK-NEXT:  %6 = fuser.reshape %2 {new_shape = array<i64: 3, 5>, view = #fuser.view<keep, squeeze, keep>} : !fuser.tensor<3x1x5xf32> -> !fuser.tensor<3x5xf32>
// CHECK-NEXT:  %7 = fuser.reshape %2 {new_shape = array<i64: 3, 5, 1>, view = #fuser.view<keep, squeeze, keep, broadcast>} : !fuser.tensor<3x1x5xf32> -> !fuser.tensor<3x5x1xf32>
// CHECK-NEXT:  %8 = fuser.reshape %0 {new_shape = array<i64: 20, 40>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<20x40xf32>
// CHECK-NEXT:  fuser.output %3, %4, %5, %6, %7, %8 : !fuser.tensor<2x10x2x20xf32>, !fuser.tensor<800xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<3x5xf32>, !fuser.tensor<3x5x1xf32>, !fuser.tensor<20x40xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.output"
