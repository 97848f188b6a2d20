// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Comparisons and logical ops produce i1.

fuser.fusion @compare(%0: !fuser.tensor<4x8xf32>, %1: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>) {
  %2 = fuser.eq %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %3 = fuser.ne %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %4 = fuser.lt %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %5 = fuser.le %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %6 = fuser.gt %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %7 = fuser.ge %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %8 = fuser.logical_and %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %9 = fuser.logical_or %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  fuser.output %2, %3, %4, %5, %6, %7, %8, %9 : !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>
}

// CHECK-LABEL: fuser.fusion @compare(%0: !fuser.tensor<4x8xf32>, %1: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>) {
// CHECK-NEXT:  %2 = fuser.eq %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %3 = fuser.ne %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %4 = fuser.lt %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %5 = fuser.le %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %6 = fuser.gt %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %7 = fuser.ge %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %8 = fuser.logical_and %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %9 = fuser.logical_or %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  fuser.output %2, %3, %4, %5, %6, %7, %8, %9 : !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi1>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.eq"
// GENERIC: "fuser.ne"
// GENERIC: "fuser.lt"
// GENERIC: "fuser.le"
// GENERIC: "fuser.gt"
// GENERIC: "fuser.ge"
// GENERIC: "fuser.logical_and"
// GENERIC: "fuser.logical_or"
// GENERIC: "fuser.output"
