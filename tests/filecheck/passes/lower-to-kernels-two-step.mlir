// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024,1=1024"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024,1=1024"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two
// RUN: not fuser-opt %S/../../../examples/sum_broadcast_add.mlir -p 'bind-sizes{sizes="0=8192x3072,1=8192x3072"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda 2>&1 | filecheck %s --check-prefix=REDUCTION

// The schedule schedule-fusions writes is what the lowering reads: saved to a file
// and lowered by a second fuser-opt call, it gives the same CUDA as the one-shot
// pipeline. The 2-D pointwise schedule (break_point = 1) becomes grid (2, 64): the
// rows on blockIdx.y, 128 threads of 4-wide vectors over the columns.
//
// A written normalization schedule (seed 000's inner persistent sum + broadcast + add)
// is not lowered yet: a diagnostic, not a traceback (this pipeline used to stop with
// "internal error (KeyError)").

fuser.fusion @scale_bias(%x : !fuser.tensor<?x?xf32>, %w : !fuser.tensor<?xf32>) -> !fuser.tensor<?x?xf32> {
  %c = fuser.constant 2.000000e+00 : f64
  %t = fuser.mul %x, %c : (!fuser.tensor<?x?xf32>, f64) -> !fuser.tensor<?x?xf32>
  %wb = fuser.broadcast %w {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<1x?xf32>
  %y = fuser.add %t, %wb : (!fuser.tensor<?x?xf32>, !fuser.tensor<1x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: void __launch_bounds__(128) scale_bias_kernel(
// CHECK:         int bidy = blockIdx.y;
// CHECK-NEXT:    int bidx = blockIdx.x;
// CHECK-NEXT:    int tidx = threadIdx.x;
// CHECK:         Vec<float, 4> x_v = *reinterpret_cast<const Vec<float, 4>*>
// CHECK:         *reinterpret_cast<Vec<float, 4>*>(&out0[

// REDUCTION: fuser-opt: error: lower-to-kernels: cannot lower @sum_broadcast_add: @sum_broadcast_add: output #0 has shape [8192, 3072], the reduction [8192]; a written reduction schedule writes outputs of the reduction's shape, up to axes of extent 1 (normalizations are not lowered from it yet)
// REDUCTION-NOT: Traceback
