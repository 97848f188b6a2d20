// RUN: fuser-opt %s --mark-aliases | filecheck %s

// An output that is a view of an input becomes a host view, unless the fusion
// declares a layout for it (nvFuser's add_output(t, stride_order=...)): then a
// kernel writes it in that layout (test_broadcast_and_stride_order).

fuser.fusion @laid_out(%x : !fuser.tensor<2x3x4xf32>) -> (!fuser.tensor<2x1x3x4xf32, stride_order=[0, 1, 2, 3]>, !fuser.tensor<2x1x3x4xf32>) {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: false, true, false, false>} : (!fuser.tensor<2x3x4xf32>) -> !fuser.tensor<2x1x3x4xf32>
  fuser.output %b, %b : !fuser.tensor<2x1x3x4xf32>, !fuser.tensor<2x1x3x4xf32>
}

// CHECK-LABEL: fuser.fusion @laid_out(%x: !fuser.tensor<2x3x4xf32>) -> !fuser.tensor<2x1x3x4xf32, stride_order=[0, 1, 2, 3]> {
// CHECK-NEXT:    %b = fuser.broadcast %x
// CHECK-NEXT:    fuser.output %b : !fuser.tensor<2x1x3x4xf32>
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<2x3x4xf32>) -> (!fuser.tensor<2x1x3x4xf32, stride_order=[0, 1, 2, 3]>, !fuser.tensor<2x1x3x4xf32>) {
// CHECK-NEXT:    %1 = hir.broadcast %0
// CHECK-NEXT:    %2 = hir.allocate {preallocated} : !fuser.tensor<2x1x3x4xf32, stride_order=[0, 1, 2, 3]>
// CHECK-NEXT:    %3 = hir.launch @laid_out(%0) outs(%2 : !fuser.tensor<2x1x3x4xf32, stride_order=[0, 1, 2, 3]>)
// CHECK-NEXT:    hir.return %2, %1
