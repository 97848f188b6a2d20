// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// permute (negative dims allowed) and squeeze of extent-1 and symbolic axes.

fuser.fusion @permute_squeeze(%0: !fuser.tensor<64x12x128x64xf32>, %1: !fuser.tensor<1x4x1xf16>) -> (!fuser.tensor<64x128x12x64xf32>, !fuser.tensor<64x128x12x64xf32>, !fuser.tensor<4xf16>, !fuser.tensor<1x4xf16>) {
  %2 = fuser.permute %0 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %3 = fuser.permute %0 {dims = array<i64: 3, 2, 1, 0>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %4 = fuser.squeeze %1 {dims = array<i64: 0, 2>} : (!fuser.tensor<1x4x1xf16>) -> !fuser.tensor<4xf16>
  %5 = fuser.squeeze %1 {dims = array<i64: -1>} : (!fuser.tensor<1x4x1xf16>) -> !fuser.tensor<1x4xf16>
  fuser.output %2, %3, %4, %5 : !fuser.tensor<64x128x12x64xf32>, !fuser.tensor<64x128x12x64xf32>, !fuser.tensor<4xf16>, !fuser.tensor<1x4xf16>
}

// CHECK-LABEL: fuser.fusion @permute_squeeze(%0: !fuser.tensor<64x12x128x64xf32>, %1: !fuser.tensor<1x4x1xf16>) -> (!fuser.tensor<64x128x12x64xf32>, !fuser.tensor<64x128x12x64xf32>, !fuser.tensor<4xf16>, !fuser.tensor<1x4xf16>) {
// CHECK-NEXT:  %2 = fuser.permute %0 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
// CHECK-NEXT:  %3 = fuser.permute %0 {dims = array<i64: 3, 2, 1, 0>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
// CHECK-NEXT:  %4 = fuser.squeeze %1 {dims = array<i64: 0, 2>} : (!fuser.tensor<1x4x1xf16>) -> !fuser.tensor<4xf16>
// CHECK-NEXT:  %5 = fuser.squeeze %1 {dims = array<i64: -1>} : (!fuser.tensor<1x4x1xf16>) -> !fuser.tensor<1x4xf16>
// CHECK-NEXT:  fuser.output %2, %3, %4, %5 : !fuser.tensor<64x128x12x64xf32>, !fuser.tensor<64x128x12x64xf32>, !fuser.tensor<4xf16>, !fuser.tensor<1x4xf16>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.permute"
// GENERIC: "fuser.permute"
// GENERIC: "fuser.squeeze"
// GENERIC: "fuser.squeeze"
// GENERIC: "fuser.output"
