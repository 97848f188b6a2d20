// RUN: fuser-opt %s --split-input-file --verify-diagnostics -p lower-to-kernels 2>&1 | filecheck %s

// Reductions across a thread-block cluster the lowering refuses, each a diagnostic
// naming the tensor and the loops.

// The block holds two rows (TIDy) besides the row's 32 threads on TIDx: the cluster
// reduction combines every thread of the cluster.

fuser.fusion @rows_on_tidy(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %0, %1 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %2, %3 = iterdomain.split %0 by 2 : !iterdomain.id<4> -> !iterdomain.id<2>, !iterdomain.id<2>
  %4, %5 = iterdomain.split %1 by 32 : !iterdomain.id<64, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<32, reduction>
  %b = iterdomain.parallelize %2 to BIDx : !iterdomain.id<2> -> !iterdomain.id<2, BIDx>
  %c = iterdomain.parallelize %4 to BIDy clustered : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, BIDy, clustered>
  %ty = iterdomain.parallelize %3 to TIDy : !iterdomain.id<2> -> !iterdomain.id<2, TIDy>
  %tx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<32, reduction> -> !iterdomain.id<32, reduction, TIDx>
  iterdomain.loop %s [%b, %c, %ty, %tx] {compute_at = 3 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2, reduction, BIDy, clustered>, !iterdomain.id<2, TIDy>, !iterdomain.id<32, reduction, TIDx>]
  fuser.output %s : !fuser.tensor<4xf32>
}
// CHECK: @rows_on_tidy: %s reduces across a cluster, but its block [32, 2, 1] holds other rows than its 32 threads on TIDx: every thread of the cluster is combined (one row a block)

// -----

// The cluster spans the rows' blocks (BIDx, clustered) too: a reduction over BIDy
// alone would combine other rows' blocks.

fuser.fusion @cluster_of_rows(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %0, %1 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %4, %5 = iterdomain.split %1 by 32 : !iterdomain.id<64, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<32, reduction>
  %b = iterdomain.parallelize %0 to BIDx clustered : !iterdomain.id<4> -> !iterdomain.id<4, BIDx, clustered>
  %c = iterdomain.parallelize %4 to BIDy clustered : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, BIDy, clustered>
  %tx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<32, reduction> -> !iterdomain.id<32, reduction, TIDx>
  iterdomain.loop %s [%b, %c, %tx] {compute_at = 2 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx, clustered>, !iterdomain.id<2, reduction, BIDy, clustered>, !iterdomain.id<32, reduction, TIDx>]
  fuser.output %s : !fuser.tensor<4xf32>
}
// CHECK: @cluster_of_rows: %s reduces the clustered block loops BIDy, but the kernel's clusters span BIDx, BIDy: a reduction across a cluster reduces every block of it

// -----

// A reduction over a block loop that is not clustered, before the compute-at position.

fuser.fusion @unclustered(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %0, %1 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %4, %5 = iterdomain.split %1 by 32 : !iterdomain.id<64, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<32, reduction>
  %b = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %c = iterdomain.parallelize %4 to BIDy : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, BIDy>
  %tx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<32, reduction> -> !iterdomain.id<32, reduction, TIDx>
  iterdomain.loop %s [%b, %c, %tx] {compute_at = 2 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, BIDy>, !iterdomain.id<32, reduction, TIDx>]
  fuser.output %s : !fuser.tensor<4xf32>
}
// CHECK: @unclustered: %s reduces loop #2, after its compute-at position 2, and loops before it

// -----

// 16 threads on the row: the cluster's threads are combined by whole warps.

fuser.fusion @half_warp(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %0, %1 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %4, %5 = iterdomain.split %1 by 16 : !iterdomain.id<64, reduction> -> !iterdomain.id<4, reduction>, !iterdomain.id<16, reduction>
  %b = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %c = iterdomain.parallelize %4 to BIDy clustered : !iterdomain.id<4, reduction> -> !iterdomain.id<4, reduction, BIDy, clustered>
  %tx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  iterdomain.loop %s [%b, %c, %tx] {compute_at = 2 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<4, reduction, BIDy, clustered>, !iterdomain.id<16, reduction, TIDx>]
  fuser.output %s : !fuser.tensor<4xf32>
}
// CHECK: @half_warp: %s reduces across a cluster with 16 threads on TIDx, not a multiple of 32: the cluster's threads are combined by whole warps
