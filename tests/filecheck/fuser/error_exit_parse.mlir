// RUN: not fuser-opt %s 2>&1 | filecheck %s
// RUN: fuser-opt %s --parsing-diagnostics | filecheck %s --check-prefix=DIAG

// A parse error (an unknown !fuser.tensor parameter) is reported with its location,
// exit status 1, no traceback; with --parsing-diagnostics it goes to stdout, exit 0.

fuser.fusion @f(%a : !fuser.tensor<4x8xf32, layout=[0, 1]>) -> !fuser.tensor<4x8xf32> {
  fuser.output %a : !fuser.tensor<4x8xf32>
}

// CHECK: fuser-opt: error: parse error at {{.*}}error_exit_parse.mlir:7:
// CHECK: unknown !fuser.tensor parameter 'layout' (expected contiguity or stride_order)
// CHECK-NOT: Traceback

// DIAG: unknown !fuser.tensor parameter 'layout'
