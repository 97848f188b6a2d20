// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// seed 001, MultiDeviceExecutorLowerStreamTest.ThreeSetOpsWithDisjointsForLoops:
// tv2 is not stream-parallel, so it is computed between two stream for-loops:
//   T1 = ALLOCATE(T1[iStreamIdx2{i0}, iS3{i2}])
//   FOR StreamIdx in iStreamIdx2{i0}:
//     GetCurrentStream into Stream 0 ... (T5 = Set(T4) on selected slices) ...
//     SetCurrentStream to Stream 0
//     Synchronize Stream ( StreamIdx % numberOfStreams )
//   T2 = Set( T1, cache_op=Streaming )
//   T3 = ALLOCATE(T3[iStreamIdx6{i0}, iS7{i2}])
//   FOR StreamIdx in iStreamIdx6{i0}:
//     GetCurrentStream into Stream 2 ... (T7 = Set(T6) on selected slices) ...
//     SetCurrentStream to Stream 2
//     Synchronize Stream ( StreamIdx % numberOfStreams )

builtin.module {
  fuser.fusion @set(%x : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
    %y = fuser.set %x : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
    fuser.output %y : !fuser.tensor<?xf32>
  }
  fuser.fusion @set2d(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
    %y = fuser.set %x : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
    fuser.output %y : !fuser.tensor<?x?xf32>
  }
  hir.program @main(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
    %i0 = fuser.size %t0 {dim = 0 : i64} : (!fuser.tensor<?x?xf32>) -> i64
    %i2 = fuser.size %t0 {dim = 1 : i64} : (!fuser.tensor<?x?xf32>) -> i64
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) : !fuser.tensor<?x?xf32>
    hir.for %stream_idx = %c0 to %i0 step %c1 : i64 {
      %s0 = hir.get_current_stream : !hir.stream
      %s = hir.stream_for_index %stream_idx : i64
      hir.set_current_stream %s
      hir.synchronize_stream %s0
      %t4 = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %t5 = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %r5 = hir.launch @set(%t4) outs(%t5 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      hir.set_current_stream %s0
      hir.synchronize_stream %s
    } {stream_axis = "iStreamIdx2{i0}"}
    %t2 = hir.launch @set2d(%t1) : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
    %t3 = hir.allocate sizes(%i0, %i2 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
    hir.for %stream_idx2 = %c0 to %i0 step %c1 : i64 {
      %s2 = hir.get_current_stream : !hir.stream
      %s = hir.stream_for_index %stream_idx2 : i64
      hir.set_current_stream %s
      hir.synchronize_stream %s2
      %t6 = hir.alias_select %t2[axis = 0, %stream_idx2] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %t7 = hir.alias_select %t3[axis = 0, %stream_idx2] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %r7 = hir.launch @set(%t6) outs(%t7 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      hir.set_current_stream %s2
      hir.synchronize_stream %s
    } {stream_axis = "iStreamIdx6{i0}"}
    hir.return %t3 : !fuser.tensor<?x?xf32>
  }
}

// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK:         %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %i0 step %c1 : i64 {
// CHECK:           %r5 = hir.launch @set(%t4) outs(%t5 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:      hir.set_current_stream %s0
// CHECK-NEXT:      hir.synchronize_stream %s
// CHECK-NEXT:    } {stream_axis = "iStreamIdx2{i0}"}
// CHECK-NEXT:    %t2 = hir.launch @set2d(%t1) : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
// CHECK-NEXT:    %t3 = hir.allocate sizes(%i0, %i2 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.for %stream_idx2 = %c0 to %i0 step %c1 : i64 {
// CHECK-NEXT:      %s2 = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %s_1 = hir.stream_for_index %stream_idx2 : i64
// CHECK-NEXT:      hir.set_current_stream %s_1
// CHECK-NEXT:      hir.synchronize_stream %s2
// CHECK-NEXT:      %t6 = hir.alias_select %t2[axis = 0, %stream_idx2] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %t7 = hir.alias_select %t3[axis = 0, %stream_idx2] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %r7 = hir.launch @set(%t6) outs(%t7 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:      hir.set_current_stream %s2
// CHECK-NEXT:      hir.synchronize_stream %s_1
// CHECK-NEXT:    } {stream_axis = "iStreamIdx6{i0}"}
// CHECK-NEXT:    hir.return %t3 : !fuser.tensor<?x?xf32>
