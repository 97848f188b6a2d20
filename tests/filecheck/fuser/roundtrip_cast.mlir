// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// cast between every dtype, on tensors and scalars.

fuser.fusion @cast(%0: !fuser.tensor<4x8xf32>, %1: i64) -> (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xi64>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xbf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf64>, f16) {
  %2 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
  %3 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi32>
  %4 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi64>
  %5 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16>
  %6 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xbf16>
  %7 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %8 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf64>
  %9 = fuser.cast %1 : (i64) -> f16
  fuser.output %2, %3, %4, %5, %6, %7, %8, %9 : !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xi64>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xbf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf64>, f16
}

// CHECK-LABEL: fuser.fusion @cast(%0: !fuser.tensor<4x8xf32>, %1: i64) -> (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xi64>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xbf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf64>, f16) {
// CHECK-NEXT:  %2 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %3 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi32>
// CHECK-NEXT:  %4 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xi64>
// CHECK-NEXT:  %5 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %6 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xbf16>
// CHECK-NEXT:  %7 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %8 = fuser.cast %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf64>
// CHECK-NEXT:  %9 = fuser.cast %1 : (i64) -> f16
// CHECK-NEXT:  fuser.output %2, %3, %4, %5, %6, %7, %8, %9 : !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xi64>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xbf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf64>, f16

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.cast"
// GENERIC: "fuser.output"
