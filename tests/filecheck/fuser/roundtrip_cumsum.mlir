// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// cumsum keeps the input's shape and dtype; dim may be negative.

fuser.fusion @cumsum(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<?xi32>) -> (!fuser.tensor<8x16xf32>, !fuser.tensor<?xi32>) {
  %2 = fuser.cumsum %0 {dim = 0 : i64} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
  %3 = fuser.cumsum %1 {dim = -1 : i64} : (!fuser.tensor<?xi32>) -> !fuser.tensor<?xi32>
  fuser.output %2, %3 : !fuser.tensor<8x16xf32>, !fuser.tensor<?xi32>
}

// CHECK-LABEL: fuser.fusion @cumsum(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<?xi32>) -> (!fuser.tensor<8x16xf32>, !fuser.tensor<?xi32>) {
// CHECK-NEXT:  %2 = fuser.cumsum %0 {dim = 0 : i64} : (!fuser.tensor<8x16xf32>) -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:  %3 = fuser.cumsum %1 {dim = -1 : i64} : (!fuser.tensor<?xi32>) -> !fuser.tensor<?xi32>
// CHECK-NEXT:  fuser.output %2, %3 : !fuser.tensor<8x16xf32>, !fuser.tensor<?xi32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.cumsum"
// GENERIC-SAME: dim = 0 : i64
// GENERIC: "fuser.cumsum"
// GENERIC: "fuser.output"
