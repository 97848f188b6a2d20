// RUN: fuser-opt %s --strip-bookend-views | filecheck %s

// A broadcast_in_dim that adds an axis of extent 3 expands (a stride-0 axis no
// !fuser.tensor layout expresses), so it stays in the kernel with the reshape
// after it; one that only adds an extent-1 axis is a host view.

fuser.fusion @expands(%x : !fuser.tensor<17x2xf32>) -> !fuser.tensor<51x2xf32> {
  %y = fuser.neg %x : (!fuser.tensor<17x2xf32>) -> !fuser.tensor<17x2xf32>
  %b = fuser.broadcast_in_dim %y {shape = array<i64: 17, 3, 2>, broadcast_dims = array<i64: 0, 2>} : !fuser.tensor<17x2xf32> -> !fuser.tensor<17x3x2xf32>
  %r = fuser.reshape %b {new_shape = array<i64: 51, 2>} : !fuser.tensor<17x3x2xf32> -> !fuser.tensor<51x2xf32>
  fuser.output %r : !fuser.tensor<51x2xf32>
}
fuser.fusion @unit(%x : !fuser.tensor<17x2xf32>) -> !fuser.tensor<17x1x2xf32> {
  %y = fuser.neg %x : (!fuser.tensor<17x2xf32>) -> !fuser.tensor<17x2xf32>
  %b = fuser.broadcast_in_dim %y {shape = array<i64: 17, 1, 2>, broadcast_dims = array<i64: 0, 2>} : !fuser.tensor<17x2xf32> -> !fuser.tensor<17x1x2xf32>
  fuser.output %b : !fuser.tensor<17x1x2xf32>
}

// CHECK-LABEL: fuser.fusion @expands(%x: !fuser.tensor<17x2xf32>) -> !fuser.tensor<51x2xf32> {
// CHECK-NEXT:    %y = fuser.neg %x
// CHECK-NEXT:    %b = fuser.broadcast_in_dim %y
// CHECK-NEXT:    %r = fuser.reshape %b
// CHECK-NEXT:    fuser.output %r
// CHECK-LABEL: fuser.fusion @unit(%x: !fuser.tensor<17x2xf32>) -> !fuser.tensor<17x2xf32> {
// CHECK-NEXT:    %y = fuser.neg %x
// CHECK-NEXT:    fuser.output %y
// CHECK-LABEL: hir.program @expands_main(
// CHECK-NEXT:    %{{.*}} = hir.launch @expands(
// CHECK-LABEL: hir.program @unit_main(
// CHECK-NEXT:    %{{.*}} = hir.launch @unit(
// CHECK-NEXT:    %{{.*}} = hir.broadcast
