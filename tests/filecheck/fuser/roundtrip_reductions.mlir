// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// sum/prod/max/min with dims, keepdim and an explicit dtype; int sums give i64.

fuser.fusion @reductions(%0: !fuser.tensor<4x8x16xf32>) -> (!fuser.tensor<4x16xf32>, !fuser.tensor<1x8x1xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<8x16xf32>, !fuser.tensor<4xf32>, !fuser.tensor<4x8xf64>) {
  %1 = fuser.sum %0 {dims = array<i64: 1>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4x16xf32>
  %2 = fuser.sum %0 {dims = array<i64: 0, 2>, keepdim = true} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<1x8x1xf32>
  %3 = fuser.prod %0 {dims = array<i64: -1>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4x8xf32>
  %4 = fuser.max %0 {dims = array<i64: 0>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<8x16xf32>
  %5 = fuser.min %0 {dims = array<i64: 1, 2>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4xf32>
  %6 = fuser.sum %0 {dims = array<i64: 2>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4x8xf64>
  fuser.output %1, %2, %3, %4, %5, %6 : !fuser.tensor<4x16xf32>, !fuser.tensor<1x8x1xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<8x16xf32>, !fuser.tensor<4xf32>, !fuser.tensor<4x8xf64>
}
fuser.fusion @int_sum(%0: !fuser.tensor<4x8xi32>) -> (!fuser.tensor<4xi64>, !fuser.tensor<4xi32>) {
  %1 = fuser.sum %0 {dims = array<i64: 1>} : (!fuser.tensor<4x8xi32>) -> !fuser.tensor<4xi64>
  %2 = fuser.max %0 {dims = array<i64: 1>} : (!fuser.tensor<4x8xi32>) -> !fuser.tensor<4xi32>
  fuser.output %1, %2 : !fuser.tensor<4xi64>, !fuser.tensor<4xi32>
}

// CHECK-LABEL: fuser.fusion @reductions(%0: !fuser.tensor<4x8x16xf32>) -> (!fuser.tensor<4x16xf32>, !fuser.tensor<1x8x1xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<8x16xf32>, !fuser.tensor<4xf32>, !fuser.tensor<4x8xf64>) {
// CHECK-NEXT:  %1 = fuser.sum %0 {dims = array<i64: 1>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4x16xf32>
// CHECK-NEXT:  %2 = fuser.sum %0 {dims = array<i64: 0, 2>, keepdim = true} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<1x8x1xf32>
// CHECK-NEXT:  %3 = fuser.prod %0 {dims = array<i64: -1>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %4 = fuser.max %0 {dims = array<i64: 0>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:  %5 = fuser.min %0 {dims = array<i64: 1, 2>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4xf32>
// CHECK-NEXT:  %6 = fuser.sum %0 {dims = array<i64: 2>} : (!fuser.tensor<4x8x16xf32>) -> !fuser.tensor<4x8xf64>
// CHECK-NEXT:  fuser.output %1, %2, %3, %4, %5, %6 : !fuser.tensor<4x16xf32>, !fuser.tensor<1x8x1xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<8x16xf32>, !fuser.tensor<4xf32>, !fuser.tensor<4x8xf64>
// CHECK-LABEL: fuser.fusion @int_sum(%0: !fuser.tensor<4x8xi32>) -> (!fuser.tensor<4xi64>, !fuser.tensor<4xi32>) {
// CHECK-NEXT:  %1 = fuser.sum %0 {dims = array<i64: 1>} : (!fuser.tensor<4x8xi32>) -> !fuser.tensor<4xi64>
// CHECK-NEXT:  %2 = fuser.max %0 {dims = array<i64: 1>} : (!fuser.tensor<4x8xi32>) -> !fuser.tensor<4xi32>
// CHECK-NEXT:  fuser.output %1, %2 : !fuser.tensor<4xi64>, !fuser.tensor<4xi32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.sum"
// GENERIC: "fuser.sum"
// GENERIC: "fuser.prod"
// GENERIC: "fuser.max"
// GENERIC: "fuser.min"
// GENERIC: "fuser.sum"
// GENERIC: "fuser.output"
// GENERIC: "fuser.fusion"
// GENERIC: "fuser.sum"
// GENERIC: "fuser.max"
// GENERIC: "fuser.output"
