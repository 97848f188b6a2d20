// RUN: not fuser-opt %s --canonicalize 2>&1 | filecheck %s
// RUN: fuser-opt %s --canonicalize --verify-diagnostics | filecheck %s --check-prefix=DIAG

// canonicalize never runs on IR that does not verify: the driver reports the
// verifier error (exit 1, no traceback) before the pass.

fuser.fusion @bad(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<5x6xf32> {
  %0 = fuser.reshape %a {new_shape = array<i64: 5, 6>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<5x6xf32>
  %1 = fuser.reshape %0 {new_shape = array<i64: 5, 6>} : !fuser.tensor<5x6xf32> -> !fuser.tensor<5x6xf32>
  fuser.output %1 : !fuser.tensor<5x6xf32>
}

// CHECK: fuser-opt: error: fuser.reshape: sizes [4, 8] and [5, 6] do not multiply out
// CHECK-NOT: Traceback
// DIAG: fuser.reshape: sizes [4, 8] and [5, 6] do not multiply out
// DIAG-NOT: fuser.fusion @bad
