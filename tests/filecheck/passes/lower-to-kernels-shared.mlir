// RUN: fuser-opt %s --split-input-file -p lower-to-kernels -t cuda | filecheck %s
// RUN: fuser-opt %s --split-input-file | fuser-opt --split-input-file -p lower-to-kernels -t cuda | filecheck %s

// A tensor staged in shared memory (memory = "shared"): exp(x.T) at 70x96, written by
// hand. %x is computed at loop 2 (inside the [BIDy, BIDx] tile loops) into a 32x32
// tile: its threads run along its innermost axis (TIDx over the 96 columns) and load
// it coalesced, then a barrier; the output's threads run along its own innermost axis
// and read the tile down its columns (padded by one element per row: no bank
// conflicts). The 70 rows do not divide by 32: loads and stores are predicated.

fuser.fusion @tr(%x: !fuser.tensor<70x96xf32>) -> !fuser.tensor<96x70xf32> {
  %t = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<70x96xf32>) -> !fuser.tensor<96x70xf32>
  %y = fuser.exp %t : (!fuser.tensor<96x70xf32>) -> !fuser.tensor<96x70xf32>
  %0, %1 = iterdomain.logical %x : !fuser.tensor<70x96xf32> -> !iterdomain.id<70>, !iterdomain.id<96>
  %2, %3 = iterdomain.split %0 by 32 : !iterdomain.id<70> -> !iterdomain.id<3>, !iterdomain.id<32>
  %4, %5 = iterdomain.split %1 by 32 : !iterdomain.id<96> -> !iterdomain.id<3>, !iterdomain.id<32>
  %6, %7 = iterdomain.split %3 by 8 : !iterdomain.id<32> -> !iterdomain.id<4>, !iterdomain.id<8>
  %8 = iterdomain.parallelize %2 to BIDy : !iterdomain.id<3> -> !iterdomain.id<3, BIDy>
  %9 = iterdomain.parallelize %4 to BIDx : !iterdomain.id<3> -> !iterdomain.id<3, BIDx>
  %10 = iterdomain.parallelize %6 to unroll : !iterdomain.id<4> -> !iterdomain.id<4, unroll>
  %11 = iterdomain.parallelize %7 to TIDy : !iterdomain.id<8> -> !iterdomain.id<8, TIDy>
  %12 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<32> -> !iterdomain.id<32, TIDx>
  iterdomain.loop %x [%8, %9, %10, %11, %12] {compute_at = 2 : i64, memory = "shared"} : !fuser.tensor<70x96xf32> [!iterdomain.id<3, BIDy>, !iterdomain.id<3, BIDx>, !iterdomain.id<4, unroll>, !iterdomain.id<8, TIDy>, !iterdomain.id<32, TIDx>]
  %13, %14 = iterdomain.logical %y : !fuser.tensor<96x70xf32> -> !iterdomain.id<96>, !iterdomain.id<70>
  %15, %16 = iterdomain.split %13 by 32 : !iterdomain.id<96> -> !iterdomain.id<3>, !iterdomain.id<32>
  %17, %18 = iterdomain.split %14 by 32 : !iterdomain.id<70> -> !iterdomain.id<3>, !iterdomain.id<32>
  %19, %20 = iterdomain.split %16 by 8 : !iterdomain.id<32> -> !iterdomain.id<4>, !iterdomain.id<8>
  %21 = iterdomain.parallelize %17 to BIDy : !iterdomain.id<3> -> !iterdomain.id<3, BIDy>
  %22 = iterdomain.parallelize %15 to BIDx : !iterdomain.id<3> -> !iterdomain.id<3, BIDx>
  %23 = iterdomain.parallelize %19 to unroll : !iterdomain.id<4> -> !iterdomain.id<4, unroll>
  %24 = iterdomain.parallelize %20 to TIDy : !iterdomain.id<8> -> !iterdomain.id<8, TIDy>
  %25 = iterdomain.parallelize %18 to TIDx : !iterdomain.id<32> -> !iterdomain.id<32, TIDx>
  iterdomain.loop %y [%21, %22, %23, %24, %25] : !fuser.tensor<96x70xf32> [!iterdomain.id<3, BIDy>, !iterdomain.id<3, BIDx>, !iterdomain.id<4, unroll>, !iterdomain.id<8, TIDy>, !iterdomain.id<32, TIDx>]
  fuser.output %y : !fuser.tensor<96x70xf32>
}
// CHECK-LABEL: void __launch_bounds__(256) tr_kernel(
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    __shared__ __align__(16) float x_tile[32][33];  // padded by 1
// CHECK:         bool t2 = t1 < 70;
// CHECK:         float x_1 = x[t6];
// CHECK-NEXT:    x_tile[tidy][tidx] = x_1;
// CHECK:         x_tile[t15][tidx_1] = x_2;
// CHECK:         x_tile[t24][tidx_2] = x_3;
// CHECK:         x_tile[t33][tidx_3] = x_4;
// CHECK:         __syncthreads();
// CHECK-NOT:     x[
// CHECK:         float t39 = x_tile[tidx_4][tidy_4];
// CHECK-NEXT:    float t40 = expf(t39);
// CHECK:         out0[t42] = t40;
// CHECK-NOT:     __syncthreads();
// CHECK:         out0[
// CHECK-NOT:     __syncthreads();
// CHECK:       }

