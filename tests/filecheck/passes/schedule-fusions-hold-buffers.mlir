// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=8192x256,1=8192x256,2=8192x1,3=8192x1"},select-schedulers,schedule-fusions' > %t.held.mlir
// RUN: filecheck %s --check-prefix=HELD < %t.held.mlir
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=8192x256,1=8192x256,2=8192x1,3=8192x1"},select-schedulers' | sed 's/hold_buffers = true/hold_buffers = false/g' | fuser-opt -p schedule-fusions | filecheck %s --check-prefix=RECOMPUTE
// RUN: fuser-opt %t.held.mlir -p lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA

// `hold_buffers` in the IR's schedule (the layer-norm backward of
// lower-to-kernels-inner-outer.mlir, one kernel). The heuristic's choice for f32 rows
// is `hold_buffers = true`: the rows' loop holds xhat (computed once a row) in
// registers instead of x, which nothing else reads. With `hold_buffers = false`
// written into the schedule it holds the inputs dy and x and recomputes xhat from x
// after the row sums. The held schedule lowers to one kernel and its finishing kernel.

fuser.fusion @ln_bwd(%dy : !fuser.tensor<?x?xf32>, %x : !fuser.tensor<?x?xf32>, %mean : !fuser.tensor<?x1xf32>, %rstd : !fuser.tensor<?x1xf32>) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>) {
  %d = fuser.sub %x, %mean : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %xhat = fuser.mul %d, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %a = fuser.sum %dy {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %gx = fuser.mul %dy, %xhat : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %c = fuser.sum %gx {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %t0 = fuser.sub %dy, %a : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t1 = fuser.mul %xhat, %c : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %t2 = fuser.sub %t0, %t1 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %dx = fuser.mul %t2, %rstd : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %dw = fuser.sum %gx {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %db = fuser.sum %dy {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %dx, %dw, %db : !fuser.tensor<?x?xf32>, !fuser.tensor<?xf32>, !fuser.tensor<?xf32>
}

// RECOMPUTE: hold_buffers = false
// RECOMPUTE: iterdomain.loop %dy [{{.*}}] {compute_at = 3 : i64, memory = "registers"}
// RECOMPUTE: iterdomain.loop %x [{{.*}}] {compute_at = 3 : i64, memory = "registers"}
// RECOMPUTE-NOT: iterdomain.loop %xhat [{{.*}}] {compute_at

// HELD: hold_buffers = true
// HELD: iterdomain.loop %dy [{{.*}}] {compute_at = 3 : i64, memory = "registers"}
// HELD: iterdomain.loop %x [%x_bidx, %{{[0-9]+}}, %x_tidy, %x_unroll, %x_tidx, %x_vec] : !fuser.tensor
// HELD: iterdomain.loop %xhat [{{.*}}] {compute_at = 3 : i64, memory = "registers"}
// HELD: iterdomain.loop %gx [%gx_bidx, %{{[0-9]+}}, %gx_tidy, %gx_unroll, %gx_tidx, %{{[0-9]+}}] : !fuser.tensor

// CUDA-LABEL: void __launch_bounds__(128) ln_bwd_kernel(
// CUDA-LABEL: void __launch_bounds__(256) ln_bwd_kernel_finish(
