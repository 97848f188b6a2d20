// RUN: not fuser-opt %s --bind-sizes=sizes=0=8x1024 2>&1 | filecheck %s --check-prefix=UNQUOTED
// RUN: not fuser-opt %s -p 'bind-sizes{sizes=0=8x1024' 2>&1 | filecheck %s --check-prefix=UNCLOSED
// RUN: not fuser-opt %s -p ',,' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not fuser-opt %s -t 'cuda{' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=8x1x2"},lower-to-kernels' 2>&1 | filecheck %s --check-prefix=RANK

// Malformed pass options and pipeline strings are diagnostics (exit status 1), never a
// Python traceback; sizes of the wrong rank are rejected by bind-sizes before a lowering indexes them.

fuser.fusion @f(%a : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %0 = fuser.add %a, %a : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %0 : !fuser.tensor<?x?xf32>
}

// UNQUOTED: fuser-opt: error: Error parsing pass pipeline specification:
// UNQUOTED: Malformed pass arguments, expected either a space or `}` here
// UNQUOTED: fuser-opt: note: quote option values holding '=', ',' or spaces
// UNQUOTED-NOT: Traceback
// UNCLOSED: fuser-opt: error: Error parsing pass pipeline specification:
// UNCLOSED-NOT: Traceback
// EMPTY: fuser-opt: error: Error parsing pass pipeline specification:
// EMPTY: Expected pass name here
// TARGET: fuser-opt: error: Error parsing pass pipeline specification:
// TARGET-NOT: Traceback
// RANK: fuser-opt: error: bind-sizes: @f: input #0 has type !fuser.tensor<?x?xf32> but the given shape is [8, 1, 2]
// RANK-NOT: internal error
