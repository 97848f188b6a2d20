// The transpose between Matmul2 and the output Linear of multi-head attention,
// with bookend views (seed 002, nvfuser_fusion_id7): 768x128x64 is viewed as
// 64x12x128x64, permuted [0, 2, 1, 3], copied (set), and viewed as 64x128x768 and
// then 8192x768. Only the permute + set moves data; the views are metadata.
//
//   fuser-opt examples/transpose_bookend_views.mlir
//   fuser-run examples/transpose_bookend_views.mlir
fuser.fusion @transpose(%t0 : !fuser.tensor<768x128x64xf32>) -> !fuser.tensor<8192x768xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 12, 128, 64>, view = #fuser.view<split [64, 12], keep, keep>} : !fuser.tensor<768x128x64xf32> -> !fuser.tensor<64x12x128x64xf32>
  %t2 = fuser.permute %t1 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %t3 = fuser.set %t2 : (!fuser.tensor<64x128x12x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %t4 = fuser.reshape %t3 {new_shape = array<i64: 64, 128, 768>, view = #fuser.view<keep, keep, merge 2>} : !fuser.tensor<64x128x12x64xf32> -> !fuser.tensor<64x128x768xf32>
  %t5 = fuser.reshape %t4 {new_shape = array<i64: 8192, 768>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<64x128x768xf32> -> !fuser.tensor<8192x768xf32>
  fuser.output %t5 : !fuser.tensor<8192x768xf32>
}
