// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// nvFuser's logical_right_shift and gcd (integers) and nextafter (float32/float64).

fuser.fusion @ints(%0: !fuser.tensor<8xi32>, %1: !fuser.tensor<8xi64>) -> (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) {
  %2 = fuser.logical_right_shift %0, %1 : (!fuser.tensor<8xi32>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  %3 = fuser.gcd %0, %1 : (!fuser.tensor<8xi32>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  fuser.output %2, %3 : !fuser.tensor<8xi64>, !fuser.tensor<8xi64>
}
fuser.fusion @floats(%0: !fuser.tensor<4xf32>, %1: !fuser.tensor<4xf64>) -> !fuser.tensor<4xf64> {
  %2 = fuser.nextafter %0, %1 : (!fuser.tensor<4xf32>, !fuser.tensor<4xf64>) -> !fuser.tensor<4xf64>
  fuser.output %2 : !fuser.tensor<4xf64>
}

// CHECK-LABEL: fuser.fusion @ints(%0: !fuser.tensor<8xi32>, %1: !fuser.tensor<8xi64>) -> (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) {
// CHECK-NEXT:  %2 = fuser.logical_right_shift %0, %1 : (!fuser.tensor<8xi32>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  %3 = fuser.gcd %0, %1 : (!fuser.tensor<8xi32>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  fuser.output %2, %3 : !fuser.tensor<8xi64>, !fuser.tensor<8xi64>
// CHECK-LABEL: fuser.fusion @floats(%0: !fuser.tensor<4xf32>, %1: !fuser.tensor<4xf64>) -> !fuser.tensor<4xf64> {
// CHECK-NEXT:  %2 = fuser.nextafter %0, %1 : (!fuser.tensor<4xf32>, !fuser.tensor<4xf64>) -> !fuser.tensor<4xf64>
// CHECK-NEXT:  fuser.output %2 : !fuser.tensor<4xf64>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.logical_right_shift"
// GENERIC: "fuser.gcd"
// GENERIC: "fuser.output"
// GENERIC: "fuser.fusion"
// GENERIC: "fuser.nextafter"
// GENERIC: "fuser.output"
