// RUN: python -m fuser.codegen.cuda_target %s | filecheck %s
// RUN: fuser-opt %s | filecheck %s --check-prefix=IR

// A kernel marked a programmatic dependent launch (codegen/dependent_launch.py) starts
// with fuser_dependent_launch() (griddepcontrol on sm_90 and later: wait for the kernel
// before, then let the next one launch); an unmarked one does not. The attribute survives a round trip.

builtin.module {
  kernel.func @marked(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, dependent_launch, index_bits = 32 : i64} {
    %tid = kernel.thread_id x
    %two = arith.constant 2.0 : f32
    memref.store %two, %x[%tid] : memref<?xf32>
    kernel.return
  }
  kernel.func @plain(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, index_bits = 32 : i64} {
    %tid = kernel.thread_id x
    %two = arith.constant 2.0 : f32
    memref.store %two, %x[%tid] : memref<?xf32>
    kernel.return
  }
}

// CHECK:       __device__ __forceinline__ void fuser_dependent_launch() {
// CHECK-NEXT:  #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// CHECK-NEXT:    asm volatile("griddepcontrol.wait;" ::: "memory");
// CHECK-NEXT:    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
// CHECK-LABEL: void __launch_bounds__(32) marked(float* __restrict__ x) {
// CHECK-NEXT:    fuser_dependent_launch();
// CHECK-NEXT:    int tid = threadIdx.x;
// CHECK-LABEL: void __launch_bounds__(32) plain(float* __restrict__ x) {
// CHECK-NEXT:    int tid = threadIdx.x;

// IR:       kernel.func @marked
// IR-SAME:  dependent_launch
// IR:       kernel.func @plain
// IR-NOT:   dependent_launch
