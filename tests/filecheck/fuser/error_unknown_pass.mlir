// RUN: not fuser-opt %s -p no-such-pass 2>&1 | filecheck %s
// RUN: not fuser-opt %s --canonicalize=no-such-option=1 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not fuser-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=FLAG

// Unknown passes, unknown pass options and unknown flags are errors, exit status 1.

fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  fuser.output %a : !fuser.tensor<4xf32>
}

// CHECK: fuser-opt: error: Unrecognized passes: ['no-such-pass']
// OPT: fuser-opt: error: {{.*}}no_such_option{{.*}} not found
// FLAG: unrecognized arguments: --no-such-flag
