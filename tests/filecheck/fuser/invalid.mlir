// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Every kind of malformed fuser IR, one per chunk: the verifier names the op (or
// the type), the operand and the problem.

// Wrong operand type: bitwise op on floats.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.bitwise_and %a, %a : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.bitwise_and: needs integer or bool operands, got float32

// -----

// Wrong operand type: where needs a bool condition.
fuser.fusion @f(%c : !fuser.tensor<4xi32>, %a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.where %c, %a, %a : (!fuser.tensor<4xi32>, !fuser.tensor<4xf32>, !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.where: condition must be bool, got int32

// -----

// Wrong operand type: a non-fuser type.
fuser.fusion @f(%a : !fuser.tensor<4xf32>, %i : index) -> !fuser.tensor<4xf32> {
  fuser.output %a : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: input #1 has type index, expected a !fuser.tensor or a scalar

// -----

// Wrong operand type: reduction of a scalar.
fuser.fusion @f(%a : f32) -> f32 {
  %r = fuser.sum %a {dims = array<i64: 0>} : (f32) -> f32
  fuser.output %r : f32
}
// CHECK: fuser.sum: input must be a tensor, got f32

// -----

// Bad dims: reduction axis out of range.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.sum %a {dims = array<i64: 2>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.sum: dim 2 is out of range for rank 2

// -----

// Bad dims: an axis reduced twice.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.max %a {dims = array<i64: 1, -1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.max: dims [1, -1] name an axis twice

// -----

// Bad dims: permute that is not a permutation.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.permute %a {dims = array<i64: 0, 0>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.permute: dims [0, 0] is not a permutation of rank 2

// -----

// Bad dims: squeeze of an axis of extent 8.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.squeeze %a {dims = array<i64: 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.squeeze: cannot squeeze axis 1 of extent 8

// -----

// Bad dims: broadcast flags keep the wrong number of axes.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x1xf32> {
  %r = fuser.broadcast %a {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x1xf32>
  fuser.output %r : !fuser.tensor<4x1xf32>
}
// CHECK: fuser.broadcast: is_broadcast_dim [False, True] keeps 1 axes but the input [4, 8] has 2

// -----

// Shapes that do not broadcast.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %b : !fuser.tensor<3x8xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.add %a, %b : (!fuser.tensor<4x8xf32>, !fuser.tensor<3x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.add: shapes [4, 8], [3, 8] do not broadcast

// -----

// Expand of an axis that is not extent 1.
fuser.fusion @f(%a : !fuser.tensor<4x2xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.expand %a {shape = array<i64: 4, 8>} : !fuser.tensor<4x2xf32> -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.expand: axis 1 of extent 2 cannot be expanded to 8

// -----

// Reshape sizes that do not multiply out.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<5x6xf32> {
  %r = fuser.reshape %a {new_shape = array<i64: 5, 6>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<5x6xf32>
  fuser.output %r : !fuser.tensor<5x6xf32>
}
// CHECK: fuser.reshape: sizes [4, 8] and [5, 6] do not multiply out

// -----

// A view that disagrees with the extents.
fuser.fusion @f(%a : !fuser.tensor<2x10x40xf32>) -> !fuser.tensor<2x10x2x20xf32> {
  %r = fuser.reshape %a {new_shape = array<i64: 2, 10, 2, 20>, view = #fuser.view<keep, keep, split [4, 10]>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
  fuser.output %r : !fuser.tensor<2x10x2x20xf32>
}
// CHECK: fuser.reshape: view <keep, keep, split [4, 10]> takes [2, 10, 40] to [2, 10, 4, 10], not [2, 10, 2, 20]

// -----

// A view with too few steps.
fuser.fusion @f(%a : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %r = fuser.reshape %a {new_shape = array<i64: 64, 128, 3072>, view = #fuser.view<split [64, 128]>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  fuser.output %r : !fuser.tensor<64x128x3072xf32>
}
// CHECK: fuser.reshape: reshape steps consume 1 axes but the input [8192, 3072] has 2

// -----

// Symbolic reshape: size operands do not match the -1 entries.
fuser.fusion @f(%a : !fuser.tensor<?x8xf32>, %n : i64) -> !fuser.tensor<?x?xf32> {
  %r = fuser.reshape %a sizes(%n : i64) {new_shape = array<i64: -1, -1>} : !fuser.tensor<?x8xf32> -> !fuser.tensor<?x?xf32>
  fuser.output %r : !fuser.tensor<?x?xf32>
}
// CHECK: fuser.reshape: shape [?, ?] has 2 symbolic entries but 1 size operands

// -----

// Wrong result dtype.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16> {
  %r = fuser.add %a, %a : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16>
  fuser.output %r : !fuser.tensor<4x8xf16>
}
// CHECK: fuser.add: result #0 has type !fuser.tensor<4x8xf16>, but the operands give !fuser.tensor<4x8xf32>

// -----

// Wrong result dtype: a comparison gives i1.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.lt %a, %a : (!fuser.tensor<4xf32>, !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.lt: result #0 has type !fuser.tensor<4xf32>, but the operands give !fuser.tensor<4xi1>

// -----

// Wrong result shape.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x1xf32> {
  %r = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x1xf32>
  fuser.output %r : !fuser.tensor<4x1xf32>
}
// CHECK: fuser.sum: result #0 has type !fuser.tensor<4x1xf32>, but the operands give !fuser.tensor<4xf32>

// -----

// Cast between a tensor and a scalar.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> f32 {
  %r = fuser.cast %a : (!fuser.tensor<4xf32>) -> f32
  fuser.output %r : f32
}
// CHECK: fuser.cast: cannot cast !fuser.tensor<4xf32> to f32: tensor-ness differs

// -----

// Bad alias_inputs: input index out of range.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) {
  %r = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32> {alias_inputs = array<i64: 3>}
}
// CHECK: fuser.output: output #0 aliases input #3, but the fusion has 1 inputs

// -----

// Bad alias_inputs: type differs from the aliased input.
fuser.fusion @f(%a : !fuser.tensor<4xf16>) {
  %r = fuser.cast %a : (!fuser.tensor<4xf16>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32> {alias_inputs = array<i64: 0>}
}
// CHECK: fuser.output: output #0 of type !fuser.tensor<4xf32> cannot be written in place into input #0 of type !fuser.tensor<4xf16>

// -----

// Bad alias_inputs: one input aliased twice.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) {
  %r = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r, %r : !fuser.tensor<4xf32>, !fuser.tensor<4xf32> {alias_inputs = array<i64: 0, 0>}
}
// CHECK: fuser.output: input #0 is aliased by two outputs

// -----

// Bad alias_inputs: wrong number of entries.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) {
  %r = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32> {alias_inputs = array<i64: 0, -1>}
}
// CHECK: fuser.output: alias_inputs has 2 entries for 1 outputs

// -----

// Fusion results that disagree with fuser.output.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<8xf32> {
  fuser.output %a : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: result #0 is declared !fuser.tensor<8xf32> but fuser.output gives !fuser.tensor<4xf32>

// -----

// Fusion that declares more results than it returns.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> (!fuser.tensor<4xf32>, !fuser.tensor<4xf32>) {
  fuser.output %a : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.output returns 1 values but the fusion declares 2 results

// -----

// Slice with a zero stride.
fuser.fusion @f(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %r = fuser.slice %a {starts = array<i64: 0>, ends = array<i64: 8>, strides = array<i64: 0>} : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %r : !fuser.tensor<8xf32>
}
// CHECK: fuser.slice: strides [0] must be positive

// -----

// Pad widths that are not pairs.
fuser.fusion @f(%a : !fuser.tensor<8xf32>, %v : f32) -> !fuser.tensor<9xf32> {
  %r = fuser.pad %a, %v {widths = array<i64: 1>} : (!fuser.tensor<8xf32>, f32) -> !fuser.tensor<9xf32>
  fuser.output %r : !fuser.tensor<9xf32>
}
// CHECK: fuser.pad: pad widths [1] must be pairs for at most 1 axes

// -----

// Cat of tensors whose other extents differ.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %b : !fuser.tensor<4x6xf32>) -> !fuser.tensor<8x8xf32> {
  %r = fuser.cat %a, %b {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x6xf32>) -> !fuser.tensor<8x8xf32>
  fuser.output %r : !fuser.tensor<8x8xf32>
}
// CHECK: fuser.cat: operand #1 has extent 6 on axis 1, expected 8

