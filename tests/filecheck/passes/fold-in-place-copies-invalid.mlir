// RUN: not fuser-opt %s --fold-in-place-copies 2>&1 | filecheck %s

// A copy launch whose result is aliased to a buffer of another type: the verifier
// rejects the program before the pass runs, naming the op; no traceback.

fuser.fusion @copy(%n : !fuser.tensor<64xf32>) -> !fuser.tensor<64xf32> {
  %0 = fuser.segment_set %n : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %0 : !fuser.tensor<64xf32>
}
hir.program @main(%0 : !fuser.tensor<64xf32>, %1 : !fuser.tensor<32xf32>) {
  %2 = hir.launch @copy(%0) : (!fuser.tensor<64xf32>) -> !fuser.tensor<64xf32>
  hir.alias %2, %1 : !fuser.tensor<64xf32>, !fuser.tensor<32xf32>
  hir.return
}

// CHECK: fuser-opt: error: hir.alias: value of type !fuser.tensor<64xf32> cannot alias target of type !fuser.tensor<32xf32>
// CHECK-NOT: Traceback
