// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s
// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions,lower-to-kernels' | filecheck %s --check-prefix=KERNEL
// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA

// A bf16 softmax over 4 rows of 128256 (a Llama-3 vocabulary): a row is 256 KB of
// persistent buffer, more than one block holds, and 4 rows leave most SMs idle. The
// inner persistent scheduler splits each row over a thread-block cluster of 8 blocks
// (grid.y, cross_grid): the reduced axis is split by the vector width and TIDx, and the
// rest of the batch over the cluster's blocks (BIDy, clustered) and unrolled. The
// reductions are computed at loop 2 (past the clustered BIDy, a shared loop of the
// kernel) and the input is held there in registers, 16 elements a thread.
//
// The kernel: cluster_size [1, 8, 1]; each reduction folds a thread's part of the row,
// then combines every thread of the cluster (kernel.cluster_reduce: warps, then the 8 x
// 32 warp results through distributed shared memory, no block reduction); the kernel
// ends with a cluster barrier.

fuser.fusion @vocab_softmax(%x : !fuser.tensor<4x128256xbf16>) -> !fuser.tensor<4x128256xbf16> {
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<4x128256xbf16>) -> !fuser.tensor<4x128256xf32>
  %m = fuser.max %xf {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4x128256xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %xf, %m : (!fuser.tensor<4x128256xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x128256xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x128256xf32>) -> !fuser.tensor<4x128256xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4x128256xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %s : (!fuser.tensor<4x128256xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x128256xf32>
  %yb = fuser.cast %y {dtype = bf16} : (!fuser.tensor<4x128256xf32>) -> !fuser.tensor<4x128256xbf16>
  fuser.output %yb : !fuser.tensor<4x128256xbf16>
}

// CHECK-LABEL: fuser.fusion @vocab_softmax
// CHECK-SAME: threads_per_row = 1024 : i64, rows_per_block = 1 : i64, persistent_batch = 2 : i64, cross_block = true, cross_grid = true, block = array<i64: 1024, 1, 1>, grid = array<i64: 4, 8, 1>
// CHECK:      %0, %1 = iterdomain.logical %m : !fuser.tensor<4x1xf32> -> !iterdomain.id<4>, !iterdomain.id<128256, reduction>
// CHECK-NEXT: %2, %3 = iterdomain.split %1 by 8 : !iterdomain.id<128256, reduction> -> !iterdomain.id<16032, reduction>, !iterdomain.id<8, reduction>
// CHECK-NEXT: %4, %5 = iterdomain.split %2 by 1024 : !iterdomain.id<16032, reduction> -> !iterdomain.id<16, reduction>, !iterdomain.id<1024, reduction>
// CHECK-NEXT: %6, %7 = iterdomain.split %4 by 8 {inner_split = false} : !iterdomain.id<16, reduction> -> !iterdomain.id<8, reduction>, !iterdomain.id<2, reduction>
// CHECK-NEXT: %m_bidx = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
// CHECK-NEXT: %m_bidy = iterdomain.parallelize %6 to BIDy clustered : !iterdomain.id<8, reduction> -> !iterdomain.id<8, reduction, BIDy, clustered>
// CHECK-NEXT: %m_unroll = iterdomain.parallelize %7 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
// CHECK-NEXT: %m_tidx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<1024, reduction> -> !iterdomain.id<1024, reduction, TIDx>
// CHECK-NEXT: iterdomain.loop %m [%m_bidx, %m_bidy, %m_unroll, %m_tidx, %3] {compute_at = 2 : i64} : !fuser.tensor<4x1xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<8, reduction, BIDy, clustered>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<1024, reduction, TIDx>, !iterdomain.id<8, reduction>]
// CHECK:      iterdomain.loop %s [%s_bidx, %s_bidy, %s_unroll, %s_tidx, %11] {compute_at = 2 : i64}
// CHECK:      iterdomain.loop %x [%x_bidx, %x_bidy, %x_unroll, %x_tidx, %x_vec] {compute_at = 2 : i64, memory = "registers"} : !fuser.tensor<4x128256xbf16> [!iterdomain.id<4, BIDx>, !iterdomain.id<8, BIDy, clustered>, !iterdomain.id<2, unroll>, !iterdomain.id<1024, TIDx>, !iterdomain.id<8, vectorize>]
// CHECK:      iterdomain.loop %yb [%yb_bidx, %yb_bidy, %yb_unroll, %yb_tidx, %yb_vec] : !fuser.tensor<4x128256xbf16> [!iterdomain.id<4, BIDx>, !iterdomain.id<8, BIDy, clustered>, !iterdomain.id<2, unroll>, !iterdomain.id<1024, TIDx>, !iterdomain.id<8, vectorize>]

// KERNEL-LABEL: kernel.func @vocab_softmax_kernel
// KERNEL-SAME:  block_size = array<i32: 1024, 1, 1>, index_bits = 32 : i64, cluster_size = array<i32: 1, 8, 1>, fuser.grid = array<i64: 4, 8, 1>
// KERNEL-NOT:   kernel.block_reduce
// KERNEL:       kernel.cluster_reduce %{{.*}} {kind = "max"} : (f32) -> f32
// KERNEL-NOT:   kernel.block_reduce
// KERNEL:       kernel.cluster_reduce %{{.*}} {kind = "add"} : (f32) -> f32
// KERNEL-NOT:   kernel.block_reduce
// KERNEL:       kernel.cluster_barrier
// KERNEL-NEXT:  kernel.return

// CUDA-LABEL: extern "C" __global__ void __cluster_dims__(1, 8, 1) __launch_bounds__(1024) vocab_softmax_kernel(
// CUDA:       __shared__ float fuser_cluster_slot[32];
// CUDA-NEXT:  fuser_cluster_reduce<8, 32>({{.*}}, FuserMax(), static_cast<float>(-INFINITY), fuser_cluster_slot);
// CUDA:       fuser_cluster_reduce<8, 32>({{.*}}, FuserAdd(), static_cast<float>(0), fuser_cluster_slot_1);
// CUDA:       fuser_cluster_sync();
// CUDA-NEXT:  }
