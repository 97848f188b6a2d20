// Seed 003's split (2x10x40 -> 2x10x2x20) inside a pointwise fusion: see
// docs/passes.md, schedule-fusions, "Reshapes".
fuser.fusion @split40(%x : !fuser.tensor<2x10x40xf32>, %y : !fuser.tensor<2x10x2x20xf32>) -> !fuser.tensor<2x10x2x20xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 2, 10, 2, 20>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
  %a = fuser.add %r, %y : (!fuser.tensor<2x10x2x20xf32>, !fuser.tensor<2x10x2x20xf32>) -> !fuser.tensor<2x10x2x20xf32>
  fuser.output %a : !fuser.tensor<2x10x2x20xf32>
}
