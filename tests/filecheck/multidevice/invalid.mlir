// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Malformed multi-device IR: the verifier names the op, the operand and the problem.

fuser.fusion @f(%x: !fuser.tensor<6x4xf32>) -> !fuser.tensor<6x4xf32> {
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1, 2, 3], DIDx = 0>} : !fuser.tensor<6x4xf32>
  fuser.output %x : !fuser.tensor<6x4xf32>
}
// CHECK: iterdomain.shard: axis 0 of shape [6, 4] has extent 6, which the 4 devices of mesh [0, 1, 2, 3] do not divide

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 2>} : !fuser.tensor<8x4xf32>
  fuser.output %x : !fuser.tensor<8x4xf32>
}
// CHECK: iterdomain.shard: axis 2 is out of range for shape [8, 4]

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x4xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1]>} : !fuser.tensor<8x4xf32>
  fuser.output %x : !fuser.tensor<8x4xf32>
}
// CHECK: iterdomain.shard: the tensor operand has 2 iterdomain.shard ops, expected one

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 0]>} : !fuser.tensor<8x4xf32>
  fuser.output %x : !fuser.tensor<8x4xf32>
}
// CHECK: #iterdomain.sharding: device ids must be distinct, got [0, 0]

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %y = fuser.reshard %x {from = #iterdomain.sharding<[0, 1], DIDx = 0>, to = #iterdomain.sharding<[0, 1], DIDx = 1>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  fuser.output %y : !fuser.tensor<8x4xf32>
}
// CHECK: fuser.reshard: from axis 0 to axis 1 is an all-to-all, which is not supported; gather first

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %y = fuser.reshard %x {from = #iterdomain.sharding<[0, 1]>, to = #iterdomain.sharding<[0, 1], partial>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  fuser.output %y : !fuser.tensor<8x4xf32>
}
// CHECK: fuser.reshard: the result cannot be partial sums

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %y = fuser.reshard %x {from = #iterdomain.sharding<[0, 1], DIDx = 0>, to = #iterdomain.sharding<[0, 1, 2]>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  fuser.output %y : !fuser.tensor<8x4xf32>
}
// CHECK: fuser.reshard: from mesh [0, 1] and to mesh [0, 1, 2] differ; resharding across meshes is not supported

// -----

fuser.fusion @f(%x: !fuser.tensor<4x4xf32>) -> !fuser.tensor<4x4xf32> {
  %y = fuser.reshard %x {from = #iterdomain.sharding<[0, 1], DIDx = 0>, to = #iterdomain.sharding<[0, 1]>, local} : (!fuser.tensor<4x4xf32>) -> !fuser.tensor<4x4xf32>
  fuser.output %y : !fuser.tensor<4x4xf32>
}
// CHECK: fuser.reshard: result #0 has type !fuser.tensor<4x4xf32>, but the operands give !fuser.tensor<8x4xf32>

// -----

fuser.fusion @f(%x: !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %i0, %i1 = iterdomain.logical %x : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %d = iterdomain.parallelize %i0 to DIDx : !iterdomain.id<8> -> !iterdomain.id<8, DIDx>
  fuser.output %x : !fuser.tensor<8x4xf32>
}
// CHECK: iterdomain.parallelize: DIDx is a device axis, not a kernel loop; shard the tensor with iterdomain.shard

// -----

hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %g = hir.allocate : !fuser.tensor<6x8xf32>
  hir.allgather %x, %g {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<4x8xf32>, !fuser.tensor<6x8xf32>
  hir.return %x : !fuser.tensor<4x8xf32>
}
// CHECK: hir.allgather: output [6, 8] must be [4, 8] with axis 0 times the 2 devices

// -----

hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %g = hir.allocate : !fuser.tensor<4x8xf16>
  hir.allreduce %x, %g {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf16>
  hir.return %x : !fuser.tensor<4x8xf32>
}
// CHECK: hir.allreduce: input !fuser.tensor<4x8xf32> and output !fuser.tensor<4x8xf16> differ in element type or rank

// -----

hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %g = hir.allocate : !fuser.tensor<4x8xf32>
  hir.reduce_scatter %x, %g {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
  hir.return %x : !fuser.tensor<4x8xf32>
}
// CHECK: hir.reduce_scatter: input [4, 8] must be [4, 8] with axis 0 times the 2 devices
