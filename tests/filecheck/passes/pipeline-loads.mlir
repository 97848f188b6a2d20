// RUN: fuser-opt %s -p pipeline-loads | filecheck %s
// RUN: fuser-opt %s -p pipeline-loads,pipeline-loads | filecheck %s
// RUN: fuser-opt %s -p 'pipeline-loads{max_bytes=4}' | filecheck %s --check-prefix=CAP
// RUN: fuser-opt %s -p pipeline-loads -t cuda | filecheck %s --check-prefix=CUDA

// A block-reducing loop over 4 rows a block. The row's guarded load of %x becomes a
// carried value: the first row's is loaded before the loop, the next row's at the top
// of each iteration (under "next < 4" and its own row guard). Left in the loop: %w
// (loop-invariant), %y (the kernel stores to it) and the gather through a loaded
// index (%idx is carried; the element it points to is not). With max_bytes=4 only the
// first load in program order (%x) is carried. Running the pass twice adds nothing.

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
}

// CHECK-LABEL: kernel.func @rows(
// CHECK:         %more = arith.cmpi slt, %c0, %c4 : index
// CHECK-NEXT:    %row_first = arith.addi %base, %c0 : index
// CHECK-NEXT:    %rowoff_first = arith.muli %row_first, %c128 : index
// CHECK-NEXT:    %tidx_first = kernel.thread_id x
// CHECK-NEXT:    %off_first = arith.addi %rowoff_first, %tidx_first : index
// CHECK-NEXT:    %p_first = arith.cmpi slt, %row_first, %rows : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.andi %more, %p_first : i1
// CHECK-NEXT:    %xv_first = scf.if %[[FIRST]] -> (f32) {
// CHECK-NEXT:      %{{.*}} = memref.load %x[%off_first] : memref<?xf32>
// CHECK:         %j_first = scf.if %[[FIRST]] -> (i32) {
// CHECK-NEXT:      %{{.*}} = memref.load %idx[%off_first] : memref<?xi32>
// CHECK:         %{{.*}}, %{{.*}} = scf.for %i = %c0 to %c4 step %c1 iter_args(%xv_cur = %xv_first, %j_cur = %j_first) -> (f32, i32) {
// CHECK-NEXT:      %next = arith.addi %i, %c1 : index
// CHECK-NEXT:      %more_1 = arith.cmpi slt, %next, %c4 : index
// CHECK-NEXT:      %row_next = arith.addi %base, %next : index
// CHECK:           %[[NEXT:.*]] = arith.andi %more_1, %p_next : i1
// CHECK-NEXT:      %xv_next = scf.if %[[NEXT]] -> (f32) {
// CHECK-NEXT:        %{{.*}} = memref.load %x[%off_next] : memref<?xf32>
// CHECK:           } else {
// CHECK-NEXT:        scf.yield %xv_cur : f32
// CHECK:           %j_next = scf.if %[[NEXT]] -> (i32) {
// CHECK-NOT:       memref.load %x[%off]
// CHECK:             %wv = memref.load %w[%tidx] : memref<?xf32>
// CHECK-NEXT:        %ji = arith.index_cast %j_cur : i32 to index
// CHECK-NEXT:        %g = memref.load %x[%ji] : memref<?xf32>
// CHECK-NEXT:        %yv = memref.load %y[%row] : memref<?xf32>
// CHECK-NEXT:        %a = arith.mulf %xv_cur, %wv : f32
// CHECK:           scf.yield %xv_next, %j_next : f32, i32
// CHECK-NEXT:    } {kernel.pipelined}

// CAP:         %{{.*}} = scf.for %i = %c0 to %c4 step %c1 iter_args(%xv_cur = %xv_first) -> (f32) {
// CAP:             %j = memref.load %idx[%off] : memref<?xi32>
// CAP:           scf.yield %xv_next : f32

// CUDA:        float xv_cur = xv_first;
// CUDA-NEXT:   int j_cur = j_first;
// CUDA-NEXT:   for (int i = 0; i < 4; ++i) {
