// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Complex tensors and scalars (complex<f32> is torch's complex64, complex<f64> its
// complex128): a complex constant is its [real, imaginary] pair; a complex Python-like
// scalar is weak (complex64 tensor * complex<f64> scalar stays complex64); a float64
// tensor with a complex scalar is complex128; abs, real and imag are real; eq/ne compare;
// where, cast and sum/prod take complex values.

fuser.fusion @complex(%0: !fuser.tensor<4x8xcomplex<f32>>, %1: !fuser.tensor<8xf64>, %2: !fuser.tensor<4x8xi1>) -> (!fuser.tensor<4x8xcomplex<f32>>, !fuser.tensor<8xcomplex<f64>>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xcomplex<f32>>, !fuser.tensor<4xcomplex<f32>>, !fuser.tensor<8xcomplex<f32>>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xcomplex<f32>>) {
  %c = fuser.constant [3.000000e+00 : f64, 5.000000e-01 : f64] : complex<f64>
  %3 = fuser.mul %0, %c : (!fuser.tensor<4x8xcomplex<f32>>, complex<f64>) -> !fuser.tensor<4x8xcomplex<f32>>
  %4 = fuser.add %1, %c : (!fuser.tensor<8xf64>, complex<f64>) -> !fuser.tensor<8xcomplex<f64>>
  %5 = fuser.abs %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
  %6 = fuser.real %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
  %7 = fuser.imag %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
  %8 = fuser.eq %0, %3 : (!fuser.tensor<4x8xcomplex<f32>>, !fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xi1>
  %9 = fuser.rsqrt %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xcomplex<f32>>
  %10 = fuser.where %2, %9, %c : (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xcomplex<f32>>, complex<f64>) -> !fuser.tensor<4x8xcomplex<f32>>
  %11 = fuser.sum %10 {dims = array<i64: 1>} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>>
  %12 = fuser.prod %0 {dims = array<i64: 0>} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<8xcomplex<f32>>
  %13 = fuser.cast %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
  %14 = fuser.cast %5 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xcomplex<f32>>
  fuser.output %3, %4, %5, %6, %7, %8, %10, %11, %12, %13, %14 : !fuser.tensor<4x8xcomplex<f32>>, !fuser.tensor<8xcomplex<f64>>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xi1>, !fuser.tensor<4x8xcomplex<f32>>, !fuser.tensor<4xcomplex<f32>>, !fuser.tensor<8xcomplex<f32>>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xcomplex<f32>>
}

// CHECK-LABEL: fuser.fusion @complex(
// CHECK-NEXT:  %c = fuser.constant [3.000000e+00 : f64, 5.000000e-01 : f64] : complex<f64>
// CHECK-NEXT:  %3 = fuser.mul %0, %c : (!fuser.tensor<4x8xcomplex<f32>>, complex<f64>) -> !fuser.tensor<4x8xcomplex<f32>>
// CHECK-NEXT:  %4 = fuser.add %1, %c : (!fuser.tensor<8xf64>, complex<f64>) -> !fuser.tensor<8xcomplex<f64>>
// CHECK-NEXT:  %5 = fuser.abs %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %6 = fuser.real %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %7 = fuser.imag %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %8 = fuser.eq %0, %3 : (!fuser.tensor<4x8xcomplex<f32>>, !fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xi1>
// CHECK-NEXT:  %9 = fuser.rsqrt %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xcomplex<f32>>
// CHECK-NEXT:  %10 = fuser.where %2, %9, %c : (!fuser.tensor<4x8xi1>, !fuser.tensor<4x8xcomplex<f32>>, complex<f64>) -> !fuser.tensor<4x8xcomplex<f32>>
// CHECK-NEXT:  %11 = fuser.sum %10 {dims = array<i64: 1>} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4xcomplex<f32>>
// CHECK-NEXT:  %12 = fuser.prod %0 {dims = array<i64: 0>} : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<8xcomplex<f32>>
// CHECK-NEXT:  %13 = fuser.cast %0 : (!fuser.tensor<4x8xcomplex<f32>>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %14 = fuser.cast %5 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xcomplex<f32>>
// CHECK-NEXT:  fuser.output

// GENERIC: "fuser.constant"() <{value = [3.000000e+00 : f64, 5.000000e-01 : f64]}> : () -> complex<f64>
// GENERIC: "fuser.real"
// GENERIC: "fuser.imag"
