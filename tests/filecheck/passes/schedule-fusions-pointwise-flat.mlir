// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s

// A flat pointwise schedule: merge all axes, split by the vector width (8 halves =
// 16 bytes) and block.x: [BIDx, TIDx, vectorize].

fuser.fusion @gelu_flat(%x : !fuser.tensor<4096x1024xf16>) -> !fuser.tensor<4096x1024xf16> {
  %e = fuser.tanh %x : (!fuser.tensor<4096x1024xf16>) -> !fuser.tensor<4096x1024xf16>
  fuser.output %e : !fuser.tensor<4096x1024xf16>
}

// CHECK-LABEL: fuser.fusion @gelu_flat
// CHECK-SAME: fuser.schedule = {kind = "pointwise"
// CHECK:      %0, %1 = iterdomain.logical %e : !fuser.tensor<4096x1024xf16> -> !iterdomain.id<4096>, !iterdomain.id<1024>
// CHECK-NEXT: %2 = iterdomain.merge %0, %1 : !iterdomain.id<4096>, !iterdomain.id<1024> -> !iterdomain.id<4194304>
// CHECK-NEXT: %3, %4 = iterdomain.split %2 by 8 : !iterdomain.id<4194304> -> !iterdomain.id<524288>, !iterdomain.id<8>
// CHECK-NEXT: %5, %6 = iterdomain.split %3 by 128 : !iterdomain.id<524288> -> !iterdomain.id<4096>, !iterdomain.id<128>
// CHECK-NEXT: %e_bidx = iterdomain.parallelize %5 to BIDx : !iterdomain.id<4096> -> !iterdomain.id<4096, BIDx>
// CHECK-NEXT: %e_tidx = iterdomain.parallelize %6 to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
// CHECK-NEXT: %e_vec = iterdomain.parallelize %4 to vectorize : !iterdomain.id<8> -> !iterdomain.id<8, vectorize>
// CHECK-NEXT: iterdomain.loop %e [%e_bidx, %e_tidx, %e_vec] : !fuser.tensor<4096x1024xf16> [!iterdomain.id<4096, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]
// CHECK:      iterdomain.loop %x [%x_bidx, %x_tidx, %x_vec] : !fuser.tensor<4096x1024xf16> [!iterdomain.id<4096, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]
// CHECK:      fuser.output %e : !fuser.tensor<4096x1024xf16>
// CHECK-NEXT: }
