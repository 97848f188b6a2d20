// Sequence-parallel x (rows sharded on two devices) gathered into a linear: the set
// declared replicated is the resharding (an allgather).
fuser.fusion @agmm(%x: !fuser.tensor<64x32xf32>, %w: !fuser.tensor<48x32xf32>) -> !fuser.tensor<64x48xf32> {
  %xg = fuser.set %x : (!fuser.tensor<64x32xf32>) -> !fuser.tensor<64x32xf32>
  %y = fuser.linear %xg, %w : (!fuser.tensor<64x32xf32>, !fuser.tensor<48x32xf32>) -> !fuser.tensor<64x48xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<64x32xf32>
  iterdomain.shard %xg {sharding = #iterdomain.sharding<[0, 1]>} : !fuser.tensor<64x32xf32>
  fuser.output %y : !fuser.tensor<64x48xf32>
}
