// RUN: not fuser-opt %s -p 'bind-sizes' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4x8x2"}' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="3=4x8"}' 2>&1 | filecheck %s --check-prefix=INDEX
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4xq"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4x8,1=4x9"}' 2>&1 | filecheck %s --check-prefix=CLASH

fuser.fusion @f(%x : !fuser.tensor<?x8xf32>, %y : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x8xf32> {
  %z = fuser.add %x, %y : (!fuser.tensor<?x8xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x8xf32>
  fuser.output %z : !fuser.tensor<?x8xf32>
}

// SYMBOLIC: fuser-opt: error: bind-sizes: input #0 of @f has symbolic extents [?, 8]; give them with sizes="0=..."
// RANK: fuser-opt: error: bind-sizes: @f: input #0 has type !fuser.tensor<?x8xf32> but the given shape is [4, 8, 2]
// INDEX: fuser-opt: error: bind-sizes: sizes name input #3 but @f has 2 inputs
// SYNTAX: fuser-opt: error: bind-sizes: bad sizes entry '0=4xq'
// CLASH: fuser-opt: error: bind-sizes: @f: fuser.add:
