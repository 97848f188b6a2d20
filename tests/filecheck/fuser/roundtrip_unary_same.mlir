// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Unary ops that keep the operand's dtype, including set and segment_set.

fuser.fusion @unary_same(%0: !fuser.tensor<4x8xf16>) -> (!fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>) {
  %1 = fuser.abs %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %2 = fuser.neg %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %3 = fuser.relu %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %4 = fuser.ceil %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %5 = fuser.floor %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %6 = fuser.round %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %7 = fuser.trunc %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %8 = fuser.frac %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %9 = fuser.sign %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %10 = fuser.set %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  %11 = fuser.segment_set %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
  fuser.output %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>
}
fuser.fusion @unary_same_int(%0: !fuser.tensor<5xi64>) -> (!fuser.tensor<5xi64>, !fuser.tensor<5xi64>, !fuser.tensor<5xi64>) {
  %1 = fuser.abs %0 : (!fuser.tensor<5xi64>) -> !fuser.tensor<5xi64>
  %2 = fuser.neg %0 : (!fuser.tensor<5xi64>) -> !fuser.tensor<5xi64>
  %3 = fuser.sign %0 : (!fuser.tensor<5xi64>) -> !fuser.tensor<5xi64>
  fuser.output %1, %2, %3 : !fuser.tensor<5xi64>, !fuser.tensor<5xi64>, !fuser.tensor<5xi64>
}

// CHECK-LABEL: fuser.fusion @unary_same(%0: !fuser.tensor<4x8xf16>) -> (!fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>) {
// CHECK-NEXT:  %1 = fuser.abs %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %2 = fuser.neg %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %3 = fuser.relu %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %4 = fuser.ceil %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %5 = fuser.floor %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %6 = fuser.round %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %7 = fuser.trunc %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %8 = fuser.frac %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %9 = fuser.sign %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %10 = fuser.set %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  %11 = fuser.segment_set %0 : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf16>
// CHECK-NEXT:  fuser.output %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>, !fuser.tensor<4x8xf16>
// CHECK-LABEL: fuser.fusion @unary_same_int(%0: !fuser.tensor<5xi64>) -> (!fuser.tensor<5xi64>, !fuser.tensor<5xi64>, !fuser.tensor<5xi64>) {
// CHECK-NEXT:  %1 = fuser.abs %0 : (!fuser.tensor<5xi64>) -> !fuser.tensor<5xi64>
// CHECK-NEXT:  %2 = fuser.neg %0 : (!fuser.tensor<5xi64>) -> !fuser.tensor<5xi64>
// CHECK-NEXT:  %3 = fuser.sign %0 : (!fuser.tensor<5xi64>) -> !fuser.tensor<5xi64>
// CHECK-NEXT:  fuser.output %1, %2, %3 : !fuser.tensor<5xi64>, !fuser.tensor<5xi64>, !fuser.tensor<5xi64>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.abs"
// GENERIC: "fuser.neg"
// GENERIC: "fuser.relu"
// GENERIC: "fuser.ceil"
// GENERIC: "fuser.floor"
// GENERIC: "fuser.round"
// GENERIC: "fuser.trunc"
// GENERIC: "fuser.frac"
// GENERIC: "fuser.sign"
// GENERIC: "fuser.set"
// GENERIC: "fuser.segment_set"
// GENERIC: "fuser.output"
// GENERIC: "fuser.fusion"
// GENERIC: "fuser.abs"
// GENERIC: "fuser.neg"
// GENERIC: "fuser.sign"
// GENERIC: "fuser.output"
