// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=3x1003"},schedule-fusions' 2>&1 | filecheck %s

// A partial last vector is allowed only where one axis moves
// (schedule-fusions-pointwise-partial.mlir): on rows of 1003 a vector of 4 would
// cross a row's end, so the width must divide the row.

// CHECK: error: schedule-fusions: @rows: vectorization = 4 does not divide the innermost extent 1003 of y (shape [3, 1003])

fuser.fusion @rows(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> attributes {fuser.schedule = {kind = "pointwise", break_point = 0 : i64, vectorization = 4 : i64, unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 6, 1, 1>}} {
  %y = fuser.exp %x : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}
