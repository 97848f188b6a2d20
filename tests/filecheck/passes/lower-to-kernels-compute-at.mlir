// RUN: fuser-opt %s --split-input-file -p lower-to-kernels -t cuda | filecheck %s
// RUN: fuser-opt %s --split-input-file | fuser-opt --split-input-file -p lower-to-kernels -t cuda | filecheck %s

// A placement written by hand (nvFuser's computeAt): softmax at 4x64, rows on blocks,
// each row split by the vector width 2 and 16 threads, the rest (2) unrolled. Both
// reductions are computed at loop 1 (inside the row's loop) and %x is held there
// in registers: the kernel loads each of the thread's two vectors of %x once, then
// the max (a block reduction), the sum of exp (a second one) and the stores read the
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
  %30, %31 = iterdomain.split %29 by 2 : !iterdomain.id<64> -> !iterdomain.id<32>, !iterdomain.id<2>
  %32, %33 = iterdomain.split %30 by 16 : !iterdomain.id<32> -> !iterdomain.id<2>, !iterdomain.id<16>
  %34 = iterdomain.parallelize %28 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %35 = iterdomain.parallelize %33 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  %36 = iterdomain.parallelize %32 to unroll : !iterdomain.id<2> -> !iterdomain.id<2, unroll>
  %37 = iterdomain.parallelize %31 to vectorize : !iterdomain.id<2> -> !iterdomain.id<2, vectorize>
  iterdomain.loop %y [%34, %36, %35, %37] : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
  fuser.output %y : !fuser.tensor<4x64xf32>
}

// CHECK-LABEL: void __launch_bounds__(16) softmax_kernel(
// CHECK:         int bidx = blockIdx.x;
// CHECK:         Vec<float, 2> x_v = *reinterpret_cast<const Vec<float, 2>*>(&x[
// CHECK:         Vec<float, 2> x_v_1 = *reinterpret_cast<const Vec<float, 2>*>(&x[
// CHECK-NOT:     &x[
// CHECK:         fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>({{.*}}, FuserMax(),
// CHECK-NOT:     &x[
// CHECK:         fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>({{.*}}, FuserAdd(),
// CHECK-NOT:     &x[
// CHECK:         *reinterpret_cast<Vec<float, 2>*>(&out0[
// CHECK-NOT:     &x[
// CHECK:         *reinterpret_cast<Vec<float, 2>*>(&out0[
// CHECK-NEXT:  }

// -----

// The same schedule, %x not placed (inlined): each consumer loads it where it reads
// it, in the max, in the sum and in the stores: a different kernel from one edit of
// the IR.

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
  iterdomain.loop %x [%24, %26, %25, %27] : !fuser.tensor<4x64xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<16, TIDx>, !iterdomain.id<2, vectorize>]
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

// CHECK-LABEL: void __launch_bounds__(16) softmax_kernel(
// CHECK:         &x[
// CHECK:         fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>({{.*}}, FuserMax(),
// CHECK:         &x[
// CHECK:         fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>({{.*}}, FuserAdd(),
// CHECK:         &x[
// CHECK:         *reinterpret_cast<Vec<float, 2>*>(&out0[

// -----

// A reduction rFactored by 2 (nvFuser's rFactor, written as `partials`): each row's 10
// elements split by 2, the inner loop's iterations kept as two partial sums (even and
// odd elements) through the serial loop over the 5 pairs, added after it.

fuser.fusion @rows(%x : !fuser.tensor<6x10xf32>) -> !fuser.tensor<6xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<6x10xf32>) -> !fuser.tensor<6xf32>
  %r, %k = iterdomain.logical %s : !fuser.tensor<6xf32> -> !iterdomain.id<6>, !iterdomain.id<10, reduction>
  %ko, %ki = iterdomain.split %k by 2 : !iterdomain.id<10, reduction> -> !iterdomain.id<5, reduction>, !iterdomain.id<2, reduction>
  %rb = iterdomain.parallelize %r to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>
  iterdomain.loop %s [%rb, %ko, %ki] {compute_at = 1 : i64, partials = array<i64: 2>} : !fuser.tensor<6xf32> [!iterdomain.id<6, BIDx>, !iterdomain.id<5, reduction>, !iterdomain.id<2, reduction>]
  fuser.output %s : !fuser.tensor<6xf32>
}

// CHECK-LABEL: void __launch_bounds__(1) rows_kernel(
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    int bidx = blockIdx.x;
// CHECK-NEXT:    float [[EVEN:t[0-9]+]] = 0.0f;
// CHECK-NEXT:    float [[ODD:t[0-9]+]] = 0.0f;
// CHECK-NEXT:    for (int i1 = 0; i1 < 5; ++i1) {
// CHECK:           Vec<float, 2> x_v = *reinterpret_cast<const Vec<float, 2>*>(&x[
// CHECK:           float [[E2:t[0-9]+]] = [[EVEN]] + {{t[0-9]+}};
// CHECK-NEXT:      float [[O2:t[0-9]+]] = [[ODD]] + {{t[0-9]+}};
// CHECK-NEXT:      [[EVEN]] = [[E2]];
// CHECK-NEXT:      [[ODD]] = [[O2]];
// CHECK-NEXT:    }
// CHECK-NEXT:    float [[SUM:t[0-9]+]] = [[EVEN]] + [[ODD]];
// CHECK-NEXT:    out0[bidx] = [[SUM]];
