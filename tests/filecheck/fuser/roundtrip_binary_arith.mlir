// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Arithmetic binary ops (truediv and atan2 produce floats).

fuser.fusion @arith(%0: !fuser.tensor<4x8xf32>, %1: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
  %2 = fuser.add %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %3 = fuser.sub %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %4 = fuser.mul %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %5 = fuser.div %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %6 = fuser.truediv %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %7 = fuser.fmod %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %8 = fuser.remainder %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %9 = fuser.pow %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %10 = fuser.atan2 %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %11 = fuser.maximum %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %12 = fuser.minimum %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
}
fuser.fusion @arith_int(%0: !fuser.tensor<4xi32>, %1: !fuser.tensor<4xi32>) -> (!fuser.tensor<4xi32>, !fuser.tensor<4xf32>, !fuser.tensor<4xi32>) {
  %2 = fuser.div %0, %1 : (!fuser.tensor<4xi32>, !fuser.tensor<4xi32>) -> !fuser.tensor<4xi32>
  %3 = fuser.truediv %0, %1 : (!fuser.tensor<4xi32>, !fuser.tensor<4xi32>) -> !fuser.tensor<4xf32>
  %4 = fuser.remainder %0, %1 : (!fuser.tensor<4xi32>, !fuser.tensor<4xi32>) -> !fuser.tensor<4xi32>
  fuser.output %2, %3, %4 : !fuser.tensor<4xi32>, !fuser.tensor<4xf32>, !fuser.tensor<4xi32>
}

// CHECK-LABEL: fuser.fusion @arith(%0: !fuser.tensor<4x8xf32>, %1: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
// CHECK-NEXT:  %2 = fuser.add %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %3 = fuser.sub %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %4 = fuser.mul %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %5 = fuser.div %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %6 = fuser.truediv %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %7 = fuser.fmod %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %8 = fuser.remainder %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %9 = fuser.pow %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %10 = fuser.atan2 %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %11 = fuser.maximum %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %12 = fuser.minimum %0, %1 : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  fuser.output %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
// CHECK-LABEL: fuser.fusion @arith_int(%0: !fuser.tensor<4xi32>, %1: !fuser.tensor<4xi32>) -> (!fuser.tensor<4xi32>, !fuser.tensor<4xf32>, !fuser.tensor<4xi32>) {
// CHECK-NEXT:  %2 = fuser.div %0, %1 : (!fuser.tensor<4xi32>, !fuser.tensor<4xi32>) -> !fuser.tensor<4xi32>
// CHECK-NEXT:  %3 = fuser.truediv %0, %1 : (!fuser.tensor<4xi32>, !fuser.tensor<4xi32>) -> !fuser.tensor<4xf32>
// CHECK-NEXT:  %4 = fuser.remainder %0, %1 : (!fuser.tensor<4xi32>, !fuser.tensor<4xi32>) -> !fuser.tensor<4xi32>
// CHECK-NEXT:  fuser.output %2, %3, %4 : !fuser.tensor<4xi32>, !fuser.tensor<4xf32>, !fuser.tensor<4xi32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.add"
// GENERIC: "fuser.sub"
// GENERIC: "fuser.mul"
// GENERIC: "fuser.div"
// GENERIC: "fuser.truediv"
// GENERIC: "fuser.fmod"
// GENERIC: "fuser.remainder"
// GENERIC: "fuser.pow"
// GENERIC: "fuser.atan2"
// GENERIC: "fuser.maximum"
// GENERIC: "fuser.minimum"
// GENERIC: "fuser.output"
// GENERIC: "fuser.fusion"
// GENERIC: "fuser.div"
// GENERIC: "fuser.truediv"
// GENERIC: "fuser.remainder"
// GENERIC: "fuser.output"
