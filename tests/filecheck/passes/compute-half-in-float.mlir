// RUN: fuser-opt %s --compute-half-in-float | filecheck %s

// A bf16 chain (mul, tanh, a reshape, add) is computed on float32 values: each bf16
// input is widened once, and a value is rounded to bf16 only where it leaves the
// chain (the output, the sum); the cast of a chain value to f32 is its unrounded
// float32 value. A float32 fusion is left as it is.

fuser.fusion @chain(%0 : !fuser.tensor<2x8xbf16>, %1 : !fuser.tensor<16xbf16>) -> (!fuser.tensor<16xbf16>, !fuser.tensor<2x1xbf16>, !fuser.tensor<2x8xf32>) {
  %c = fuser.constant 5.000000e-01 : f64
  %2 = fuser.mul %0, %c : (!fuser.tensor<2x8xbf16>, f64) -> !fuser.tensor<2x8xbf16>
  %3 = fuser.tanh %2 : (!fuser.tensor<2x8xbf16>) -> !fuser.tensor<2x8xbf16>
  %4 = fuser.reshape %3 {new_shape = array<i64: 16>} : !fuser.tensor<2x8xbf16> -> !fuser.tensor<16xbf16>
  %5 = fuser.add %4, %1 : (!fuser.tensor<16xbf16>, !fuser.tensor<16xbf16>) -> !fuser.tensor<16xbf16>
  %6 = fuser.sum %3 {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<2x8xbf16>) -> !fuser.tensor<2x1xbf16>
  %7 = fuser.cast %2 : (!fuser.tensor<2x8xbf16>) -> !fuser.tensor<2x8xf32>
  fuser.output %5, %6, %7 : !fuser.tensor<16xbf16>, !fuser.tensor<2x1xbf16>, !fuser.tensor<2x8xf32>
}
fuser.fusion @float(%0 : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %1 = fuser.mul %0, %0 : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
  fuser.output %1 : !fuser.tensor<8xf32>
}

// CHECK-LABEL: fuser.fusion @chain(
// CHECK-NEXT:    %c = fuser.constant 5.000000e-01 : f64
// CHECK-NEXT:    %2 = fuser.cast %0 : (!fuser.tensor<2x8xbf16>) -> !fuser.tensor<2x8xf32>
// CHECK-NEXT:    %3 = fuser.mul %2, %c : (!fuser.tensor<2x8xf32>, f64) -> !fuser.tensor<2x8xf32>
// CHECK-NEXT:    %4 = fuser.tanh %3 : (!fuser.tensor<2x8xf32>) -> !fuser.tensor<2x8xf32>
// CHECK-NEXT:    %5 = fuser.cast %4 : (!fuser.tensor<2x8xf32>) -> !fuser.tensor<2x8xbf16>
// CHECK-NEXT:    %6 = fuser.reshape %4 {new_shape = array<i64: 16>} : !fuser.tensor<2x8xf32> -> !fuser.tensor<16xf32>
// CHECK-NEXT:    %7 = fuser.cast %1 : (!fuser.tensor<16xbf16>) -> !fuser.tensor<16xf32>
// CHECK-NEXT:    %8 = fuser.add %6, %7 : (!fuser.tensor<16xf32>, !fuser.tensor<16xf32>) -> !fuser.tensor<16xf32>
// CHECK-NEXT:    %9 = fuser.cast %8 : (!fuser.tensor<16xf32>) -> !fuser.tensor<16xbf16>
// CHECK-NEXT:    %10 = fuser.sum %5
// CHECK-NEXT:    fuser.output %9, %10, %3 :
// CHECK-LABEL: fuser.fusion @float(
// CHECK-NEXT:    %1 = fuser.mul %0, %0 : (!fuser.tensor<8xf32>, !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32>
// CHECK-NEXT:    fuser.output %1
