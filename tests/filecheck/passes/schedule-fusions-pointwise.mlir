// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024,1=1024"},select-schedulers,schedule-fusions' | filecheck %s
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024,1=1024"},select-schedulers,schedule-fusions' | fuser-opt | filecheck %s

// A 2-D pointwise schedule (break_point = 1: the bias is broadcast along the rows):
// the splits use the params' factors on the bound extents (64x1024), the
// inputs get the output's transforms and %wb's broadcast row id is bound to BIDy;
// only global tensors (%x, %y) vectorize.

fuser.fusion @scale_bias(%x : !fuser.tensor<?x?xf32>, %w : !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32> {
  %c = fuser.constant 2.000000e+00 : f64
  %t = fuser.mul %x, %c : (!fuser.tensor<?x?xf32>, f64) -> !fuser.tensor<?x?xf32>
  %wb = fuser.broadcast %w {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<1x?xf32>
  %y = fuser.add %t, %wb : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: fuser.fusion @scale_bias
// CHECK-SAME: fuser.schedule = {kind = "pointwise"
// CHECK:      %0, %1 = iterdomain.logical %y : !fuser.tensor<64x1024xf32> -> !iterdomain.id<64>, !iterdomain.id<1024>
// CHECK-NEXT: %2, %3 = iterdomain.split %1 by 4 : !iterdomain.id<1024> -> !iterdomain.id<256>, !iterdomain.id<4>
// CHECK-NEXT: %4, %5 = iterdomain.split %2 by 128 : !iterdomain.id<256> -> !iterdomain.id<2>, !iterdomain.id<128>
// CHECK-NEXT: %y_bidy = iterdomain.parallelize %0 to BIDy : !iterdomain.id<64> -> !iterdomain.id<64, BIDy>
// CHECK-NEXT: %y_bidx = iterdomain.parallelize %4 to BIDx : !iterdomain.id<2> -> !iterdomain.id<2, BIDx>
// CHECK-NEXT: %y_tidx = iterdomain.parallelize %5 to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
// CHECK-NEXT: %y_vec = iterdomain.parallelize %3 to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
// CHECK-NEXT: iterdomain.loop %y [%y_bidy, %y_bidx, %y_tidx, %y_vec] : !fuser.tensor<64x1024xf32> [!iterdomain.id<64, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %x [%x_bidy, %x_bidx, %x_tidx, %x_vec] : !fuser.tensor<64x1024xf32> [!iterdomain.id<64, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:      iterdomain.loop %t [%t_bidy, %t_bidx, %t_tidx, %15] : !fuser.tensor<64x1024xf32> [!iterdomain.id<64, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4>]
// CHECK:      iterdomain.loop %wb [%wb_bidy, %wb_bidx, %wb_tidx, %21] : !fuser.tensor<1x1024xf32> [!iterdomain.id<1, broadcast, BIDy>, !iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4>]
// CHECK:      fuser.output %y : !fuser.tensor<64x1024xf32>
// CHECK-NEXT: }
