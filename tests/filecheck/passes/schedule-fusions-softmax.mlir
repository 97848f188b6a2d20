// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s

// Inner persistent softmax: the reference is the first reduction (%m, its reduced
// axis a reduction id); the reduced axis is split by the vector width and
// threads_per_row (TIDx), the persistent batch is unrolled, rows are split into
// BIDx x TIDy (rows_per_block rows per block). The other
// reduction, the row tensors and the broadcast (row) tensors take the same transforms.
// Placement (nvFuser's computeAt and persistent buffer): both reductions are computed
// at the rows' loops (compute_at = 2: after BIDx and TIDy), and %x, which both
// reductions and the output read, is held there in registers; the other tensors are
// inlined into their consumers.

fuser.fusion @softmax(%x : !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4x1024xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<4x1024xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x1024xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4x1024xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<4x1024xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x1024xf32>
  fuser.output %y : !fuser.tensor<4x1024xf32>
}

fuser.fusion @softmax_f16_rows(%x : !fuser.tensor<512x4096xf16>) -> !fuser.tensor<512x4096xf16> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<512x4096xf16>) -> !fuser.tensor<512xf16>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<512xf16>) -> !fuser.tensor<512x1xf16>
  %y = fuser.sub %x, %mb : (!fuser.tensor<512x4096xf16>, !fuser.tensor<512x1xf16>) -> !fuser.tensor<512x4096xf16>
  fuser.output %y : !fuser.tensor<512x4096xf16>
}

// CHECK-LABEL: fuser.fusion @softmax
// CHECK-SAME: fuser.schedule = {kind = "inner_persistent"
// CHECK:      %0, %1 = iterdomain.logical %m : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<1024, reduction>
// CHECK-NEXT: %2, %3 = iterdomain.split %1 by 4 : !iterdomain.id<1024, reduction> -> !iterdomain.id<256, reduction>, !iterdomain.id<4, reduction>
// CHECK-NEXT: %4, %5 = iterdomain.split %2 by 64 : !iterdomain.id<256, reduction> -> !iterdomain.id<4, reduction>, !iterdomain.id<64, reduction>
// CHECK-NEXT: %6, %7 = iterdomain.split %0 by 2 : !iterdomain.id<4> -> !iterdomain.id<2>, !iterdomain.id<2>
// CHECK-NEXT: %m_bidx = iterdomain.parallelize %6 to BIDx : !iterdomain.id<2> -> !iterdomain.id<2, BIDx>
// CHECK-NEXT: %m_tidy = iterdomain.parallelize %7 to TIDy : !iterdomain.id<2> -> !iterdomain.id<2, TIDy>
// CHECK-NEXT: %m_unroll = iterdomain.parallelize %4 to unroll : !iterdomain.id<4, reduction> -> !iterdomain.id<4, reduction, unroll>
// CHECK-NEXT: %m_tidx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<64, reduction> -> !iterdomain.id<64, reduction, TIDx>
// CHECK-NEXT: iterdomain.loop %m [%m_bidx, %m_tidy, %m_unroll, %m_tidx, %3] {compute_at = 2 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2, TIDy>, !iterdomain.id<4, reduction, unroll>, !iterdomain.id<64, reduction, TIDx>, !iterdomain.id<4, reduction>]
// CHECK:      iterdomain.loop %s [%s_bidx, %s_tidy, %s_unroll, %s_tidx, %11] {compute_at = 2 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2, TIDy>, !iterdomain.id<4, reduction, unroll>, !iterdomain.id<64, reduction, TIDx>, !iterdomain.id<4, reduction>]
// CHECK:      iterdomain.loop %x [%x_bidx, %x_tidy, %x_unroll, %x_tidx, %x_vec] {compute_at = 2 : i64, memory = "registers"} : !fuser.tensor<4x1024xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2, TIDy>, !iterdomain.id<4, unroll>, !iterdomain.id<64, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %mb [%mb_bidx, %mb_tidy, %mb_unroll, %mb_tidx, %27] : !fuser.tensor<4x1xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2, TIDy>, !iterdomain.id<1, broadcast, unroll>, !iterdomain.id<64, broadcast, TIDx>, !iterdomain.id<4, broadcast>]
// CHECK:      iterdomain.loop %y [%y_bidx, %y_tidy, %y_unroll, %y_tidx, %y_vec] : !fuser.tensor<4x1024xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2, TIDy>, !iterdomain.id<4, unroll>, !iterdomain.id<64, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      fuser.output %y : !fuser.tensor<4x1024xf32>
// CHECK-NEXT: }
// CHECK-LABEL: fuser.fusion @softmax_f16_rows
// CHECK-SAME: fuser.schedule = {kind = "inner_persistent"
// CHECK:      %0, %1 = iterdomain.logical %m : !fuser.tensor<512xf16> -> !iterdomain.id<512>, !iterdomain.id<4096, reduction>
// CHECK-NEXT: %2, %3 = iterdomain.split %1 by 8 : !iterdomain.id<4096, reduction> -> !iterdomain.id<512, reduction>, !iterdomain.id<8, reduction>
// CHECK-NEXT: %4, %5 = iterdomain.split %2 by 128 : !iterdomain.id<512, reduction> -> !iterdomain.id<4, reduction>, !iterdomain.id<128, reduction>
// CHECK-NEXT: %m_bidx = iterdomain.parallelize %0 to BIDx : !iterdomain.id<512> -> !iterdomain.id<512, BIDx>
// CHECK-NEXT: %m_unroll = iterdomain.parallelize %4 to unroll : !iterdomain.id<4, reduction> -> !iterdomain.id<4, reduction, unroll>
// CHECK-NEXT: %m_tidx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<128, reduction> -> !iterdomain.id<128, reduction, TIDx>
// CHECK-NEXT: iterdomain.loop %m [%m_bidx, %m_unroll, %m_tidx, %3] {compute_at = 1 : i64} : !fuser.tensor<512xf16> [!iterdomain.id<512, BIDx>, !iterdomain.id<4, reduction, unroll>, !iterdomain.id<128, reduction, TIDx>, !iterdomain.id<8, reduction>]
// CHECK:      iterdomain.loop %x [%x_bidx, %x_unroll, %x_tidx, %x_vec] {compute_at = 1 : i64, memory = "registers"} : !fuser.tensor<512x4096xf16> [!iterdomain.id<512, BIDx>, !iterdomain.id<4, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]
// CHECK:      iterdomain.loop %mb [%mb_bidx, %mb_unroll, %mb_tidx, %15] : !fuser.tensor<512x1xf16> [!iterdomain.id<512, BIDx>, !iterdomain.id<1, broadcast, unroll>, !iterdomain.id<128, broadcast, TIDx>, !iterdomain.id<8, broadcast>]
// CHECK:      iterdomain.loop %y [%y_bidx, %y_unroll, %y_tidx, %y_vec] : !fuser.tensor<512x4096xf16> [!iterdomain.id<512, BIDx>, !iterdomain.id<4, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]
// CHECK:      fuser.output %y : !fuser.tensor<512x4096xf16>
// CHECK-NEXT: }
