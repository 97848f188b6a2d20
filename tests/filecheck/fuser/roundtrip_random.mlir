// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// uniform and normal: two distribution parameters, the Philox seed and offset (i64),
// then the sizes of symbolic axes; the result is a float tensor.

fuser.fusion @random(%lo: f64, %hi: f32, %seed: i64, %off: i64, %n: i64) -> (!fuser.tensor<5x9xf32>, !fuser.tensor<?x4xf64>, !fuser.tensor<3xbf16>) {
  %0 = fuser.uniform %lo, %hi, %seed, %off {shape = array<i64: 5, 9>} : f64, f32, i64, i64 -> !fuser.tensor<5x9xf32>
  %1 = fuser.normal %lo, %hi, %seed, %off sizes(%n : i64) {shape = array<i64: -1, 4>} : f64, f32, i64, i64 -> !fuser.tensor<?x4xf64>
  %2 = fuser.uniform %lo, %lo, %seed, %seed {shape = array<i64: 3>} : f64, f64, i64, i64 -> !fuser.tensor<3xbf16>
  fuser.output %0, %1, %2 : !fuser.tensor<5x9xf32>, !fuser.tensor<?x4xf64>, !fuser.tensor<3xbf16>
}

// CHECK-LABEL: fuser.fusion @random(%lo: f64, %hi: f32, %seed: i64, %off: i64, %n: i64)
// CHECK-NEXT:  %0 = fuser.uniform %lo, %hi, %seed, %off {shape = array<i64: 5, 9>} : f64, f32, i64, i64 -> !fuser.tensor<5x9xf32>
// CHECK-NEXT:  %1 = fuser.normal %lo, %hi, %seed, %off sizes(%n : i64) {shape = array<i64: -1, 4>} : f64, f32, i64, i64 -> !fuser.tensor<?x4xf64>
// CHECK-NEXT:  %2 = fuser.uniform %lo, %lo, %seed, %seed {shape = array<i64: 3>} : f64, f64, i64, i64 -> !fuser.tensor<3xbf16>
// CHECK-NEXT:  fuser.output %0, %1, %2

// GENERIC: "fuser.uniform"(%lo, %hi, %seed, %off)
// GENERIC-SAME: shape = array<i64: 5, 9>
// GENERIC: "fuser.normal"(%lo, %hi, %seed, %off, %n)
// GENERIC-SAME: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>
