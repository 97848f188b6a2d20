// GELU from a transformer's feed-forward block, with bookend views (seed 002,
// nvfuser_fusion_id10): the fusion reshapes its input 8192x3072 -> 64x128x3072,
// computes 0.5 * x * (1 + erf(x * 0.707107)) and reshapes back to 8192x3072.
// Both reshapes are metadata-only and belong outside the kernel
// (strip-bookend-views).
//
//   fuser-opt examples/gelu_bookend_views.mlir
//   fuser-run examples/gelu_bookend_views.mlir
fuser.fusion @gelu(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>, view = #fuser.view<split [64, 128], keep>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %s2 = fuser.constant 5.000000e-01 : f64
  %t3 = fuser.mul %t1, %s2 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %s4 = fuser.constant 7.071070e-01 : f64
  %t5 = fuser.mul %t1, %s4 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %t6 = fuser.erf %t5 : (!fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %s7 = fuser.constant 1.000000e+00 : f64
  %t8 = fuser.add %t6, %s7 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %t9 = fuser.mul %t3, %t8 : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %t10 = fuser.reshape %t9 {new_shape = array<i64: 8192, 3072>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  fuser.output %t10 : !fuser.tensor<8192x3072xf32>
}
