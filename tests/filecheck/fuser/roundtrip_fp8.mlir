// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// float8 element types (torch's float8_e4m3fn and float8_e5m2) take part in casts.

fuser.fusion @fp8(%0: !fuser.tensor<4x?xf32>, %1: !fuser.tensor<?xf8E5M2>) -> (!fuser.tensor<4x?xf8E4M3FN>, !fuser.tensor<?xbf16>) {
  %2 = fuser.cast %0 : (!fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf8E4M3FN>
  %3 = fuser.cast %1 : (!fuser.tensor<?xf8E5M2>) -> !fuser.tensor<?xbf16>
  fuser.output %2, %3 : !fuser.tensor<4x?xf8E4M3FN>, !fuser.tensor<?xbf16>
}

// CHECK-LABEL: fuser.fusion @fp8(%0: !fuser.tensor<4x?xf32>, %1: !fuser.tensor<?xf8E5M2>) -> (!fuser.tensor<4x?xf8E4M3FN>, !fuser.tensor<?xbf16>) {
// CHECK-NEXT:  %2 = fuser.cast %0 : (!fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf8E4M3FN>
// CHECK-NEXT:  %3 = fuser.cast %1 : (!fuser.tensor<?xf8E5M2>) -> !fuser.tensor<?xbf16>
// CHECK-NEXT:  fuser.output %2, %3 : !fuser.tensor<4x?xf8E4M3FN>, !fuser.tensor<?xbf16>
