// RUN: fuser-opt %s --propagate-shardings --split-input-file | filecheck %s
// RUN: fuser-opt %s --propagate-shardings --propagate-shardings --split-input-file | filecheck %s

// Sharding propagation (the pass is idempotent: the second RUN line).

// Tensor-parallel MLP: column-sharded w1 (and b1), row-sharded w2. The first linear
// shards its output features; the second contracts the sharded axis, so it is split
// into a local linear (partial sums), an allreduce and the bias added once.
fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>, %b1: !fuser.tensor<32xf32>, %w2: !fuser.tensor<16x32xf32>, %b2: !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32> {
  %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>, !fuser.tensor<32xf32>) -> !fuser.tensor<8x32xf32>
  %g = fuser.tanh %h : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %y = fuser.linear %g, %w2, %b2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>, !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %b1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<32xf32>
  iterdomain.shard %w2 {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<16x32xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
// CHECK-LABEL: fuser.fusion @mlp
// CHECK-NEXT:    %h = fuser.linear %x, %w1, %b1
// CHECK-NEXT:    %g = fuser.tanh %h
// CHECK-NEXT:    %0 = fuser.linear %g, %w2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:    %1 = fuser.reshard %0 {from = #iterdomain.sharding<[0, 1], partial>, to = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    %2 = fuser.broadcast %b2 {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<1x16xf32>
// CHECK-NEXT:    %y = fuser.add %1, %2
// CHECK-NEXT:    iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %b1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %w2 {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>}
// CHECK-NEXT:    iterdomain.shard %b2 {sharding = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    iterdomain.shard %h {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>}
// CHECK-NEXT:    iterdomain.shard %g {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>}
// CHECK-NEXT:    iterdomain.shard %0 {sharding = #iterdomain.sharding<[0, 1], partial>}
// CHECK-NEXT:    iterdomain.shard %1 {sharding = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    iterdomain.shard %2 {sharding = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    iterdomain.shard %y {sharding = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    fuser.output %y

// -----

// Sequence-parallel layer norm: rows sharded. The row statistics keep the sharding
// (a sum over the unsharded hidden axis); the weight is broadcast straight into each
// device's rows (a new axis of the broadcast): no communication, no copy.
fuser.fusion @layer_norm(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8xf32>
  %n = fuser.constant 0.0625 : f32
  %m = fuser.mul %s, %n : (!fuser.tensor<8xf32>, f32) -> !fuser.tensor<8xf32>
  %mb = fuser.broadcast_in_dim %m {shape = array<i64: 8, 16>, broadcast_dims = array<i64: 0>} : !fuser.tensor<8xf32> -> !fuser.tensor<8x16xf32>
  %c = fuser.sub %x, %mb : (!fuser.tensor<8x16xf32>, !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  %wb = fuser.broadcast_in_dim %w {shape = array<i64: 8, 16>, broadcast_dims = array<i64: 1>} : !fuser.tensor<16xf32> -> !fuser.tensor<8x16xf32>
  %y = fuser.mul %c, %wb : (!fuser.tensor<8x16xf32>, !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x16xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
// CHECK-LABEL: fuser.fusion @layer_norm
// CHECK-NOT:     fuser.reshard
// CHECK:         iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %w {sharding = #iterdomain.sharding<[0, 1]>}
// CHECK-NEXT:    iterdomain.shard %s {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %m {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %mb {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %c {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %wb {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %y {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}

// -----

// A sum over the sharded axis: local sums, then an allreduce before the consumer;
// an output declared replicated while computed sharded is allgathered.
fuser.fusion @sums(%x: !fuser.tensor<8x16xf32>) -> (!fuser.tensor<16xf32>, !fuser.tensor<8x16xf32>) {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<16xf32>
  %e = fuser.exp %s : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xf32>
  %n = fuser.neg %x : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1, 2, 3], DIDx = 0>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %n {sharding = #iterdomain.sharding<[0, 1, 2, 3]>} : !fuser.tensor<8x16xf32>
  fuser.output %e, %n : !fuser.tensor<16xf32>, !fuser.tensor<8x16xf32>
}
// CHECK-LABEL: fuser.fusion @sums
// CHECK-NEXT:    %s = fuser.sum %x
// CHECK-NEXT:    %0 = fuser.reshard %s {from = #iterdomain.sharding<[0, 1, 2, 3], partial>, to = #iterdomain.sharding<[0, 1, 2, 3]>}
// CHECK-NEXT:    %e = fuser.exp %0
// CHECK-NEXT:    %n = fuser.neg %x
// CHECK-NEXT:    %[[G:.*]] = fuser.reshard %n {from = #iterdomain.sharding<[0, 1, 2, 3], DIDx = 0>, to = #iterdomain.sharding<[0, 1, 2, 3]>}
// CHECK:         fuser.output %e, %[[G]]

// -----

// A fusion without declarations is left alone.
fuser.fusion @plain(%x: !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %y = fuser.neg %x : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %y : !fuser.tensor<8xf32>
}
// CHECK-LABEL: fuser.fusion @plain
// CHECK-NEXT:    %y = fuser.neg %x
// CHECK-NEXT:    fuser.output %y

// -----

// Row-parallel linear into a sequence-parallel output: the product's partial sums,
// declared row-sharded through a set, become one reduce-scatter (partial -> DIDx = 0),
// not an allreduce followed by a local slice.
fuser.fusion @mm_rs(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32> {
  %y = fuser.linear %x, %w : (!fuser.tensor<8x16xf32>, !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32>
  %ys = fuser.set %y : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8x12xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<12x16xf32>
  iterdomain.shard %ys {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x12xf32>
  fuser.output %ys : !fuser.tensor<8x12xf32>
}
// CHECK-LABEL: fuser.fusion @mm_rs
// CHECK-NEXT:    %y = fuser.linear %x, %w
// CHECK-NEXT:    %ys = fuser.reshard %y {from = #iterdomain.sharding<[0, 1], partial>, to = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>}
// CHECK-NEXT:    iterdomain.shard %w {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>}
// CHECK-NEXT:    iterdomain.shard %y {sharding = #iterdomain.sharding<[0, 1], partial>}
// CHECK-NEXT:    iterdomain.shard %ys {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>}
// CHECK-NEXT:    fuser.output %ys
