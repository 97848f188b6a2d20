// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Complex values where an op does not take them, one per chunk: the verifier names the
// op, the complex operand and the problem.

// max: complex values have no order.
fuser.fusion @f(%a : !fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>> {
  %r = fuser.max %a {dims = array<i64: 1>} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>>
  fuser.output %r : !fuser.tensor<4xcomplex<f32>>
}
// CHECK: fuser.max: input is complex (complex64): complex values have no order

// -----

// An ordering comparison.
fuser.fusion @f(%a : !fuser.tensor<4xcomplex<f64>>) -> !fuser.tensor<4xi1> {
  %r = fuser.lt %a, %a : (!fuser.tensor<4xcomplex<f64>>, !fuser.tensor<4xcomplex<f64>>) -> !fuser.tensor<4xi1>
  fuser.output %r : !fuser.tensor<4xi1>
}
// CHECK: fuser.lt: operand #0 is complex (complex128), which lt does not accept

// -----

// A complex scalar operand of a real-only op.
fuser.fusion @f(%a : !fuser.tensor<4xf32>, %s : complex<f32>) -> !fuser.tensor<4xcomplex<f32>> {
  %r = fuser.maximum %a, %s : (!fuser.tensor<4xf32>, complex<f32>) -> !fuser.tensor<4xcomplex<f32>>
  fuser.output %r : !fuser.tensor<4xcomplex<f32>>
}
// CHECK: fuser.maximum: operand #1 is complex (complex64), which maximum does not accept

// -----

// imag of a real tensor.
fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %r = fuser.imag %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.imag: needs a complex operand, got float32

// -----

// abs of a complex tensor is real, not complex.
fuser.fusion @f(%a : !fuser.tensor<4xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>> {
  %r = fuser.abs %a : (!fuser.tensor<4xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>>
  fuser.output %r : !fuser.tensor<4xcomplex<f32>>
}
// CHECK: fuser.abs: result #0 has type !fuser.tensor<4xcomplex<f32>>, but the operands give !fuser.tensor<4xf32>

// -----

// A sum of complex values into a real dtype would drop the imaginary part.
fuser.fusion @f(%a : !fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xf32> {
  %r = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.sum: the result dtype float32 of a complex (complex64) input must be complex

// -----

// var of a complex tensor.
fuser.fusion @f(%a : !fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>> {
  %r = fuser.var %a {dims = array<i64: 1>, correction = 1.0 : f64} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>>
  fuser.output %r : !fuser.tensor<4xcomplex<f32>>
}
// CHECK: fuser.var: input is complex (complex64), which this op does not accept

// -----

// A complex constant whose parts are not of its component type.
fuser.fusion @f() -> complex<f32> {
  %c = fuser.constant [1.000000e+00 : f64, 2.000000e+00 : f64] : complex<f32>
  fuser.output %c : complex<f32>
}
// CHECK: fuser.constant: value [1.000000e+00 : f64, 2.000000e+00 : f64] must be two f32 literals (real, imaginary) for complex<f32>

// -----

// A complex type of integers is not an element type.
fuser.fusion @f(%a : !fuser.tensor<4xcomplex<i32>>) -> !fuser.tensor<4xcomplex<i32>> {
  fuser.output %a : !fuser.tensor<4xcomplex<i32>>
}
// CHECK: element type complex<i32> is not one of i1, i32, i64, f16, bf16, f32, f64, complex<f32>, complex<f64>
