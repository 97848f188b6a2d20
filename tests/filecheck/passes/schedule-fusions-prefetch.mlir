// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=8192x256,1=8192x256,2=8192x1,3=8192x1"},select-schedulers,schedule-fusions' > %t.pf.mlir
// RUN: filecheck %s --check-prefix=SCHED < %t.pf.mlir
// RUN: fuser-opt %t.pf.mlir -p lower-to-kernels | filecheck %s --check-prefix=KERNEL
// RUN: fuser-opt %t.pf.mlir -p lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=8192x256,1=8192x256,2=8192x1,3=8192x1"},select-schedulers' | sed 's/prefetch = "L2"/prefetch = ""/' | fuser-opt -p schedule-fusions,lower-to-kernels -t cuda | filecheck %s --check-prefix=NONE

// `prefetch` in the IR's schedule: the one-kernel layer-norm backward over bf16 rows
// (the heuristic's choice for 16-bit inputs: SINGLE_KERNEL_PREFETCH_ITEMSIZE) marks
// the inputs its rows' loop holds, dy and x, `prefetch = "L2"`; the lowering
// prefetches their next row at the top of each iteration of the loop, under the guard
// of the next iteration's loads, and nothing else (mean and rstd are not held). With
// `prefetch = ""` written into the schedule, the kernel prefetches nothing.

fuser.fusion @ln_bwd(%dy : !fuser.tensor<?x?xbf16>, %x : !fuser.tensor<?x?xbf16>, %mean : !fuser.tensor<?x1xf32>, %rstd : !fuser.tensor<?x1xf32>) -> (!fuser.tensor<?x?xbf16>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>) {
  %dyf = fuser.cast %dy : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %xf = fuser.cast %x : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %d = fuser.sub %xf, %mean : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %xhat = fuser.mul %d, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %a = fuser.sum %dyf {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %gx = fuser.mul %dyf, %xhat : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %c = fuser.sum %gx {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %t0 = fuser.sub %dyf, %a : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t1 = fuser.mul %xhat, %c : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.sub %t0, %t1 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %dxf = fuser.mul %t2, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %dx = fuser.cast %dxf : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  %dw = fuser.sum %gx {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %db = fuser.sum %dyf {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %dx, %dw, %db : !fuser.tensor<?x?xbf16>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
}

// SCHED-LABEL: fuser.fusion @ln_bwd
// SCHED-SAME:  kind = "inner_outer_persistent"
// SCHED-SAME:  prefetch = "L2"
// SCHED:       iterdomain.loop %dy [{{.*}}] {compute_at = 3 : i64, memory = "registers", prefetch = "L2"}
// SCHED:       iterdomain.loop %x [{{.*}}] {compute_at = 3 : i64, memory = "registers", prefetch = "L2"}
// SCHED-NOT:   prefetch = "L2"}
// SCHED:       fuser.output

// KERNEL-LABEL: kernel.func @ln_bwd_kernel(%dy: memref<?xbf16>, %x: memref<?xbf16>, %mean: memref<?xf32>, %rstd: memref<?xf32>
// KERNEL:       scf.for %i1 = %{{[0-9]+}} to %[[UB:[0-9]+]] step %[[STEP:[0-9]+]]
// KERNEL-NEXT:    %next = arith.addi %i1, %[[STEP]] : index
// KERNEL-NEXT:    %more = arith.cmpi slt, %next, %[[UB]] : index
// KERNEL-NEXT:    scf.if %more {
// KERNEL-NOT:       kernel.prefetch %mean
// KERNEL:           kernel.prefetch %dy[%[[OFF:[0-9]+]]] {level = "L2"} : memref<?xbf16>
// KERNEL-NEXT:      kernel.prefetch %x[%[[OFF]]] {level = "L2"} : memref<?xbf16>
// KERNEL-NOT:     kernel.prefetch %
// KERNEL:       } {kernel.prefetch = "L2"}
// KERNEL-NOT:   kernel.prefetch %

// CUDA-LABEL: ln_bwd_kernel(
// CUDA:       asm volatile("prefetch.global.L2 [%0];" :: "l"(&dy[
// CUDA:       asm volatile("prefetch.global.L2 [%0];" :: "l"(&x[
// CUDA-LABEL: ln_bwd_kernel_finish(

// NONE-NOT: prefetch.global
