// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every transcendental unary op (result dtype: float, ints promote to f32).

fuser.fusion @unary_float(%0: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
  %1 = fuser.exp %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %2 = fuser.exp2 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %3 = fuser.expm1 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %4 = fuser.log %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %5 = fuser.log2 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %6 = fuser.log10 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %7 = fuser.log1p %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %8 = fuser.sqrt %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %9 = fuser.rsqrt %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %10 = fuser.reciprocal %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %11 = fuser.sin %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %12 = fuser.cos %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %13 = fuser.tan %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %14 = fuser.asin %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %15 = fuser.acos %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %16 = fuser.atan %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %17 = fuser.sinh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %18 = fuser.cosh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %19 = fuser.tanh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %20 = fuser.asinh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %21 = fuser.acosh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %22 = fuser.atanh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %23 = fuser.sigmoid %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %24 = fuser.erf %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %25 = fuser.erfc %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %26 = fuser.erfinv %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %27 = fuser.lgamma %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %28 = fuser.silu %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
}
fuser.fusion @unary_float_int(%0: !fuser.tensor<3xi32>) -> (!fuser.tensor<3xf32>, !fuser.tensor<3xf32>) {
  %1 = fuser.exp %0 : (!fuser.tensor<3xi32>) -> !fuser.tensor<3xf32>
  %2 = fuser.sqrt %0 : (!fuser.tensor<3xi32>) -> !fuser.tensor<3xf32>
  fuser.output %1, %2 : !fuser.tensor<3xf32>, !fuser.tensor<3xf32>
}

// CHECK-LABEL: fuser.fusion @unary_float(%0: !fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) {
// CHECK-NEXT:  %1 = fuser.exp %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %2 = fuser.exp2 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %3 = fuser.expm1 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %4 = fuser.log %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %5 = fuser.log2 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %6 = fuser.log10 %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %7 = fuser.log1p %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %8 = fuser.sqrt %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %9 = fuser.rsqrt %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %10 = fuser.reciprocal %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %11 = fuser.sin %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %12 = fuser.cos %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %13 = fuser.tan %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %14 = fuser.asin %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %15 = fuser.acos %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %16 = fuser.atan %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %17 = fuser.sinh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %18 = fuser.cosh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %19 = fuser.tanh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %20 = fuser.asinh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %21 = fuser.acosh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %22 = fuser.atanh %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %23 = fuser.sigmoid %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %24 = fuser.erf %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %25 = fuser.erfc %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %26 = fuser.erfinv %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %27 = fuser.lgamma %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %28 = fuser.silu %0 : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  fuser.output %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
// CHECK-LABEL: fuser.fusion @unary_float_int(%0: !fuser.tensor<3xi32>) -> (!fuser.tensor<3xf32>, !fuser.tensor<3xf32>) {
// CHECK-NEXT:  %1 = fuser.exp %0 : (!fuser.tensor<3xi32>) -> !fuser.tensor<3xf32>
// CHECK-NEXT:  %2 = fuser.sqrt %0 : (!fuser.tensor<3xi32>) -> !fuser.tensor<3xf32>
// CHECK-NEXT:  fuser.output %1, %2 : !fuser.tensor<3xf32>, !fuser.tensor<3xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.exp"
// GENERIC: "fuser.exp2"
// GENERIC: "fuser.expm1"
// GENERIC: "fuser.log"
// GENERIC: "fuser.log2"
// GENERIC: "fuser.log10"
// GENERIC: "fuser.log1p"
// GENERIC: "fuser.sqrt"
// GENERIC: "fuser.rsqrt"
// GENERIC: "fuser.reciprocal"
// GENERIC: "fuser.sin"
// GENERIC: "fuser.cos"
// GENERIC: "fuser.tan"
// GENERIC: "fuser.asin"
// GENERIC: "fuser.acos"
// GENERIC: "fuser.atan"
// GENERIC: "fuser.sinh"
// GENERIC: "fuser.cosh"
// GENERIC: "fuser.tanh"
// GENERIC: "fuser.asinh"
// GENERIC: "fuser.acosh"
// GENERIC: "fuser.atanh"
// GENERIC: "fuser.sigmoid"
// GENERIC: "fuser.erf"
// GENERIC: "fuser.erfc"
// GENERIC: "fuser.erfinv"
// GENERIC: "fuser.lgamma"
// GENERIC: "fuser.silu"
// GENERIC: "fuser.output"
// GENERIC: "fuser.fusion"
// GENERIC: "fuser.exp"
// GENERIC: "fuser.sqrt"
// GENERIC: "fuser.output"
