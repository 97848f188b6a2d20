// RUN: fuser-opt %s --split-input-file --verify-diagnostics -p 'lower-stream-loops' | filecheck %s
// RUN: not fuser-opt %s -p 'lower-stream-loops{num-streams=-1}' 2>&1 | filecheck %s --check-prefix=OPTION

// OPTION: error: lower-stream-loops: num-streams=-1 must be positive (or 0 for the runtime's stream count)

// A split stream axis.
fuser.fusion @split(%t0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %o, %in = iterdomain.split %i0 by 2 : !iterdomain.id<8> -> !iterdomain.id<4>, !iterdomain.id<2>
  %s = iterdomain.parallelize %o to stream : !iterdomain.id<4> -> !iterdomain.id<4, stream>
  iterdomain.loop %t1 [%s, %in, %i1] : !fuser.tensor<8x4xf32> [!iterdomain.id<4, stream>, !iterdomain.id<2>, !iterdomain.id<4>]
  fuser.output %t1 : !fuser.tensor<8x4xf32>
}
// CHECK: lower-stream-loops: @split: the stream id of %t1 comes from iterdomain.split; a stream axis must be a logical id parallelized directly (split or merged stream axes are not supported)

// -----

// A merged stream axis.
fuser.fusion @merged(%t0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %m = iterdomain.merge %i0, %i1 : !iterdomain.id<8>, !iterdomain.id<4> -> !iterdomain.id<32>
  %s = iterdomain.parallelize %m to stream : !iterdomain.id<32> -> !iterdomain.id<32, stream>
  iterdomain.loop %t1 [%s] : !fuser.tensor<8x4xf32> [!iterdomain.id<32, stream>]
  fuser.output %t1 : !fuser.tensor<8x4xf32>
}
// CHECK: lower-stream-loops: @merged: the stream id of %t1 comes from iterdomain.merge; a stream axis must be a logical id parallelized directly (split or merged stream axes are not supported)

// -----

// A stream-parallel fusion input.
fuser.fusion @input(%t0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %t1 = fuser.set %t0 : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  %i0, %i1 = iterdomain.logical %t0 : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %s = iterdomain.parallelize %i0 to stream : !iterdomain.id<8> -> !iterdomain.id<8, stream>
  iterdomain.loop %t0 [%s, %i1] : !fuser.tensor<8x4xf32> [!iterdomain.id<8, stream>, !iterdomain.id<4>]
  fuser.output %t1 : !fuser.tensor<8x4xf32>
}
// CHECK: lower-stream-loops: @input: input %t0 is stream-parallel; only tensors computed by the fusion can be (the input is already in memory)

// -----

// A reduction of its stream axis (keepdim keeps the reduced axis in the result).
fuser.fusion @reduced(%t0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<1x4xf32> {
  %t1 = fuser.sum %t0 {dims = array<i64: 0>, keepdim = true} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<1x4xf32>
  %r0, %i1 = iterdomain.logical %t1 : !fuser.tensor<1x4xf32> -> !iterdomain.id<8, reduction>, !iterdomain.id<4>
  %s = iterdomain.parallelize %r0 to stream : !iterdomain.id<8, reduction> -> !iterdomain.id<8, reduction, stream>
  iterdomain.loop %t1 [%s, %i1] : !fuser.tensor<1x4xf32> [!iterdomain.id<8, reduction, stream>, !iterdomain.id<4>]
  fuser.output %t1 : !fuser.tensor<1x4xf32>
}
// CHECK: lower-stream-loops: @reduced: the stream id of %t1 is reduction id #0; a reduced axis cannot be stream-parallel

// -----

// A view cannot be stream-parallel.
fuser.fusion @view(%t0 : !fuser.tensor<8x4xf32>) -> !fuser.tensor<4x8xf32> {
  %t1 = fuser.permute %t0 {dims = array<i64: 1, 0>} : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<4x8xf32>
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  %s = iterdomain.parallelize %i0 to stream : !iterdomain.id<4> -> !iterdomain.id<4, stream>
  iterdomain.loop %t1 [%s, %i1] : !fuser.tensor<4x8xf32> [!iterdomain.id<4, stream>, !iterdomain.id<8>]
  fuser.output %t1 : !fuser.tensor<4x8xf32>
}
// CHECK: lower-stream-loops: fuser.permute cannot be stream-parallel: only elementwise ops, casts and reductions can be (views, pads, concatenations and indexing ops cannot)

// -----

// An operand broadcast along the stream axis.
fuser.fusion @bcast(%t0 : !fuser.tensor<8x4xf32>, %b : !fuser.tensor<1x4xf32>) -> !fuser.tensor<8x4xf32> {
  %t1 = fuser.add %t0, %b : (!fuser.tensor<8x4xf32>, !fuser.tensor<1x4xf32>) -> !fuser.tensor<8x4xf32>
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %s = iterdomain.parallelize %i0 to stream : !iterdomain.id<8> -> !iterdomain.id<8, stream>
  iterdomain.loop %t1 [%s, %i1] : !fuser.tensor<8x4xf32> [!iterdomain.id<8, stream>, !iterdomain.id<4>]
  fuser.output %t1 : !fuser.tensor<8x4xf32>
}
// CHECK: lower-stream-loops: fuser.add: operand %b broadcasts along stream axis 0; a stream-parallel operand must have the axis
