// RUN: fuser-opt %s --split-input-file --verify-diagnostics -p lower-to-kernels 2>&1 | filecheck %s

// Placements the lowering refuses, each a diagnostic naming the tensors and the loop.

// %x is computed inside loop #1 (compute_at = 2); %m, which reads it, at loop 1: outside it.

fuser.fusion @softmax(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %0, %1 = iterdomain.logical %m : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %2, %3 = iterdomain.split %1 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %4, %5 = iterdomain.split %2 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %6 = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %7 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %8 = iterdomain.parallelize %4 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %m [%6, %8, %7, %3] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %9, %10 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %11, %12 = iterdomain.split %10 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %13, %14 = iterdomain.split %11 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %15 = iterdomain.parallelize %9 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %16 = iterdomain.parallelize %14 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %17 = iterdomain.parallelize %13 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %s [%15, %17, %16, %12] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %18, %19 = iterdomain.logical %x : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %20, %21 = iterdomain.split %19 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %22, %23 = iterdomain.split %20 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %24 = iterdomain.parallelize %18 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %25 = iterdomain.parallelize %23 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %26 = iterdomain.parallelize %22 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %27 = iterdomain.parallelize %21 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %x [%24, %26, %25, %27] {compute_at = 2 : i64, memory = "registers"} : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  %28, %29 = iterdomain.logical %y : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %30, %31 = iterdomain.split %29 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %32, %33 = iterdomain.split %30 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %34 = iterdomain.parallelize %28 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %35 = iterdomain.parallelize %33 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %36 = iterdomain.parallelize %32 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %37 = iterdomain.parallelize %31 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %y [%34, %36, %35, %37] : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  fuser.output %y : !fuser.tensor<4x64xf32>
}

// CHECK-LABEL: lower-to-kernels: cannot lower @softmax: @softmax: %m is computed at loop 1, outside loop #1 of its producer %x (computed at 2): a consumer must be computed inside its producers' loops

// -----

// %x in registers, but its loop #1 is serial: registers are indexed at compile time.

fuser.fusion @softmax(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %0, %1 = iterdomain.logical %m : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %2, %3 = iterdomain.split %1 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %4, %5 = iterdomain.split %2 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %6 = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %7 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %8 = iterdomain.parallelize %4 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %m [%6, %8, %7, %3] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %9, %10 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %11, %12 = iterdomain.split %10 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %13, %14 = iterdomain.split %11 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %15 = iterdomain.parallelize %9 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %16 = iterdomain.parallelize %14 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %17 = iterdomain.parallelize %13 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %s [%15, %17, %16, %12] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %18, %19 = iterdomain.logical %x : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %20, %21 = iterdomain.split %19 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %22, %23 = iterdomain.split %20 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %24 = iterdomain.parallelize %18 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %25 = iterdomain.parallelize %23 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
    %27 = iterdomain.parallelize %21 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %x [%24, %22, %25, %27] {compute_at = 1 : i64, memory = "registers"} : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  %28, %29 = iterdomain.logical %y : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %30, %31 = iterdomain.split %29 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %32, %33 = iterdomain.split %30 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %34 = iterdomain.parallelize %28 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %35 = iterdomain.parallelize %33 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %36 = iterdomain.parallelize %32 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %37 = iterdomain.parallelize %31 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %y [%34, %36, %35, %37] : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  fuser.output %y : !fuser.tensor<4x64xf32>
}

// CHECK-LABEL: lower-to-kernels: cannot lower @softmax: @softmax: loop #1 of %x is a serial loop of 2, but %x is held in registers, indexed at compile time: unroll the loop

// -----

// A reduction placed in shared memory: its result is combined into every thread's
// registers.

