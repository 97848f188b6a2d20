// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s | fuser-opt | filecheck %s

// Multi-device IR round trips: meshes and shardings (#iterdomain.mesh,
// #iterdomain.sharding), shard declarations, fuser.reshard (global, then local) and
// the hir communications.

fuser.fusion @declared(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %y = fuser.neg %x : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  %z = fuser.reshard %y {from = #iterdomain.sharding<[0, 1], DIDx = 0>, to = #iterdomain.sharding<[0, 1]>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x4xf32>
  iterdomain.shard %y {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x4xf32>
  iterdomain.shard %z {sharding = #iterdomain.sharding<[0, 1]>} : !fuser.tensor<8x4xf32>
  fuser.output %z : !fuser.tensor<8x4xf32>
}
// CHECK-LABEL: fuser.fusion @declared
// CHECK-NEXT:    %y = fuser.neg %x
// CHECK-NEXT:    %z = fuser.reshard %y {from = #iterdomain.sharding<[0, 1], DIDx = 0>, to = #iterdomain.sharding<[0, 1]>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
// CHECK-NEXT:    iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x4xf32>
// CHECK-NEXT:    iterdomain.shard %y {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x4xf32>
// CHECK-NEXT:    iterdomain.shard %z {sharding = #iterdomain.sharding<[0, 1]>} : !fuser.tensor<8x4xf32>

fuser.fusion @local(%p: !fuser.tensor<4x8xf32>) -> !fuser.tensor<2x8xf32> attributes {fuser.mesh = #iterdomain.mesh<[0, 1]>} {
  %r = fuser.reshard %p {from = #iterdomain.sharding<[0, 1], partial>, to = #iterdomain.sharding<[0, 1], DIDx = 0>, local} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<2x8xf32>
  fuser.output %r : !fuser.tensor<2x8xf32>
}
// CHECK-LABEL: fuser.fusion @local
// CHECK-SAME:    attributes {fuser.mesh = #iterdomain.mesh<[0, 1]>}
// CHECK-NEXT:    %r = fuser.reshard %p {from = #iterdomain.sharding<[0, 1], partial>, to = #iterdomain.sharding<[0, 1], DIDx = 0>, local} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<2x8xf32>

hir.program @main(%x : !fuser.tensor<4x8xf32>, %j : index) -> !fuser.tensor<8x8xf32> {
  %g = hir.allocate : !fuser.tensor<8x8xf32>
  hir.allgather %x, %g {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<4x8xf32>, !fuser.tensor<8x8xf32>
  hir.allreduce %x, %x {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
  hir.reduce_scatter %g, %x {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<8x8xf32>, !fuser.tensor<4x8xf32>
  hir.shard %g, %x {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<8x8xf32>, !fuser.tensor<4x8xf32>
  hir.broadcast_from %x, %x root(%j : index) {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
  hir.send %x to(%j : index) {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>
  hir.recv %x from(%j : index) {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>
  hir.return %g : !fuser.tensor<8x8xf32>
}
// CHECK-LABEL: hir.program @main
// CHECK-NEXT:    %g = hir.allocate : !fuser.tensor<8x8xf32>
// CHECK-NEXT:    hir.allgather %x, %g {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<4x8xf32>, !fuser.tensor<8x8xf32>
// CHECK-NEXT:    hir.allreduce %x, %x {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
// CHECK-NEXT:    hir.reduce_scatter %g, %x {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<8x8xf32>, !fuser.tensor<4x8xf32>
// CHECK-NEXT:    hir.shard %g, %x {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<8x8xf32>, !fuser.tensor<4x8xf32>
// CHECK-NEXT:    hir.broadcast_from %x, %x root(%j : index) {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
// CHECK-NEXT:    hir.send %x to(%j : index) {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>
// CHECK-NEXT:    hir.recv %x from(%j : index) {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>
