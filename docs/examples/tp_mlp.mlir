// Tensor-parallel MLP on two devices: w1 column-sharded (its rows, the hidden
// features), w2 row-sharded (its columns, the contraction). x is replicated.
fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>, %w2: !fuser.tensor<16x32xf32>, %b2: !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32> {
  %h = fuser.linear %x, %w1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>) -> !fuser.tensor<8x32xf32>
  %g = fuser.tanh %h : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %y = fuser.linear %g, %w2, %b2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>, !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %w2 {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<16x32xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
