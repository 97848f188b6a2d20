// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// where, clamp, lerp, threshold and addcmul, with tensor and scalar operands.

fuser.fusion @ternary(%0: !fuser.tensor<4x8xi1>, %1: !fuser.tensor<4x8xf32>, %2: !fuser.tensor<8xf32>, %3: f64) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
  %4 = fuser.where %0, %1, %2 : (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<4x8xf32>
  %5 = fuser.where %0, %1, %3 : (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xf32>, f64) -> !fuser.tensor<4x8xf32>
  %6 = fuser.clamp %1, %3, %3 : (!fuser.tensor<4x8xf32>, f64, f64) -> !fuser.tensor<4x8xf32>
  %7 = fuser.lerp %1, %2, %3 : (!fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>, f64) -> !fuser.tensor<4x8xf32>
  %8 = fuser.threshold %1, %3, %3 : (!fuser.tensor<4x8xf32>, f64, f64) -> !fuser.tensor<4x8xf32>
  %9 = fuser.addcmul %1, %2, %2, %3 : (!fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>, !fuser.tensor<8xf32>, f64) -> !fuser.tensor<4x8xf32>
  fuser.output %4, %5, %6, %7, %8, %9 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
}

// CHECK-LABEL: fuser.fusion @ternary(%0: !fuser.tensor<4x8xi1>, %1: !fuser.tensor<4x8xf32>, %2: !fuser.tensor<8xf32>, %3: f64) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
// CHECK-NEXT:  %4 = fuser.where %0, %1, %2 : (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %5 = fuser.where %0, %1, %3 : (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xf32>, f64) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %6 = fuser.clamp %1, %3, %3 : (!fuser.tensor<4x8xf32>, f64, f64) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %7 = fuser.lerp %1, %2, %3 : (!fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>, f64) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %8 = fuser.threshold %1, %3, %3 : (!fuser.tensor<4x8xf32>, f64, f64) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %9 = fuser.addcmul %1, %2, %2, %3 : (!fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>, !fuser.tensor<8xf32>, f64) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  fuser.output %4, %5, %6, %7, %8, %9 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.where"
// GENERIC: "fuser.where"
// GENERIC: "fuser.clamp"
// GENERIC: "fuser.lerp"
// GENERIC: "fuser.threshold"
// GENERIC: "fuser.addcmul"
// GENERIC: "fuser.output"
