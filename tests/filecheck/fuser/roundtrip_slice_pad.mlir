// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// slice (clamped like Python, strided) and pad (F.pad order, negative widths crop).

fuser.fusion @slice_pad(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<?x16xf32>) -> (!fuser.tensor<8x8xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x8xf32>, !fuser.tensor<8x19xf32>, !fuser.tensor<6x16xf32>) {
  %2 = fuser.slice %0 {starts = array<i64: 0, 4>, ends = array<i64: 8, 12>, strides = array<i64: 1, 1>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x8xf32>
  %3 = fuser.slice %0 {starts = array<i64: 1, 0>, ends = array<i64: 100, 16>, strides = array<i64: 2, 3>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<4x6xf32>
  %4 = fuser.slice %1 {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (!fuser.tensor<?x16xf32>) -> !fuser.tensor<?x8xf32>
  %5 = fuser.constant 0.000000e+00 : f32
  %6 = fuser.pad %0, %5 {widths = array<i64: 1, 2>} : (!fuser.tensor<8x16xf32>, f32) -> !fuser.tensor<8x19xf32>
  %7 = fuser.constant 1.000000e+00 : f64
  %8 = fuser.pad %0, %7 {widths = array<i64: 0, 0, -1, -1>} : (!fuser.tensor<8x16xf32>, f64) -> !fuser.tensor<6x16xf32>
  fuser.output %2, %3, %4, %6, %8 : !fuser.tensor<8x8xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x8xf32>, !fuser.tensor<8x19xf32>, !fuser.tensor<6x16xf32>
}

// CHECK-LABEL: fuser.fusion @slice_pad(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<?x16xf32>) -> (!fuser.tensor<8x8xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x8xf32>, !fuser.tensor<8x19xf32>, !fuser.tensor<6x16xf32>) {
// CHECK-NEXT:  %2 = fuser.slice %0 {starts = array<i64: 0, 4>, ends = array<i64: 8, 12>, strides = array<i64: 1, 1>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x8xf32>
// CHECK-NEXT:  %3 = fuser.slice %0 {starts = array<i64: 1, 0>, ends = array<i64: 100, 16>, strides = array<i64: 2, 3>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<4x6xf32>
// CHECK-NEXT:  %4 = fuser.slice %1 {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (!fuser.tensor<?x16xf32>) -> !fuser.tensor<?x8xf32>
// CHECK-NEXT:  %5 = fuser.constant 0.000000e+00 : f32
// CHECK-NEXT:  %6 = fuser.pad %0, %5 {widths = array<i64: 1, 2>} : (!fuser.tensor<8x16xf32>, f32) -> !fuser.tensor<8x19xf32>
// CHECK-NEXT:  %7 = fuser.constant 1.000000e+00 : f64
// CHECK-NEXT:  %8 = fuser.pad %0, %7 {widths = array<i64: 0, 0, -1, -1>} : (!fuser.tensor<8x16xf32>, f64) -> !fuser.tensor<6x16xf32>
// CHECK-NEXT:  fuser.output %2, %3, %4, %6, %8 : !fuser.tensor<8x8xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x8xf32>, !fuser.tensor<8x19xf32>, !fuser.tensor<6x16xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.slice"
// GENERIC: "fuser.slice"
// GENERIC: "fuser.slice"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.pad"
// GENERIC: "fuser.constant"
// GENERIC: "fuser.pad"
// GENERIC: "fuser.output"
