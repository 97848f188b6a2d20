// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Predicates give i1; bitwise_not keeps integer and bool dtypes.

fuser.fusion @predicates(%0: !fuser.tensor<2x3xbf16>, %1: !fuser.tensor<2x3xi32>, %2: !fuser.tensor<2x3xi1>) -> (!fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi32>, !fuser.tensor<2x3xi1>) {
  %3 = fuser.signbit %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
  %4 = fuser.isnan %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
  %5 = fuser.isinf %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
  %6 = fuser.isfinite %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
  %7 = fuser.logical_not %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
  %8 = fuser.bitwise_not %1 : (!fuser.tensor<2x3xi32>) -> !fuser.tensor<2x3xi32>
  %9 = fuser.bitwise_not %2 : (!fuser.tensor<2x3xi1>) -> !fuser.tensor<2x3xi1>
  fuser.output %3, %4, %5, %6, %7, %8, %9 : !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi32>, !fuser.tensor<2x3xi1>
}

// CHECK-LABEL: fuser.fusion @predicates(%0: !fuser.tensor<2x3xbf16>, %1: !fuser.tensor<2x3xi32>, %2: !fuser.tensor<2x3xi1>) -> (!fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi32>, !fuser.tensor<2x3xi1>) {
// CHECK-NEXT:  %3 = fuser.signbit %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  %4 = fuser.isnan %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  %5 = fuser.isinf %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  %6 = fuser.isfinite %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  %7 = fuser.logical_not %0 : (!fuser.tensor<2x3xbf16>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  %8 = fuser.bitwise_not %1 : (!fuser.tensor<2x3xi32>) -> !fuser.tensor<2x3xi32>
// CHECK-NEXT:  %9 = fuser.bitwise_not %2 : (!fuser.tensor<2x3xi1>) -> !fuser.tensor<2x3xi1>
// CHECK-NEXT:  fuser.output %3, %4, %5, %6, %7, %8, %9 : !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi1>, !fuser.tensor<2x3xi32>, !fuser.tensor<2x3xi1>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.signbit"
// GENERIC: "fuser.isnan"
// GENERIC: "fuser.isinf"
// GENERIC: "fuser.isfinite"
// GENERIC: "fuser.logical_not"
// GENERIC: "fuser.bitwise_not"
// GENERIC: "fuser.bitwise_not"
// GENERIC: "fuser.output"
