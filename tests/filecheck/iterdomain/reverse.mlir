// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s -p lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA

// iterdomain.reverse walks an id backwards: loop index i is input index extent - 1 - i.
// Rows on BIDx reversed: block b computes row 5 - b (no predicate: 5 - b is in [0, 6)).

fuser.fusion @rev(%x : !fuser.tensor<6x8xf32>) -> !fuser.tensor<6x8xf32> {
  %y = fuser.mul %x, %x : (!fuser.tensor<6x8xf32>, !fuser.tensor<6x8xf32>) -> !fuser.tensor<6x8xf32>
  %0, %1 = iterdomain.logical %y : !fuser.tensor<6x8xf32> -> !iterdomain.id<6>, !iterdomain.id<8>
  %r = iterdomain.reverse %0 : !iterdomain.id<6> -> !iterdomain.id<6>
  %b = iterdomain.parallelize %r to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>
  %t = iterdomain.parallelize %1 to TIDx : !iterdomain.id<8> -> !iterdomain.id<8, TIDx>
  iterdomain.loop %y [%b, %t] : !fuser.tensor<6x8xf32> [!iterdomain.id<6, BIDx>, !iterdomain.id<8, TIDx>]
  fuser.output %y : !fuser.tensor<6x8xf32>
}
// CHECK-LABEL: fuser.fusion @rev
// CHECK:         %r = iterdomain.reverse %0 : !iterdomain.id<6> -> !iterdomain.id<6>
// CHECK-NEXT:    %b = iterdomain.parallelize %r to BIDx : !iterdomain.id<6> -> !iterdomain.id<6, BIDx>

// CUDA-LABEL: void __launch_bounds__(8) rev_kernel(const float* __restrict__ x, float* __restrict__ out0) {
// CUDA-NEXT:    fuser_dependent_launch();
// CUDA-NEXT:    int bidx = blockIdx.x;
// CUDA-NEXT:    int tidx = threadIdx.x;
// CUDA-NEXT:    int [[ROW:t[0-9]+]] = 5 - bidx;
// CUDA-NEXT:    int [[OFF:t[0-9]+]] = [[ROW]] * 8;
// CUDA-NOT:     if (
// CUDA:         out0[{{t[0-9]+}}] =
