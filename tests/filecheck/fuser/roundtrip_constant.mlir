// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Scalar constants of every dtype.

fuser.fusion @constants() -> (i1, i32, i64, f16, bf16, f32, f64) {
  %0 = fuser.constant true
  %1 = fuser.constant 7 : i32
  %2 = fuser.constant -3 : i64
  %3 = fuser.constant 5.000000e-01 : f16
  %4 = fuser.constant 1.500000e+00 : bf16
  %5 = fuser.constant 2.250000e+00 : f32
  %6 = fuser.constant 1.000000e-05 : f64
  fuser.output %0, %1, %2, %3, %4, %5, %6 : i1, i32, i64, f16, bf16, f32, f64
}

// CHECK-LABEL: fuser.fusion @constants() -> (i1, i32, i64, f16, bf16, f32, f64) {
// CHECK-NEXT:  %0 = fuser.constant true
// CHECK-NEXT:  %1 = fuser.constant 7 : i32
// CHECK-NEXT:  %2 = fuser.constant -3 : i64
// CHECK-NEXT:  %3 = fuser.constant 5.000000e-01 : f16
// CHECK-NEXT:  %4 = fuser.constant 1.500000e+00 : bf16
// CHECK-NEXT:  %5 = fuser.constant 2.250000e+00 : f32
// CHECK-NEXT:  %6 = fuser.constant 1.000000e-05 : f64
// CHECK-NEXT:  fuser.output %0, %1, %2, %3, %4, %5, %6 : i1, i32, i64, f16, bf16, f32, f64

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.output"
