// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=1024x64"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=1024x64"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two
// RUN: filecheck %s --check-prefix=SCHED < %t.scheduled.mlir

// The outer persistent kind (an outer normalization: var_mean over the rows, then
// (x - mean) * rsqrt(var + eps)) from its written schedule, saved and lowered by a
// second call: the same CUDA. Two loop nests: the statistics as the reduction kind
// shapes an outer reduction (16 x 16 threads, the rows split over 8 blocks of grid.y),
// the output's a 2-D pointwise one of its own (the apply kernel). The statistics are a grid Welford reduction (each
// block's mean, M2 and count in three scratch buffers, merged by Chan's formula in
// the finishing kernel, which stores the mean output and the var and mean for the
// apply kernel); the apply kernel runs the output's loop nest and reads them (a
// vector of statistics a vector of columns, as it reads an input), its
// row blocks reversed (iterdomain.reverse on BIDy: the first blocks take the last rows,
// which the statistics kernel read last and L2 may still hold).


fuser.fusion @on(%x : !fuser.tensor<?x?xf32>) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) {
  %v, %m = fuser.var_mean %x {dims = array<i64: 0>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<?x?xf32>) -> (!fuser.tensor<1x?xf32>, !fuser.tensor<1x?xf32>)
  %c = fuser.constant 1.000000e-05 : f64
  %ve = fuser.add %v, %c : (!fuser.tensor<1x?xf32>, f64) -> !fuser.tensor<1x?xf32>
  %r = fuser.rsqrt %ve : (!fuser.tensor<1x?xf32>) -> !fuser.tensor<1x?xf32>
  %d = fuser.sub %x, %m : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  %y = fuser.mul %d, %r : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y, %m : !fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>
}
// SCHED:      fuser.schedule = {kind = "outer_persistent", stats = {
// SCHED-SAME: apply = {break_point = 1 : i64, vectorization = 4 : i64
// SCHED-SAME: reverse_apply = true
// SCHED:      iterdomain.loop %m [%m_bidx, %m_bidy, %{{[0-9]+}}, %m_unroll, %m_tidy, %m_tidx, %m_vec] : !fuser.tensor<1x64xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<8, reduction, BIDy>, !iterdomain.id<2, reduction>, !iterdomain.id<4, reduction, unroll>, !iterdomain.id<16, reduction, TIDy>, !iterdomain.id<16, TIDx>, !iterdomain.id<4, vectorize>]
// SCHED:      iterdomain.reverse %{{[0-9]+}} : !iterdomain.id<128> -> !iterdomain.id<128>
// SCHED:      iterdomain.loop %y [%y_bidy, %y_bidx, %y_tidy, %y_tidx, %y_vec] : !fuser.tensor<1024x64xf32> [!iterdomain.id<128, BIDy>, !iterdomain.id<1, BIDx>, !iterdomain.id<8, TIDy>, !iterdomain.id<16, TIDx>, !iterdomain.id<4, vectorize>]
// SCHED:      iterdomain.loop %x [%x_bidy, %x_bidx, %x_tidy, %x_tidx, %x_vec]

// CHECK-LABEL: void __launch_bounds__(256) on_kernel(const float* __restrict__ x, const float* __restrict__ out0, const float* __restrict__ out1, float* __restrict__ partial0, float* __restrict__ partial1, float* __restrict__ partial2, const float* __restrict__ partial3, const float* __restrict__ partial4) {
// CHECK:         for (int r = 1; r < 16; ++r) {
// CHECK:         partial0[[[OFF:t[0-9]+]]] = {{t[0-9]+}};
// CHECK-NEXT:    partial1[[[OFF]]] = {{t[0-9]+}};
// CHECK-NEXT:    partial2[[[OFF]]] = {{t[0-9]+}};
// CHECK-LABEL: void __launch_bounds__(16) on_kernel_finish(
// CHECK:         float {{t[0-9]+}} = partial0[[[POFF:t[0-9]+]]];
// CHECK-NEXT:    float {{t[0-9]+}} = partial1[[[POFF]]];
// CHECK-NEXT:    float {{t[0-9]+}} = partial2[[[POFF]]];
// CHECK:         FuserWelford<float> welford = fuser_block_reduce<false, true, false, {{[0-9]+}}, {{[0-9]+}}>(
// CHECK:         out1[t1] = welford.mean;
// CHECK-NEXT:    partial3[t1] = var;
// CHECK-NEXT:    partial4[t1] = welford.mean;
// CHECK-LABEL: void __launch_bounds__(128) on_kernel_apply({{.*}}) {
// CHECK:         int {{t[0-9]+}} = {{[0-9]+}} - bidy;
// CHECK-NOT:     partial0[
// CHECK:         Vec<float, 4> partial4_v = *reinterpret_cast<const Vec<float, 4>*>(&partial4[
// CHECK:         Vec<float, 4> partial3_v = *reinterpret_cast<const Vec<float, 4>*>(&partial3[
// CHECK-NOT:     = partial{{[34]}}[
// CHECK:         out0[
