// RUN: fuser-opt %s --mark-aliases | filecheck %s

// @racy: %x is updated in place (alias_inputs) while the same kernel reads it
// through a broadcast: the update is cut behind a segment_set (segment makes it
// a later kernel). The output that is a reshape of %x becomes a host view (of
// %x's storage: it shows the update, as nvFuser's aliased outputs do), the
// in-place output a hir.alias of the caller's buffer written through a buffer of
// its own (the launch reads %x through the broadcast: hir.alias copies it into %x
// after the launch), the other output a preallocated buffer.
// @aligned: the in-place update only reads %x element by element, and no other
// output is computed from %x: no cut, the launch writes %x itself.
// @views_only: every output is a view of the input: no launch, no fusion.

fuser.fusion @racy(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<8xf32>) -> !fuser.tensor<1x8xf32>
  %s = fuser.add %y, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<1x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %n = fuser.add %x, %c : (!fuser.tensor<8xf32>, f64) -> !fuser.tensor<8xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 2, 4>} : !fuser.tensor<8xf32> -> !fuser.tensor<2x4xf32>
  fuser.output %s, %r, %n : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<8xf32> {alias_inputs = array<i64: -1, -1, 0>}
}
fuser.fusion @aligned(%x : !fuser.tensor<?x8xf32>, %g : !fuser.tensor<?x8xf32>) -> !fuser.tensor<?x8xf32> {
  %c = fuser.constant 1.000000e-01 : f64
  %d = fuser.mul %g, %c : (!fuser.tensor<?x8xf32>, f64) -> !fuser.tensor<?x8xf32>
  %n = fuser.sub %x, %d : (!fuser.tensor<?x8xf32>, !fuser.tensor<?x8xf32>) -> !fuser.tensor<?x8xf32>
  %e = fuser.exp %d : (!fuser.tensor<?x8xf32>) -> !fuser.tensor<?x8xf32>
  fuser.output %n, %e : !fuser.tensor<?x8xf32>, !fuser.tensor<?x8xf32> {alias_inputs = array<i64: 0, -1>}
}
fuser.fusion @views_only(%x : !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>) {
  %p = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<6x4xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  fuser.output %p, %r : !fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>
}

// CHECK-LABEL: fuser.fusion @racy(%x: !fuser.tensor<8xf32>, %y: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>) {
// CHECK:         %n = fuser.add %x, %c
// CHECK-NEXT:    %0 = fuser.segment_set %n : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
// CHECK-NEXT:    fuser.output %s, %0 : !fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: fuser.fusion @aligned(
// CHECK-NOT:     fuser.segment_set
// CHECK:         fuser.output %e, %n : !fuser.tensor<?x8xf32>, !fuser.tensor<?x8xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   fuser.fusion @views_only

// CHECK-LABEL: hir.program @racy_main(%0: !fuser.tensor<8xf32>, %1: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
// CHECK-NEXT:    %2 = hir.reshape %0 {new_shape = array<i64: 2, 4>} : !fuser.tensor<8xf32> -> !fuser.tensor<2x4xf32>
// CHECK-NEXT:    %3 = hir.allocate {preallocated} : !fuser.tensor<4x8xf32>
// CHECK-NEXT:    %4 = hir.allocate : !fuser.tensor<8xf32>
// CHECK-NEXT:    %5, %6 = hir.launch @racy(%0, %1) outs(%3, %4 : !fuser.tensor<4x8xf32>, !fuser.tensor<8xf32>)
// CHECK-NEXT:    hir.alias %6, %0 : !fuser.tensor<8xf32>, !fuser.tensor<8xf32>
// CHECK-NEXT:    hir.return %3, %2 : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @aligned_main(%0: !fuser.tensor<?x8xf32>, %1: !fuser.tensor<?x8xf32>) -> !fuser.tensor<?x8xf32> {
// CHECK-NEXT:    %2 = fuser.size %1 {dim = 0 : i64} : (!fuser.tensor<?x8xf32>) -> i64
// CHECK-NEXT:    %3 = hir.allocate sizes(%2 : i64) {preallocated} : !fuser.tensor<?x8xf32>
// CHECK-NEXT:    %4, %5 = hir.launch @aligned(%0, %1) outs(%3, %0 : !fuser.tensor<?x8xf32>, !fuser.tensor<?x8xf32>)
// CHECK-NEXT:    hir.alias %5, %0 : !fuser.tensor<?x8xf32>, !fuser.tensor<?x8xf32>
// CHECK-NEXT:    hir.return %3 : !fuser.tensor<?x8xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @views_only_main(%0: !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>) {
// CHECK-NEXT:    %1 = hir.permute %0 {dims = array<i64: 1, 0>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<6x4xf32, contiguity=[true, true], stride_order=[0, 1]>
// CHECK-NEXT:    %2 = hir.reshape %0 {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
// CHECK-NEXT:    hir.return %1, %2
// CHECK-NEXT:  }
