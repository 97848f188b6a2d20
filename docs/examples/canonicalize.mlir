// docs/passes.md, canonicalize: view chains, cast chains, set of set, dead code.
//   fuser-opt docs/examples/canonicalize.mlir --canonicalize
fuser.fusion @chains(%a : !fuser.tensor<2x10x40xf32>, %h : !fuser.tensor<2x10x40xf16>) -> (!fuser.tensor<20x2x20xf32>, !fuser.tensor<2x10x40xf64>, !fuser.tensor<2x10x40xf32>) {
  %0 = fuser.reshape %a {new_shape = array<i64: 800>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<800xf32>
  %1 = fuser.reshape %0 {new_shape = array<i64: 20, 2, 20>} : !fuser.tensor<800xf32> -> !fuser.tensor<20x2x20xf32>
  %2 = fuser.cast %h : (!fuser.tensor<2x10x40xf16>) -> !fuser.tensor<2x10x40xf32>
  %3 = fuser.cast %2 : (!fuser.tensor<2x10x40xf32>) -> !fuser.tensor<2x10x40xf64>
  %4 = fuser.set %a : (!fuser.tensor<2x10x40xf32>) -> !fuser.tensor<2x10x40xf32>
  %5 = fuser.set %4 : (!fuser.tensor<2x10x40xf32>) -> !fuser.tensor<2x10x40xf32>
  %6 = fuser.exp %a : (!fuser.tensor<2x10x40xf32>) -> !fuser.tensor<2x10x40xf32>
  fuser.output %1, %3, %5 : !fuser.tensor<20x2x20xf32>, !fuser.tensor<2x10x40xf64>, !fuser.tensor<2x10x40xf32>
}
