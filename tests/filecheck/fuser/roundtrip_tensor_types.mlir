// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The tensor type: rank 0, symbolic extents, zero extents, every element type,
// contiguity (none for broadcast axes) and stride_order on fusion inputs.

fuser.fusion @types(%0: !fuser.tensor<f32>, %1: !fuser.tensor<?x?x1xbf16>, %2: !fuser.tensor<0x4xi32>, %3: !fuser.tensor<4x8xf32, contiguity=[false, true]>, %4: !fuser.tensor<4x1x8xf16, contiguity=[true, none, true]>, %5: !fuser.tensor<4x8xf64, stride_order=[0, 1]>, %6: !fuser.tensor<2x3xi1, contiguity=[true, true], stride_order=[1, 0]>) -> (!fuser.tensor<f32>, !fuser.tensor<?x?x1xbf16>, !fuser.tensor<0x4xi32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x1x8xf16>, !fuser.tensor<4x8xf64>, !fuser.tensor<2x3xi1>) {
  %7 = fuser.set %0 : (!fuser.tensor<f32>) -> !fuser.tensor<f32>
  %8 = fuser.set %1 : (!fuser.tensor<?x?x1xbf16>) -> !fuser.tensor<?x?x1xbf16>
  %9 = fuser.set %2 : (!fuser.tensor<0x4xi32>) -> !fuser.tensor<0x4xi32>
  %10 = fuser.set %3 : (!fuser.tensor<4x8xf32, contiguity=[false, true]>) -> !fuser.tensor<4x8xf32>
  %11 = fuser.set %4 : (!fuser.tensor<4x1x8xf16, contiguity=[true, none, true]>) -> !fuser.tensor<4x1x8xf16>
  %12 = fuser.set %5 : (!fuser.tensor<4x8xf64, stride_order=[0, 1]>) -> !fuser.tensor<4x8xf64>
  %13 = fuser.set %6 : (!fuser.tensor<2x3xi1, contiguity=[true, true], stride_order=[1, 0]>) -> !fuser.tensor<2x3xi1>
  fuser.output %7, %8, %9, %10, %11, %12, %13 : !fuser.tensor<f32>, !fuser.tensor<?x?x1xbf16>, !fuser.tensor<0x4xi32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x1x8xf16>, !fuser.tensor<4x8xf64>, !fuser.tensor<2x3xi1>
}

// CHECK-LABEL: fuser.fusion @types(%0: !fuser.tensor<f32>, %1: !fuser.tensor<?x?x1xbf16>, %2: !fuser.tensor<0x4xi32>, %3: !fuser.tensor<4x8xf32, contiguity=[false, true]>, %4: !fuser.tensor<4x1x8xf16, contiguity=[true, none, true]>, %5: !fuser.tensor<4x8xf64, stride_order=[0, 1]>, %6: !fuser.tensor<2x3xi1, contiguity=[true, true], stride_order=[1, 0]>) -> (!fuser.tensor<f32>, !fuser.tensor<?x?x1xbf16>, !fuser.tensor<0x4xi32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x1x8xf16>, !fuser.tensor<4x8xf64>, !fuser.tensor<2x3xi1>) {
// CHECK-NEXT:  %7 = fuser.set %0 : (!fuser.tensor<f32>) -> !fuser.tensor<f32>
// CHECK-NEXT:  %8 = fuser.set %1 : (!fuser.tensor<?x?x1xbf16>) -> !fuser.tensor<?x?x1xbf16>
// CHECK-NEXT:  %9 = fuser.set %2 : (!fuser.tensor<0x4xi32>) -> !fuser.tensor<0x4xi32>
// CHECK-NEXT:  %10 = fuser.set %3 : (!fuser.tensor<4x8xf32, contiguity=[false, true]>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %11 = fuser.set %4 : (!fuser.tensor<4x1x8xf16, contiguity=[true, none, true]>) -> !fuser.tensor<4x1x8xf16>
// CHECK-NEXT:  %12 = fuser.set %5 : (!fuser.tensor<4x8xf64, stride_order=[0, 1]>) -> !fuser.tensor<4x8xf64>
// CHECK-NEXT:  %13 = fuser.set %6 : (!fuser.tensor<2x3xi1, contiguity=[true, true], stride_order=[1, 0]>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  fuser.output %7, %8, %9, %10, %11, %12, %13 : !fuser.tensor<f32>, !fuser.tensor<?x?x1xbf16>, !fuser.tensor<0x4xi32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x1x8xf16>, !fuser.tensor<4x8xf64>, !fuser.tensor<2x3xi1>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.set"
// GENERIC: "fuser.set"
// GENERIC: "fuser.set"
// GENERIC: "fuser.set"
// GENERIC: "fuser.set"
// GENERIC: "fuser.set"
// GENERIC: "fuser.set"
// GENERIC: "fuser.output"
