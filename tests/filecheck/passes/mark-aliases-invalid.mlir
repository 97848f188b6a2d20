// RUN: not fuser-opt %s --mark-aliases 2>&1 | filecheck %s

// An in-place output whose type does not match its input is rejected by the
// verifier before the pass: a diagnostic, no traceback.

fuser.fusion @f(%x : !fuser.tensor<8xf32>) -> () {
  %r = fuser.reshape %x {new_shape = array<i64: 2, 4>} : !fuser.tensor<8xf32> -> !fuser.tensor<2x4xf32>
  fuser.output %r : !fuser.tensor<2x4xf32> {alias_inputs = array<i64: 0>}
}

// CHECK: fuser-opt: error: fuser.output: output #0 of type !fuser.tensor<2x4xf32> cannot be written in place into input #0 of type !fuser.tensor<8xf32>
// CHECK-NOT: Traceback
