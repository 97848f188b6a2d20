// RUN: fuser-opt %s --strip-bookend-views | filecheck %s
// RUN: fuser-opt %s --strip-bookend-views --mark-aliases --segment | filecheck %s --check-prefix=SEG

// Seed 002's transpose with bookend views (nvfuser_fusion_id7). The reshapes go
// to the host. The permute is at the input end too: the kernel reads through the
// permuted strides (its input gets stride_order [3, 1, 2, 0]), so the kernel is
// a strided read feeding the set (the copy that transposes). One kernel.

fuser.fusion @transpose(%t0 : !fuser.tensor<768x128x64xf32>) -> !fuser.tensor<8192x768xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 12, 128, 64>, view = #fuser.view<split [64, 12], keep, keep>} : !fuser.tensor<768x128x64xf32> -> !fuser.tensor<64x12x128x64xf32>
  %t2 = fuser.permute %t1 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %t3 = fuser.set %t2 : (!fuser.tensor<64x128x12x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %t4 = fuser.reshape %t3 {new_shape = array<i64: 64, 128, 768>, view = #fuser.view<keep, keep, merge 2>} : !fuser.tensor<64x128x12x64xf32> -> !fuser.tensor<64x128x768xf32>
  %t5 = fuser.reshape %t4 {new_shape = array<i64: 8192, 768>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<64x128x768xf32> -> !fuser.tensor<8192x768xf32>
  fuser.output %t5 : !fuser.tensor<8192x768xf32>
}

// CHECK-LABEL: fuser.fusion @transpose(%t2: !fuser.tensor<64x128x12x64xf32, contiguity=[true, true, true, true], stride_order=[3, 1, 2, 0]>) -> !fuser.tensor<64x128x12x64xf32> {
// CHECK-NEXT:    %t3 = fuser.set %t2
// CHECK-NEXT:    fuser.output %t3 : !fuser.tensor<64x128x12x64xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<768x128x64xf32>) -> !fuser.tensor<8192x768xf32> {
// CHECK-NEXT:    %1 = hir.reshape %0 {new_shape = array<i64: 64, 12, 128, 64>} : !fuser.tensor<768x128x64xf32> -> !fuser.tensor<64x12x128x64xf32>
// CHECK-NEXT:    %2 = hir.permute %1 {dims = array<i64: 0, 2, 1, 3>} : !fuser.tensor<64x12x128x64xf32> -> !fuser.tensor<64x128x12x64xf32, contiguity=[true, true, true, true], stride_order=[3, 1, 2, 0]>
// CHECK-NEXT:    %3 = hir.launch @transpose(%2)
// CHECK-NEXT:    %4 = hir.reshape %3 {new_shape = array<i64: 64, 128, 768>}
// CHECK-NEXT:    %5 = hir.reshape %4 {new_shape = array<i64: 8192, 768>}
// CHECK-NEXT:    hir.return %5 : !fuser.tensor<8192x768xf32>

// SEG-LABEL: fuser.fusion @transpose_seg0(
// SEG-NEXT:    fuser.set
// SEG-NEXT:    fuser.output
// SEG-LABEL: hir.program @main(
// SEG-NEXT:    hir.reshape
// SEG-NEXT:    hir.permute
// SEG-NEXT:    hir.allocate : !fuser.tensor<64x128x12x64xf32>
// SEG-NEXT:    hir.launch @transpose_seg0(
// SEG-NEXT:    hir.reshape
// SEG-NEXT:    hir.reshape
// SEG-NEXT:    hir.return
