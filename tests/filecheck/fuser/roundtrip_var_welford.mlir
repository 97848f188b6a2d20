// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// var, var_mean (two results) and welford (avg, var_sum, n).

fuser.fusion @normalization_stats(%0: !fuser.tensor<16x32xf16>) -> (!fuser.tensor<f16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xi64>) {
  %1, %2 = fuser.var_mean %0 {dims = array<i64: 1>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<16x32xf16>) -> (!fuser.tensor<16x1xf16>, !fuser.tensor<16x1xf16>)
  %3, %4, %5 = fuser.welford %0 {dims = array<i64: 1>} : (!fuser.tensor<16x32xf16>) -> (!fuser.tensor<16xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xi64>)
  %6 = fuser.var %0 {dims = array<i64: 0, 1>, correction = 1.000000e+00 : f64} : (!fuser.tensor<16x32xf16>) -> !fuser.tensor<f16>
  fuser.output %6, %1, %2, %3, %4, %5 : !fuser.tensor<f16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xi64>
}

// CHECK-LABEL: fuser.fusion @normalization_stats(%0: !fuser.tensor<16x32xf16>) -> (!fuser.tensor<f16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xi64>) {
// CHECK-NEXT:  %1, %2 = fuser.var_mean %0 {dims = array<i64: 1>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<16x32xf16>) -> (!fuser.tensor<16x1xf16>, !fuser.tensor<16x1xf16>)
// CHECK-NEXT:  %3, %4, %5 = fuser.welford %0 {dims = array<i64: 1>} : (!fuser.tensor<16x32xf16>) -> (!fuser.tensor<16xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xi64>)
// CHECK-NEXT:  %6 = fuser.var %0 {dims = array<i64: 0, 1>, correction = 1.000000e+00 : f64} : (!fuser.tensor<16x32xf16>) -> !fuser.tensor<f16>
// CHECK-NEXT:  fuser.output %6, %1, %2, %3, %4, %5 : !fuser.tensor<f16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16x1xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xf16>, !fuser.tensor<16xi64>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.var_mean"
// GENERIC: "fuser.welford"
// GENERIC: "fuser.var"
// GENERIC: "fuser.output"
