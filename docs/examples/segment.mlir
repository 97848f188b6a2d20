// docs/passes.md, segment: a row sum whose result is summed again over the rows.
// The reductions reduce different axes, so no single scheduler takes the fusion.
//   fuser-opt docs/examples/segment.mlir -p 'segment{sizes="0=128x1024,1=128x1024"}'
fuser.fusion @two_sums(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<f32>) {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t5 = fuser.sum %t2 {dims = array<i64: 0>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<f32>
  fuser.output %t4, %t5 : !fuser.tensor<?x?xf32>, !fuser.tensor<f32>
}
