// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// scatter keeps the input's type; src is a tensor of the input's dtype or a scalar,
// the index may be smaller than the input (off dim) and than src; dim may be negative.

fuser.fusion @scatter(%0: !fuser.tensor<16x8xf32>, %1: !fuser.tensor<5x?xi64>, %2: !fuser.tensor<6x8xf32>, %3: f64, %4: !fuser.tensor<?x?xi32>) -> (!fuser.tensor<16x8xf32>, !fuser.tensor<16x8xf32>) {
  %5 = fuser.scatter %0, %1, %2 {dim = 0 : i64} : (!fuser.tensor<16x8xf32>, !fuser.tensor<5x?xi64>, !fuser.tensor<6x8xf32>) -> !fuser.tensor<16x8xf32>
  %6 = fuser.scatter %0, %4, %3 {dim = -1 : i64} : (!fuser.tensor<16x8xf32>, !fuser.tensor<?x?xi32>, f64) -> !fuser.tensor<16x8xf32>
  fuser.output %5, %6 : !fuser.tensor<16x8xf32>, !fuser.tensor<16x8xf32>
}

// CHECK-LABEL: fuser.fusion @scatter(%0: !fuser.tensor<16x8xf32>, %1: !fuser.tensor<5x?xi64>, %2: !fuser.tensor<6x8xf32>, %3: f64, %4: !fuser.tensor<?x?xi32>) -> (!fuser.tensor<16x8xf32>, !fuser.tensor<16x8xf32>) {
// CHECK-NEXT:  %5 = fuser.scatter %0, %1, %2 {dim = 0 : i64} : (!fuser.tensor<16x8xf32>, !fuser.tensor<5x?xi64>, !fuser.tensor<6x8xf32>) -> !fuser.tensor<16x8xf32>
// CHECK-NEXT:  %6 = fuser.scatter %0, %4, %3 {dim = -1 : i64} : (!fuser.tensor<16x8xf32>, !fuser.tensor<?x?xi32>, f64) -> !fuser.tensor<16x8xf32>
// CHECK-NEXT:  fuser.output %5, %6 : !fuser.tensor<16x8xf32>, !fuser.tensor<16x8xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.scatter"
// GENERIC-SAME: dim = 0 : i64
// GENERIC: "fuser.scatter"
// GENERIC: "fuser.output"
