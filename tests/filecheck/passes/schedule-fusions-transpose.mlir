// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s

// Transpose: both groups' innermost axes are split by the tiles, the tile outer parts
// merged into BIDx; the output group's tile is [tile2, tile1] (its own innermost axis
// inner), group 2 (%a, through the permute) gets [tile1, tile2] so that its loads are
// vectorized along its own innermost axis; it is computed at the tile's loop in shared
// memory (its tile is read by the output along the output's innermost axis).

fuser.fusion @transpose_add(%a : !fuser.tensor<256x512xf32>, %b : !fuser.tensor<512x256xf32>) -> !fuser.tensor<512x256xf32> {
  %p = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<256x512xf32>) -> !fuser.tensor<512x256xf32>
  %y = fuser.add %p, %b : (!fuser.tensor<512x256xf32>, !fuser.tensor<512x256xf32>) -> !fuser.tensor<512x256xf32>
  fuser.output %y : !fuser.tensor<512x256xf32>
}

// CHECK-LABEL: fuser.fusion @transpose_add
// CHECK-SAME: fuser.schedule = {kind = "transpose"
// CHECK:      %0, %1 = iterdomain.logical %y : !fuser.tensor<512x256xf32> -> !iterdomain.id<512>, !iterdomain.id<256>
// CHECK-NEXT: %2, %3 = iterdomain.split %1 by 32 : !iterdomain.id<256> -> !iterdomain.id<8>, !iterdomain.id<32>
// CHECK-NEXT: %4, %5 = iterdomain.split %0 by 32 : !iterdomain.id<512> -> !iterdomain.id<16>, !iterdomain.id<32>
// CHECK-NEXT: %6 = iterdomain.merge %4, %2 : !iterdomain.id<16>, !iterdomain.id<8> -> !iterdomain.id<128>
// CHECK-NEXT: %7 = iterdomain.merge %5, %3 : !iterdomain.id<32>, !iterdomain.id<32> -> !iterdomain.id<1024>
// CHECK-NEXT: %8, %9 = iterdomain.split %7 by 4 : !iterdomain.id<1024> -> !iterdomain.id<256>, !iterdomain.id<4>
// CHECK-NEXT: %10, %11 = iterdomain.split %8 by 128 : !iterdomain.id<256> -> !iterdomain.id<2>, !iterdomain.id<128>
// CHECK-NEXT: %y_bidx = iterdomain.parallelize %6 to BIDx : !iterdomain.id<128> -> !iterdomain.id<128, BIDx>
// CHECK-NEXT: %y_unroll = iterdomain.parallelize %10 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
// CHECK-NEXT: %y_tidx = iterdomain.parallelize %11 to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
// CHECK-NEXT: %y_vec = iterdomain.parallelize %9 to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
// CHECK-NEXT: iterdomain.loop %y [%y_bidx, %y_unroll, %y_tidx, %y_vec] : !fuser.tensor<512x256xf32> [!iterdomain.id<128, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      %19 = iterdomain.merge %15, %17 : !iterdomain.id<32>, !iterdomain.id<32> -> !iterdomain.id<1024>
// CHECK:      iterdomain.loop %a [%a_bidx, %a_unroll, %a_tidx, %a_vec] {compute_at = 1 : i64, memory = "shared"} : !fuser.tensor<256x512xf32> [!iterdomain.id<128, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %b [%b_bidx, %b_unroll, %b_tidx, %b_vec] : !fuser.tensor<512x256xf32> [!iterdomain.id<128, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %p [%p_bidx, %p_unroll, %p_tidx, %45] : !fuser.tensor<512x256xf32> [!iterdomain.id<128, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4>]
// CHECK:      fuser.output %y : !fuser.tensor<512x256xf32>
// CHECK-NEXT: }
