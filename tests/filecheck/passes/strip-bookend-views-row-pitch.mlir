// RUN: fuser-opt %s --strip-bookend-views | filecheck %s

// Inputs laid out row-major with gaps: a padded product's slice, whose rows are
// 1004 elements apart but 1001 long (contiguity [true, false, true]). A reshape
// that merges the contiguous outer axes or splits one is a host view (the new input
// keeps the gap on its row axis); one that merges across the gap stays in the
// kernel. A cast of an input used only by a view swaps with it, so the view reaches
// the input and the host does it (the loss's `logits.float().view(-1, V)`); not when
// the cast or the input has another use (the kernel would read the input twice).

fuser.fusion @merge_rows(%x : !fuser.tensor<2x8x1001xf32, contiguity=[true, false, true]>) -> !fuser.tensor<16x1xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 16, 1001>} : !fuser.tensor<2x8x1001xf32, contiguity=[true, false, true]> -> !fuser.tensor<16x1001xf32>
  %m = fuser.max %r {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<16x1001xf32>) -> !fuser.tensor<16x1xf32>
  fuser.output %m : !fuser.tensor<16x1xf32>
}
fuser.fusion @split_rows(%x : !fuser.tensor<16x1001xf32, contiguity=[false, true]>) -> !fuser.tensor<2x8x1001xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 2, 8, 1001>} : !fuser.tensor<16x1001xf32, contiguity=[false, true]> -> !fuser.tensor<2x8x1001xf32>
  %n = fuser.neg %r : (!fuser.tensor<2x8x1001xf32>) -> !fuser.tensor<2x8x1001xf32>
  fuser.output %n : !fuser.tensor<2x8x1001xf32>
}
fuser.fusion @across_the_gap(%x : !fuser.tensor<16x1001xf32, contiguity=[false, true]>) -> !fuser.tensor<16016xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 16016>} : !fuser.tensor<16x1001xf32, contiguity=[false, true]> -> !fuser.tensor<16016xf32>
  %n = fuser.neg %r : (!fuser.tensor<16016xf32>) -> !fuser.tensor<16016xf32>
  fuser.output %n : !fuser.tensor<16016xf32>
}
fuser.fusion @cast_then_view(%x : !fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> !fuser.tensor<16x1xf32> {
  %c = fuser.cast %x : (!fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> !fuser.tensor<2x8x1001xf32>
  %r = fuser.reshape %c {new_shape = array<i64: 16, 1001>} : !fuser.tensor<2x8x1001xf32> -> !fuser.tensor<16x1001xf32>
  %m = fuser.max %r {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<16x1001xf32>) -> !fuser.tensor<16x1xf32>
  fuser.output %m : !fuser.tensor<16x1xf32>
}
fuser.fusion @cast_used_twice(%x : !fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> (!fuser.tensor<16x1xf32>, !fuser.tensor<2x8x1001xf32>) {
  %c = fuser.cast %x : (!fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> !fuser.tensor<2x8x1001xf32>
  %r = fuser.reshape %c {new_shape = array<i64: 16, 1001>} : !fuser.tensor<2x8x1001xf32> -> !fuser.tensor<16x1001xf32>
  %m = fuser.max %r {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<16x1001xf32>) -> !fuser.tensor<16x1xf32>
  fuser.output %m, %c : !fuser.tensor<16x1xf32>, !fuser.tensor<2x8x1001xf32>
}
fuser.fusion @input_used_twice(%x : !fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> (!fuser.tensor<16x1xf32>, !fuser.tensor<2x8x1001xbf16>) {
  %c = fuser.cast %x : (!fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> !fuser.tensor<2x8x1001xf32>
  %r = fuser.reshape %c {new_shape = array<i64: 16, 1001>} : !fuser.tensor<2x8x1001xf32> -> !fuser.tensor<16x1001xf32>
  %m = fuser.max %r {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<16x1001xf32>) -> !fuser.tensor<16x1xf32>
  %n = fuser.neg %x : (!fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>) -> !fuser.tensor<2x8x1001xbf16>
  fuser.output %m, %n : !fuser.tensor<16x1xf32>, !fuser.tensor<2x8x1001xbf16>
}

// CHECK-LABEL: fuser.fusion @merge_rows(%r: !fuser.tensor<16x1001xf32, contiguity=[false, true]>) -> !fuser.tensor<16x1xf32> {
// CHECK-NEXT:    %m = fuser.max %r
// CHECK-LABEL: fuser.fusion @split_rows(%r: !fuser.tensor<2x8x1001xf32, contiguity=[true, false, true]>) -> !fuser.tensor<2x8x1001xf32> {
// CHECK-NEXT:    %n = fuser.neg %r
// CHECK-LABEL: fuser.fusion @across_the_gap(%x: !fuser.tensor<16x1001xf32, contiguity=[false, true]>) -> !fuser.tensor<16016xf32> {
// CHECK-NEXT:    %r = fuser.reshape %x
// CHECK-NEXT:    %n = fuser.neg %r
// CHECK-LABEL: fuser.fusion @cast_then_view(%0: !fuser.tensor<16x1001xbf16, contiguity=[false, true]>) -> !fuser.tensor<16x1xf32> {
// CHECK-NEXT:    %{{.*}} = fuser.cast %0 : (!fuser.tensor<16x1001xbf16, contiguity=[false, true]>) -> !fuser.tensor<16x1001xf32>
// CHECK-NEXT:    %m = fuser.max
// CHECK-LABEL: fuser.fusion @cast_used_twice(%x: !fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>)
// CHECK-NEXT:    %c = fuser.cast %x
// CHECK-NEXT:    %r = fuser.reshape %c
// CHECK-LABEL: fuser.fusion @input_used_twice(%x: !fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]>)
// CHECK-NEXT:    %c = fuser.cast %x
// CHECK-NEXT:    %r = fuser.reshape %c
// CHECK-LABEL: hir.program @merge_rows_main(
// CHECK-NEXT:    %{{.*}} = hir.reshape %{{.*}} {new_shape = array<i64: 16, 1001>} : !fuser.tensor<2x8x1001xf32, contiguity=[true, false, true]> -> !fuser.tensor<16x1001xf32, contiguity=[false, true]>
// CHECK-LABEL: hir.program @split_rows_main(
// CHECK-NEXT:    %{{.*}} = hir.reshape %{{.*}} {new_shape = array<i64: 2, 8, 1001>} : !fuser.tensor<16x1001xf32, contiguity=[false, true]> -> !fuser.tensor<2x8x1001xf32, contiguity=[true, false, true]>
// CHECK-LABEL: hir.program @cast_then_view_main(
// CHECK-NEXT:    %{{.*}} = hir.reshape %{{.*}} {new_shape = array<i64: 16, 1001>} : !fuser.tensor<2x8x1001xbf16, contiguity=[true, false, true]> -> !fuser.tensor<16x1001xbf16, contiguity=[false, true]>
