// RUN: not fuser-opt %s -p 'segment' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not fuser-opt %s -p 'segment{sizes="0=4x8"}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4x8"},segment{gpu=a100}' 2>&1 | filecheck %s --check-prefix=GPU

// Segmentation decides at concrete sizes: symbolic inputs must be bound by bind-sizes
// first (segment has no sizes option of its own; fuser-opt says where they go).
// SYMBOLIC: fuser-opt: error: segment: input #0 of @row_sum has symbolic extents (!fuser.tensor<?x?xf32>); bind the program's input shapes first with bind-sizes{sizes="0=..."}
// SYMBOLIC-NOT: Traceback
// OPTION: fuser-opt: error: Provided arguments ["sizes"] not found in expected arguments ["gpu", "preallocate"]
// OPTION-NEXT: fuser-opt: note: input sizes are bound once, by bind-sizes, before the passes that need them: -p 'bind-sizes{sizes="0=..."},PASS'
// GPU: fuser-opt: error: segment: unknown GPU target 'a100'; expected one of h100, h200 or device

fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}
