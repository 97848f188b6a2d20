// RUN: not fuser-opt %s -p 'segment' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not fuser-opt %s -p 'segment{sizes="0=4xq"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not fuser-opt %s -p 'segment{sizes="3=4"}' 2>&1 | filecheck %s --check-prefix=INDEX
// RUN: not fuser-opt %s -p 'segment{sizes="0=4x8x2"}' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not fuser-opt %s -p 'segment{gpu=a100 sizes="0=4x8"}' 2>&1 | filecheck %s --check-prefix=GPU

// SYMBOLIC: fuser-opt: error: segment: input #0 of @row_sum has symbolic extents (!fuser.tensor<?x?xf32>); give the shapes of the program inputs with sizes="0=..."
// SYNTAX: fuser-opt: error: segment: bad sizes entry '0=4xq'; expected INDEX=EXTENTS such as 0=4x1024 (extents joined by 'x'), EXTENTS by position, or - to skip
// INDEX: fuser-opt: error: segment: sizes name input #3 but hir.program @main has 1 inputs
// RANK: fuser-opt: error: segment: sizes gives [4, 8, 2] for input #0 of type !fuser.tensor<?x?xf32>
// GPU: fuser-opt: error: segment: unknown GPU target 'a100'; expected one of h100, h200 or device
// SYMBOLIC-NOT: Traceback

fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}
