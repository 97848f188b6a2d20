// RUN: not fuser-opt %s -p 'select-schedulers' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not fuser-opt %s -p 'select-schedulers{sizes="0=4x8"}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4x8"},select-schedulers{gpu=a100}' 2>&1 | filecheck %s --check-prefix=GPU

// The schedulers decide at the extents of the types: bind-sizes binds symbolic ones.
// SYMBOLIC: error: select-schedulers: input #0 of @row_sum has symbolic extents [?, ?]; bind them first with bind-sizes{sizes="0=..."}
// OPTION: error: Provided arguments ["sizes"] not found in expected arguments ["gpu", "debug"]
// OPTION-NEXT: note: input sizes are bound once, by bind-sizes
// GPU: error: select-schedulers: unknown GPU target 'a100'; expected one of h100, h200 or device

fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}
