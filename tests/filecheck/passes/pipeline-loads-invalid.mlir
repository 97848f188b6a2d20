// RUN: not fuser-opt %s -p 'pipeline-loads{max_bytes=-1}' 2>&1 | filecheck %s

// A cap on the bytes a thread carries is 0 (none) or positive.

builtin.module {
  kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
    kernel.return
  }
}

// CHECK: fuser-opt: error: pipeline-loads: option max_bytes must be 0 (no cap) or a positive number of bytes, got -1
