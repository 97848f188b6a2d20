// RUN: fuser-opt %s --split-input-file --canonicalize | filecheck %s

// --split-input-file processes each chunk on its own and joins the outputs with
// the separator line; passes apply to every chunk.

fuser.fusion @first(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %0 = fuser.cast %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %0 : !fuser.tensor<4xf32>
}

// -----

fuser.fusion @second(%a : !fuser.tensor<2x3xf16>) -> !fuser.tensor<3x2xf16> {
  %0 = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<2x3xf16>) -> !fuser.tensor<3x2xf16>
  fuser.output %0 : !fuser.tensor<3x2xf16>
}

// CHECK-LABEL: fuser.fusion @first
// CHECK-NEXT:    fuser.output %a
// CHECK:       {{^//}} {{-----}}
// CHECK-LABEL: fuser.fusion @second
// CHECK-NEXT:    %0 = fuser.permute %a {dims = array<i64: 1, 0>}
