// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024,1=1024"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.one
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024,1=1024"},select-schedulers,schedule-fusions' > %t.scheduled.mlir
// RUN: fuser-opt %t.scheduled.mlir -p lower-to-kernels -t cuda > %t.two
// RUN: diff %t.one %t.two
// RUN: filecheck %s < %t.two
// RUN: fuser-opt %S/../../../examples/sum_broadcast_add.mlir -p 'bind-sizes{sizes="0=8192x3072,1=8192x3072"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.sba.one
// RUN: fuser-opt %S/../../../examples/sum_broadcast_add.mlir -p 'bind-sizes{sizes="0=8192x3072,1=8192x3072"},select-schedulers,schedule-fusions' > %t.sba.mlir
// RUN: fuser-opt %t.sba.mlir -p lower-to-kernels -t cuda > %t.sba.two
// RUN: diff %t.sba.one %t.sba.two
// RUN: filecheck %s --check-prefix=NORM < %t.sba.two
// RUN: filecheck %s --check-prefix=PLACED < %t.sba.mlir

// The schedule schedule-fusions writes is what the lowering reads: saved to a file
// and lowered by a second fuser-opt call, it gives the same CUDA as the one-shot
// pipeline. The 2-D pointwise schedule (break_point = 1) becomes grid (2, 64): the
// rows on blockIdx.y, 128 threads of 4-wide vectors over the columns.
//
// A written normalization schedule (seed 000's inner persistent sum + broadcast + add,
// the pipeline of the issue that asked for kernels from the schedule, which used to
// stop with "internal error (KeyError)"): schedule-fusions computes the sum at the
// rows' loop (compute_at), the lowering reads only that; one kernel, one block
// reduction per row, each element of %y loaded once.

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

// PLACED-LABEL: fuser.fusion @sum_broadcast_add
// PLACED-SAME:    kind = "inner_persistent"
// PLACED:         iterdomain.loop %t2 [%t2_bidx, %t2_unroll, %t2_tidx, %{{.*}}] {compute_at = 1 : i64} : !fuser.tensor<8192xf32>
// PLACED-NOT:     memory = "registers"
// PLACED:         fuser.output

// NORM-LABEL: void __launch_bounds__(192) sum_broadcast_add_kernel(
// NORM:         int bidx = blockIdx.x;
// NORM:         Vec<float, 4> t0_v = *reinterpret_cast<const Vec<float, 4>*>(&t0[
// NORM:         fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>(
// NORM:         Vec<float, 4> t1_v = *reinterpret_cast<const Vec<float, 4>*>(&t1[
// NORM:         *reinterpret_cast<Vec<float, 4>*>(&out0[
// NORM-NOT:     fuser_block_reduce
