// RUN: not fuser-opt %s --compute-half-in-float 2>&1 | filecheck %s

// A malformed fusion is diagnosed before the pass runs: the mul's result type
// disagrees with what its operands infer.

fuser.fusion @bad(%0 : !fuser.tensor<8xbf16>) -> !fuser.tensor<8xbf16> {
  %1 = fuser.mul %0, %0 : (!fuser.tensor<8xbf16>, !fuser.tensor<8xbf16>) -> !fuser.tensor<4xbf16>
  fuser.output %1 : !fuser.tensor<4xbf16>
}

// CHECK: error: fuser.mul: result #0 has type !fuser.tensor<4xbf16>, but the operands give !fuser.tensor<8xbf16>
