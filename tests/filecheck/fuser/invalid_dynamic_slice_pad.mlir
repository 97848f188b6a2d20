// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Malformed fuser.dynamic_slice and fuser.dynamic_pad: the verifier names the op, the
// operand and the problem.

// A slice bound per axis: two starts for a rank-1 input.
fuser.fusion @f(%a : !fuser.tensor<8xf32>, %i : i64) -> !fuser.tensor<?xf32> {
  %r = fuser.dynamic_slice %a starts(%i, %i : i64, i64) ends(%i : i64) : !fuser.tensor<8xf32> -> !fuser.tensor<?xf32>
  fuser.output %r : !fuser.tensor<?xf32>
}
// CHECK: fuser.dynamic_slice: needs 1 starts and ends for an input of rank 1, got 2 and 1

// -----

// Slice bounds are integer scalars.
fuser.fusion @f(%a : !fuser.tensor<8xf32>, %i : i64, %x : f64) -> !fuser.tensor<?xf32> {
  %r = fuser.dynamic_slice %a starts(%i : i64) ends(%x : f64) : !fuser.tensor<8xf32> -> !fuser.tensor<?xf32>
  fuser.output %r : !fuser.tensor<?xf32>
}
// CHECK: fuser.dynamic_slice: ends operand #0 must be an integer scalar, got f64

// -----

// Every sliced axis is symbolic in the result.
fuser.fusion @f(%a : !fuser.tensor<8xf32>, %i : i64) -> !fuser.tensor<8xf32> {
  %r = fuser.dynamic_slice %a starts(%i : i64) ends(%i : i64) : !fuser.tensor<8xf32> -> !fuser.tensor<8xf32>
  fuser.output %r : !fuser.tensor<8xf32>
}
// CHECK: fuser.dynamic_slice: result #0 has type !fuser.tensor<8xf32>, but the operands give !fuser.tensor<?xf32>

// -----

// Pad widths come in pairs.
fuser.fusion @f(%a : !fuser.tensor<8xf32>, %v : f32, %w : i64) -> !fuser.tensor<?xf32> {
  %r = fuser.dynamic_pad %a, %v widths(%w) : (!fuser.tensor<8xf32>, f32, i64) -> !fuser.tensor<?xf32>
  fuser.output %r : !fuser.tensor<?xf32>
}
// CHECK: fuser.dynamic_pad: 1 pad widths must be pairs for at most 1 axes

// -----

// Pad widths are integer scalars.
fuser.fusion @f(%a : !fuser.tensor<8xf32>, %v : f32, %w : i64) -> !fuser.tensor<?xf32> {
  %r = fuser.dynamic_pad %a, %v widths(%w, %v) : (!fuser.tensor<8xf32>, f32, i64, f32) -> !fuser.tensor<?xf32>
  fuser.output %r : !fuser.tensor<?xf32>
}
// CHECK: fuser.dynamic_pad: widths operand #1 must be an integer scalar, got f32

// -----

// An axis without a pad pair keeps its extent.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %v : f32, %w : i64) -> !fuser.tensor<?x?xf32> {
  %r = fuser.dynamic_pad %a, %v widths(%w, %w) : (!fuser.tensor<4x8xf32>, f32, i64, i64) -> !fuser.tensor<?x?xf32>
  fuser.output %r : !fuser.tensor<?x?xf32>
}
// CHECK: fuser.dynamic_pad: result #0 has type !fuser.tensor<?x?xf32>, but the operands give !fuser.tensor<4x?xf32>
