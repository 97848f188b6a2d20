// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// Round trip of every kernel-dialect op.

builtin.module {
  kernel.func @ops(%x : memref<?xf32>, %n : index) attributes {block_size = array<i32: 64, 2, 1>, index_bits = 32 : i64} {
    %tid = kernel.thread_id x
    %bid = kernel.block_id y
    %bdim = kernel.block_dim z
    %gdim = kernel.grid_dim x
    %c16 = arith.constant 16 : i32
    %v = memref.load %x[%tid] : memref<?xf32>
    %w = kernel.shuffle %v, %c16 {mode = "xor"} : (f32, i32) -> f32
    %s = kernel.warp_reduce %w {kind = "add"} : (f32) -> f32
    %r = kernel.block_reduce %s {kind = "max", dims = array<i64: 0>} : (f32) -> f32
    %a, %m, %c = kernel.block_reduce %v, %v, %v {kind = "welford", dims = array<i64: 0, 1>} : (f32, f32, f32) -> (f32, f32, f32)
    %tile = kernel.shared_alloc {padding = 1 : i64} : memref<32x33xf32, 3 : i64>
    kernel.barrier
    %v4 = kernel.from_elements %a, %m, %c, %r : (f32, f32, f32, f32) -> vector<4xf32>
    kernel.prefetch %x[%tid] {level = "L2"} : memref<?xf32>
    kernel.return
  }
}

// CHECK-LABEL: kernel.func @ops(%x: memref<?xf32>, %n: index) attributes {block_size = array<i32: 64, 2, 1>, index_bits = 32 : i64} {
// CHECK-NEXT:    %tid = kernel.thread_id x
// CHECK-NEXT:    %bid = kernel.block_id y
// CHECK-NEXT:    %bdim = kernel.block_dim z
// CHECK-NEXT:    %gdim = kernel.grid_dim x
// CHECK-NEXT:    %c16 = arith.constant 16 : i32
// CHECK-NEXT:    %v = memref.load %x[%tid] : memref<?xf32>
// CHECK-NEXT:    %w = kernel.shuffle %v, %c16 {mode = "xor"} : (f32, i32) -> f32
// CHECK-NEXT:    %s = kernel.warp_reduce %w {kind = "add"} : (f32) -> f32
// CHECK-NEXT:    %r = kernel.block_reduce %s {kind = "max", dims = array<i64: 0>} : (f32) -> f32
// CHECK-NEXT:    %a, %m, %c = kernel.block_reduce %v, %v, %v {kind = "welford", dims = array<i64: 0, 1>} : (f32, f32, f32) -> (f32, f32, f32)
// CHECK-NEXT:    %tile = kernel.shared_alloc {padding = 1 : i64} : memref<32x33xf32, 3 : i64>
// CHECK-NEXT:    kernel.barrier
// CHECK-NEXT:    %v4 = kernel.from_elements %a, %m, %c, %r : (f32, f32, f32, f32) -> vector<4xf32>
// CHECK-NEXT:    kernel.prefetch %x[%tid] {level = "L2"} : memref<?xf32>
// CHECK-NEXT:    kernel.return
// CHECK-NEXT:  }
