// RUN: not fuser-opt %s 2>&1 | filecheck %s

// A malformed view attribute (an unknown step kind) is a parse error naming the
// expected keywords.

fuser.fusion @f(%a : !fuser.tensor<8x4xf32>) -> !fuser.tensor<2x4x4xf32> {
  %r = fuser.reshape %a {new_shape = array<i64: 2, 4, 4>, view = #fuser.view<twist [2, 4], keep>} : !fuser.tensor<8x4xf32> -> !fuser.tensor<2x4x4xf32>
  fuser.output %r : !fuser.tensor<2x4x4xf32>
}

// CHECK: fuser-opt: error: parse error at {{.*}}error_exit_op_syntax.mlir:7:
// CHECK-NOT: Traceback
