// RUN: not fuser-opt %s -p 'select-schedulers{sizes="0=4xq"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not fuser-opt %s -p 'select-schedulers' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not fuser-opt %s -p 'select-schedulers{sizes="0=4x8x2"}' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not fuser-opt %s -p 'select-schedulers{sizes="3=4"}' 2>&1 | filecheck %s --check-prefix=INDEX
// RUN: not fuser-opt %s -p 'select-schedulers{gpu=a100 sizes="0=4x8"}' 2>&1 | filecheck %s --check-prefix=GPU

// SYNTAX: error: select-schedulers: bad sizes entry '0=4xq'; expected INDEX=EXTENTS such as 0=4x1024 (extents joined by 'x'), EXTENTS by position, or - to skip
// SYMBOLIC: error: select-schedulers: input #0 of @row_sum has symbolic extents [?, ?]; give them with sizes="0=..."
// RANK: error: select-schedulers: @row_sum: input #0 has type !fuser.tensor<?x?xf32> but the given shape is [4, 8, 2]
// INDEX: error: select-schedulers: sizes name input #3 but @row_sum has 1 inputs
// GPU: error: select-schedulers: unknown GPU target 'a100'; expected one of h100, h200 or device

fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}
