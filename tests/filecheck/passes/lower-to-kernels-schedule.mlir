// RUN: fuser-opt %s --split-input-file -p lower-to-kernels | filecheck %s
// RUN: fuser-opt %s --split-input-file -p lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA

// A schedule written by hand (no heuristic makes it): the columns split by 3 with a
// tail (7 = 3 + 3 + 1), the blocks over the outer part, the rows on TIDy. The
// kernel is the loop nest: grid 3, block (1, 10), a serial loop over the inner 3
// and a predicate for the tail.

fuser.fusion @tail(%x : !fuser.tensor<10x7xf32>) -> !fuser.tensor<10x7xf32> {
  %e = fuser.exp %x : (!fuser.tensor<10x7xf32>) -> !fuser.tensor<10x7xf32>
  %r, %k = iterdomain.logical %e : !fuser.tensor<10x7xf32> -> !iterdomain.id<10>, !iterdomain.id<7>
  %ko, %ki = iterdomain.split %k by 3 : !iterdomain.id<7> -> !iterdomain.id<3>, !iterdomain.id<3>
  %rt = iterdomain.parallelize %r to TIDy : !iterdomain.id<10> -> !iterdomain.id<10, TIDy>
  %kb = iterdomain.parallelize %ko to BIDx : !iterdomain.id<3> -> !iterdomain.id<3, BIDx>
  iterdomain.loop %e [%kb, %rt, %ki] : !fuser.tensor<10x7xf32> [!iterdomain.id<3, BIDx>, !iterdomain.id<10, TIDy>, !iterdomain.id<3>]
  fuser.output %e : !fuser.tensor<10x7xf32>
}

// CHECK-LABEL: kernel.func @tail_kernel(%x: memref<?xf32>, %out0: memref<?xf32>)
// CHECK-SAME:    block_size = array<i32: 1, 10, 1>
// CHECK-SAME:    fuser.grid = array<i64: 3, 1, 1>
// CHECK-NEXT:    %bidx = kernel.block_id x
// CHECK-NEXT:    %tidy = kernel.thread_id y
// CHECK:         scf.for %i2 = %{{.*}} to %{{.*}} step
// CHECK:           %[[COL:.*]] = arith.addi %{{.*}}, %i2 : index
// CHECK:           %[[IN:.*]] = arith.cmpi slt, %[[COL]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK:             math.exp
// CHECK:             memref.store

// CUDA-LABEL: void __launch_bounds__(10) tail_kernel(
// CUDA:         for (int i2 = 0; i2 < 3; ++i2) {

// -----

// The same fusion, one split factor changed: 4 blocks of 2 columns
// (8 columns cover 7: still one predicate): a different kernel.

fuser.fusion @tail(%x : !fuser.tensor<10x7xf32>) -> !fuser.tensor<10x7xf32> {
  %e = fuser.exp %x : (!fuser.tensor<10x7xf32>) -> !fuser.tensor<10x7xf32>
  %r, %k = iterdomain.logical %e : !fuser.tensor<10x7xf32> -> !iterdomain.id<10>, !iterdomain.id<7>
  %ko, %ki = iterdomain.split %k by 2 : !iterdomain.id<7> -> !iterdomain.id<4>, !iterdomain.id<2>
  %rt = iterdomain.parallelize %r to TIDy : !iterdomain.id<10> -> !iterdomain.id<10, TIDy>
  %kb = iterdomain.parallelize %ko to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  iterdomain.loop %e [%kb, %rt, %ki] : !fuser.tensor<10x7xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<10, TIDy>, !iterdomain.id<2>]
  fuser.output %e : !fuser.tensor<10x7xf32>
}

// CHECK-LABEL: kernel.func @tail_kernel
// CHECK-SAME:    fuser.grid = array<i64: 4, 1, 1>
// CUDA-LABEL: void __launch_bounds__(10) tail_kernel(
// CUDA:         for (int i2 = 0; i2 < 2; ++i2) {
