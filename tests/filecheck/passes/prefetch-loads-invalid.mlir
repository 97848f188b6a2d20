// RUN: not fuser-opt %s -p 'prefetch-loads{level=L3}' 2>&1 | filecheck %s

// The only levels are the caches a prefetch can fill.

builtin.module {
  kernel.func @k(%x : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>} {
    kernel.return
  }
}

// CHECK: fuser-opt: error: prefetch-loads: option level must be one of ['L1', 'L2'], got 'L3'
