// RUN: fuser-opt %s -p schedule-fusions | filecheck %s
// RUN: fuser-opt %s -p schedule-fusions,lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA
// RUN: fuser-opt %s -p schedule-fusions | fuser-opt | filecheck %s --check-prefix=ROUNDTRIP

// Rows whose width no vector divides (issue 15 item 3): a bf16 softmax over rows of
// 13 with `aligned_vectors = true` in its schedule (the heuristic's choice for such
// rows, written here to fix the threads). `iterdomain.align` shifts each row's places
// by (row * 13) % 8, so that places 8k .. 8k+7 are one 16-byte vector of the
// contiguous input. The lowering loads a group as one vector whenever it lies inside
// the tensor and masks the lanes outside the row (the reductions fold them as their
// identity); it stores a group inside the row as one vector, and a group that
// straddles the row's start or end element by element, each under its own predicate.

fuser.fusion @softmax(%x : !fuser.tensor<64x13xbf16>) -> !fuser.tensor<64x13xbf16> attributes {fuser.schedule = {kind = "inner_persistent", fastest_dim = true, vectorization = 8 : i64, threads_per_row = 32 : i64, rows_per_block = 4 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = false, block = array<i64: 32, 4, 1>, grid = array<i64: 16, 1, 1>, project_to_inputs = true, hold_buffers = false, use_shared_memory = false, buffer_bytes_per_row = 26 : i64, aligned_vectors = true}} {
  %f = fuser.cast %x {dtype = f32} : (!fuser.tensor<64x13xbf16>) -> !fuser.tensor<64x13xf32>
  %m = fuser.max %f {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<64x13xf32>) -> !fuser.tensor<64x1xf32>
  %d = fuser.sub %f, %m : (!fuser.tensor<64x13xf32>, !fuser.tensor<64x1xf32>) -> !fuser.tensor<64x13xf32>
  %e = fuser.exp %d : (!fuser.tensor<64x13xf32>) -> !fuser.tensor<64x13xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<64x13xf32>) -> !fuser.tensor<64x1xf32>
  %y = fuser.div %e, %s : (!fuser.tensor<64x13xf32>, !fuser.tensor<64x1xf32>) -> !fuser.tensor<64x13xf32>
  %o = fuser.cast %y {dtype = bf16} : (!fuser.tensor<64x13xf32>) -> !fuser.tensor<64x13xbf16>
  fuser.output %o : !fuser.tensor<64x13xbf16>
}

// CHECK-LABEL: fuser.fusion @softmax
// CHECK:         %0, %1 = iterdomain.logical %m : !fuser.tensor<64x1xf32> -> !iterdomain.id<64>, !iterdomain.id<13, reduction>
// CHECK-NEXT:    %2 = iterdomain.align %1 by 8 : !iterdomain.id<13, reduction> -> !iterdomain.id<20, reduction>
// CHECK-NEXT:    %3, %4 = iterdomain.split %2 by 8 : !iterdomain.id<20, reduction> -> !iterdomain.id<3, reduction>, !iterdomain.id<8, reduction>
// CHECK:         iterdomain.loop %x [%x_bidx, %x_tidy, %x_unroll, %x_tidx, %{{[0-9]+}}] {compute_at = 2 : i64, memory = "registers"}
// CHECK-SAME:    !iterdomain.id<8>]

// ROUNDTRIP: iterdomain.align %{{[0-9]+}} by 8 : !iterdomain.id<13> -> !iterdomain.id<20>

// The load: the group's row-major position, one vector load when the group is inside
// the tensor (64 x 13 = 832 elements), its lanes outside the row masked to 0.
// CUDA-LABEL: void __launch_bounds__(128) softmax_kernel(
// CUDA:         int [[ROW:t[0-9]+]] = t0 + tidy;
// CUDA-NEXT:    int [[P:t[0-9]+]] = tidx * 8;
// CUDA-NEXT:    int [[OFF:t[0-9]+]] = [[ROW]] * 13;
// CUDA-NEXT:    int [[SHIFT:t[0-9]+]] = [[OFF]] % 8;
// CUDA-NEXT:    int [[COL:t[0-9]+]] = [[P]] - [[SHIFT]];
// CUDA-NEXT:    int [[R:t[0-9]+]] = [[ROW]] * 13;
// CUDA-NEXT:    int [[AT:t[0-9]+]] = [[R]] + [[COL]];
// CUDA-NEXT:    int [[END:t[0-9]+]] = [[AT]] + 8;
// CUDA-NEXT:    bool [[IN:t[0-9]+]] = [[END]] <= 832;
// CUDA:         if ([[IN]]) {
// CUDA-NEXT:      int {{t[0-9]+}} = [[ROW]] * 13;
// CUDA-NEXT:      int [[AT2:t[0-9]+]] = {{t[0-9]+}} + [[COL]];
// CUDA-NEXT:      Vec<__nv_bfloat16, 8> x_v = *reinterpret_cast<const Vec<__nv_bfloat16, 8>*>(&x[[[AT2]]]);
// The tensor's last group: lane by lane.
// CUDA:         } else {
// CUDA:           if ({{t[0-9]+}}) {
// CUDA-NEXT:        int {{t[0-9]+}} = {{t[0-9]+}} * 13;
// CUDA-NEXT:        int {{t[0-9]+}} = {{t[0-9]+}} + {{t[0-9]+}};
// CUDA-NEXT:        __nv_bfloat16 {{.+}} = x[{{t[0-9]+}}];
// CUDA:         float {{t[0-9]+}} = {{t[0-9]+}} ? {{t[0-9]+}} : 0.0f;
// The max folds a lane outside the row as -inf (a select, no branch).
// CUDA:         float [[M:t[0-9]+]] = {{t[0-9]+}} ? {{t[0-9]+}} : -INFINITY;
// CUDA-NEXT:    float {{t[0-9]+}} = fuser_max(-INFINITY, [[M]]);
// The output: one vector store when the group is inside the row.
// CUDA:         *reinterpret_cast<Vec<__nv_bfloat16, 8>*>(&out0[{{t[0-9]+}}]) =
