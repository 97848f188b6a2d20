// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// dynamic_slice and dynamic_pad: bounds and widths that are run-time integer scalars
// (the frontend's slice/pad with define_vector inputs before concretization). Every
// sliced axis and every padded axis is symbolic; an axis without a pad pair keeps
// its extent.

fuser.fusion @dynamic_slice_pad(%0: !fuser.tensor<8x16xf32>, %1: i64, %2: i64, %3: i32) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<8x?xf32>, !fuser.tensor<?x?xf32>) {
  %4 = fuser.constant 0 : i64
  %5 = fuser.dynamic_slice %0 starts(%4, %1 : i64, i64) ends(%2, %3 : i64, i32) : !fuser.tensor<8x16xf32> -> !fuser.tensor<?x?xf32>
  %6 = fuser.constant 0.000000e+00 : f32
  %7 = fuser.dynamic_pad %0, %6 widths(%1, %2) : (!fuser.tensor<8x16xf32>, f32, i64, i64) -> !fuser.tensor<8x?xf32>
  %8 = fuser.dynamic_pad %0, %6 widths(%1, %4, %3, %1) : (!fuser.tensor<8x16xf32>, f32, i64, i64, i32, i64) -> !fuser.tensor<?x?xf32>
  fuser.output %5, %7, %8 : !fuser.tensor<?x?xf32>, !fuser.tensor<8x?xf32>, !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: fuser.fusion @dynamic_slice_pad(%0: !fuser.tensor<8x16xf32>, %1: i64, %2: i64, %3: i32) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<8x?xf32>, !fuser.tensor<?x?xf32>) {
// CHECK-NEXT:  %4 = fuser.constant 0 : i64
// CHECK-NEXT:  %5 = fuser.dynamic_slice %0 starts(%4, %1 : i64, i64) ends(%2, %3 : i64, i32) : !fuser.tensor<8x16xf32> -> !fuser.tensor<?x?xf32>
// CHECK-NEXT:  %6 = fuser.constant 0.000000e+00 : f32
// CHECK-NEXT:  %7 = fuser.dynamic_pad %0, %6 widths(%1, %2) : (!fuser.tensor<8x16xf32>, f32, i64, i64) -> !fuser.tensor<8x?xf32>
// CHECK-NEXT:  %8 = fuser.dynamic_pad %0, %6 widths(%1, %4, %3, %1) : (!fuser.tensor<8x16xf32>, f32, i64, i64, i32, i64) -> !fuser.tensor<?x?xf32>
// CHECK-NEXT:  fuser.output %5, %7, %8 : !fuser.tensor<?x?xf32>, !fuser.tensor<8x?xf32>, !fuser.tensor<?x?xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.dynamic_slice"
// GENERIC-SAME: operandSegmentSizes = array<i32: 1, 2, 2>
// GENERIC: "fuser.dynamic_pad"
// GENERIC: "fuser.dynamic_pad"
// GENERIC: "fuser.output"
