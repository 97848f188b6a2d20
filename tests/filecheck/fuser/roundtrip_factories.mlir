// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// full (static and symbolic shapes through size operands), iota (static and
// symbolic length) and size.

fuser.fusion @factories(%0: i64) -> (!fuser.tensor<2x3xf32>, !fuser.tensor<?x3xf32>, i64, !fuser.tensor<5xi64>, !fuser.tensor<?xi64>) {
  %1 = fuser.constant 0.000000e+00 : f32
  %2 = fuser.full %1 {shape = array<i64: 2, 3>} : f32 -> !fuser.tensor<2x3xf32>
  %3 = fuser.full %1 sizes(%0 : i64) {shape = array<i64: -1, 3>} : f32 -> !fuser.tensor<?x3xf32>
  %4 = fuser.size %3 {dim = 0 : i64} : (!fuser.tensor<?x3xf32>) -> i64
  %5 = fuser.constant 0 : i64
  %6 = fuser.constant 2 : i64
  %7 = fuser.constant 5 : i64
  %8 = fuser.iota %7, %5, %6 : (i64, i64, i64) -> !fuser.tensor<5xi64>
  %9 = fuser.iota %0, %5, %6 : (i64, i64, i64) -> !fuser.tensor<?xi64>
  fuser.output %2, %3, %4, %8, %9 : !fuser.tensor<2x3xf32>, !fuser.tensor<?x3xf32>, i64, !fuser.tensor<5xi64>, !fuser.tensor<?xi64>
}

// CHECK-LABEL: fuser.fusion @factories(%0: i64) -> (!fuser.tensor<2x3xf32>, !fuser.tensor<?x3xf32>, i64, !fuser.tensor<5xi64>, !fuser.tensor<?xi64>) {
// CHECK-NEXT:  %1 = fuser.constant 0.000000e+00 : f32
// CHECK-NEXT:  %2 = fuser.full %1 {shape = array<i64: 2, 3>} : f32 -> !fuser.tensor<2x3xf32>
// CHECK-NEXT:  %3 = fuser.full %1 sizes(%0 : i64) {shape = array<i64: -1, 3>} : f32 -> !fuser.tensor<?x3xf32>
// CHECK-NEXT:  %4 = fuser.size %3 {dim = 0 : i64} : (!fuser.tensor<?x3xf32>) -> i64
// CHECK-NEXT:  %5 = fuser.constant 0 : i64
// CHECK-NEXT:  %6 = fuser.constant 2 : i64
// CHECK-NEXT:  %7 = fuser.constant 5 : i64
// CHECK-NEXT:  %8 = fuser.iota %7, %5, %6 : (i64, i64, i64) -> !fuser.tensor<5xi64>
// CHECK-NEXT:  %9 = fuser.iota %0, %5, %6 : (i64, i64, i64) -> !fuser.tensor<?xi64>
// CHECK-NEXT:  fuser.output %2, %3, %4, %8, %9 : !fuser.tensor<2x3xf32>, !fuser.tensor<?x3xf32>, i64, !fuser.tensor<5xi64>, !fuser.tensor<?xi64>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.full"
// GENERIC: "fuser.full"
// GENERIC: "fuser.size"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.iota"
// GENERIC: "fuser.iota"
// GENERIC: "fuser.output"
