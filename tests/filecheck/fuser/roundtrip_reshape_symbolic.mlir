// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Symbolic reshapes bind -1 entries of new_shape to size operands and have no view.

fuser.fusion @reshape_symbolic(%0: !fuser.tensor<?x64xf32>, %1: i64, %2: i64) -> (!fuser.tensor<?x8x8xf32>, !fuser.tensor<?x?xf32>) {
  %3 = fuser.reshape %0 sizes(%1 : i64) {new_shape = array<i64: -1, 8, 8>} : !fuser.tensor<?x64xf32> -> !fuser.tensor<?x8x8xf32>
  %4 = fuser.reshape %0 sizes(%1, %2 : i64, i64) {new_shape = array<i64: -1, -1>} : !fuser.tensor<?x64xf32> -> !fuser.tensor<?x?xf32>
  fuser.output %3, %4 : !fuser.tensor<?x8x8xf32>, !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: fuser.fusion @reshape_symbolic(%0: !fuser.tensor<?x64xf32>, %1: i64, %2: i64) -> (!fuser.tensor<?x8x8xf32>, !fuser.tensor<?x?xf32>) {
// CHECK-NEXT:  %3 = fuser.reshape %0 sizes(%1 : i64) {new_shape = array<i64: -1, 8, 8>} : !fuser.tensor<?x64xf32> -> !fuser.tensor<?x8x8xf32>
// CHECK-NEXT:  %4 = fuser.reshape %0 sizes(%1, %2 : i64, i64) {new_shape = array<i64: -1, -1>} : !fuser.tensor<?x64xf32> -> !fuser.tensor<?x?xf32>
// CHECK-NEXT:  fuser.output %3, %4 : !fuser.tensor<?x8x8xf32>, !fuser.tensor<?x?xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.reshape"
// GENERIC: "fuser.output"
