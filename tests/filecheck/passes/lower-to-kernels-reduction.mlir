// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=256x1024"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=256x1024"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two
// RUN: filecheck %s --check-prefix=SCHEDULE < %t.scheduled.mlir

// A row sum with an epilogue, scheduled by the reduction scheduler and lowered from the
// loop nest schedule-fusions writes (also from a file, in a second fuser-opt call): one
// block per row (BIDx), the row split into 2 serial steps of 128 threads (TIDx) x 4
// floats (one vector load each), a block reduction, thread 0 stores the row's sum x 2.

fuser.fusion @rowsum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %c = fuser.constant 2.000000e+00 : f64
  %y = fuser.mul %s, %c : (!fuser.tensor<?xf32>, f64) -> !fuser.tensor<?xf32>
  fuser.output %y : !fuser.tensor<?xf32>
}

// SCHEDULE: iterdomain.loop %s [%s_bidx, %{{.*}}, %s_tidx, %{{.*}}] {compute_at = 1 : i64} : !fuser.tensor<256xf32> [!iterdomain.id<256, BIDx>, !iterdomain.id<2, reduction>, !iterdomain.id<128, reduction, TIDx>, !iterdomain.id<4, reduction>]

// CHECK-LABEL: void __launch_bounds__(128) rowsum_kernel(
// CHECK:         int bidx = blockIdx.x;
// CHECK-NEXT:    float [[ACC:t[0-9]+]] = 0.0f;
// CHECK-NEXT:    for (int i1 = 0; i1 < 2; ++i1) {
// CHECK:           Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>(&x[
// CHECK:         fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>([[ACC]], FuserAdd(), fuser_red_smem);
// CHECK:         == 0;
// CHECK:           out0[bidx] =
