// RUN: fuser-opt %s -p select-schedulers | filecheck %s
// RUN: fuser-opt %s -p select-schedulers | fuser-opt | filecheck %s

// CHECK-LABEL: fuser.fusion @softmax
// CHECK-SAME: fuser.schedule = {kind = "inner_persistent", fastest_dim = true, vectorization = 4 : i64, threads_per_row = 64 : i64, rows_per_block = 2 : i64, persistent_batch = 4 : i64, cross_block = true, cross_grid = false, block = array<i64: 64, 2, 1>, grid = array<i64: 2, 1, 1>, project_to_inputs = false, hold_buffers = true, use_shared_memory = false, buffer_bytes_per_row = 8192 : i64, aligned_vectors = false, prefetch = ""}
fuser.fusion @softmax(%x : !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4x1024xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<4x1024xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x1024xf32>
  %e = fuser.exp %d : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4x1024xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<4x1024xf32>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x1024xf32>
  fuser.output %y : !fuser.tensor<4x1024xf32>
}

// CHECK-LABEL: fuser.fusion @outer_norm
// CHECK-SAME: kind = "outer_persistent", stats = {fastest_dim = false, vectorization = 4 : i64, threads_per_row = 8 : i64, rows_per_block = 128 : i64
// CHECK-SAME: block = array<i64: 32, 8, 1>, grid = array<i64: 8, 4, 1>
// CHECK-SAME: apply = {break_point = 1 : i64, vectorization = 4 : i64, unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 2, 256, 1>}
fuser.fusion @outer_norm(%x : !fuser.tensor<256x1024xf32>) -> !fuser.tensor<256x1024xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<256x1024xf32>) -> !fuser.tensor<1024xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<1024xf32>) -> !fuser.tensor<1x1024xf32>
  %y = fuser.sub %x, %sb : (!fuser.tensor<256x1024xf32>, !fuser.tensor<1x1024xf32>) -> !fuser.tensor<256x1024xf32>
  fuser.output %y : !fuser.tensor<256x1024xf32>
}

// CHECK-LABEL: fuser.fusion @inner_outer
// CHECK-SAME: kind = "inner_outer_persistent", inner = {fastest_dim = true
// CHECK-SAME: block = array<i64: 64, 4, 1>, grid = array<i64: 396, 1, 1>
// CHECK-SAME: partial_buffer_bytes = 4096 : i64
// CHECK-SAME: single_kernel = true
fuser.fusion @inner_outer(%x : !fuser.tensor<2048x1024xf32>) -> (!fuser.tensor<2048x1024xf32>, !fuser.tensor<1024xf32>) {
  %r = fuser.sum %x {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<2048x1024xf32>) -> !fuser.tensor<2048x1xf32>
  %y = fuser.mul %x, %r : (!fuser.tensor<2048x1024xf32>, !fuser.tensor<2048x1xf32>) -> !fuser.tensor<2048x1024xf32>
  %c = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<2048x1024xf32>) -> !fuser.tensor<1024xf32>
  fuser.output %y, %c : !fuser.tensor<2048x1024xf32>, !fuser.tensor<1024xf32>
}

// CHECK-LABEL: fuser.fusion @row_sum
// CHECK-SAME: kind = "reduction", fastest_dim = true
fuser.fusion @row_sum(%x : !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
  fuser.output %s : !fuser.tensor<4xf32>
}

// CHECK-LABEL: fuser.fusion @col_sum
// CHECK-SAME: kind = "reduction", fastest_dim = false
fuser.fusion @col_sum(%x : !fuser.tensor<1024x64xf32>) -> !fuser.tensor<64xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<1024x64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %s : !fuser.tensor<64xf32>
}

// CHECK-LABEL: fuser.fusion @pointwise
// CHECK-SAME: fuser.schedule = {kind = "pointwise", break_point = 1 : i64, vectorization = 4 : i64, unroll = 1 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 2, 64, 1>}
fuser.fusion @pointwise(%x : !fuser.tensor<64x1024xf32>, %w : !fuser.tensor<1024xf32>) -> !fuser.tensor<64x1024xf32> {
  %wb = fuser.broadcast %w {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<1024xf32>) -> !fuser.tensor<1x1024xf32>
  %y = fuser.mul %x, %wb : (!fuser.tensor<64x1024xf32>, !fuser.tensor<1x1024xf32>) -> !fuser.tensor<64x1024xf32>
  fuser.output %y : !fuser.tensor<64x1024xf32>
}

// CHECK-LABEL: fuser.fusion @transpose
// CHECK-SAME: fuser.schedule = {kind = "transpose", tile1 = 32 : i64, tile2 = 32 : i64, vectorization1 = 4 : i64, vectorization2 = 4 : i64, block = array<i64: 128, 1, 1>, grid = array<i64: 128, 1, 1>}
fuser.fusion @transpose(%a : !fuser.tensor<256x512xf32>, %b : !fuser.tensor<512x256xf32>) -> !fuser.tensor<512x256xf32> {
  %p = fuser.permute %a {dims = array<i64: 1, 0>} : (!fuser.tensor<256x512xf32>) -> !fuser.tensor<512x256xf32>
  %y = fuser.add %p, %b : (!fuser.tensor<512x256xf32>, !fuser.tensor<512x256xf32>) -> !fuser.tensor<512x256xf32>
  fuser.output %y : !fuser.tensor<512x256xf32>
}

// CHECK-LABEL: fuser.fusion @views
// CHECK-SAME: fuser.schedule = {kind = "no_op"}
fuser.fusion @views(%x : !fuser.tensor<8x6xf32>) -> !fuser.tensor<6x8xf32> {
  %p = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<8x6xf32>) -> !fuser.tensor<6x8xf32>
  fuser.output %p : !fuser.tensor<6x8xf32>
}
