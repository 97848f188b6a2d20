// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: python -m fuser.codegen.cuda_target %s | filecheck %s --check-prefix=CUDA

// A kernel of thread-block clusters (cluster_size): kernel.cluster_reduce combines a
// value over every thread of the cluster's blocks (warps, then the 4 x 4 warp results
// through distributed shared memory: a slot of W = 4 values, 3 x 4 for welford, per
// reduction, and the kind's identity for the lanes past them), and the cluster barrier
// ends the kernel.

builtin.module {
  kernel.func @rows(%x : memref<?xf32>, %y : memref<?xf32>) attributes {block_size = array<i32: 128, 1, 1>, cluster_size = array<i32: 1, 4, 1>, index_bits = 32 : i64} {
    %tid = kernel.thread_id x
    %v = memref.load %x[%tid] : memref<?xf32>
    %b = kernel.block_reduce %v {kind = "max", dims = array<i64: 0>} : (f32) -> f32
    %c = kernel.cluster_reduce %b {kind = "max"} : (f32) -> f32
    %a, %m, %n = kernel.cluster_reduce %v, %v, %v {kind = "welford"} : (f32, f32, f32) -> (f32, f32, f32)
    memref.store %c, %y[%tid] : memref<?xf32>
    kernel.cluster_barrier
    kernel.return
  }
}

// CHECK-LABEL: kernel.func @rows(%x: memref<?xf32>, %y: memref<?xf32>) attributes {block_size = array<i32: 128, 1, 1>, cluster_size = array<i32: 1, 4, 1>, index_bits = 32 : i64} {
// CHECK:         %b = kernel.block_reduce %v {kind = "max", dims = array<i64: 0>} : (f32) -> f32
// CHECK-NEXT:    %c = kernel.cluster_reduce %b {kind = "max"} : (f32) -> f32
// CHECK-NEXT:    %a, %m, %n = kernel.cluster_reduce %v, %v, %v {kind = "welford"} : (f32, f32, f32) -> (f32, f32, f32)
// CHECK-NEXT:    memref.store %c, %y[%tid] : memref<?xf32>
// CHECK-NEXT:    kernel.cluster_barrier
// CHECK-NEXT:    kernel.return

// CUDA:      __device__ __forceinline__ void fuser_cluster_sync() {
// CUDA:      template <int N, int W, typename V, typename T, typename Op>
// CUDA-NEXT: __device__ V fuser_cluster_reduce(V v, Op op, V ident, T* slot) {
// CUDA-LABEL: extern "C" __global__ void __cluster_dims__(1, 4, 1) __launch_bounds__(128) rows(const float* __restrict__ x, float* __restrict__ y) {
// CUDA:        float b = fuser_block_reduce<true, false, false, 128, 1>(v, FuserMax(), fuser_red_smem);
// CUDA-NEXT:   __shared__ float fuser_cluster_slot[4];
// CUDA-NEXT:   float c = fuser_cluster_reduce<4, 4>(b, FuserMax(), static_cast<float>(-INFINITY), fuser_cluster_slot);
// CUDA-NEXT:   __shared__ float fuser_cluster_slot_1[12];
// CUDA-NEXT:   FuserWelford<float> a = fuser_cluster_reduce<4, 4>(FuserWelford<float>{v, v, v}, FuserWelfordOp(), FuserWelford<float>{0, 0, 0}, fuser_cluster_slot_1);
// CUDA-NEXT:   y[tid] = c;
// CUDA-NEXT:   fuser_cluster_sync();
// CUDA-NEXT: }
