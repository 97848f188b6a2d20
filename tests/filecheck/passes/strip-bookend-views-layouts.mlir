// RUN: fuser-opt %s --strip-bookend-views | filecheck %s

// The layout rules of strip-bookend-views, one fusion each:
// * an output-end permute returned directly becomes a host view (the caller
//   gets a strided view, as torch's eager permute);
// * an output-end permute consumed by a reshape stays in the kernel (the host
//   reshape of a strided view would need a copy), and so does the reshape of it;
// * an input-end slice becomes a host view; the kernel input gets the slice's
//   contiguity; an output-end set of a computed value is dropped;
// * expand (stride 0), a reshape of a non-row-major input and the set of an
//   input (a real copy) stay in the kernel.

fuser.fusion @permute_out(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32> {
  %e = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %p = fuser.permute %e {dims = array<i64: 1, 0>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32>
  fuser.output %p : !fuser.tensor<8x4xf32>
}
fuser.fusion @permute_reshape_out(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<32xf32> {
  %e = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %p = fuser.permute %e {dims = array<i64: 1, 0>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32>
  %r = fuser.reshape %p {new_shape = array<i64: 32>} : !fuser.tensor<8x4xf32> -> !fuser.tensor<32xf32>
  fuser.output %r : !fuser.tensor<32xf32>
}
fuser.fusion @slice_in_set_out(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x6xf32> {
  %s = fuser.slice %x {starts = array<i64: 0, 2>, ends = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x6xf32>
  %n = fuser.neg %s : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<4x6xf32>
  %c = fuser.set %n : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<4x6xf32>
  fuser.output %c : !fuser.tensor<4x6xf32>
}
fuser.fusion @kept(%x : !fuser.tensor<4x1xf32>, %y : !fuser.tensor<8x4xf32, stride_order=[0, 1]>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<32xf32>, !fuser.tensor<8x4xf32>) {
  %e = fuser.expand %x {shape = array<i64: 4, 8>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x8xf32>
  %a = fuser.abs %e : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %r = fuser.reshape %y {new_shape = array<i64: 32>} : !fuser.tensor<8x4xf32, stride_order=[0, 1]> -> !fuser.tensor<32xf32>
  %c = fuser.set %y : (!fuser.tensor<8x4xf32, stride_order=[0, 1]>) -> !fuser.tensor<8x4xf32>
  fuser.output %a, %r, %c : !fuser.tensor<4x8xf32>, !fuser.tensor<32xf32>, !fuser.tensor<8x4xf32>
}

// CHECK-LABEL: fuser.fusion @permute_out(%x: !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
// CHECK-NEXT:    %e = fuser.exp %x
// CHECK-NEXT:    fuser.output %e : !fuser.tensor<4x8xf32>
// CHECK-LABEL: fuser.fusion @permute_reshape_out(%x: !fuser.tensor<4x8xf32>) -> !fuser.tensor<32xf32> {
// CHECK-NEXT:    %e = fuser.exp %x
// CHECK-NEXT:    %p = fuser.permute %e
// CHECK-NEXT:    %r = fuser.reshape %p
// CHECK-NEXT:    fuser.output %r : !fuser.tensor<32xf32>
// CHECK-LABEL: fuser.fusion @slice_in_set_out(%s: !fuser.tensor<4x6xf32, contiguity=[false, true]>) -> !fuser.tensor<4x6xf32> {
// CHECK-NEXT:    %n = fuser.neg %s
// CHECK-NEXT:    fuser.output %n : !fuser.tensor<4x6xf32>
// CHECK-LABEL: fuser.fusion @kept(
// CHECK-NEXT:    %e = fuser.expand %x
// CHECK-NEXT:    %a = fuser.abs %e
// CHECK-NEXT:    %r = fuser.reshape %y
// CHECK-NEXT:    %c = fuser.set %y
// CHECK-NEXT:    fuser.output %a, %r, %c

// CHECK-LABEL: hir.program @permute_out_main(%0: !fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32> {
// CHECK-NEXT:    %1 = hir.launch @permute_out(%0) : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:    %2 = hir.permute %1 {dims = array<i64: 1, 0>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<8x4xf32>
// CHECK-NEXT:    hir.return %2 : !fuser.tensor<8x4xf32>
// CHECK-LABEL: hir.program @permute_reshape_out_main(
// CHECK-NEXT:    %1 = hir.launch @permute_reshape_out(%0) : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<32xf32>
// CHECK-NEXT:    hir.return %1
// CHECK-LABEL: hir.program @slice_in_set_out_main(%0: !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x6xf32> {
// CHECK-NEXT:    %1 = hir.slice %0 {starts = array<i64: 0, 2>, ends = array<i64: 4, 8>, strides = array<i64: 1, 1>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x6xf32, contiguity=[false, true]>
// CHECK-NEXT:    %2 = hir.launch @slice_in_set_out(%1)
// CHECK-NEXT:    hir.return %2 : !fuser.tensor<4x6xf32>
// CHECK-LABEL: hir.program @kept_main(
// CHECK-NEXT:    %2, %3, %4 = hir.launch @kept(%0, %1)
// CHECK-NEXT:    hir.return %2, %3, %4
