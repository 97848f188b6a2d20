// RUN: fuser-opt %s -p 'lower-stream-loops{num-streams=4}' | filecheck %s
// RUN: fuser-opt %s -p 'lower-stream-loops{num-streams=0}' | filecheck %s --check-prefix=RUNTIME
// RUN: fuser-opt %s -p 'lower-stream-loops{join-after-loop=true}' | filecheck %s --check-prefix=JOIN

// seed 001, SingleSetOp: tv1 = set(tv0) with axis 0 of tv1 on `stream` becomes one
// loop over the stream axis: the full output is allocated before the loop, the body
// switches to stream i % 4, waits for the user's stream, selects the slices, runs
// the Set on them, restores the user's stream and makes it wait for the worker.

fuser.fusion @single(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %s0 = iterdomain.parallelize %i0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t1 [%s0, %i1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  fuser.output %t1 : !fuser.tensor<?x?xf32>
}

// CHECK-NOT:   fuser.fusion @single(
// CHECK-NOT:   iterdomain.
// CHECK-LABEL: fuser.fusion @single_set(%t0: !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
// CHECK-NEXT:    %t1 = fuser.set %t0 : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:    fuser.output %t1 : !fuser.tensor<?xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK-NEXT:    %[[N:.*]] = fuser.size %t0 {dim = 0 : i64} : (!fuser.tensor<?x?xf32>) -> i64
// CHECK-NEXT:    %[[M:.*]] = fuser.size %t0 {dim = 1 : i64} : (!fuser.tensor<?x?xf32>) -> i64
// CHECK-NEXT:    %c0 = arith.constant 0 : i64
// CHECK-NEXT:    %c1 = arith.constant 1 : i64
// CHECK-NEXT:    %t1 = hir.allocate sizes(%[[N]], %[[M]] : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %[[N]] step %c1 : i64 {
// CHECK-NEXT:      %user_stream = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %worker_stream = hir.stream_for_index %stream_idx {num_streams = 4 : i64} : i64
// CHECK-NEXT:      hir.set_current_stream %worker_stream
// CHECK-NEXT:      hir.synchronize_stream %user_stream
// CHECK-NEXT:      %t0_slice = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %t1_slice = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %{{.*}} = hir.launch @single_set(%t0_slice) outs(%t1_slice : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:      hir.set_current_stream %user_stream
// CHECK-NEXT:      hir.synchronize_stream %worker_stream
// CHECK-NEXT:    } {stream_axis = "t1[0]"}
// CHECK-NEXT:    hir.return %t1 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:  }

// RUNTIME: %worker_stream = hir.stream_for_index %stream_idx : i64

// With join-after-loop the user's stream waits for the workers in a second loop, so
// iteration i + 1 does not wait for iteration i:
// JOIN:         hir.for %stream_idx = %c0 to %[[N:.*]] step %c1 : i64 {
// JOIN:           %{{.*}} = hir.launch @single_set(%t0_slice) outs(%t1_slice : !fuser.tensor<?xf32>)
// JOIN-NEXT:      hir.set_current_stream %user_stream
// JOIN-NEXT:    } {stream_axis = "t1[0]"}
// JOIN-NEXT:    hir.for %join_idx = %c0 to %[[N]] step %c1 : i64 {
// JOIN-NEXT:      %[[W:.*]] = hir.stream_for_index %join_idx {num_streams = 4 : i64} : i64
// JOIN-NEXT:      hir.synchronize_stream %[[W]]
// JOIN-NEXT:    }
// JOIN-NEXT:    hir.return %t1 : !fuser.tensor<?x?xf32>
