// RUN: fuser-opt %s --canonicalize | filecheck %s

// Identity views and casts fold to their input: reshape/expand/broadcast_in_dim to
// the same shape, identity permute, squeeze and broadcast of no axis, a full slice,
// a zero pad, a cast to the same dtype.

fuser.fusion @identities(%a : !fuser.tensor<4x8xf32>, %z : f32) -> !fuser.tensor<4x8xf32> {
  %0 = fuser.reshape %a {new_shape = array<i64: 4, 8>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
  %1 = fuser.permute %0 {dims = array<i64: 0, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %2 = fuser.cast %1 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %3 = fuser.expand %2 {shape = array<i64: 4, 8>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
  %4 = fuser.squeeze %3 {dims = array<i64>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %5 = fuser.broadcast %4 {is_broadcast_dim = array<i1: false, false>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %6 = fuser.broadcast_in_dim %5 {shape = array<i64: 4, 8>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
  %7 = fuser.slice %6 {starts = array<i64: 0, 0>, ends = array<i64: 4, 100>, strides = array<i64: 1, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %8 = fuser.pad %7, %z {widths = array<i64: 0, 0>} : (!fuser.tensor<4x8xf32>, f32) -> !fuser.tensor<4x8xf32>
  fuser.output %8 : !fuser.tensor<4x8xf32>
}

// CHECK-LABEL: fuser.fusion @identities
// CHECK-NEXT:    fuser.output %a : !fuser.tensor<4x8xf32>

// Not identities: a real permute, a strided slice, a real pad, and a reshape whose
// extents are symbolic (its sizes are only known at run time) all stay.

fuser.fusion @not_identities(%a : !fuser.tensor<4x4xf32>, %d : !fuser.tensor<?x4xf32>, %n : i64, %z : f32) -> (!fuser.tensor<4x4xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x4xf32>) {
  %0 = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<4x4xf32>) -> !fuser.tensor<4x4xf32>
  %1 = fuser.slice %a {starts = array<i64: 0, 0>, ends = array<i64: 4, 4>, strides = array<i64: 2, 1>} : (!fuser.tensor<4x4xf32>) -> !fuser.tensor<2x4xf32>
  %2 = fuser.pad %a, %z {widths = array<i64: 1, 1>} : (!fuser.tensor<4x4xf32>, f32) -> !fuser.tensor<4x6xf32>
  %3 = fuser.reshape %d sizes(%n : i64) {new_shape = array<i64: -1, 4>} : !fuser.tensor<?x4xf32> -> !fuser.tensor<?x4xf32>
  fuser.output %0, %1, %2, %3 : !fuser.tensor<4x4xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<4x6xf32>, !fuser.tensor<?x4xf32>
}

// CHECK-LABEL: fuser.fusion @not_identities
// CHECK-NEXT:    fuser.permute
// CHECK-NEXT:    fuser.slice
// CHECK-NEXT:    fuser.pad
// CHECK-NEXT:    fuser.reshape
// CHECK-NEXT:    fuser.output
