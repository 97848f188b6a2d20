// RUN: fuser-opt %s -p 'lower-stream-loops{num-streams=2},shrink-stream-buffers' | filecheck %s
// RUN: fuser-opt %s -p 'lower-stream-loops{num-streams=0},shrink-stream-buffers' | filecheck %s --check-prefix=UNKNOWN

// Safe: t1 of @two (seed 001's TwoSetOps) is written and read only by the same
// iteration of the merged loop, so it shrinks to num_streams = 2 slices indexed by
// i % 2 (the iterations sharing a slot run in order on the same stream).
// Not safe: t1 of @three is read after its loop by the non-stream Set, and t2 is
// a whole-tensor launch result: both stay whole. Outputs (preallocated) never shrink.
// Not known: without num_streams on hir.stream_for_index nothing shrinks.

fuser.fusion @two(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.set %t1 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %a0, %a1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %as = iterdomain.parallelize %a0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t1 [%as, %a1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  %b0, %b1 = iterdomain.logical %t2 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %bs = iterdomain.parallelize %b0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t2 [%bs, %b1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  fuser.output %t2 : !fuser.tensor<?x?xf32>
}

fuser.fusion @three(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.set %t1 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %t3 = fuser.set %t2 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %a0, %a1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %as = iterdomain.parallelize %a0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t1 [%as, %a1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  %b0, %b1 = iterdomain.logical %t3 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %bs = iterdomain.parallelize %b0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t3 [%bs, %b1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  fuser.output %t3 : !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: hir.program @two_main(
// CHECK:         %t1 = hir.allocate sizes(%[[M:.*]] : i64) : !fuser.tensor<2x?xf32>
// CHECK-NEXT:    %t2 = hir.allocate sizes(%[[N:.*]], %[[M]] : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %[[N]] step %c1 : i64 {
// CHECK-NEXT:      %user_stream = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %worker_stream = hir.stream_for_index %stream_idx {num_streams = 2 : i64} : i64
// CHECK-NEXT:      %c2 = arith.constant 2 : i64
// CHECK-NEXT:      %slot = arith.remsi %stream_idx, %c2 : i64
// CHECK:           %t1_slice = hir.alias_select %t1[axis = 0, %slot] : !fuser.tensor<2x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK:           %t2_slice = hir.alias_select %t2[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK:         hir.deallocate %t1 : !fuser.tensor<2x?xf32>

// CHECK-LABEL: hir.program @three_main(
// CHECK:         %t1 = hir.allocate sizes(%{{.*}}, %{{.*}} : i64, i64) : !fuser.tensor<?x?xf32>
// CHECK-NOT:     arith.remsi
// CHECK:         hir.deallocate %t1 : !fuser.tensor<?x?xf32>
// CHECK-NOT:     arith.remsi
// CHECK:         hir.return %t3

// UNKNOWN-LABEL: hir.program @two_main(
// UNKNOWN:         %t1 = hir.allocate sizes(%{{.*}}, %{{.*}} : i64, i64) : !fuser.tensor<?x?xf32>
// UNKNOWN-NOT:     arith.remsi