fuser.fusion @softmax(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %0, %1 = iterdomain.logical %m : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %2, %3 = iterdomain.split %1 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %4, %5 = iterdomain.split %2 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %6 = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %7 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %8 = iterdomain.parallelize %4 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %m [%6, %8, %7, %3] {compute_at = 1 : i64, memory = "shared"} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %9, %10 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %11, %12 = iterdomain.split %10 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %13, %14 = iterdomain.split %11 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %15 = iterdomain.parallelize %9 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %16 = iterdomain.parallelize %14 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %17 = iterdomain.parallelize %13 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %s [%15, %17, %16, %12] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %18, %19 = iterdomain.logical %x : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %20, %21 = iterdomain.split %19 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %22, %23 = iterdomain.split %20 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %24 = iterdomain.parallelize %18 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %25 = iterdomain.parallelize %23 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %26 = iterdomain.parallelize %22 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %27 = iterdomain.parallelize %21 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %x [%24, %26, %25, %27] {compute_at = 1 : i64, memory = "registers"} : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  %28, %29 = iterdomain.logical %y : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %30, %31 = iterdomain.split %29 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %32, %33 = iterdomain.split %30 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %34 = iterdomain.parallelize %28 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %35 = iterdomain.parallelize %33 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %36 = iterdomain.parallelize %32 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %37 = iterdomain.parallelize %31 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %y [%34, %36, %35, %37] : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  fuser.output %y : !fuser.tensor<4x64xf32>
}

// CHECK-LABEL: lower-to-kernels: cannot lower @softmax: @softmax: %m is a reduction placed in shared memory; a reduction's result is combined into every thread's registers

// -----

// %x staged in shared memory inside the serial loop #2 (compute_at = 3): each
// iteration's tile is 8 of its rows, but the output's iteration reads 32 rows of %x
// (its threads run along %x's rows).

fuser.fusion @tr(%x: !fuser.tensor<64x64xf32>) -> !fuser.tensor<64x64xf32> {
  %t = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xf32>) -> !fuser.tensor<64x64xf32>
  %y = fuser.exp %t : (!fuser.tensor<64x64xf32>) -> !fuser.tensor<64x64xf32>
  %0, %1 = iterdomain.logical %x : !fuser.tensor<64x64xf32> -> !iterdomain.id<64>, !iterdomain.id<64>
  %2, %3 = iterdomain.split %0 by 32 : !iterdomain.id<64> -> !iterdomain.id<2>, !iterdomain.id<32>
  %4, %5 = iterdomain.split %1 by 32 : !iterdomain.id<64> -> !iterdomain.id<2>, !iterdomain.id<32>
  %6, %7 = iterdomain.split %3 by 8 : !iterdomain.id<32> -> !iterdomain.id<4>, !iterdomain.id<8>
  %8 = iterdomain.parallelize %2 to BIDy : !iterdomain.id<2> -> !iterdomain.id<2, BIDy>
  %9 = iterdomain.parallelize %4 to BIDx : !iterdomain.id<2> -> !iterdomain.id<2, BIDx>
  %10 = iterdomain.parallelize %7 to TIDy : !iterdomain.id<8> -> !iterdomain.id<8, TIDy>
  %11 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<32> -> !iterdomain.id<32, TIDx>
  iterdomain.loop %x [%8, %9, %6, %10, %11] {compute_at = 3 : i64, memory = "shared"} : !fuser.tensor<64x64xf32> [!iterdomain.id<2, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<4>, !iterdomain.id<8, TIDy>, !iterdomain.id<32, TIDx>]
  %12, %13 = iterdomain.logical %y : !fuser.tensor<64x64xf32> -> !iterdomain.id<64>, !iterdomain.id<64>
  %14, %15 = iterdomain.split %12 by 32 : !iterdomain.id<64> -> !iterdomain.id<2>, !iterdomain.id<32>
  %16, %17 = iterdomain.split %13 by 32 : !iterdomain.id<64> -> !iterdomain.id<2>, !iterdomain.id<32>
  %18, %19 = iterdomain.split %15 by 8 : !iterdomain.id<32> -> !iterdomain.id<4>, !iterdomain.id<8>
  %20 = iterdomain.parallelize %16 to BIDy : !iterdomain.id<2> -> !iterdomain.id<2, BIDy>
  %21 = iterdomain.parallelize %14 to BIDx : !iterdomain.id<2> -> !iterdomain.id<2, BIDx>
  %22 = iterdomain.parallelize %19 to TIDy : !iterdomain.id<8> -> !iterdomain.id<8, TIDy>
  %23 = iterdomain.parallelize %17 to TIDx : !iterdomain.id<32> -> !iterdomain.id<32, TIDx>
  iterdomain.loop %y [%20, %21, %18, %22, %23] : !fuser.tensor<64x64xf32> [!iterdomain.id<2, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<4>, !iterdomain.id<8, TIDy>, !iterdomain.id<32, TIDx>]
  fuser.output %y : !fuser.tensor<64x64xf32>
}

