// RUN: fuser-opt %s --split-input-file --verify-diagnostics | filecheck %s

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xf32>
  %s = kernel.warp_reduce %v {kind = "avg"} : (f32) -> f32
  kernel.return
}
// CHECK: kernel.warp_reduce: unknown kind 'avg' (expected one of add, mul, max, min, welford)

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xf32>
  %a, %b = kernel.block_reduce %v, %v {kind = "welford", dims = array<i64: 0>} : (f32, f32) -> (f32, f32)
  kernel.return
}
// CHECK: kernel.block_reduce: kind 'welford' takes 3 operand(s), got 2

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xf32>
  %s = kernel.block_reduce %v {kind = "add", dims = array<i64: 1, 0>} : (f32) -> f32
  kernel.return
}
// CHECK: kernel.block_reduce: dims must be a non-empty increasing subset of [0, 1, 2] (x, y, z), got [1, 0]

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %t = kernel.shared_alloc {padding = 1 : i64} : memref<32x33xf32>
  kernel.return
}
// CHECK: kernel.shared_alloc: the result must be in memory space 3 (shared), got memref<32x33xf32>

// -----

kernel.func @k(%x : memref<4x?xf32>) attributes {block_size = array<i32: 2048, 1, 1>} {
  kernel.return
}
// CHECK: kernel.func @k: block_size must be 3 positive extents with at most 1024 threads, got [2048, 1, 1]

// -----

kernel.func @k(%x : memref<4x?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  kernel.return
}
// CHECK: kernel.func @k: argument #0 must be a flat global tensor memref<?xT>, got memref<4x?xf32>

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<?xf32>
  %v = kernel.from_elements %a, %a : (f32, f32) -> vector<4xf32>
  kernel.return
}
// CHECK: kernel.from_elements: 2 elements for a vector<4xf32>

// -----

// Use before definition (swapped lines): the CUDA printer failed on it.
kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %v = memref.load %x[%tid] : memref<?xf32>
  %tid = kernel.thread_id x
  kernel.return
}
// CHECK: kernel.func @k: memref.load operand #1 (%tid, result #0 of a kernel.thread_id) is used before it is defined

// -----

// Complex values have no order: a complex warp_reduce is add or mul only.
kernel.func @k(%x : memref<?xcomplex<f32>>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xcomplex<f32>>
  %s = kernel.warp_reduce %v {kind = "max"} : (complex<f32>) -> complex<f32>
  kernel.return
}
// CHECK: kernel.warp_reduce: kind 'max' of complex operand #0 (complex<f32>): complex values have no order (only add and mul)

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xf32>
  %s = kernel.cluster_reduce %v {kind = "add"} : (f32) -> f32
  kernel.return
}
// CHECK: kernel.cluster_reduce must be inside a kernel.func with a cluster_size (a kernel of thread-block clusters)

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  kernel.cluster_barrier
  kernel.return
}
// CHECK: kernel.cluster_barrier must be inside a kernel.func with a cluster_size (a kernel of thread-block clusters)

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, cluster_size = array<i32: 4, 4, 1>} {
  kernel.return
}
// CHECK: kernel.func @k: cluster_size must be 3 positive extents with at most 8 blocks, got [4, 4, 1]

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, cluster_size = array<i32: 2, 1, 1>} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xf32>
  %s = kernel.cluster_reduce %v {kind = "avg"} : (f32) -> f32
  kernel.return
}
// CHECK: kernel.cluster_reduce: unknown kind 'avg' (expected one of add, mul, max, min, welford)

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  kernel.prefetch %x[%tid] {level = "L3"} : memref<?xf32>
  kernel.return
}
// CHECK: kernel.prefetch: level must be one of ['L1', 'L2'], got 'L3'

// -----

kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
  %tid = kernel.thread_id x
  %tile = kernel.shared_alloc : memref<32xf32, 3 : i64>
  kernel.prefetch %tile[%tid] {level = "L2"} : memref<32xf32, 3 : i64>
  kernel.return
}
// CHECK: kernel.prefetch: operand mem must be a global tensor (memref<?xT>), got memref<32xf32, 3 : i64>

// -----

// 48 KB of tiles plus 2 KB of block-reduction workspace (512 threads x f32): over the
// 48 KB of static shared memory a kernel may declare.
kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 64, 8, 1>} {
  %tid = kernel.thread_id x
  %tile = kernel.shared_alloc : memref<8x24x64xf32, 3 : i64>
  %v = memref.load %x[%tid] : memref<?xf32>
  %s = kernel.block_reduce %v {kind = "add", dims = array<i64: 0>} : (f32) -> f32
  kernel.return
}
// CHECK: kernel.func @k: declares 51200 bytes of static shared memory (%tile 49152, block_reduce workspace 2048), more than the 49152 a kernel may

// -----

kernel.func @k(%x : memref<?xf32>, %n : i32) attributes {block_size = array<i32: 32, 1, 1>, aliased_args = array<i64: 1>} {
  kernel.return
}
// CHECK: kernel.func @k: aliased_args names argument #1, which is not a tensor argument of the kernel's 2

// -----

kernel.func @k(%x : memref<?xf32>, %y : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, aliased_args = array<i64: 1, 0>} {
  kernel.return
}
// CHECK: kernel.func @k: aliased_args must be increasing argument positions, got [1, 0]
