// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Bitwise ops and shifts on integers and bools.

fuser.fusion @bitwise(%0: !fuser.tensor<8xi64>, %1: !fuser.tensor<8xi64>) -> (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>) {
  %2 = fuser.bitwise_and %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  %3 = fuser.bitwise_or %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  %4 = fuser.bitwise_xor %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  %5 = fuser.bitwise_left_shift %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  %6 = fuser.bitwise_right_shift %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
  fuser.output %2, %3, %4, %5, %6 : !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>
}
fuser.fusion @bitwise_bool(%0: !fuser.tensor<8xi1>, %1: !fuser.tensor<8xi1>) -> !fuser.tensor<8xi1> {
  %2 = fuser.bitwise_xor %0, %1 : (!fuser.tensor<8xi1>, !fuser.tensor<8xi1>) -> !fuser.tensor<8xi1>
  fuser.output %2 : !fuser.tensor<8xi1>
}

// CHECK-LABEL: fuser.fusion @bitwise(%0: !fuser.tensor<8xi64>, %1: !fuser.tensor<8xi64>) -> (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>) {
// CHECK-NEXT:  %2 = fuser.bitwise_and %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  %3 = fuser.bitwise_or %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  %4 = fuser.bitwise_xor %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  %5 = fuser.bitwise_left_shift %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  %6 = fuser.bitwise_right_shift %0, %1 : (!fuser.tensor<8xi64>, !fuser.tensor<8xi64>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:  fuser.output %2, %3, %4, %5, %6 : !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>, !fuser.tensor<8xi64>
// CHECK-LABEL: fuser.fusion @bitwise_bool(%0: !fuser.tensor<8xi1>, %1: !fuser.tensor<8xi1>) -> !fuser.tensor<8xi1> {
// CHECK-NEXT:  %2 = fuser.bitwise_xor %0, %1 : (!fuser.tensor<8xi1>, !fuser.tensor<8xi1>) -> !fuser.tensor<8xi1>
// CHECK-NEXT:  fuser.output %2 : !fuser.tensor<8xi1>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.bitwise_and"
// GENERIC: "fuser.bitwise_or"
// GENERIC: "fuser.bitwise_xor"
// GENERIC: "fuser.bitwise_left_shift"
// GENERIC: "fuser.bitwise_right_shift"
// GENERIC: "fuser.output"
// GENERIC: "fuser.fusion"
// GENERIC: "fuser.bitwise_xor"
// GENERIC: "fuser.output"
