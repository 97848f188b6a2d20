// RUN: fuser-opt %s --segment | filecheck %s

// Segmenting an in-place update that races: mark-aliases' rules run first (the
// segment_set cut, the host view of %x, the hir.alias). The segment_set group
// never merges with its producer, so the copy into the caller's buffer %0 is
// the last kernel, after every kernel that reads %0. The registry's pointwise
// scheduler writes one iteration space per kernel, so the 4x8 and the 8-element
// outputs are two kernels (seg0, seg1): three launches. The intermediate %5 is
// deallocated after its last use.
// @views_only: reshape- and permute-only fusions launch nothing.

fuser.fusion @racy(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<8xf32>) -> !fuser.tensor<1x8xf32>
  %s = fuser.add %y, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<1x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %n = fuser.add %x, %c : (!fuser.tensor<8xf32>, f64) -> !fuser.tensor<8xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 2, 4>} : !fuser.tensor<8xf32> -> !fuser.tensor<2x4xf32>
  fuser.output %s, %r, %n : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<8xf32> {alias_inputs = array<i64: -1, -1, 0>}
}
fuser.fusion @views_only(%x : !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>) {
  %p = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<6x4xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  fuser.output %p, %r : !fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>
}

// CHECK-LABEL: fuser.fusion @racy_seg0(%x: !fuser.tensor<8xf32>, %y: !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
// CHECK-LABEL: fuser.fusion @racy_seg1(%x: !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
// CHECK-NEXT:    %c = fuser.constant 1.000000e+00 : f64
// CHECK-NEXT:    %n = fuser.add %x, %c
// CHECK-NEXT:    fuser.output %n : !fuser.tensor<8xf32>
// CHECK-LABEL: fuser.fusion @racy_seg2(%n: !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
// CHECK-NEXT:    %0 = fuser.segment_set %n
// CHECK-NEXT:    fuser.output %0 : !fuser.tensor<8xf32>
// CHECK-NOT:   fuser.fusion

// CHECK-LABEL: hir.program @racy_main(%0: !fuser.tensor<8xf32>, %1: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
// CHECK-NEXT:    %2 = hir.reshape %0 {new_shape = array<i64: 2, 4>}
// CHECK-NEXT:    %3 = hir.allocate {preallocated} : !fuser.tensor<4x8xf32>
// CHECK-NEXT:    %4 = hir.launch @racy_seg0(%0, %1) outs(%3 : !fuser.tensor<4x8xf32>)
// CHECK-NEXT:    %5 = hir.allocate : !fuser.tensor<8xf32>
// CHECK-NEXT:    %6 = hir.launch @racy_seg1(%0) outs(%5 : !fuser.tensor<8xf32>)
// CHECK-NEXT:    %7 = hir.launch @racy_seg2(%6) outs(%0 : !fuser.tensor<8xf32>)
// CHECK-NEXT:    hir.deallocate %5 : !fuser.tensor<8xf32>
// CHECK-NEXT:    hir.alias %7, %0 : !fuser.tensor<8xf32>, !fuser.tensor<8xf32>
// CHECK-NEXT:    hir.return %3, %2 : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @views_only_main(%0: !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>) {
// CHECK-NEXT:    %1 = hir.permute %0 {dims = array<i64: 1, 0>}
// CHECK-NEXT:    %2 = hir.reshape %0 {new_shape = array<i64: 24>}
// CHECK-NEXT:    hir.return %1, %2
// CHECK-NEXT:  }
