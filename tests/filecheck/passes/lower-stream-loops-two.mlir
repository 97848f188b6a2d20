// RUN: fuser-opt %s -p 'lower-stream-loops{num-streams=2}' | filecheck %s
// RUN: fuser-opt %s -p 'lower-stream-loops{num-streams=2}' | fuser-opt | filecheck %s

// seed 001, TwoSetOps: tv1 = set(tv0), tv2 = set(tv1), both stream-parallel on axis
// 0: the loops are merged into one (no synchronization between the two Sets), the
// two identical one-op fusions are shared, the intermediate tv1 is dropped after the
// loop and the output tv2 is preallocated.

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

// CHECK-LABEL: fuser.fusion @two_set(%t0: !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
// CHECK-NOT:   fuser.fusion
// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK:         %t1 = hir.allocate sizes(%[[N:.*]], %[[M:.*]] : i64, i64) : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    %t2 = hir.allocate sizes(%[[N]], %[[M]] : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %[[N]] step %c1 : i64 {
// CHECK-NEXT:      %user_stream = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %worker_stream = hir.stream_for_index %stream_idx {num_streams = 2 : i64} : i64
// CHECK-NEXT:      hir.set_current_stream %worker_stream
// CHECK-NEXT:      hir.synchronize_stream %user_stream
// CHECK-NEXT:      %t0_slice = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %t1_slice = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %{{.*}} = hir.launch @two_set(%t0_slice) outs(%t1_slice : !fuser.tensor<?xf32>)
// CHECK-NEXT:      %t2_slice = hir.alias_select %t2[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %{{.*}} = hir.launch @two_set(%t1_slice) outs(%t2_slice : !fuser.tensor<?xf32>)
// CHECK-NEXT:      hir.set_current_stream %user_stream
// CHECK-NEXT:      hir.synchronize_stream %worker_stream
// CHECK-NEXT:    } {stream_axis = "t1[0]"}
// CHECK-NEXT:    hir.deallocate %t1 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.return %t2 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   hir.for
