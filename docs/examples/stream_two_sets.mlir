// docs/passes.md, lower-stream-loops and shrink-stream-buffers: seed 001's TwoSetOps.
// t1 = set(t0), t2 = set(t1), both stream-parallel on axis 0.
//   fuser-opt docs/examples/stream_two_sets.mlir -p 'lower-stream-loops{num-streams=2}'
//   fuser-opt docs/examples/stream_two_sets.mlir -p 'lower-stream-loops{num-streams=2},shrink-stream-buffers'
fuser.fusion @two(%t0 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.set %t1 : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %a0, %a1 = iterdomain.logical %t1 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %as = iterdomain.parallelize %a0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t1 [%as, %a1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  %b0, %b1 = iterdomain.logical %t2 : !fuser.tensor<?x?xf32> -> !iterdomain.id<?>, !iterdomain.id<?>
  %bs = iterdomain.parallelize %b0 to stream : !iterdomain.id<?> -> !iterdomain.id<?, stream>
  iterdomain.loop %t2 [%bs, %b1] : !fuser.tensor<?x?xf32> [!iterdomain.id<?, stream>, !iterdomain.id<?>]
  fuser.output %t2 : !fuser.tensor<?x?xf32>
}
