// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s | fuser-opt | filecheck %s

// fuser.matmul (torch.matmul's shape rules) and fuser.linear (input @ weight.T + bias,
// bias optional) print back as they parse; the result types are what the operands give.

fuser.fusion @products(%a: !fuser.tensor<8x4xbf16>, %b: !fuser.tensor<4x16xbf16>, %w: !fuser.tensor<16x4xbf16>,
                       %bias: !fuser.tensor<16xbf16>, %batch: !fuser.tensor<3x4x16xbf16>, %v: !fuser.tensor<4xbf16>,
                       %x3: !fuser.tensor<2x?x4xf32>, %w3: !fuser.tensor<5x4xf32>)
    -> (!fuser.tensor<8x16xbf16>, !fuser.tensor<3x8x16xbf16>, !fuser.tensor<8xbf16>, !fuser.tensor<bf16>,
        !fuser.tensor<8x16xbf16>, !fuser.tensor<8x16xbf16>, !fuser.tensor<8xbf16>, !fuser.tensor<2x?x5xf32>) {
  %mm = fuser.matmul %a, %b : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4x16xbf16>) -> !fuser.tensor<8x16xbf16>
  %bmm = fuser.matmul %a, %batch : (!fuser.tensor<8x4xbf16>, !fuser.tensor<3x4x16xbf16>) -> !fuser.tensor<3x8x16xbf16>
  %mv = fuser.matmul %a, %v : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4xbf16>) -> !fuser.tensor<8xbf16>
  %dot = fuser.matmul %v, %v : (!fuser.tensor<4xbf16>, !fuser.tensor<4xbf16>) -> !fuser.tensor<bf16>
  %lin = fuser.linear %a, %w, %bias : (!fuser.tensor<8x4xbf16>, !fuser.tensor<16x4xbf16>, !fuser.tensor<16xbf16>) -> !fuser.tensor<8x16xbf16>
  %nob = fuser.linear %a, %w : (!fuser.tensor<8x4xbf16>, !fuser.tensor<16x4xbf16>) -> !fuser.tensor<8x16xbf16>
  %l1 = fuser.linear %a, %v : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4xbf16>) -> !fuser.tensor<8xbf16>
  %l3 = fuser.linear %x3, %w3 : (!fuser.tensor<2x?x4xf32>, !fuser.tensor<5x4xf32>) -> !fuser.tensor<2x?x5xf32>
  fuser.output %mm, %bmm, %mv, %dot, %lin, %nob, %l1, %l3 : !fuser.tensor<8x16xbf16>, !fuser.tensor<3x8x16xbf16>, !fuser.tensor<8xbf16>, !fuser.tensor<bf16>, !fuser.tensor<8x16xbf16>, !fuser.tensor<8x16xbf16>, !fuser.tensor<8xbf16>, !fuser.tensor<2x?x5xf32>
}

// CHECK-LABEL: fuser.fusion @products
// CHECK-NEXT:    %mm = fuser.matmul %a, %b : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4x16xbf16>) -> !fuser.tensor<8x16xbf16>
// CHECK-NEXT:    %bmm = fuser.matmul %a, %batch : (!fuser.tensor<8x4xbf16>, !fuser.tensor<3x4x16xbf16>) -> !fuser.tensor<3x8x16xbf16>
// CHECK-NEXT:    %mv = fuser.matmul %a, %v : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4xbf16>) -> !fuser.tensor<8xbf16>
// CHECK-NEXT:    %dot = fuser.matmul %v, %v : (!fuser.tensor<4xbf16>, !fuser.tensor<4xbf16>) -> !fuser.tensor<bf16>
// CHECK-NEXT:    %lin = fuser.linear %a, %w, %bias : (!fuser.tensor<8x4xbf16>, !fuser.tensor<16x4xbf16>, !fuser.tensor<16xbf16>) -> !fuser.tensor<8x16xbf16>
// CHECK-NEXT:    %nob = fuser.linear %a, %w : (!fuser.tensor<8x4xbf16>, !fuser.tensor<16x4xbf16>) -> !fuser.tensor<8x16xbf16>
// CHECK-NEXT:    %l1 = fuser.linear %a, %v : (!fuser.tensor<8x4xbf16>, !fuser.tensor<4xbf16>) -> !fuser.tensor<8xbf16>
// CHECK-NEXT:    %l3 = fuser.linear %x3, %w3 : (!fuser.tensor<2x?x4xf32>, !fuser.tensor<5x4xf32>) -> !fuser.tensor<2x?x5xf32>
