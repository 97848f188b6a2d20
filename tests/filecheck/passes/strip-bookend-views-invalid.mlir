// RUN: not fuser-opt %s --strip-bookend-views 2>&1 | filecheck %s

// A program that launches a fusion with an argument of the wrong type is
// rejected by the verifier before the pass runs: a diagnostic, no traceback.

fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<32xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 32>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<32xf32>
  fuser.output %r : !fuser.tensor<32xf32>
}
hir.program @main(%0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<32xf32> {
  %1 = hir.launch @f(%0) : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<32xf32>
  hir.return %1 : !fuser.tensor<32xf32>
}

// CHECK: fuser-opt: error: hir.launch: argument #0 has type !fuser.tensor<8x4xf32>, but @f expects !fuser.tensor<4x8xf32>
// CHECK-NOT: Traceback
