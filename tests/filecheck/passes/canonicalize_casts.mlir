// RUN: fuser-opt %s --canonicalize | filecheck %s

// Cast chains whose first cast loses nothing collapse; lossy ones stay.

// f16 -> f32 -> f64 is f16 -> f64.
fuser.fusion @widen(%a : !fuser.tensor<8xf16>) -> !fuser.tensor<8xf64> {
  %0 = fuser.cast %a : (!fuser.tensor<8xf16>) -> !fuser.tensor<8xf32>
  %1 = fuser.cast %0 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf64>
  fuser.output %1 : !fuser.tensor<8xf64>
}
// CHECK-LABEL: fuser.fusion @widen
// CHECK-NEXT:    %0 = fuser.cast %a : (!fuser.tensor<8xf16>) -> !fuser.tensor<8xf64>
// CHECK-NEXT:    fuser.output %0

// bf16 -> f32 -> bf16 is the identity.
fuser.fusion @round_trip(%a : !fuser.tensor<8xbf16>) -> !fuser.tensor<8xbf16> {
  %0 = fuser.cast %a : (!fuser.tensor<8xbf16>) -> !fuser.tensor<8xf32>
  %1 = fuser.cast %0 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xbf16>
  fuser.output %1 : !fuser.tensor<8xbf16>
}
// CHECK-LABEL: fuser.fusion @round_trip
// CHECK-NEXT:    fuser.output %a : !fuser.tensor<8xbf16>

// f32 -> f16 -> f32 rounds: it must stay.
fuser.fusion @narrow_then_widen(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %0 = fuser.cast %a : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf16>
  %1 = fuser.cast %0 : (!fuser.tensor<8xf16>) -> !fuser.tensor<8xf32>
  fuser.output %1 : !fuser.tensor<8xf32>
}
// CHECK-LABEL: fuser.fusion @narrow_then_widen
// CHECK-NEXT:    %0 = fuser.cast %a : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf16>
// CHECK-NEXT:    %1 = fuser.cast %0 : (!fuser.tensor<8xf16>) -> !fuser.tensor<8xf32>
// CHECK-NEXT:    fuser.output %1

// int32 -> f32 is not exact (2^24), int32 -> f64 is; bool -> anything is; scalars too.
fuser.fusion @ints(%a : !fuser.tensor<8xi32>, %b : !fuser.tensor<8xi1>, %s : i32) -> (!fuser.tensor<8xf16>, !fuser.tensor<8xf16>, !fuser.tensor<8xi64>, f32) {
  %0 = fuser.cast %a : (!fuser.tensor<8xi32>) -> !fuser.tensor<8xf32>
  %1 = fuser.cast %0 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf16>
  %2 = fuser.cast %a : (!fuser.tensor<8xi32>) -> !fuser.tensor<8xf64>
  %3 = fuser.cast %2 : (!fuser.tensor<8xf64>) -> !fuser.tensor<8xf16>
  %4 = fuser.cast %b : (!fuser.tensor<8xi1>) -> !fuser.tensor<8xf32>
  %5 = fuser.cast %4 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xi64>
  %6 = fuser.cast %s : (i32) -> i64
  %7 = fuser.cast %6 : (i64) -> f32
  fuser.output %1, %3, %5, %7 : !fuser.tensor<8xf16>, !fuser.tensor<8xf16>, !fuser.tensor<8xi64>, f32
}
// CHECK-LABEL: fuser.fusion @ints
// CHECK-NEXT:    %0 = fuser.cast %a : (!fuser.tensor<8xi32>) -> !fuser.tensor<8xf32>
// CHECK-NEXT:    %1 = fuser.cast %0 : (!fuser.tensor<8xf32>) -> !fuser.tensor<8xf16>
// CHECK-NEXT:    %{{.*}} = fuser.cast %a : (!fuser.tensor<8xi32>) -> !fuser.tensor<8xf16>
// CHECK-NEXT:    %{{.*}} = fuser.cast %b : (!fuser.tensor<8xi1>) -> !fuser.tensor<8xi64>
// CHECK-NEXT:    %{{.*}} = fuser.cast %s : (i32) -> f32
// CHECK-NEXT:    fuser.output
