// RUN: fuser-opt %s --segment | filecheck %s

// Declared output layouts survive segmentation: %y is returned row-major and
// column-major (nvFuser's add_output(t) and add_output(t, stride_order=[0, 1])), so
// the second return is a fuser.set copy with its own buffer, allocated and written
// column-major. @view: a view-only output declared column-major is a launch that
// writes it, not a host view.

fuser.fusion @f(%x : !fuser.tensor<3x4xf32>) -> (!fuser.tensor<3x4xf32>, !fuser.tensor<3x4xf32, stride_order=[0, 1]>) {
  %y = fuser.neg %x : (!fuser.tensor<3x4xf32>) -> !fuser.tensor<3x4xf32>
  fuser.output %y, %y : !fuser.tensor<3x4xf32>, !fuser.tensor<3x4xf32>
}

fuser.fusion @view(%x : !fuser.tensor<3x4xf32>) -> !fuser.tensor<3x1x4xf32, stride_order=[0, 1, 2]> {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: false, true, false>} : (!fuser.tensor<3x4xf32>) -> !fuser.tensor<3x1x4xf32>
  fuser.output %b : !fuser.tensor<3x1x4xf32>
}

// CHECK-LABEL: fuser.fusion @f_seg0(%x: !fuser.tensor<3x4xf32>) -> (!fuser.tensor<3x4xf32>, !fuser.tensor<3x4xf32, stride_order=[0, 1]>)
// CHECK-NEXT:    %y = fuser.neg %x
// CHECK-NEXT:    %0 = fuser.set %y
// CHECK-NEXT:    fuser.output %y, %0
// CHECK-LABEL: fuser.fusion @view_seg0(%x: !fuser.tensor<3x4xf32>) -> !fuser.tensor<3x1x4xf32, stride_order=[0, 1, 2]>
// CHECK-NEXT:    %b = fuser.broadcast %x
// CHECK-LABEL: hir.program @f_main(%0: !fuser.tensor<3x4xf32>) -> (!fuser.tensor<3x4xf32>, !fuser.tensor<3x4xf32, stride_order=[0, 1]>) {
// CHECK-NEXT:    %1 = hir.allocate {preallocated} : !fuser.tensor<3x4xf32>
// CHECK-NEXT:    %2 = hir.allocate {preallocated} : !fuser.tensor<3x4xf32, stride_order=[0, 1]>
// CHECK-NEXT:    %3, %4 = hir.launch @f_seg0(%0) outs(%1, %2 : !fuser.tensor<3x4xf32>, !fuser.tensor<3x4xf32, stride_order=[0, 1]>)
// CHECK-NEXT:    hir.return %1, %2
// CHECK-LABEL: hir.program @view_main(%0: !fuser.tensor<3x4xf32>) -> !fuser.tensor<3x1x4xf32, stride_order=[0, 1, 2]> {
// CHECK-NEXT:    %1 = hir.allocate {preallocated} : !fuser.tensor<3x1x4xf32, stride_order=[0, 1, 2]>
// CHECK-NEXT:    %2 = hir.launch @view_seg0(%0) outs(%1
// CHECK-NEXT:    hir.return %1
