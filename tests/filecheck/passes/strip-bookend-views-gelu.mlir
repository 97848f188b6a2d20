// RUN: fuser-opt %s --strip-bookend-views | filecheck %s
// RUN: fuser-opt %s --strip-bookend-views --segment | filecheck %s --check-prefix=SEG

// Seed 002's GELU (nvfuser_fusion_id10) with bookend views: both reshapes are
// metadata on contiguous buffers, so they run on the host around ONE kernel
// launch, and the kernel has no view left.

fuser.fusion @gelu(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>, view = #fuser.view<split [64, 128], keep>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %s2 = fuser.constant 5.000000e-01 : f64
  %t3 = fuser.mul %t1, %s2 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %s4 = fuser.constant 7.071070e-01 : f64
  %t5 = fuser.mul %t1, %s4 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %t6 = fuser.erf %t5 : (!fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %s7 = fuser.constant 1.000000e+00 : f64
  %t8 = fuser.add %t6, %s7 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %t9 = fuser.mul %t3, %t8 : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %t10 = fuser.reshape %t9 {new_shape = array<i64: 8192, 3072>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  fuser.output %t10 : !fuser.tensor<8192x3072xf32>
}

// CHECK-LABEL: fuser.fusion @gelu(%t1: !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
// CHECK-NOT:     fuser.reshape
// CHECK:         fuser.output %t9 : !fuser.tensor<64x128x3072xf32>
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
// CHECK-NEXT:    %1 = hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %2 = hir.launch @gelu(%1) : (!fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
// CHECK-NEXT:    %3 = hir.reshape %2 {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
// CHECK-NEXT:    hir.return %3 : !fuser.tensor<8192x3072xf32>
// CHECK-NEXT:  }

// SEG-LABEL: fuser.fusion @gelu_seg0(%t1: !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
// SEG-NOT:     fuser.reshape
// SEG:         fuser.output %t9
// SEG-NOT:   fuser.fusion
// SEG-LABEL: hir.program @main(%0: !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
// SEG-NEXT:    %1 = hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>}
// SEG-NEXT:    %2 = hir.allocate : !fuser.tensor<64x128x3072xf32>
// SEG-NEXT:    %3 = hir.launch @gelu_seg0(%1) outs(%2 : !fuser.tensor<64x128x3072xf32>)
// SEG-NEXT:    %4 = hir.reshape %3 {new_shape = array<i64: 8192, 3072>}
// SEG-NEXT:    hir.return %4 : !fuser.tensor<8192x3072xf32>
// SEG-NEXT:  }
