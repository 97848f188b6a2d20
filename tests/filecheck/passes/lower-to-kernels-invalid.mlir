// RUN: not fuser-opt %s -p lower-to-kernels 2>&1 | filecheck %s
// RUN: not fuser-opt %s -p 'lower-to-kernels{gpu=a100}' 2>&1 | filecheck %s --check-prefix=GPU

// Symbolic extents not bound by bind-sizes: nothing to specialize the kernel for.
fuser.fusion @sym(%x : !fuser.tensor<?x4xf32>) -> !fuser.tensor<?x4xf32> {
  %y = fuser.neg %x : (!fuser.tensor<?x4xf32>) -> !fuser.tensor<?x4xf32>
  fuser.output %y : !fuser.tensor<?x4xf32>
}
// CHECK: fuser-opt: error: lower-to-kernels: input #0 of @sym has symbolic extents [?, 4]; bind them first with bind-sizes{sizes="0=..."}
// CHECK-NOT: Traceback

// GPU: fuser-opt: error: lower-to-kernels: unknown GPU target 'a100'
