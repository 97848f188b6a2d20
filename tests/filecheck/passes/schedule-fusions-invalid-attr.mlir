// RUN: not fuser-opt %s --split-input-file -p 'schedule-fusions' 2>&1 | filecheck %s

// CHECK: error: fuser.fusion @bad_kind: fuser.schedule: kind must be one of no_op, expr_eval, matmul, communication, pointwise, reduction, inner_persistent, outer_persistent, inner_outer_persistent, transpose, got "fancy"
fuser.fusion @bad_kind(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> attributes {fuser.schedule = {kind = "fancy"}} {
  %y = fuser.exp %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %y : !fuser.tensor<4x8xf32>
}
