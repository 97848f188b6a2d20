// RUN: fuser-opt %s --propagate-shardings --split-input-file --verify-diagnostics | filecheck %s

// Shardings that cannot meet are diagnostics naming the op and its operands, before
// anything runs.

fuser.fusion @two_axes(%a: !fuser.tensor<8x8xf32>, %b: !fuser.tensor<8x8xf32>) -> !fuser.tensor<8x8xf32> {
  %c = fuser.add %a, %b : (!fuser.tensor<8x8xf32>, !fuser.tensor<8x8xf32>) -> !fuser.tensor<8x8xf32>
  iterdomain.shard %a {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x8xf32>
  iterdomain.shard %b {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x8xf32>
  fuser.output %c : !fuser.tensor<8x8xf32>
}
// CHECK: propagate-shardings: fuser.add: operand #0 is sharded on axis 0 but operand #1 on axis 1 (mesh [0, 1]); one elementwise op runs on one sharded axis

// -----

fuser.fusion @two_d(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<32x16xf32>) -> !fuser.tensor<8x32xf32> {
  %y = fuser.linear %x, %w : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>) -> !fuser.tensor<8x32xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<32x16xf32>
  fuser.output %y : !fuser.tensor<8x32xf32>
}
// CHECK: propagate-shardings: fuser.linear: the input is sharded on axis 0 and the weight on axis 0 (output features): a 2-D sharding one mesh axis cannot hold

// -----

fuser.fusion @max(%x: !fuser.tensor<8x16xf32>) -> !fuser.tensor<16xf32> {
  %y = fuser.max %x {dims = array<i64: 0>} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x16xf32>
  fuser.output %y : !fuser.tensor<16xf32>
}
// CHECK: propagate-shardings: fuser.max: it reduces over axis 0, which is sharded; only a sum decomposes into local sums and an allreduce

// -----

fuser.fusion @meshes(%a: !fuser.tensor<8xf32>, %b: !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %c = fuser.add %a, %b : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  iterdomain.shard %a {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8xf32>
  iterdomain.shard %b {sharding = #iterdomain.sharding<[0, 1, 2, 3]>} : !fuser.tensor<8xf32>
  fuser.output %c : !fuser.tensor<8xf32>
}
// CHECK: propagate-shardings: @meshes declares shardings on 2 meshes ([0, 1, 2, 3], [0, 1]); a fusion runs on one mesh

// -----

fuser.fusion @reshape(%x: !fuser.tensor<8x16xf32>) -> !fuser.tensor<128xf32> {
  %y = fuser.reshape %x {new_shape = array<i64: 128>, view = #fuser.view<merge 2>} : !fuser.tensor<8x16xf32> -> !fuser.tensor<128xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x16xf32>
  fuser.output %y : !fuser.tensor<128xf32>
}
// CHECK: propagate-shardings: fuser.reshape: operand #0 is sharded on axis 0 of mesh [0, 1], and sharded operands of fuser.reshape are not supported; declare it replicated

// -----

fuser.fusion @move(%x: !fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32> {
  %y = fuser.neg %x : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %y {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x16xf32>
  fuser.output %y : !fuser.tensor<8x16xf32>
}
// CHECK: propagate-shardings: fuser.neg: its result is sharded on axis 0 of mesh [0, 1], but it is declared sharded on axis 1 of mesh [0, 1]; moving a sharded axis (an all-to-all) is not supported
