// docs/passes.md, select-schedulers and schedule-fusions: x * x + broadcast(w).
//   fuser-opt docs/examples/scale_bias.mlir -p 'select-schedulers{sizes="0=64x1024,1=1024"}'
//   fuser-opt docs/examples/scale_bias.mlir -p 'select-schedulers{sizes="0=64x1024,1=1024"},schedule-fusions{sizes="0=64x1024,1=1024"}'
fuser.fusion @scale_bias(%x : !fuser.tensor<?x?xf32>, %w : !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32> {
  %t = fuser.mul %x, %x : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %wb = fuser.broadcast %w {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<1x?xf32>
  %y = fuser.add %t, %wb : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}
