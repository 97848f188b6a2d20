// RUN: fuser-opt %s -p 'lower-stream-loops' | filecheck %s

// seed 001, ThreeSetOpsWithDisjointsForLoops: tv2 is not stream-parallel, so it ends
// the first loop and runs on whole tensors between two loops; the second loop reads
// the full tv2 through slices.

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

// CHECK-LABEL: fuser.fusion @three_set(%t0: !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
// CHECK-LABEL: fuser.fusion @three_set_1(%t1: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK-NEXT:    %t2 = fuser.set %t1 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK:         %t1 = hir.allocate sizes(%[[N:.*]], %[[M:.*]] : i64, i64) : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %[[N]] step %c1 : i64 {
// CHECK-NEXT:      %user_stream = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %worker_stream = hir.stream_for_index %stream_idx {num_streams = 4 : i64} : i64
// CHECK-NEXT:      hir.set_current_stream %worker_stream
// CHECK-NEXT:      hir.synchronize_stream %user_stream
// CHECK-NEXT:      %t0_slice = hir.alias_select %t0[axis = 0, %stream_idx]
// CHECK-NEXT:      %t1_slice = hir.alias_select %t1[axis = 0, %stream_idx]
// CHECK-NEXT:      %{{.*}} = hir.launch @three_set(%t0_slice) outs(%t1_slice : !fuser.tensor<?xf32>)
// CHECK-NEXT:      hir.set_current_stream %user_stream
// CHECK-NEXT:      hir.synchronize_stream %worker_stream
// CHECK-NEXT:    } {stream_axis = "t1[0]"}
// CHECK-NEXT:    %t2 = hir.launch @three_set_1(%t1) : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.deallocate %t1 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    %t3 = hir.allocate sizes(%[[N]], %[[M]] : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %[[I:.*]] = %c0 to %[[N]] step %c1 : i64 {
// CHECK-NEXT:      %[[U:.*]] = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %[[W:.*]] = hir.stream_for_index %[[I]] {num_streams = 4 : i64} : i64
// CHECK-NEXT:      hir.set_current_stream %[[W]]
// CHECK-NEXT:      hir.synchronize_stream %[[U]]
// CHECK-NEXT:      %t2_slice = hir.alias_select %t2[axis = 0, %[[I]]]
// CHECK-NEXT:      %t3_slice = hir.alias_select %t3[axis = 0, %[[I]]]
// CHECK-NEXT:      %{{.*}} = hir.launch @three_set(%t2_slice) outs(%t3_slice : !fuser.tensor<?xf32>)
// CHECK-NEXT:      hir.set_current_stream %[[U]]
// CHECK-NEXT:      hir.synchronize_stream %[[W]]
// CHECK-NEXT:    } {stream_axis = "t3[0]"}
// CHECK-NEXT:    hir.deallocate %t2 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.return %t3 : !fuser.tensor<?x?xf32>
