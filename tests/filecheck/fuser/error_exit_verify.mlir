// RUN: not fuser-opt %s 2>&1 | filecheck %s
// RUN: not fuser-opt %s --canonicalize 2>&1 | filecheck %s --check-prefix=NOTRACE

// Without --verify-diagnostics a verifier error is a diagnostic on stderr naming the
// op and the problem, exit status 1, and no Python traceback.

fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %b : !fuser.tensor<3x8xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.add %a, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<3x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}

// CHECK: fuser-opt: error: fuser.add: shapes [4, 8], [3, 8] do not broadcast
// CHECK: Operation does not verify
// CHECK-NOT: Traceback

// NOTRACE-NOT: Traceback
// NOTRACE: fuser.add: shapes [4, 8], [3, 8] do not broadcast
// NOTRACE-NOT: Traceback
