// RUN: fuser-opt %s -p 'lower-stream-loops' | filecheck %s

// A reduction over a non-stream axis inside a stream loop: t1 = t0 * t0 and
// t2 = sum(t1, dim 1) are both stream-parallel on axis 0 and share one loop; on a
// slice the reduction reduces axis 0 of a rank-1 tensor into a rank-0 slice of t2.

fuser.fusion @sq_rowsum(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %t1 = fuser.mul %t0, %t0 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.sum %t1 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %a0, %a1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %as = iterdomain.parallelize %a0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t1 [%as, %a1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  %b0, %r1 = iterdomain.logical %t2 : !fuser.tensor<?xf32> -> !iterdomain.id<?>, !iterdomain.id<?, reduction>
  %bs = iterdomain.parallelize %b0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t2 [%bs, %r1] : !fuser.tensor<?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?, reduction>]
  fuser.output %t2 : !fuser.tensor<?xf32>
}

// CHECK-LABEL: fuser.fusion @sq_rowsum_mul(%t0: !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
// CHECK-NEXT:    %t1 = fuser.mul %t0, %t0 : (!fuser.tensor<?xf32>, !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-LABEL: fuser.fusion @sq_rowsum_sum(%t1: !fuser.tensor<?xf32>) -> !fuser.tensor<f32> {
// CHECK-NEXT:    %t2 = fuser.sum %t1 {dims = array<i64: 0>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<f32>
// CHECK-NEXT:    fuser.output %t2 : !fuser.tensor<f32>
// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
// CHECK:         %t1 = hir.allocate sizes(%[[N:.*]], %{{.*}} : i64, i64) : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    %t2 = hir.allocate sizes(%[[N]] : i64) {preallocated} : !fuser.tensor<?xf32>
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %[[N]] step %c1 : i64 {
// CHECK:           %t1_slice = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %{{.*}} = hir.launch @sq_rowsum_mul(%t0_slice) outs(%t1_slice : !fuser.tensor<?xf32>)
// CHECK-NEXT:      %t2_slice = hir.alias_select %t2[axis = 0, %stream_idx] : !fuser.tensor<?xf32>, i64 -> !fuser.tensor<f32>
// CHECK-NEXT:      %{{.*}} = hir.launch @sq_rowsum_sum(%t1_slice) outs(%t2_slice : !fuser.tensor<f32>)
// CHECK-NEXT:      hir.set_current_stream %user_stream
// CHECK-NEXT:      hir.synchronize_stream %worker_stream
// CHECK-NEXT:    } {stream_axis = "t1[0]"}
// CHECK-NEXT:    hir.deallocate %t1 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.return %t2 : !fuser.tensor<?xf32>
// CHECK-NOT:   hir.for
