// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// seed 001, MultiDeviceExecutorLowerStreamTest.SingleSetOp:
//   T1 = ALLOCATE(T1[iStreamIdx2{i0}, iS3{i2}], size=(i0 * i2))
//   FOR StreamIdx in iStreamIdx2{i0}:
//     GetCurrentStream into Stream 0
//     SetCurrentStream to Stream ( StreamIdx % numberOfStreams )
//     Synchronize Stream 0
//     T2 = HirAliasSelect( T0, axis = iS0{i0}, index = StreamIdx )
//     T3 = HirAliasSelect( T1, axis = iStreamIdx2{i0}, index = StreamIdx )
//     T3 = Set( T2, cache_op=Streaming )
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
    %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    hir.for %stream_idx = %c0 to %i0 step %c1 : i64 {
      %s0 = hir.get_current_stream : !hir.stream
      %s = hir.stream_for_index %stream_idx : i64
      hir.set_current_stream %s
      hir.synchronize_stream %s0
      %t2 = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %t3 = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
      %r = hir.launch @set(%t2) outs(%t3 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
      hir.set_current_stream %s0
      hir.synchronize_stream %s
    } {stream_axis = "iStreamIdx2{i0}"}
    hir.return %t1 : !fuser.tensor<?x?xf32>
  }
}

// CHECK-LABEL: fuser.fusion @set
// CHECK-LABEL: hir.program @main(%t0: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK-NEXT:    %i0 = fuser.size %t0 {dim = 0 : i64} : (!fuser.tensor<?x?xf32>) -> i64
// CHECK-NEXT:    %i2 = fuser.size %t0 {dim = 1 : i64} : (!fuser.tensor<?x?xf32>) -> i64
// CHECK-NEXT:    %t1 = hir.allocate sizes(%i0, %i2 : i64, i64) {preallocated} : !fuser.tensor<?x?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : i64
// CHECK-NEXT:    %c1 = arith.constant 1 : i64
// CHECK-NEXT:    hir.for %stream_idx = %c0 to %i0 step %c1 : i64 {
// CHECK-NEXT:      %s0 = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %s = hir.stream_for_index %stream_idx : i64
// CHECK-NEXT:      hir.set_current_stream %s
// CHECK-NEXT:      hir.synchronize_stream %s0
// CHECK-NEXT:      %t2 = hir.alias_select %t0[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %t3 = hir.alias_select %t1[axis = 0, %stream_idx] : !fuser.tensor<?x?xf32>, i64 -> !fuser.tensor<?xf32>
// CHECK-NEXT:      %r = hir.launch @set(%t2) outs(%t3 : !fuser.tensor<?xf32>) : (!fuser.tensor<?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:      hir.set_current_stream %s0
// CHECK-NEXT:      hir.synchronize_stream %s
// CHECK-NEXT:    } {stream_axis = "iStreamIdx2{i0}"}
// CHECK-NEXT:    hir.return %t1 : !fuser.tensor<?x?xf32>
// CHECK-NEXT:  }