// -----

// Index_select with a float index.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %i : !fuser.tensor<2xf32>) -> !fuser.tensor<4x2xf32> {
  %r = fuser.index_select %a, %i {dim = 1 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2xf32>) -> !fuser.tensor<4x2xf32>
  fuser.output %r : !fuser.tensor<4x2xf32>
}
// CHECK: fuser.index_select: index must be a 1-D (or 0-D) integer tensor, got !fuser.tensor<2xf32>

// -----

// Gather with an index of another rank.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>, %i : !fuser.tensor<2xi64>) -> !fuser.tensor<2xf32> {
  %r = fuser.gather %a, %i {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2xi64>) -> !fuser.tensor<2xf32>
  fuser.output %r : !fuser.tensor<2xf32>
}
// CHECK: fuser.gather: index rank 1 differs from input rank 2

// -----

// Full with size operands that do not match the shape.
fuser.fusion @f(%v : f32, %n : i64) -> !fuser.tensor<4x8xf32> {
  %r = fuser.full %v sizes(%n : i64) {shape = array<i64: 4, 8>} : f32 -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.full: shape [4, 8] has 0 symbolic entries but 1 size operands

// -----

// Iota whose constant length disagrees with the result.
fuser.fusion @f() -> !fuser.tensor<4xi64> {
  %n = fuser.constant 5 : i64
  %s = fuser.constant 0 : i64
  %r = fuser.iota %n, %s, %s : (i64, i64, i64) -> !fuser.tensor<4xi64>
  fuser.output %r : !fuser.tensor<4xi64>
}
// CHECK: fuser.iota: length is 5 but the result has extent 4

// -----

// Broadcast_in_dim that maps an axis to a different extent.
fuser.fusion @f(%a : !fuser.tensor<16xf32>) -> !fuser.tensor<16x8xf32> {
  %r = fuser.broadcast_in_dim %a {shape = array<i64: 16, 8>, broadcast_dims = array<i64: 1>} : !fuser.tensor<16xf32> -> !fuser.tensor<16x8xf32>
  fuser.output %r : !fuser.tensor<16x8xf32>
}
// CHECK: fuser.broadcast_in_dim: input axis 0 of extent 16 cannot become output axis 1 of extent 8

// -----

// Tensor type with a contiguity of the wrong length.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32, contiguity=[true]>) -> !fuser.tensor<4x8xf32> {
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: !fuser.tensor: contiguity has 1 entries for rank 2

// -----

// Tensor type with a stride_order that is not a permutation.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32, stride_order=[1, 1]>) -> !fuser.tensor<4x8xf32> {
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: !fuser.tensor: stride_order [1, 1] is not a permutation of 0..1

// -----

// Var_mean results of the wrong dtype.
fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf16> {
  %v, %m = fuser.var_mean %a {dims = array<i64: 1>, correction = 1.000000e+00 : f64} : (!fuser.tensor<4x8xf32>) -> (!fuser.tensor<4xf16>, !fuser.tensor<4xf16>)
  fuser.output %v : !fuser.tensor<4xf16>
}
// CHECK: fuser.var_mean: result #0 has type !fuser.tensor<4xf16>, but the operands give !fuser.tensor<4xf32>

// -----

// Bad alias_inputs: negative entries other than -1.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) {
  %r = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32> {alias_inputs = array<i64: -5>}
}
// CHECK: fuser.output: alias_inputs entry -5 of output #0 must be -1 (not aliased) or an input index in [0, 1)

