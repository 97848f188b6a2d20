// RUN: fuser-opt %s -p lower-to-kernels | filecheck %s

// A row sum over a thread-block cluster of 2 blocks (BIDy, clustered), each block
// taking two rows one after the other (a serial loop before the compute-at position).
// Each iteration reduces its row across the cluster; a cluster barrier ends the
// iteration (the next one writes the cluster reduction's slot again) and the kernel.

fuser.fusion @row_sums(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %0, %1 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %2, %3 = iterdomain.split %0 by 2 : !iterdomain.id<4> -> !iterdomain.id<2>, !iterdomain.id<2>
  %4, %5 = iterdomain.split %1 by 32 : !iterdomain.id<64, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<32, reduction>
  %b = iterdomain.parallelize %2 to BIDx : !iterdomain.id<2> -> !iterdomain.id<2, BIDx>
  %c = iterdomain.parallelize %4 to BIDy clustered : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, BIDy, clustered>
  %tx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<32, reduction> -> !iterdomain.id<32, reduction, TIDx>
  iterdomain.loop %s [%b, %3, %c, %tx] {compute_at = 3 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<2>, !iterdomain.id<2, reduction, BIDy, clustered>, !iterdomain.id<32, reduction, TIDx>]
  fuser.output %s : !fuser.tensor<4xf32>
}

// CHECK-LABEL: kernel.func @row_sums_kernel
// CHECK-SAME:  block_size = array<i32: 32, 1, 1>
// CHECK-SAME:  cluster_size = array<i32: 1, 2, 1>, fuser.grid = array<i64: 2, 2, 1>
// CHECK:       scf.for
// CHECK-NOT:   kernel.block_reduce
// CHECK:       kernel.cluster_reduce %{{.*}} {kind = "add"} : (f32) -> f32
// CHECK:       memref.store
// CHECK:       kernel.cluster_barrier
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.cluster_barrier
// CHECK-NEXT:  kernel.return
