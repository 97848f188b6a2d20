// docs/passes.md, mark-aliases: an in-place update racing with a broadcast read,
// an output that is a view of an input, and a fusion of views only.
//   fuser-opt docs/examples/mark_aliases.mlir --mark-aliases
fuser.fusion @racy(%x : !fuser.tensor<8xf32>, %y : !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>) {
  %b = fuser.broadcast %x {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<8xf32>) -> !fuser.tensor<1x8xf32>
  %s = fuser.add %y, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<1x8xf32>) -> !fuser.tensor<4x8xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %n = fuser.add %x, %c : (!fuser.tensor<8xf32>, f64) -> !fuser.tensor<8xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 2, 4>} : !fuser.tensor<8xf32> -> !fuser.tensor<2x4xf32>
  fuser.output %s, %r, %n : !fuser.tensor<4x8xf32>, !fuser.tensor<2x4xf32>, !fuser.tensor<8xf32> {alias_inputs = array<i64: -1, -1, 0>}
}
fuser.fusion @views_only(%x : !fuser.tensor<4x6xf32>) -> (!fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>) {
  %p = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<4x6xf32>) -> !fuser.tensor<6x4xf32>
  %r = fuser.reshape %x {new_shape = array<i64: 24>} : !fuser.tensor<4x6xf32> -> !fuser.tensor<24xf32>
  fuser.output %p, %r : !fuser.tensor<6x4xf32>, !fuser.tensor<24xf32>
}
