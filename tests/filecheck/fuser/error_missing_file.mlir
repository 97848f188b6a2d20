// RUN: not fuser-opt %t.does-not-exist.mlir 2>&1 | filecheck %s
// RUN: not fuser-run %t.does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=TOOL

// A missing input file is a one-line error and exit status 1.

// CHECK: fuser-opt: error: cannot open input file '{{.*}}does-not-exist.mlir': no such file
// CHECK-NOT: Traceback
// TOOL: fuser-run: error: cannot open input file
