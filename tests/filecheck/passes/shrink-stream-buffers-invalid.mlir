// RUN: not fuser-opt %s --shrink-stream-buffers 2>&1 | filecheck %s

// A stream loop whose worker stream count is not positive: the verifier rejects it
// before the pass runs, naming the op; no traceback.
hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  hir.for %i = %c0 to %c4 step %c1 {
    %s = hir.stream_for_index %i {num_streams = 0 : i64} : index
  }
  hir.return %x : !fuser.tensor<4x8xf32>
}

// CHECK: hir.stream_for_index: num_streams 0 must be positive
// CHECK-NOT: Traceback
