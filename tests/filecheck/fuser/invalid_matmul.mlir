// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Malformed matrix products: the verifier names the op, the operand and the problem.

fuser.fusion @f(%a : !fuser.tensor<8x4xf32>, %b : !fuser.tensor<5x16xf32>) -> !fuser.tensor<8x16xf32> {
  %r = fuser.matmul %a, %b : (!fuser.tensor<8x4xf32>, !fuser.tensor<5x16xf32>) -> !fuser.tensor<8x16xf32>
  fuser.output %r : !fuser.tensor<8x16xf32>
}
// CHECK: fuser.matmul: the contracted extents differ: 4 in operand a, 5 in operand b

// -----

fuser.fusion @f(%a : !fuser.tensor<8x4xf32>, %b : !fuser.tensor<4x16xbf16>) -> !fuser.tensor<8x16xf32> {
  %r = fuser.matmul %a, %b : (!fuser.tensor<8x4xf32>, !fuser.tensor<4x16xbf16>) -> !fuser.tensor<8x16xf32>
  fuser.output %r : !fuser.tensor<8x16xf32>
}
// CHECK: fuser.matmul: operand b has dtype bfloat16, but operand a has float32; they must agree

// -----

fuser.fusion @f(%a : !fuser.tensor<8x4xi32>, %b : !fuser.tensor<4x16xi32>) -> !fuser.tensor<8x16xi32> {
  %r = fuser.matmul %a, %b : (!fuser.tensor<8x4xi32>, !fuser.tensor<4x16xi32>) -> !fuser.tensor<8x16xi32>
  fuser.output %r : !fuser.tensor<8x16xi32>
}
// CHECK: fuser.matmul: operand a has dtype int32; matrix products take float16, bfloat16, float32, float64

// -----

fuser.fusion @f(%a : !fuser.tensor<f32>, %b : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.matmul %a, %b : (!fuser.tensor<f32>, !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.matmul: operand a must have at least 1 dimension, got a 0-d tensor

// -----

fuser.fusion @f(%a : !fuser.tensor<2x8x4xf32>, %b : !fuser.tensor<3x4x16xf32>) -> !fuser.tensor<3x8x16xf32> {
  %r = fuser.matmul %a, %b : (!fuser.tensor<2x8x4xf32>, !fuser.tensor<3x4x16xf32>) -> !fuser.tensor<3x8x16xf32>
  fuser.output %r : !fuser.tensor<3x8x16xf32>
}
// CHECK: fuser.matmul: shapes [2], [3] do not broadcast

// -----

fuser.fusion @f(%a : !fuser.tensor<8x4xf32>, %b : !fuser.tensor<4x16xf32>) -> !fuser.tensor<16x8xf32> {
  %r = fuser.matmul %a, %b : (!fuser.tensor<8x4xf32>, !fuser.tensor<4x16xf32>) -> !fuser.tensor<16x8xf32>
  fuser.output %r : !fuser.tensor<16x8xf32>
}
// CHECK: fuser.matmul: result #0 has type !fuser.tensor<16x8xf32>, but the operands give !fuser.tensor<8x16xf32>

// -----

fuser.fusion @f(%x : !fuser.tensor<8x4xf32>, %w : !fuser.tensor<16x3xf32>) -> !fuser.tensor<8x16xf32> {
  %r = fuser.linear %x, %w : (!fuser.tensor<8x4xf32>, !fuser.tensor<16x3xf32>) -> !fuser.tensor<8x16xf32>
  fuser.output %r : !fuser.tensor<8x16xf32>
}
// CHECK: fuser.linear: the contracted extents differ: 4 in input, 3 in weight

// -----

fuser.fusion @f(%x : !fuser.tensor<8x4xf32>, %w : !fuser.tensor<16x4xf32>, %b : !fuser.tensor<8xf32>) -> !fuser.tensor<8x16xf32> {
  %r = fuser.linear %x, %w, %b : (!fuser.tensor<8x4xf32>, !fuser.tensor<16x4xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8x16xf32>
  fuser.output %r : !fuser.tensor<8x16xf32>
}
// CHECK: fuser.linear: bias has shape [8]; it must be 0-d or [16] (the weight's output features)

// -----

fuser.fusion @f(%x : !fuser.tensor<8x4xf32>, %w : !fuser.tensor<2x16x4xf32>) -> !fuser.tensor<8x16xf32> {
  %r = fuser.linear %x, %w : (!fuser.tensor<8x4xf32>, !fuser.tensor<2x16x4xf32>) -> !fuser.tensor<8x16xf32>
  fuser.output %r : !fuser.tensor<8x16xf32>
}
// CHECK: fuser.linear: weight must be 1-D or 2-D, got rank 3

// -----

fuser.fusion @f(%x : !fuser.tensor<8x4xf16>, %w : !fuser.tensor<16x4xf16>, %b : !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf16> {
  %r = fuser.linear %x, %w, %b : (!fuser.tensor<8x4xf16>, !fuser.tensor<16x4xf16>, !fuser.tensor<16xf32>) -> !fuser.tensor<8x16xf16>
  fuser.output %r : !fuser.tensor<8x16xf16>
}
// CHECK: fuser.linear: bias has dtype float32, but input has float16; they must agree
