// RUN: fuser-opt %s | filecheck %s

// A pointwise fusion scheduled by hand the way nvFuser's pointwise scheduler does:
// merge all axes, split by 128*4, split the inner 512 by the vector width 4, and bind
// [8192, 128, 4] to BIDx, TIDx and vectorize. The input and the intermediate share
// the output's transforms (each tensor owns its ids).

fuser.fusion @scaled_add(%a : !fuser.tensor<1024x4096xf32>, %b : !fuser.tensor<1024x4096xf32>) -> !fuser.tensor<1024x4096xf32> {
  %c = fuser.constant 2.000000e+00 : f64
  %t0 = fuser.mul %a, %c : (!fuser.tensor<1024x4096xf32>, f64) -> !fuser.tensor<1024x4096xf32>
  %t1 = fuser.add %t0, %b : (!fuser.tensor<1024x4096xf32>, !fuser.tensor<1024x4096xf32>) -> !fuser.tensor<1024x4096xf32>
  %x0, %x1 = iterdomain.logical %t0 : !fuser.tensor<1024x4096xf32> -> !iterdomain.id<1024>, !iterdomain.id<4096>
  %xm = iterdomain.merge %x0, %x1 : !iterdomain.id<1024>, !iterdomain.id<4096> -> !iterdomain.id<4194304>
  %xb, %xi = iterdomain.split %xm by 512 : !iterdomain.id<4194304> -> !iterdomain.id<8192>, !iterdomain.id<512>
  %xt, %xv = iterdomain.split %xi by 4 : !iterdomain.id<512> -> !iterdomain.id<128>, !iterdomain.id<4>
  %xbx = iterdomain.parallelize %xb to BIDx : !iterdomain.id<8192> -> !iterdomain.id<8192, BIDx>
  %xtx = iterdomain.parallelize %xt to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
  iterdomain.loop %t0 [%xbx, %xtx, %xv] : !fuser.tensor<1024x4096xf32> [!iterdomain.id<8192, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4>]
  %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<1024x4096xf32> -> !iterdomain.id<1024>, !iterdomain.id<4096>
  %m = iterdomain.merge %i0, %i1 : !iterdomain.id<1024>, !iterdomain.id<4096> -> !iterdomain.id<4194304>
  %blk, %in = iterdomain.split %m by 512 : !iterdomain.id<4194304> -> !iterdomain.id<8192>, !iterdomain.id<512>
  %thr, %vec = iterdomain.split %in by 4 : !iterdomain.id<512> -> !iterdomain.id<128>, !iterdomain.id<4>
  %bx = iterdomain.parallelize %blk to BIDx : !iterdomain.id<8192> -> !iterdomain.id<8192, BIDx>
  %tx = iterdomain.parallelize %thr to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
  %v = iterdomain.parallelize %vec to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
  iterdomain.loop %t1 [%bx, %tx, %v] : !fuser.tensor<1024x4096xf32> [!iterdomain.id<8192, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
  fuser.output %t1 : !fuser.tensor<1024x4096xf32>
}

// CHECK-LABEL: fuser.fusion @scaled_add
// CHECK:      %t1 = fuser.add %t0, %b
// CHECK-NEXT: %x0, %x1 = iterdomain.logical %t0
// CHECK:      iterdomain.loop %t0 [%xbx, %xtx, %xv] : !fuser.tensor<1024x4096xf32> [!iterdomain.id<8192, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4>]
// CHECK-NEXT: %i0, %i1 = iterdomain.logical %t1 : !fuser.tensor<1024x4096xf32> -> !iterdomain.id<1024>, !iterdomain.id<4096>
// CHECK-NEXT: %m = iterdomain.merge %i0, %i1 : !iterdomain.id<1024>, !iterdomain.id<4096> -> !iterdomain.id<4194304>
// CHECK-NEXT: %blk, %in = iterdomain.split %m by 512 : !iterdomain.id<4194304> -> !iterdomain.id<8192>, !iterdomain.id<512>
// CHECK-NEXT: %thr, %vec = iterdomain.split %in by 4 : !iterdomain.id<512> -> !iterdomain.id<128>, !iterdomain.id<4>
// CHECK-NEXT: %bx = iterdomain.parallelize %blk to BIDx : !iterdomain.id<8192> -> !iterdomain.id<8192, BIDx>
// CHECK-NEXT: %tx = iterdomain.parallelize %thr to TIDx : !iterdomain.id<128> -> !iterdomain.id<128, TIDx>
// CHECK-NEXT: %v = iterdomain.parallelize %vec to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
// CHECK-NEXT: iterdomain.loop %t1 [%bx, %tx, %v] : !fuser.tensor<1024x4096xf32> [!iterdomain.id<8192, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK-NEXT: fuser.output %t1 : !fuser.tensor<1024x4096xf32>
