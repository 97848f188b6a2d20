// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// cat along an axis, promoting dtypes, with symbolic extents.

fuser.fusion @cat(%0: !fuser.tensor<4x8xf32>, %1: !fuser.tensor<2x8xf16>, %2: !fuser.tensor<?x8xf32>) -> (!fuser.tensor<6x8xf32>, !fuser.tensor<4x24xf32>, !fuser.tensor<?x8xf32>) {
  %3 = fuser.cat %0, %1 {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2x8xf16>) -> !fuser.tensor<6x8xf32>
  %4 = fuser.cat %0, %0, %0 {dim = -1 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x24xf32>
  %5 = fuser.cat %0, %2 {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<?x8xf32>) -> !fuser.tensor<?x8xf32>
  fuser.output %3, %4, %5 : !fuser.tensor<6x8xf32>, !fuser.tensor<4x24xf32>, !fuser.tensor<?x8xf32>
}

// CHECK-LABEL: fuser.fusion @cat(%0: !fuser.tensor<4x8xf32>, %1: !fuser.tensor<2x8xf16>, %2: !fuser.tensor<?x8xf32>) -> (!fuser.tensor<6x8xf32>, !fuser.tensor<4x24xf32>, !fuser.tensor<?x8xf32>) {
// CHECK-NEXT:  %3 = fuser.cat %0, %1 {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<2x8xf16>) -> !fuser.tensor<6x8xf32>
// CHECK-NEXT:  %4 = fuser.cat %0, %0, %0 {dim = -1 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x24xf32>
// CHECK-NEXT:  %5 = fuser.cat %0, %2 {dim = 0 : i64} : (!fuser.tensor<4x8xf32>, !fuser.tensor<?x8xf32>) -> !fuser.tensor<?x8xf32>
// CHECK-NEXT:  fuser.output %3, %4, %5 : !fuser.tensor<6x8xf32>, !fuser.tensor<4x24xf32>, !fuser.tensor<?x8xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.cat"
// GENERIC: "fuser.cat"
// GENERIC: "fuser.cat"
// GENERIC: "fuser.output"
