// RUN: fuser-opt %s --mark-aliases | filecheck %s

// An in-place update of %x races when the launch also passes the kernel another
// view of %x's buffer (strip-bookend-views moves a permute of an input to the host):
// the kernel would read %x transposed while it overwrites it. The update is cut
// behind a segment_set (segment makes it a later kernel), as for a read of %x
// through a broadcast inside the fusion; and since the launch itself reads a view of
// %x, its result gets a buffer of its own, which hir.alias copies into %x after it
// (what segment makes of it: a later kernel copies the temporary into %x).
// @viewed: %xt is hir.permute %x beside %x: cut.
// @twice_aligned: %x passed twice, both read element by element: no cut.
// @twice_broadcast: %x passed twice, the second read through a broadcast: cut.

fuser.fusion @viewed(%x : !fuser.tensor<4x4xf32>, %xt : !fuser.tensor<4x4xf32, contiguity=[true, true], stride_order=[0, 1]>) -> () {
  %s = fuser.add %x, %xt : (!fuser.tensor<4x4xf32>, !fuser.tensor<4x4xf32, contiguity=[true, true], stride_order=[0, 1]>) -> !fuser.tensor<4x4xf32>
  fuser.output %s : !fuser.tensor<4x4xf32> {alias_inputs = array<i64: 0>}
}
hir.program @viewed_main(%0 : !fuser.tensor<4x4xf32>) {
  %1 = hir.permute %0 {dims = array<i64: 1, 0>} : !fuser.tensor<4x4xf32> -> !fuser.tensor<4x4xf32, contiguity=[true, true], stride_order=[0, 1]>
  hir.launch @viewed(%0, %1) : (!fuser.tensor<4x4xf32>, !fuser.tensor<4x4xf32, contiguity=[true, true], stride_order=[0, 1]>) -> ()
  hir.return
}

fuser.fusion @twice_aligned(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<8xf32>) -> () {
  %s = fuser.mul %x, %y : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %s : !fuser.tensor<8xf32> {alias_inputs = array<i64: 0>}
}
hir.program @twice_aligned_main(%0 : !fuser.tensor<8xf32>) {
  hir.launch @twice_aligned(%0, %0) : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> ()
  hir.return
}

fuser.fusion @twice_broadcast(%x : !fuser.tensor<4x4xf32>, %y : !fuser.tensor<4x4xf32>) -> () {
  %r = fuser.sum %y {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4x4xf32>) -> !fuser.tensor<4x1xf32>
  %s = fuser.add %x, %r : (!fuser.tensor<4x4xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x4xf32>
  fuser.output %s : !fuser.tensor<4x4xf32> {alias_inputs = array<i64: 0>}
}
hir.program @twice_broadcast_main(%0 : !fuser.tensor<4x4xf32>) {
  hir.launch @twice_broadcast(%0, %0) : (!fuser.tensor<4x4xf32>, !fuser.tensor<4x4xf32>) -> ()
  hir.return
}

// CHECK-LABEL: fuser.fusion @viewed(
// CHECK-NEXT:    %s = fuser.add %x, %xt
// CHECK-NEXT:    %0 = fuser.segment_set %s : (!fuser.tensor<4x4xf32>) -> !fuser.tensor<4x4xf32>
// CHECK-NEXT:    fuser.output %0 : !fuser.tensor<4x4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @viewed_main(%0: !fuser.tensor<4x4xf32>) {
// CHECK-NEXT:    %1 = hir.permute %0
// CHECK-NEXT:    %2 = hir.allocate : !fuser.tensor<4x4xf32>
// CHECK-NEXT:    %3 = hir.launch @viewed(%0, %1) outs(%2 : !fuser.tensor<4x4xf32>)
// CHECK-NEXT:    hir.alias %3, %0
// CHECK-LABEL: fuser.fusion @twice_aligned(
// CHECK-NEXT:    %s = fuser.mul %x, %y
// CHECK-NEXT:    fuser.output %s : !fuser.tensor<8xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @twice_aligned_main(
// CHECK-NEXT:    %1 = hir.launch @twice_aligned(%0, %0) outs(%0 : !fuser.tensor<8xf32>)
// CHECK-NEXT:    hir.alias %1, %0
// CHECK-LABEL: fuser.fusion @twice_broadcast(
// CHECK:         %s = fuser.add %x, %r
// CHECK-NEXT:    %0 = fuser.segment_set %s : (!fuser.tensor<4x4xf32>) -> !fuser.tensor<4x4xf32>
// CHECK-NEXT:    fuser.output %0 : !fuser.tensor<4x4xf32>