// -----

// Use before definition: swapped lines.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %1 = fuser.neg %0 : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  %0 = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %1 : !fuser.tensor<4xf32>
}
// CHECK: fuser.fusion @f: fuser.neg operand #0 (result #0 of a fuser.exp) is used before it is defined

// -----

// An unsupported float type in a constant (printing it crashed).
fuser.fusion @f() -> f80 {
  %c = fuser.constant 1.5 : f80
  fuser.output %c : f80
}
// CHECK: fuser.constant: value 1.5 : f80 must be an integer or float literal of a fuser type

// -----

// Extents whose byte size is beyond int64 offsets (2^32 x 2^32 f32 = 2^66 bytes).
fuser.fusion @f(%x : !fuser.tensor<4294967296x4294967296xf32>) -> !fuser.tensor<4294967296x4294967296xf32> {
  fuser.output %x : !fuser.tensor<4294967296x4294967296xf32>
}
// CHECK: !fuser.tensor: [4294967296, 4294967296] of f32 is 73786976294838206464 bytes, beyond int64 offsets (9223372036854775807)

// -----

// Cumsum of a bool tensor.
fuser.fusion @f(%x : !fuser.tensor<4xi1>) -> !fuser.tensor<4xi1> {
  %r = fuser.cumsum %x {dim = 0 : i64} : (!fuser.tensor<4xi1>) -> !fuser.tensor<4xi1>
  fuser.output %r : !fuser.tensor<4xi1>
}
// CHECK: fuser.cumsum: input must be a number tensor, got bool