// CHECK-LABEL: lower-to-kernels: cannot lower @tr: @tr: %y reads %x (a shared tile computed at loop 3) on axis 0 at an index that is not its tile's: index the axis with the same loops before loop 3 as %x does, ((i0 * 32) + ((i2 * 8) + i3))

// -----

// Two ids bound to TIDx with different extents (%y's rows split by 4 and 8 threads).

fuser.fusion @softmax(%x: !fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4x64xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<4x64xf32>) -> !fuser.tensor<4xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<4x64xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x64xf32>
  %0, %1 = iterdomain.logical %m : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %2, %3 = iterdomain.split %1 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %4, %5 = iterdomain.split %2 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %6 = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %7 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %8 = iterdomain.parallelize %4 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %m [%6, %8, %7, %3] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %9, %10 = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<64, reduction>
  %11, %12 = iterdomain.split %10 by 2 : !iterdomain.id<64, reduction> -> !iterdomain.id<32, reduction>, !iterdomain.id<2, reduction>
  %13, %14 = iterdomain.split %11 by 16 : !iterdomain.id<32, reduction> -> !iterdomain.id<2, reduction>, !iterdomain.id<16, reduction>
  %15 = iterdomain.parallelize %9 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %16 = iterdomain.parallelize %14 to TIDx : !iterdomain.id<16, reduction> -> !iterdomain.id<16, reduction, TIDx>
  %17 = iterdomain.parallelize %13 to unroll : !iterdomain.id<2, reduction> -> !iterdomain.id<2, reduction, unroll>
  iterdomain.loop %s [%15, %17, %16, %12] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, reduction, unroll>, !iterdomain.id<16, reduction, TIDx>, !iterdomain.id<2, reduction>]
  %18, %19 = iterdomain.logical %x : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %20, %21 = iterdomain.split %19 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %22, %23 = iterdomain.split %20 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %24 = iterdomain.parallelize %18 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %25 = iterdomain.parallelize %23 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %26 = iterdomain.parallelize %22 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %27 = iterdomain.parallelize %21 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %x [%24, %26, %25, %27] {compute_at = 1 : i64, memory = "registers"} : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  %28, %29 = iterdomain.logical %y : !fuser.tensor<4x64xf32> -> !iterdomain.id<4>, !iterdomain.id<64>
  %30, %31 = iterdomain.split %29 by 4 : !iterdomain.id<64> -> !iterdomain.id<16>, !iterdomain.id<4>
  %32, %33 = iterdomain.split %30 by 8 : !iterdomain.id<16> -> !iterdomain.id<2>, !iterdomain.id<8>
  %34 = iterdomain.parallelize %28 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %35 = iterdomain.parallelize %33 to TIDx : !iterdomain.id<8> -> !iterdomain.id<8, TIDx>
  %36 = iterdomain.parallelize %32 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %37 = iterdomain.parallelize %31 to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
  iterdomain.loop %y [%34, %36, %35, %37] : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<8, TIDx>, !iterdomain.id<4, vectorize>]
  fuser.output %y : !fuser.tensor<4x64xf32>
}

// CHECK-LABEL: lower-to-kernels: cannot lower @softmax: @softmax: loop #2 of %x binds TIDx to extent 16, loop #2 of %y to extent 8: a kernel has one TIDx extent
// CHECK-NOT: Traceback
