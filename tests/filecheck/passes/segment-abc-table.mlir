// RUN: fuser-opt %s --strip-bookend-views --mark-aliases --segment | filecheck %s
// RUN: fuser-opt %s --segment | filecheck %s --check-prefix=SEG

// Seed 002's A/B/C table: views A (before the add), B (between add and mul) and
// C (after the mul) swap 8192x3072 and 64x128x3072. nvFuser gives 1 to 3 segments
// depending on which are present; fuser gives ONE kernel in all eight cases:
// strip-bookend-views moves A and C to the host, and the segmenter moves B
// through the pointwise ops toward the input, so no view splits the chain.
// With segment alone (SEG) every case is one kernel as well.

fuser.fusion @abc_ABC(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  fuser.output %C : !fuser.tensor<64x128x3072xf32>
}

fuser.fusion @abc_AB_(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  fuser.output %mul : !fuser.tensor<8192x3072xf32>
}

fuser.fusion @abc_A_C(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %mul = fuser.mul %add, %add : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  fuser.output %C : !fuser.tensor<8192x3072xf32>
}

fuser.fusion @abc_A__(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %mul = fuser.mul %add, %add : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  fuser.output %mul : !fuser.tensor<64x128x3072xf32>
}

fuser.fusion @abc__BC(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %add = fuser.add %t0, %t0 : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  fuser.output %C : !fuser.tensor<8192x3072xf32>
}

fuser.fusion @abc__B_(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %add = fuser.add %t0, %t0 : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  fuser.output %mul : !fuser.tensor<64x128x3072xf32>
}

fuser.fusion @abc___C(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %add = fuser.add %t0, %t0 : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %mul = fuser.mul %add, %add : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  fuser.output %C : !fuser.tensor<64x128x3072xf32>
}

fuser.fusion @abc____(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %add = fuser.add %t0, %t0 : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %mul = fuser.mul %add, %add : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  fuser.output %mul : !fuser.tensor<8192x3072xf32>
}

// CHECK-LABEL: hir.program @abc_ABC_main(
// CHECK-NEXT:    hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>}
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc_ABC_seg0(
// CHECK-NEXT:    hir.reshape
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc_AB__main(
// CHECK-NEXT:    hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>}
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc_AB__seg0(
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc_A_C_main(
// CHECK-NEXT:    hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>}
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc_A_C_seg0(
// CHECK-NEXT:    hir.reshape
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc_A___main(
// CHECK-NEXT:    hir.reshape %0 {new_shape = array<i64: 64, 128, 3072>}
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc_A___seg0(
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc__BC_main(
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc__BC_seg0(
// CHECK-NEXT:    hir.reshape
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc__B__main(
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc__B__seg0(
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc___C_main(
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc___C_seg0(
// CHECK-NEXT:    hir.reshape
// CHECK-NEXT:    hir.return
// CHECK-LABEL: hir.program @abc_____main(
// CHECK-NEXT:    hir.allocate
// CHECK-NEXT:    hir.launch @abc_____seg0(
// CHECK-NEXT:    hir.return

// SEG-LABEL: hir.program @abc_ABC_main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc_ABC_seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc_AB__main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc_AB__seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc_A_C_main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc_A_C_seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc_A___main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc_A___seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc__BC_main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc__BC_seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc__B__main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc__B__seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc___C_main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc___C_seg0(%0)
// SEG-NEXT:    hir.return
// SEG-LABEL: hir.program @abc_____main(
// SEG-NEXT:    hir.allocate {preallocated}
// SEG-NEXT:    hir.launch @abc_____seg0(%0)
// SEG-NEXT:    hir.return
