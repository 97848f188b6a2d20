// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings' | filecheck %s
// RUN: not fuser-opt %s -p 'localize-shardings' 2>&1 | filecheck %s --check-prefix=UNPROPAGATED

// Per-device types: on two devices the column-sharded w1 [32, 16] is [16, 16] on
// each, the hidden activations [8, 32] are [8, 16], the partial sums keep their
// shape and the reshard becomes a local communication. The input and output
// shardings move to attributes of the fusion.

fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>, %w2: !fuser.tensor<16x32xf32>) -> !fuser.tensor<8x16xf32> {
  %h = fuser.linear %x, %w1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>) -> !fuser.tensor<8x32xf32>
  %g = fuser.tanh %h : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %y = fuser.linear %g, %w2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %w2 {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<16x32xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
// CHECK-LABEL: fuser.fusion @mlp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<16x16xf32>, %w2: !fuser.tensor<16x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-SAME:    fuser.mesh = #iterdomain.mesh<[0, 1]>
// CHECK-SAME:    fuser.input_shardings = [#iterdomain.sharding<[0, 1]>, #iterdomain.sharding<[0, 1], DIDx = 0>, #iterdomain.sharding<[0, 1], DIDx = 1>]
// CHECK-SAME:    fuser.output_shardings = [#iterdomain.sharding<[0, 1]>]
// CHECK-NEXT:    %h = fuser.linear %x, %w1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<16x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:    %g = fuser.tanh %h : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:    %y = fuser.linear %g, %w2 : (!fuser.tensor<8x16xf32>, !fuser.tensor<16x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:    %0 = fuser.reshard %y {from = #iterdomain.sharding<[0, 1], partial>, to = #iterdomain.sharding<[0, 1]>, local} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:    fuser.output %0 : !fuser.tensor<8x16xf32>

// Sequence-parallel statistics on four devices: 8 rows are 2 on each, and the shape
// the broadcast carries is rewritten with them.
fuser.fusion @center(%x: !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8xf32>
  %sb = fuser.broadcast_in_dim %s {shape = array<i64: 8, 16>, broadcast_dims = array<i64: 0>} : !fuser.tensor<8xf32> -> !fuser.tensor<8x16xf32>
  %c = fuser.sub %x, %sb : (!fuser.tensor<8x16xf32>, !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1, 2, 3], DIDx = 0>} : !fuser.tensor<8x16xf32>
  fuser.output %c : !fuser.tensor<8x16xf32>
}
// CHECK-LABEL: fuser.fusion @center(%x: !fuser.tensor<2x16xf32>) -> !fuser.tensor<2x16xf32>
// CHECK-SAME:    fuser.output_shardings = [#iterdomain.sharding<[0, 1, 2, 3], DIDx = 0>]
// CHECK-NEXT:    %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<2x16xf32>) -> !fuser.tensor<2xf32>
// CHECK-NEXT:    %sb = fuser.broadcast_in_dim %s {shape = array<i64: 2, 16>, broadcast_dims = array<i64: 0>} : !fuser.tensor<2xf32> -> !fuser.tensor<2x16xf32>
// CHECK-NEXT:    %c = fuser.sub %x, %sb : (!fuser.tensor<2x16xf32>, !fuser.tensor<2x16xf32>) -> !fuser.tensor<2x16xf32>
// CHECK-NEXT:    fuser.output %c : !fuser.tensor<2x16xf32>

// UNPROPAGATED: error: localize-shardings: @mlp: input #0 has no sharding; run propagate-shardings first
