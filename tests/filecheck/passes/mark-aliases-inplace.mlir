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
// @moments: an optimizer's shape: %m updated in place and %p's update computed
// from the new %m. A pointwise fusion whose outputs have one shape and layout: its
// kernel stores them together after all their loads, so no cut; the launch writes
// %m and %p themselves.
// @moments_beside_a_sum: the same beside a reduction of %g: a reduction kernel
// could load %m after storing the update, so the update is cut.

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

fuser.fusion @moments(%m : !fuser.tensor<?xf32>, %g : !fuser.tensor<?xf32>, %p : !fuser.tensor<?xf32>) -> () {
  %c = fuser.constant 9.000000e-01 : f64
  %a = fuser.mul %m, %c : (!fuser.tensor<?xf32>, f64) -> !fuser.tensor<?xf32>
  %n = fuser.add %a, %g : (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
  %q = fuser.sub %p, %n : (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %n, %q : !fuser.tensor<?xf32>, !fuser.tensor<?xf32> {alias_inputs = array<i64: 0, 2>}
}
fuser.fusion @moments_beside_a_sum(%m : !fuser.tensor<4x8xf32>, %g : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4xf32>) {
  %c = fuser.constant 9.000000e-01 : f64
  %a = fuser.mul %m, %c : (!fuser.tensor<4x8xf32>, f64) -> !fuser.tensor<4x8xf32>
  %n = fuser.add %a, %g : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %e = fuser.exp %n : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %s = fuser.sum %g {dims = array<i64: 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  fuser.output %n, %e, %s : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4xf32> {alias_inputs = array<i64: 0, -1, -1>}
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
// CHECK-LABEL: fuser.fusion @moments(
// CHECK-NOT:     fuser.segment_set
// CHECK:         fuser.output %n, %q : !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: fuser.fusion @moments_beside_a_sum(
// CHECK:         %0 = fuser.segment_set %n : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:    fuser.output %e, %s, %0 : !fuser.tensor<4x8xf32>, !fuser.tensor<4xf32>, !fuser.tensor<4x8xf32>

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
// CHECK-LABEL: hir.program @moments_main(%0: !fuser.tensor<?xf32>, %1: !fuser.tensor<?xf32>, %2: !fuser.tensor<?xf32>) {
// CHECK-NEXT:    %3, %4 = hir.launch @moments(%0, %1, %2) outs(%0, %2 : !fuser.tensor<?xf32>, !fuser.tensor<?xf32>)
// CHECK-NEXT:    hir.alias %3, %0 : !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
// CHECK-NEXT:    hir.alias %4, %2 : !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @moments_beside_a_sum_main(
// CHECK:         hir.launch @moments_beside_a_sum(%0, %1) outs(%2, %3, %0 :
// CHECK-NEXT:    hir.alias %6, %0 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
