// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s

// Issue 10 item 4: pointwise fusions that keep their reshapes (no
// strip-bookend-views first). Each reshape is written as root -> rfactor (seed 003),
// the reference is an output whose loop nest covers every input once the reshapes'
// transforms are replayed, and the tensors on the other side of a reshape get those
// transforms replayed before the reference's schedule (the input %t0 of GELU is
// split 8192 -> 64 x 128 by the first reshape, merged back by the second).

// seed 002's GELU (examples/gelu_bookend_views.mlir)
fuser.fusion @gelu(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %s2 = fuser.constant 5.000000e-01 : f64
  %t3 = fuser.mul %t1, %s2 : (!fuser.tensor<64x128x3072xf32>, f64) -> !fuser.tensor<64x128x3072xf32>
  %t10 = fuser.reshape %t3 {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  fuser.output %t10 : !fuser.tensor<8192x3072xf32>
}

// seed 002's transpose (examples/transpose_bookend_views.mlir): reshape, permute,
// set, two reshapes
fuser.fusion @transpose(%t0 : !fuser.tensor<768x128x64xf32>) -> !fuser.tensor<8192x768xf32> {
  %t1 = fuser.reshape %t0 {new_shape = array<i64: 64, 12, 128, 64>} : !fuser.tensor<768x128x64xf32> -> !fuser.tensor<64x12x128x64xf32>
  %t2 = fuser.permute %t1 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<64x12x128x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %t3 = fuser.set %t2 : (!fuser.tensor<64x128x12x64xf32>) -> !fuser.tensor<64x128x12x64xf32>
  %t4 = fuser.reshape %t3 {new_shape = array<i64: 64, 128, 768>} : !fuser.tensor<64x128x12x64xf32> -> !fuser.tensor<64x128x768xf32>
  %t5 = fuser.reshape %t4 {new_shape = array<i64: 8192, 768>} : !fuser.tensor<64x128x768xf32> -> !fuser.tensor<8192x768xf32>
  fuser.output %t5 : !fuser.tensor<8192x768xf32>
}

// the A/B/C table's case ABC (tests/filecheck/passes/segment-abc-table.mlir)
fuser.fusion @abc_ABC(%t0 : !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<64x128x3072xf32> {
  %A = fuser.reshape %t0 {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  %add = fuser.add %A, %A : (!fuser.tensor<64x128x3072xf32>, !fuser.tensor<64x128x3072xf32>) -> !fuser.tensor<64x128x3072xf32>
  %B = fuser.reshape %add {new_shape = array<i64: 8192, 3072>} : !fuser.tensor<64x128x3072xf32> -> !fuser.tensor<8192x3072xf32>
  %mul = fuser.mul %B, %B : (!fuser.tensor<8192x3072xf32>, !fuser.tensor<8192x3072xf32>) -> !fuser.tensor<8192x3072xf32>
  %C = fuser.reshape %mul {new_shape = array<i64: 64, 128, 3072>} : !fuser.tensor<8192x3072xf32> -> !fuser.tensor<64x128x3072xf32>
  fuser.output %C : !fuser.tensor<64x128x3072xf32>
}

// seed 003's split: 2x10x40 -> 2x10x2x20
fuser.fusion @split40(%x : !fuser.tensor<2x10x40xf32>, %y : !fuser.tensor<2x10x2x20xf32>) -> !fuser.tensor<2x10x2x20xf32> {
  %r = fuser.reshape %x {new_shape = array<i64: 2, 10, 2, 20>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
  %a = fuser.add %r, %y : (!fuser.tensor<2x10x2x20xf32>, !fuser.tensor<2x10x2x20xf32>) -> !fuser.tensor<2x10x2x20xf32>
  fuser.output %a : !fuser.tensor<2x10x2x20xf32>
}

// CHECK-LABEL: fuser.fusion @gelu(
// CHECK:         iterdomain.rfactor %t1 [%{{.*}}, %{{.*}}, %{{.*}}] : !fuser.tensor<64x128x3072xf32> [!iterdomain.id<64>, !iterdomain.id<128>, !iterdomain.id<3072>]
// CHECK:         iterdomain.rfactor %t10 [%{{.*}}, %{{.*}}] : !fuser.tensor<8192x3072xf32> [!iterdomain.id<8192>, !iterdomain.id<3072>]
// CHECK:         iterdomain.loop %t10 [%t10_bidx, %t10_unroll, %t10_tidx, %t10_vec] : !fuser.tensor<8192x3072xf32> [!iterdomain.id<24576, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]] = iterdomain.logical %t0 : !fuser.tensor<8192x3072xf32> -> !iterdomain.id<8192>, !iterdomain.id<3072>
// CHECK-NEXT:    %[[O:.*]], %[[I:.*]] = iterdomain.split %[[A]] by 64 {inner_split = false} : !iterdomain.id<8192> -> !iterdomain.id<64>, !iterdomain.id<128>
// CHECK-NEXT:    %[[M:.*]] = iterdomain.merge %[[O]], %[[I]] : !iterdomain.id<64>, !iterdomain.id<128> -> !iterdomain.id<8192>
// CHECK-NEXT:    %{{.*}} = iterdomain.merge %[[M]], %[[B]] : !iterdomain.id<8192>, !iterdomain.id<3072> -> !iterdomain.id<25165824>
// CHECK:         iterdomain.loop %t0 [%t0_bidx, %t0_unroll, %t0_tidx, %t0_vec] : !fuser.tensor<8192x3072xf32> [!iterdomain.id<24576, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:         iterdomain.loop %t1 [%t1_bidx, %t1_unroll, %t1_tidx, %{{.*}}] : !fuser.tensor<64x128x3072xf32>
// CHECK:         iterdomain.loop %t3 [%t3_bidx, %t3_unroll, %t3_tidx, %{{.*}}] : !fuser.tensor<64x128x3072xf32>

// CHECK-LABEL: fuser.fusion @transpose(
// CHECK:         iterdomain.loop %t5 [%t5_bidx, %t5_unroll, %t5_tidx, %t5_vec] : !fuser.tensor<8192x768xf32> [!iterdomain.id<6144, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]], %[[C:.*]] = iterdomain.logical %t0 : !fuser.tensor<768x128x64xf32> -> !iterdomain.id<768>, !iterdomain.id<128>, !iterdomain.id<64>
// CHECK-NEXT:    %[[O:.*]], %[[I:.*]] = iterdomain.split %[[A]] by 64 {inner_split = false} : !iterdomain.id<768> -> !iterdomain.id<64>, !iterdomain.id<12>
// CHECK-NEXT:    %{{.*}} = iterdomain.merge %[[I]], %[[C]] : !iterdomain.id<12>, !iterdomain.id<64> -> !iterdomain.id<768>
// CHECK-NEXT:    %{{.*}} = iterdomain.merge %[[O]], %[[B]] : !iterdomain.id<64>, !iterdomain.id<128> -> !iterdomain.id<8192>
// CHECK:         iterdomain.loop %t0 [%t0_bidx, %t0_unroll, %t0_tidx, %t0_vec] : !fuser.tensor<768x128x64xf32>
// CHECK:         iterdomain.loop %t1 [
// CHECK:         iterdomain.loop %t2 [
// CHECK:         iterdomain.loop %t3 [
// CHECK:         iterdomain.loop %t4 [

// CHECK-LABEL: fuser.fusion @abc_ABC(
// CHECK:         iterdomain.loop %C [%C_bidx, %C_unroll, %C_tidx, %C_vec] : !fuser.tensor<64x128x3072xf32> [!iterdomain.id<24576, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:         iterdomain.loop %t0 [%t0_bidx, %t0_unroll, %t0_tidx, %t0_vec] : !fuser.tensor<8192x3072xf32> [!iterdomain.id<24576, BIDx>, !iterdomain.id<2, unroll>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:         iterdomain.loop %A [
// CHECK:         iterdomain.loop %add [
// CHECK:         iterdomain.loop %B [
// CHECK:         iterdomain.loop %mul [

// CHECK-LABEL: fuser.fusion @split40(
// CHECK:         iterdomain.rfactor %r [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !fuser.tensor<2x10x2x20xf32> [!iterdomain.id<2>, !iterdomain.id<10>, !iterdomain.id<2>, !iterdomain.id<20>]
// CHECK:         iterdomain.loop %a [%a_bidx, %a_tidx, %a_vec] : !fuser.tensor<2x10x2x20xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:         iterdomain.loop %r [
// CHECK-NEXT:    %[[A:.*]], %[[B:.*]], %[[C:.*]] = iterdomain.logical %x : !fuser.tensor<2x10x40xf32> -> !iterdomain.id<2>, !iterdomain.id<10>, !iterdomain.id<40>
// CHECK-NEXT:    %[[O:.*]], %[[I:.*]] = iterdomain.split %[[C]] by 2 {inner_split = false} : !iterdomain.id<40> -> !iterdomain.id<2>, !iterdomain.id<20>
// CHECK-NEXT:    %[[M:.*]] = iterdomain.merge %[[A]], %[[B]] : !iterdomain.id<2>, !iterdomain.id<10> -> !iterdomain.id<20>
// CHECK-NEXT:    %[[N:.*]] = iterdomain.merge %[[M]], %[[O]] : !iterdomain.id<20>, !iterdomain.id<2> -> !iterdomain.id<40>
// CHECK-NEXT:    %{{.*}} = iterdomain.merge %[[N]], %[[I]] : !iterdomain.id<40>, !iterdomain.id<20> -> !iterdomain.id<800>
// CHECK:         iterdomain.loop %x [%x_bidx, %x_tidx, %x_vec] : !fuser.tensor<2x10x40xf32> [!iterdomain.id<2, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