// -----

// Cumsum along an axis the input does not have.
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.cumsum %x {dim = 2 : i64} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.cumsum: dim 2 is out of range for rank 2

// -----

// Arithmetic on float8 values (they only take part in casts, as in torch).
fuser.fusion @f(%x : !fuser.tensor<4xf8E4M3FN>) -> !fuser.tensor<4xf8E4M3FN> {
  %r = fuser.add %x, %x : (!fuser.tensor<4xf8E4M3FN>, !fuser.tensor<4xf8E4M3FN>) -> !fuser.tensor<4xf8E4M3FN>
  fuser.output %r : !fuser.tensor<4xf8E4M3FN>
}
// CHECK: fuser.add: operand #0 is float8_e4m3fn: float8 values only take part in casts

// -----

// A reduction of float8 values.
fuser.fusion @f(%x : !fuser.tensor<4xf8E5M2>) -> !fuser.tensor<f8E5M2> {
  %r = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<4xf8E5M2>) -> !fuser.tensor<f8E5M2>
  fuser.output %r : !fuser.tensor<f8E5M2>
}
// CHECK: fuser.sum: float8 values only take part in casts, got float8_e5m2 -> float8_e5m2

// -----

// Scatter with a float index.
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>, %i : !fuser.tensor<2x8xf32>, %s : !fuser.tensor<2x8xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.scatter %x, %i, %s {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2x8xf32>, !fuser.tensor<2x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.scatter: index must be an integer tensor, got !fuser.tensor<2x8xf32>

// -----

// Scatter with an index larger than the input off the scatter axis.
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>, %i : !fuser.tensor<2x9xi64>, %s : !fuser.tensor<2x9xf32>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.scatter %x, %i, %s {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2x9xi64>, !fuser.tensor<2x9xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.scatter: index extent 9 exceeds input extent 8 on axis 1

// -----

// Scatter of a src of another dtype.
fuser.fusion @f(%x : !fuser.tensor<4x8xf32>, %i : !fuser.tensor<2x8xi64>, %s : !fuser.tensor<2x8xf16>) -> !fuser.tensor<4x8xf32> {
  %r = fuser.scatter %x, %i, %s {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2x8xi64>, !fuser.tensor<2x8xf16>) -> !fuser.tensor<4x8xf32>
  fuser.output %r : !fuser.tensor<4x8xf32>
}
// CHECK: fuser.scatter: src dtype float16 differs from input dtype float32
