// Reduction + broadcast + pointwise (seed 000, nvfuser_fusion_id1): the inner
// reduction cannot be fused with its consumer by the reduction scheduler, so the
// segmenter cuts it into [T0, T2, T3] and [T1, T3, T4]. Extents are symbolic.
//
//   fuser-run examples/sum_broadcast_add.mlir --shapes 128x1024 128x1024
fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}
