// RUN: not fuser-opt %s -p lower-to-kernels 2>&1 | filecheck %s


// A schedule annotation without a kind.
fuser.fusion @bad(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {vectorization = 4 : i64}} {
  %y = fuser.neg %x : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %y : !fuser.tensor<4xf32>
}
// The verifier rejects it before the pass runs.
// CHECK: fuser-opt: error: fuser.fusion @bad: fuser.schedule: kind must be one of no_op, {{.*}}, got None

