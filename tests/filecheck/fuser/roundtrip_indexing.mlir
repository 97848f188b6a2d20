// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// index_select, select, gather and take_along_axis.

fuser.fusion @indexing(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<5xi64>, %2: i64, %3: !fuser.tensor<8x4xi64>, %4: !fuser.tensor<1x4xi32>) -> (!fuser.tensor<8x5xf32>, !fuser.tensor<16xf32>, !fuser.tensor<8x4xf32>, !fuser.tensor<8x4xf32>) {
  %5 = fuser.index_select %0, %1 {dim = 1 : i64} : (!fuser.tensor<8x16xf32>, !fuser.tensor<5xi64>) -> !fuser.tensor<8x5xf32>
  %6 = fuser.select %0, %2 {dim = 0 : i64} : (!fuser.tensor<8x16xf32>, i64) -> !fuser.tensor<16xf32>
  %7 = fuser.gather %0, %3 {dim = 1 : i64} : (!fuser.tensor<8x16xf32>, !fuser.tensor<8x4xi64>) -> !fuser.tensor<8x4xf32>
  %8 = fuser.take_along_axis %0, %4 {dim = 1 : i64} : (!fuser.tensor<8x16xf32>, !fuser.tensor<1x4xi32>) -> !fuser.tensor<8x4xf32>
  fuser.output %5, %6, %7, %8 : !fuser.tensor<8x5xf32>, !fuser.tensor<16xf32>, !fuser.tensor<8x4xf32>, !fuser.tensor<8x4xf32>
}

// CHECK-LABEL: fuser.fusion @indexing(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<5xi64>, %2: i64, %3: !fuser.tensor<8x4xi64>, %4: !fuser.tensor<1x4xi32>) -> (!fuser.tensor<8x5xf32>, !fuser.tensor<16xf32>, !fuser.tensor<8x4xf32>, !fuser.tensor<8x4xf32>) {
// CHECK-NEXT:  %5 = fuser.index_select %0, %1 {dim = 1 : i64} : (!fuser.tensor<8x16xf32>, !fuser.tensor<5xi64>) -> !fuser.tensor<8x5xf32>
// CHECK-NEXT:  %6 = fuser.select %0, %2 {dim = 0 : i64} : (!fuser.tensor<8x16xf32>, i64) -> !fuser.tensor<16xf32>
// CHECK-NEXT:  %7 = fuser.gather %0, %3 {dim = 1 : i64} : (!fuser.tensor<8x16xf32>, !fuser.tensor<8x4xi64>) -> !fuser.tensor<8x4xf32>
// CHECK-NEXT:  %8 = fuser.take_along_axis %0, %4 {dim = 1 : i64} : (!fuser.tensor<8x16xf32>, !fuser.tensor<1x4xi32>) -> !fuser.tensor<8x4xf32>
// CHECK-NEXT:  fuser.output %5, %6, %7, %8 : !fuser.tensor<8x5xf32>, !fuser.tensor<16xf32>, !fuser.tensor<8x4xf32>, !fuser.tensor<8x4xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.index_select"
// GENERIC: "fuser.select"
// GENERIC: "fuser.gather"
// GENERIC: "fuser.take_along_axis"
// GENERIC: "fuser.output"
