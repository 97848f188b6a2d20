// RUN: python -m fuser.codegen.cuda_target %s | filecheck %s
// RUN: fuser-opt %s | filecheck %s --check-prefix=IR

// An in-place update reads %x and writes %out at the same addresses
// (codegen/aliased_args.py): the arguments in aliased_args are plain pointers, neither
// const nor __restrict__; %y keeps the read-only path. The attribute survives a round
// trip.

builtin.module {
  kernel.func @update(%x : memref<?xf32>, %y : memref<?xf32>, %out : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, aliased_args = array<i64: 0, 2>, index_bits = 32 : i64} {
    %tid = kernel.thread_id x
    %a = memref.load %x[%tid] : memref<?xf32>
    %b = memref.load %y[%tid] : memref<?xf32>
    %s = arith.subf %a, %b : f32
    memref.store %s, %out[%tid] : memref<?xf32>
    kernel.return
  }
}

// CHECK-LABEL: void __launch_bounds__(32) update(float* x, const float* __restrict__ y, float* out) {
// CHECK-NEXT:    int tid = threadIdx.x;

// IR-LABEL: kernel.func @update
// IR-SAME:    aliased_args = array<i64: 0, 2>