// -----

// The same transpose with 16x16 tiles (tile split 16, 4 rows of threads): another
// tile, another block.

fuser.fusion @tr(%x: !fuser.tensor<70x96xf32>) -> !fuser.tensor<96x70xf32> {
  %t = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<70x96xf32>) -> !fuser.tensor<96x70xf32>
  %y = fuser.exp %t : (!fuser.tensor<96x70xf32>) -> !fuser.tensor<96x70xf32>
  %0, %1 = iterdomain.logical %x : !fuser.tensor<70x96xf32> -> !iterdomain.id<70>, !iterdomain.id<96>
  %2, %3 = iterdomain.split %0 by 16 : !iterdomain.id<70> -> !iterdomain.id<5>, !iterdomain.id<16>
  %4, %5 = iterdomain.split %1 by 16 : !iterdomain.id<96> -> !iterdomain.id<6>, !iterdomain.id<16>
  %6, %7 = iterdomain.split %3 by 4 : !iterdomain.id<16> -> !iterdomain.id<4>, !iterdomain.id<4>
  %8 = iterdomain.parallelize %2 to BIDy : !iterdomain.id<5> -> !iterdomain.id<5, BIDy>
  %9 = iterdomain.parallelize %4 to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>
  %10 = iterdomain.parallelize %6 to unroll : !iterdomain.id<4> -> !iterdomain.id<4, unroll>
  %11 = iterdomain.parallelize %7 to TIDy : !iterdomain.id<4> -> !iterdomain.id<4, TIDy>
  %12 = iterdomain.parallelize %5 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  iterdomain.loop %x [%8, %9, %10, %11, %12] {compute_at = 2 : i64, memory = "shared"} : !fuser.tensor<70x96xf32> [!iterdomain.id<5, BIDy>, !iterdomain.id<6, BIDx>, !iterdomain.id<4, unroll>, !iterdomain.id<4, TIDy>, !iterdomain.id<16, TIDx>]
  %13, %14 = iterdomain.logical %y : !fuser.tensor<96x70xf32> -> !iterdomain.id<96>, !iterdomain.id<70>
  %15, %16 = iterdomain.split %13 by 16 : !iterdomain.id<96> -> !iterdomain.id<6>, !iterdomain.id<16>
  %17, %18 = iterdomain.split %14 by 16 : !iterdomain.id<70> -> !iterdomain.id<5>, !iterdomain.id<16>
  %19, %20 = iterdomain.split %16 by 4 : !iterdomain.id<16> -> !iterdomain.id<4>, !iterdomain.id<4>
  %21 = iterdomain.parallelize %17 to BIDy : !iterdomain.id<5> -> !iterdomain.id<5, BIDy>
  %22 = iterdomain.parallelize %15 to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>
  %23 = iterdomain.parallelize %19 to unroll : !iterdomain.id<4> -> !iterdomain.id<4, unroll>
  %24 = iterdomain.parallelize %20 to TIDy : !iterdomain.id<4> -> !iterdomain.id<4, TIDy>
  %25 = iterdomain.parallelize %18 to TIDx : !iterdomain.id<16> -> !iterdomain.id<16, TIDx>
  iterdomain.loop %y [%21, %22, %23, %24, %25] : !fuser.tensor<96x70xf32> [!iterdomain.id<5, BIDy>, !iterdomain.id<6, BIDx>, !iterdomain.id<4, unroll>, !iterdomain.id<4, TIDy>, !iterdomain.id<16, TIDx>]
  fuser.output %y : !fuser.tensor<96x70xf32>
}
// CHECK-LABEL: void __launch_bounds__(64) tr_kernel(
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    __shared__ __align__(16) float x_tile[16][16];
// CHECK:         x_tile[tidy][tidx] = x_1;
// CHECK:         __syncthreads();
// CHECK:         x_tile[tidx_4][tidy_4];
