// RUN: fuser-opt %S/../../../examples/gelu_bookend_views.mlir | filecheck %s
// RUN: fuser-opt %S/../../../examples/gelu_bookend_views.mlir --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %S/../../../examples/gelu_bookend_views.mlir --canonicalize | filecheck %s

// Seed 002: GELU with bookend views (examples/gelu_bookend_views.mlir). The reshape
// 8192x3072 -> 64x128x3072 is a split of axis 0, the one back a merge; canonicalize
// leaves the fusion as it is (the views are not adjacent, nothing is dead).

// CHECK-LABEL: fuser.fusion @gelu(%t0: !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
// CHECK-NEXT:    %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>, view = #fuser.view<split [64, 128], keep>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %s2 = fuser.constant 5.000000e-01 : f64
// CHECK-NEXT:    %t3 = fuser.mul %t1, %s2 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %s4 = fuser.constant 7.071070e-01 : f64
// CHECK-NEXT:    %t5 = fuser.mul %t1, %s4 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %t6 = fuser.erf %t5 : (!fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %s7 = fuser.constant 1.000000e+00 : f64
// CHECK-NEXT:    %t8 = fuser.add %t6, %s7 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %t9 = fuser.mul %t3, %t8 : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %t10 = fuser.reshape %t9 {new_shape = array<i64: 8192, 3072>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
// CHECK-NEXT:    fuser.output %t10 : !fuser.tensor<8192x3072xf32>
// CHECK-NEXT:  }
