// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// expand extent-1 axes, statically or to a symbolic size.

fuser.fusion @expand(%0: !fuser.tensor<4x1xf32>, %1: i64) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x?xf32>) {
  %2 = fuser.expand %0 {shape = array<i64: 4, 8>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x8xf32>
  %3 = fuser.expand %0 sizes(%1 : i64) {shape = array<i64: 4, -1>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x?xf32>
  fuser.output %2, %3 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x?xf32>
}

// CHECK-LABEL: fuser.fusion @expand(%0: !fuser.tensor<4x1xf32>, %1: i64) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x?xf32>) {
// CHECK-NEXT:  %2 = fuser.expand %0 {shape = array<i64: 4, 8>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x8xf32>
// CHECK-NEXT:  %3 = fuser.expand %0 sizes(%1 : i64) {shape = array<i64: 4, -1>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x?xf32>
// CHECK-NEXT:  fuser.output %2, %3 : !fuser.tensor<4x8xf32>, !fuser.tensor<4x?xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.expand"
// GENERIC: "fuser.expand"
// GENERIC: "fuser.output"
