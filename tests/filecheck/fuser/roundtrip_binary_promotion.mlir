// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Broadcasting and torch type promotion: scalars are weak (f16 tensor * f64
// scalar is f16), an int tensor with a float scalar gives f32, f16 with bf16 gives f32,
// 4x1 and 1x8 broadcast to 4x8, symbolic extents broadcast against 1.

fuser.fusion @promotion(%0: !fuser.tensor<4x1xf16>, %1: !fuser.tensor<1x8xbf16>, %2: !fuser.tensor<4x8xi32>, %3: f64, %4: !fuser.tensor<?x8xf32>) -> (!fuser.tensor<4x1xf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xf32>) {
  %5 = fuser.mul %0, %3 : (!fuser.tensor<4x1xf16>, f64) -> !fuser.tensor<4x1xf16>
  %6 = fuser.add %0, %1 : (!fuser.tensor<4x1xf16>, !fuser.tensor<1x8xbf16>) -> !fuser.tensor<4x8xf32>
  %7 = fuser.mul %2, %3 : (!fuser.tensor<4x8xi32>, f64) -> !fuser.tensor<4x8xf32>
  %8 = fuser.add %2, %2 : (!fuser.tensor<4x8xi32>, !fuser.tensor<4x8xi32>) -> !fuser.tensor<4x8xi32>
  %9 = fuser.sub %4, %0 : (!fuser.tensor<?x8xf32>, !fuser.tensor<4x1xf16>) -> !fuser.tensor<4x8xf32>
  fuser.output %5, %6, %7, %8, %9 : !fuser.tensor<4x1xf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xf32>
}

// CHECK-LABEL: fuser.fusion @promotion(%0: !fuser.tensor<4x1xf16>, %1: !fuser.tensor<1x8xbf16>, %2: !fuser.tensor<4x8xi32>, %3: f64, %4: !fuser.tensor<?x8xf32>) -> (!fuser.tensor<4x1xf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xf32>) {
// CHECK-NEXT:  %5 = fuser.mul %0, %3 : (!fuser.tensor<4x1xf16>, f64) -> !fuser.tensor<4x1xf16>
// CHECK-NEXT:  %6 = fuser.add %0, %1 : (!fuser.tensor<4x1xf16>, !fuser.tensor<1x8xbf16>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %7 = fuser.mul %2, %3 : (!fuser.tensor<4x8xi32>, f64) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %8 = fuser.add %2, %2 : (!fuser.tensor<4x8xi32>, !fuser.tensor<4x8xi32>) -> !fuser.tensor<4x8xi32>
// CHECK-NEXT:  %9 = fuser.sub %4, %0 : (!fuser.tensor<?x8xf32>, !fuser.tensor<4x1xf16>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  fuser.output %5, %6, %7, %8, %9 : !fuser.tensor<4x1xf16>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xi32>, !fuser.tensor<4x8xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.mul"
// GENERIC: "fuser.add"
// GENERIC: "fuser.mul"
// GENERIC: "fuser.add"
// GENERIC: "fuser.sub"
// GENERIC: "fuser.output"
