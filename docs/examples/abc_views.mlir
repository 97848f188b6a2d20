// docs/passes.md, segment: seed 002's A/B/C case with all three views (A at the input,
// B between the add and the mul, C at the output). One kernel.
//   fuser-opt docs/examples/abc_views.mlir --segment
fuser.fusion @abc_ABC(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  fuser.output %C : !fuser.tensor<64x128x3072xf32>
}
