// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// seed 001, MultiDeviceExecutorLowerStreamTest.TwoSetOps: both sets are
// stream-parallel on axis 0, so their for-loops are merged into one:
//   T1 = ALLOCATE(T1[iStreamIdx2{i0}, iS3{i2}])
//   T2 = ALLOCATE(T2[iStreamIdx4{i0}, iS5{i2}])
//   FOR StreamIdx in iStreamIdx2{i0}:
//     GetCurrentStream into Stream 0
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     Synchronize Stream 0
//     T3 = HirAliasSelect( T0, axis = iS0{i0}, index = StreamIdx )
//     T4 = HirAliasSelect( T1, axis = iStreamIdx2{i0}, index = StreamIdx )
//     T4 = Set( T3, cache_op=Streaming )
//     T5 = HirAliasSelect( T2, axis = iStreamIdx4{i0}, index = StreamIdx )
//     T5 = Set( T4, cache_op=Streaming )
//     SetCurrentStream to Stream 0
//     Synchronize Stream ( StreamIdx % numberOfStreams )

builtin.module {
  fuser.fusion @set(%x : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
    %y = fuser.set %x : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
    fuser.output %y : !fuser.tensor<?xf32>
  }
  hir.program @main(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
    %i0 = fuser.size %t0 {dim = 0 : i64} : (!fuser.tensor<?x?xf32>) -> i64
    %i2 = fuser.size %t0 {dim = 1 : i64} : (!fuser.tensor<?x?xf32>) -> i64
    %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) : !fuser.tensor<?x?xf32>
    %t2 = hir.allocate sizes(%i0, %i2 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    hir.for %stream_idx = %c0 to %i0 step %c1 : i64 {
      %s0 = hir.get_current_stream : !hir.stream
      %s = hir.stream_for_index %stream_idx : i64
      hir.set_current_stream %s
      hir.synchronize_stream %s0
      %t3 = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %t4 = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %r4 = hir.launch @set(%t3) outs(%t4 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      %t5 = hir.alias_select %t2[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %r5 = hir.launch @set(%t4) outs(%t5 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      hir.set_current_stream %s0
      hir.synchronize_stream %s
    } {stream_axis = "iStreamIdx2{i0}"}
    hir.deallocate %t1 : !fuser.tensor<?x?xf32>
    hir.return %t2 : !fuser.tensor<?x?xf32>
  }
}

// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK:         %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    %t2 = hir.allocate sizes(%i0, %i2 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK:         hir.for %stream_idx = %c0 to %i0 step %c1 : i64 {
// CHECK-NEXT:      %s0 = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %s = hir.stream_for_index %stream_idx : i64
// CHECK-NEXT:      hir.set_current_stream %s
// CHECK-NEXT:      hir.synchronize_stream %s0
// CHECK-NEXT:      %t3 = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %t4 = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %r4 = hir.launch @set(%t3) outs(%t4 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %t5 = hir.alias_select %t2[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %r5 = hir.launch @set(%t4) outs(%t5 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:      hir.set_current_stream %s0
// CHECK-NEXT:      hir.synchronize_stream %s
// CHECK-NEXT:    } {stream_axis = "iStreamIdx2{i0}"}
// CHECK-NEXT:    hir.deallocate %t1 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    hir.return %t2 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:  }
// CHECK-NOT:   hir.for
