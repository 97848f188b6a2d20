// RUN: fuser-opt %S/../../../examples/transpose_bookend_views.mlir | filecheck %s
// RUN: fuser-opt %S/../../../examples/transpose_bookend_views.mlir --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %S/../../../examples/transpose_bookend_views.mlir --canonicalize | filecheck %s --check-prefix=CANON
// RUN: fuser-run %S/../../../examples/transpose_bookend_views.mlir | filecheck %s --check-prefix=RESULT

// Seed 002: the attention transpose with bookend views
// (examples/transpose_bookend_views.mlir): 768x128x64 -> 64x12x128x64 (split),
// permute [0, 2, 1, 3], set, -> 64x128x768 (merge) -> 8192x768 (merge).
// canonicalize joins the two trailing reshapes into one, with a recomputed view.

// CHECK-LABEL: fuser.fusion @transpose(%t0: !fuser.tensor<768x128x64xf32>) -> !fuser.tensor<8192x768xf32> {
// CHECK-NEXT:    %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 12, 128, 64>, view = #fuser.view<split [64, 12], keep, keep>} : !fuser.tensor<768x128x64xf32> -> !fuser.tensor<64x12x128x64xf32>
// CHECK-NEXT:    %t2 = fuser.permute %t1 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
// CHECK-NEXT:    %t3 = fuser.set %t2 : (!fuser.tensor<64x128x12x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
// CHECK-NEXT:    %t4 = fuser.reshape %t3 {new_shape = array<i64: 64, 128, 768>, view = #fuser.view<keep, keep, merge 2>} : !fuser.tensor<64x128x12x64xf32> -> !fuser.tensor<64x128x768xf32>
// CHECK-NEXT:    %t5 = fuser.reshape %t4 {new_shape = array<i64: 8192, 768>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<64x128x768xf32> -> !fuser.tensor<8192x768xf32>
// CHECK-NEXT:    fuser.output %t5 : !fuser.tensor<8192x768xf32>

// CANON-LABEL: fuser.fusion @transpose
// CANON-NEXT:    %t1 = fuser.reshape %t0 {{.*}}view = #fuser.view<split [64, 12], keep, keep>}
// CANON-NEXT:    %t2 = fuser.permute %t1 {dims = array<i64: 0, 2, 1, 3>}
// CANON-NEXT:    %t3 = fuser.set %t2
// CANON-NEXT:    %{{.*}} = fuser.reshape %t3 {new_shape = array<i64: 8192, 768>, view = #fuser.view<merge 2, merge 2>} : !fuser.tensor<64x128x12x64xf32> -> !fuser.tensor<8192x768xf32>
// CANON-NEXT:    fuser.output

// RESULT: out0: shape (8192, 768) float32

// With the bookend views stripped the module holds an hir.program, which fuser-run
// runs through the host evaluator; the result is the same as the fusion's.
// RUN: fuser-opt %S/../../../examples/transpose_bookend_views.mlir -p strip-bookend-views -o %t.mlir
// RUN: fuser-run %t.mlir | filecheck %s --check-prefix=RESULT
// RUN: fuser-run %S/../../../examples/transpose_bookend_views.mlir > %t.direct
// RUN: fuser-run %t.mlir > %t.program
// RUN: diff %t.direct %t.program
