// RUN: fuser-opt %s -p prefetch-loads | filecheck %s
// RUN: fuser-opt %s -p prefetch-loads,prefetch-loads | filecheck %s
// RUN: fuser-opt %s -p 'prefetch-loads{level=L1}' | filecheck %s --check-prefix=L1
// RUN: fuser-opt %s -p prefetch-loads -t cuda | filecheck %s --check-prefix=CUDA

// A block-reducing loop over 4 rows a block: the next row's guarded load of %x is
// prefetched at the top of each iteration, under "next < 4" and the load's own row
// guard, with the row index computed for the next iteration. Not prefetched: %w (the
// loop-invariant weight), %y (the kernel stores to it) and the gather through a
// loaded index (%idx). The loop without a cross-thread wait (@no_wait) is left alone.
// Running the pass twice adds nothing (the loop is marked).

builtin.module {
  kernel.func @rows(%x : memref<?xf32>, %w : memref<?xf32>, %idx : memref<?xi32>, %y : memref<?xf32>) attributes {block_size = array<i32: 128, 1, 1>, index_bits = 32 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    %rows = arith.constant 10 : index
    %zero = arith.constant 0.000000e+00 : f32
    %bidx = kernel.block_id x
    %base = arith.muli %bidx, %c4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %tidx = kernel.thread_id x
      %row = arith.addi %base, %i : index
      %p = arith.cmpi slt, %row, %rows : index
      %v = scf.if %p -> (f32) {
        %rowoff = arith.muli %row, %c128 : index
        %off = arith.addi %rowoff, %tidx : index
        %xv = memref.load %x[%off] : memref<?xf32>
        %wv = memref.load %w[%tidx] : memref<?xf32>
        %j = memref.load %idx[%off] : memref<?xi32>
        %ji = arith.index_cast %j : i32 to index
        %g = memref.load %x[%ji] : memref<?xf32>
        %yv = memref.load %y[%row] : memref<?xf32>
        %a = arith.mulf %xv, %wv : f32
        %b = arith.addf %a, %g : f32
        %c = arith.addf %b, %yv : f32
        scf.yield %c : f32
      } else {
        scf.yield %zero : f32
      }
      %s = kernel.block_reduce %v {kind = "add", dims = array<i64: 0>} : (f32) -> f32
      scf.if %p {
        memref.store %s, %y[%row] : memref<?xf32>
        scf.yield
      }
      scf.yield
    }
    kernel.return
  }
  kernel.func @no_wait(%x : memref<?xf32>, %y : memref<?xf32>) attributes {block_size = array<i32: 128, 1, 1>, index_bits = 32 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %tidx = kernel.thread_id x
      %rowoff = arith.muli %i, %c128 : index
      %off = arith.addi %rowoff, %tidx : index
      %xv = memref.load %x[%off] : memref<?xf32>
      memref.store %xv, %y[%off] : memref<?xf32>
      scf.yield
    }
    kernel.return
  }
}

// CHECK-LABEL: kernel.func @rows(
// CHECK:         scf.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %next = arith.addi %i, %c1 : index
// CHECK-NEXT:      %more = arith.cmpi slt, %next, %c4 : index
// CHECK-NEXT:      scf.if %more {
// CHECK-NEXT:        %row_next = arith.addi %base, %next : index
// CHECK-NEXT:        %rowoff_next = arith.muli %row_next, %c128 : index
// CHECK-NEXT:        %tidx_next = kernel.thread_id x
// CHECK-NEXT:        %off_next = arith.addi %rowoff_next, %tidx_next : index
// CHECK-NEXT:        %p_next = arith.cmpi slt, %row_next, %rows : index
// CHECK-NEXT:        scf.if %p_next {
// CHECK-NEXT:          kernel.prefetch %x[%off_next] {level = "L2"} : memref<?xf32>
// CHECK-NEXT:          kernel.prefetch %idx[%off_next] {level = "L2"} : memref<?xi32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      %tidx = kernel.thread_id x
// CHECK-NOT:       kernel.prefetch %
// CHECK:         } {kernel.prefetch = "L2"}
// CHECK-LABEL: kernel.func @no_wait(
// CHECK-NOT:     kernel.prefetch

// L1: kernel.prefetch %x[%{{.*}}] {level = "L1"} : memref<?xf32>

// CUDA-LABEL: rows(
// CUDA:         for (int i = 0; i < 4; ++i) {
// CUDA-NEXT:      int next = i + 1;
// CUDA-NEXT:      bool more = next < 4;
// CUDA-NEXT:      if (more) {
// CUDA:             if (p_next) {
// CUDA-NEXT:          asm volatile("prefetch.global.L2 [%0];" :: "l"(&x[off_next]));
// CUDA-NEXT:          asm volatile("prefetch.global.L2 [%0];" :: "l"(&idx[off_next]));
// CUDA-NEXT:        }
// CUDA-NEXT:      }
// CUDA-NEXT:      int tidx = threadIdx.x;
