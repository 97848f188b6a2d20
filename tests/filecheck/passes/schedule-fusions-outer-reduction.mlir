// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s

// Outer reductions: the kept (column) axis is split by the vector width and block.x
// (TIDx), the reduced axes (merged) by threads_per_row (TIDy); with few column blocks
// the rest is split across grid.y blocks (cross_grid: BIDy, one wave of blocks) after
// an unroll of 4 rows a thread; BIDy is the inner part of its split, so that the
// blocks of a column interleave (block y reads row groups y, y + grid.y, ...).

fuser.fusion @col_sum(%x : !fuser.tensor<8192x64xf32>) -> !fuser.tensor<64xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<8192x64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %s : !fuser.tensor<64xf32>
}

fuser.fusion @col_sum_3d(%x : !fuser.tensor<64x32x512xf32>) -> !fuser.tensor<512xf32> {
  %s = fuser.sum %x {dims = array<i64: 0, 1>} : (!fuser.tensor<64x32x512xf32>) -> !fuser.tensor<512xf32>
  fuser.output %s : !fuser.tensor<512xf32>
}

// CHECK-LABEL: fuser.fusion @col_sum
// CHECK-SAME: fuser.schedule = {kind = "reduction"
// CHECK:      %0, %1 = iterdomain.logical %s : !fuser.tensor<64xf32> -> !iterdomain.id<8192, reduction>, !iterdomain.id<64>
// CHECK-NEXT: %2, %3 = iterdomain.split %1 by 4 : !iterdomain.id<64> -> !iterdomain.id<16>, !iterdomain.id<4>
// CHECK-NEXT: %4, %5 = iterdomain.split %2 by 16 : !iterdomain.id<16> -> !iterdomain.id<1>, !iterdomain.id<16>
// CHECK-NEXT: %6, %7 = iterdomain.split %0 by 16 : !iterdomain.id<8192, reduction> -> !iterdomain.id<512, reduction>, !iterdomain.id<16, reduction>
// CHECK-NEXT: %8, %9 = iterdomain.split %6 by 4 : !iterdomain.id<512, reduction> -> !iterdomain.id<128, reduction>, !iterdomain.id<4, reduction>
// CHECK-NEXT: %10, %11 = iterdomain.split %8 by 64 : !iterdomain.id<128, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<64, reduction>
// CHECK-NEXT: %s_bidx = iterdomain.parallelize %4 to BIDx : !iterdomain.id<1> -> !iterdomain.id<1, BIDx>
// CHECK-NEXT: %s_bidy = iterdomain.parallelize %11 to BIDy : !iterdomain.id<64, reduction> -> !iterdomain.id<64, reduction, BIDy>
// CHECK-NEXT: %s_unroll = iterdomain.parallelize %9 to unroll : !iterdomain.id<4, reduction> -> !iterdomain.id<4, reduction, unroll>
// CHECK-NEXT: %s_tidy = iterdomain.parallelize %7 to TIDy : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDy>
// CHECK-NEXT: %s_tidx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
// CHECK-NEXT: %s_vec = iterdomain.parallelize %3 to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
// CHECK-NEXT: iterdomain.loop %s [%s_bidx, %s_bidy, %10, %s_unroll, %s_tidy, %s_tidx, %s_vec] : !fuser.tensor<64xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<64, reduction, BIDy>, !iterdomain.id<2, reduction>, !iterdomain.id<4, reduction, unroll>, !iterdomain.id<16, reduction, TIDy>, !iterdomain.id<16, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %x [%x_bidx, %x_bidy, %22, %x_unroll, %x_tidy, %x_tidx, %x_vec] : !fuser.tensor<8192x64xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<64, BIDy>, !iterdomain.id<2>, !iterdomain.id<4, unroll>, !iterdomain.id<16, TIDy>, !iterdomain.id<16, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      fuser.output %s : !fuser.tensor<64xf32>
// CHECK-NEXT: }
// CHECK-LABEL: fuser.fusion @col_sum_3d
// CHECK-SAME: fuser.schedule = {kind = "reduction"
// CHECK:      %0, %1, %2 = iterdomain.logical %s : !fuser.tensor<512xf32> -> !iterdomain.id<64, reduction>, !iterdomain.id<32, reduction>, !iterdomain.id<512>
// CHECK-NEXT: %3 = iterdomain.merge %0, %1 : !iterdomain.id<64, reduction>, !iterdomain.id<32, reduction> -> !iterdomain.id<2048, reduction>
// CHECK-NEXT: %4, %5 = iterdomain.split %2 by 4 : !iterdomain.id<512> -> !iterdomain.id<128>, !iterdomain.id<4>
// CHECK-NEXT: %6, %7 = iterdomain.split %4 by 32 : !iterdomain.id<128> -> !iterdomain.id<4>, !iterdomain.id<32>
// CHECK-NEXT: %8, %9 = iterdomain.split %3 by 8 : !iterdomain.id<2048, reduction> -> !iterdomain.id<256, reduction>, !iterdomain.id<8, reduction>
// CHECK-NEXT: %10, %11 = iterdomain.split %8 by 4 : !iterdomain.id<256, reduction> -> !iterdomain.id<64, reduction>, !iterdomain.id<4, reduction>
// CHECK-NEXT: %12, %13 = iterdomain.split %10 by 32 : !iterdomain.id<64, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<32, reduction>
// CHECK-NEXT: %s_bidx = iterdomain.parallelize %6 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
// CHECK-NEXT: %s_bidy = iterdomain.parallelize %13 to BIDy : !iterdomain.id<32, reduction> -> !iterdomain.id<32, reduction, BIDy>
// CHECK-NEXT: %s_unroll = iterdomain.parallelize %11 to unroll : !iterdomain.id<4, reduction> -> !iterdomain.id<4, reduction, unroll>
// CHECK-NEXT: %s_tidy = iterdomain.parallelize %9 to TIDy : !iterdomain.id<8, reduction> -> !iterdomain.id<8, reduction, TIDy>
// CHECK-NEXT: %s_tidx = iterdomain.parallelize %7 to TIDx : !iterdomain.id<32> -> !iterdomain.id<32, TIDx>
// CHECK-NEXT: %s_vec = iterdomain.parallelize %5 to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
// CHECK-NEXT: iterdomain.loop %s [%s_bidx, %s_bidy, %12, %s_unroll, %s_tidy, %s_tidx, %s_vec] : !fuser.tensor<512xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<32, reduction, BIDy>, !iterdomain.id<2, reduction>, !iterdomain.id<4, reduction, unroll>, !iterdomain.id<8, reduction, TIDy>, !iterdomain.id<32, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %x [%x_bidx, %x_bidy, %26, %x_unroll, %x_tidy, %x_tidx, %x_vec] : !fuser.tensor<64x32x512xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<32, BIDy>, !iterdomain.id<2>, !iterdomain.id<4, unroll>, !iterdomain.id<8, TIDy>, !iterdomain.id<32, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      fuser.output %s : !fuser.tensor<512xf32>
// CHECK-NEXT: }
