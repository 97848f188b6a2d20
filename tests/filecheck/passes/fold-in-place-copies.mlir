// RUN: fuser-opt %s --fold-in-place-copies | filecheck %s

// Segmented programs (what `--mark-aliases --segment` makes of an update that
// mark-aliases cut): @s1 computes the update %m' of %m into a temporary, and the
// copy segment @copy writes it into %m.
// @clip: a gradient-clipped moment update. Its reduction is a segment of its own;
// the update's segment @s1 is pointwise, so it writes %m itself: the copy launch,
// its segment, the temporary and its deallocation go.
// @read_between: a launch between the update and the copy reads %m: it must see
// the old values, so the copy stays.
// @reduces: the update's segment also reduces %m (a norm of the new moment): its
// kernel may load %m after storing the update, so the copy stays.
// @temp_read: another launch reads the temporary: it stays.

fuser.fusion @sum(%g : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %s = fuser.sum %g {dims = array<i64: 0>} : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  fuser.output %s : !fuser.tensor<f32>
}
fuser.fusion @s1(%m : !fuser.tensor<64xf32>, %g : !fuser.tensor<64xf32>, %p : !fuser.tensor<64xf32>, %s : !fuser.tensor<f32>) -> (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) {
  %b = fuser.broadcast %s {is_broadcast_dim = array<i1: true>} : (!fuser.tensor<f32>) -> !fuser.tensor<1xf32>
  %d = fuser.mul %g, %b : (!fuser.tensor<64xf32>, !fuser.tensor<1xf32>) -> !fuser.tensor<64xf32>
  %c = fuser.constant 9.000000e-01 : f64
  %a = fuser.mul %m, %c : (!fuser.tensor<64xf32>, f64) -> !fuser.tensor<64xf32>
  %n = fuser.add %a, %d : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  %q = fuser.sub %p, %n : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %n, %q : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
}
fuser.fusion @copy(%n : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %0 = fuser.segment_set %n : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %0 : !fuser.tensor<64xf32>
}
hir.program @clip(%0 : !fuser.tensor<64xf32>, %1 : !fuser.tensor<64xf32>, %2 : !fuser.tensor<64xf32>) {
  %3 = hir.allocate : !fuser.tensor<f32>
  %4 = hir.launch @sum(%1) outs(%3 : !fuser.tensor<f32>) : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  %5 = hir.allocate : !fuser.tensor<64xf32>
  %6, %7 = hir.launch @s1(%0, %1, %2, %4) outs(%5, %2 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>, !fuser.tensor<64xf32>, !fuser.tensor<f32>) -> (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>)
  hir.deallocate %3 : !fuser.tensor<f32>
  %8 = hir.launch @copy(%6) outs(%0 : !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  hir.deallocate %5 : !fuser.tensor<64xf32>
  hir.alias %8, %0 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
  hir.alias %7, %2 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
  hir.return
}

fuser.fusion @s2(%m : !fuser.tensor<64xf32>, %g : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %n = fuser.add %m, %g : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %n : !fuser.tensor<64xf32>
}
fuser.fusion @copy2(%n : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %0 = fuser.segment_set %n : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %0 : !fuser.tensor<64xf32>
}
fuser.fusion @sum2(%m : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %s = fuser.sum %m {dims = array<i64: 0>} : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  fuser.output %s : !fuser.tensor<f32>
}
hir.program @read_between(%0 : !fuser.tensor<64xf32>, %1 : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %2 = hir.allocate : !fuser.tensor<64xf32>
  %3 = hir.launch @s2(%0, %1) outs(%2 : !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  %4 = hir.launch @sum2(%0) : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  %5 = hir.launch @copy2(%3) outs(%0 : !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  hir.deallocate %2 : !fuser.tensor<64xf32>
  hir.alias %5, %0 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
  hir.return %4 : !fuser.tensor<f32>
}

fuser.fusion @s3(%m : !fuser.tensor<64xf32>, %g : !fuser.tensor<64xf32>) -> (!fuser.tensor<64xf32>, !fuser.tensor<f32>) {
  %n = fuser.add %m, %g : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  %s = fuser.sum %n {dims = array<i64: 0>} : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  fuser.output %n, %s : !fuser.tensor<64xf32>, !fuser.tensor<f32>
}
fuser.fusion @copy3(%n : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %0 = fuser.segment_set %n : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %0 : !fuser.tensor<64xf32>
}
hir.program @reduces(%0 : !fuser.tensor<64xf32>, %1 : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %2 = hir.allocate : !fuser.tensor<64xf32>
  %3 = hir.allocate : !fuser.tensor<f32>
  %4, %5 = hir.launch @s3(%0, %1) outs(%2, %3 : !fuser.tensor<64xf32>, !fuser.tensor<f32>) : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> (!fuser.tensor<64xf32>, !fuser.tensor<f32>)
  %6 = hir.launch @copy3(%4) outs(%0 : !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  hir.deallocate %2 : !fuser.tensor<64xf32>
  hir.alias %6, %0 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
  hir.return %5 : !fuser.tensor<f32>
}

fuser.fusion @s4(%m : !fuser.tensor<64xf32>, %g : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %n = fuser.add %m, %g : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %n : !fuser.tensor<64xf32>
}
fuser.fusion @copy4(%n : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %0 = fuser.segment_set %n : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %0 : !fuser.tensor<64xf32>
}
fuser.fusion @sum4(%n : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %s = fuser.sum %n {dims = array<i64: 0>} : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  fuser.output %s : !fuser.tensor<f32>
}
hir.program @temp_read(%0 : !fuser.tensor<64xf32>, %1 : !fuser.tensor<64xf32>) -> !fuser.tensor<f32> {
  %2 = hir.allocate : !fuser.tensor<64xf32>
  %3 = hir.launch @s4(%0, %1) outs(%2 : !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  %4 = hir.launch @sum4(%3) : (!fuser.tensor<64xf32>) -> !fuser.tensor<f32>
  %5 = hir.launch @copy4(%3) outs(%0 : !fuser.tensor<64xf32>) : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  hir.deallocate %2 : !fuser.tensor<64xf32>
  hir.alias %5, %0 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
  hir.return %4 : !fuser.tensor<f32>
}

// CHECK-NOT:     fuser.fusion @copy(
// CHECK-LABEL:   hir.program @clip(%0: !fuser.tensor<64xf32>, %1: !fuser.tensor<64xf32>, %2: !fuser.tensor<64xf32>) {
// CHECK-NEXT:      %3 = hir.allocate : !fuser.tensor<f32>
// CHECK-NEXT:      %4 = hir.launch @sum(%1) outs(%3 : !fuser.tensor<f32>)
// CHECK-NEXT:      %5, %6 = hir.launch @s1(%0, %1, %2, %4) outs(%0, %2 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>)
// CHECK-NEXT:      hir.deallocate %3 : !fuser.tensor<f32>
// CHECK-NEXT:      hir.alias %5, %0 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
// CHECK-NEXT:      hir.alias %6, %2 : !fuser.tensor<64xf32>, !fuser.tensor<64xf32>
// CHECK-NEXT:      hir.return

// CHECK-LABEL:   hir.program @read_between(
// CHECK-NEXT:      %2 = hir.allocate : !fuser.tensor<64xf32>
// CHECK-NEXT:      %3 = hir.launch @s2(%0, %1) outs(%2 : !fuser.tensor<64xf32>)
// CHECK-NEXT:      %4 = hir.launch @sum2(%0)
// CHECK-NEXT:      %5 = hir.launch @copy2(%3) outs(%0 : !fuser.tensor<64xf32>)
// CHECK-NEXT:      hir.deallocate %2
// CHECK-NEXT:      hir.alias %5, %0

// CHECK-LABEL:   hir.program @reduces(
// CHECK:           %4, %5 = hir.launch @s3(%0, %1) outs(%2, %3 : !fuser.tensor<64xf32>, !fuser.tensor<f32>)
// CHECK-NEXT:      %6 = hir.launch @copy3(%4) outs(%0 : !fuser.tensor<64xf32>)

// CHECK-LABEL:   hir.program @temp_read(
// CHECK:           %3 = hir.launch @s4(%0, %1) outs(%2 : !fuser.tensor<64xf32>)
// CHECK-NEXT:      %4 = hir.launch @sum4(%3)
// CHECK-NEXT:      %5 = hir.launch @copy4(%3) outs(%0 : !fuser.tensor<64xf32>)
