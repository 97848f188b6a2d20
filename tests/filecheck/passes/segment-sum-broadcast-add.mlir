// RUN: fuser-opt %s --split-input-file -p 'bind-sizes{sizes="0=128x1024,1=128x1024"},segment' | filecheck %s
// RUN: fuser-opt %s --split-input-file -p 'bind-sizes{sizes="128x1024,128x1024"},segment{gpu=h200}' | filecheck %s

// Seed 000: reduction + broadcast + add, symbolic extents bound by bind-sizes. nvFuser
// cuts it in two (its reduction scheduler takes no epilogue at full size); fuser's
// inner-persistent scheduler takes the whole fusion as one kernel: the add reads
// t1 on the same rows after the row sum, with no buffer to keep.

fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: fuser.fusion @sum_broadcast_add_seg0(%t0: !fuser.tensor<128x1024xf32>, %t1: !fuser.tensor<128x1024xf32>)
// CHECK-NEXT:    %t2 = fuser.sum %t0 {dims = array<i64: 1>}
// CHECK-NEXT:    %t3 = fuser.broadcast %t2
// CHECK-NEXT:    %t4 = fuser.add %t1, %t3
// CHECK-NEXT:    fuser.output %t4 : !fuser.tensor<128x1024xf32>
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<128x1024xf32>, %1: !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1024xf32> {
// CHECK-NEXT:    %2 = hir.allocate {preallocated} : !fuser.tensor<128x1024xf32>
// CHECK-NEXT:    %3 = hir.launch @sum_broadcast_add_seg0(%0, %1) outs(%2 : !fuser.tensor<128x1024xf32>)
// CHECK-NEXT:    hir.return %2 : !fuser.tensor<128x1024xf32>

// -----

// The same fusion with the boundary nvFuser's segmenter picks, marked with a
// segment_set: two segments exactly as in seed 000 (sum and broadcast, then the
// add). The reduction's output is an intermediate: allocated at its bound shape,
// deallocated after the add.

fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t3s = fuser.segment_set %t3 : (!fuser.tensor<?x1xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3s : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: fuser.fusion @sum_broadcast_add_seg0(%t0: !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1xf32>
// CHECK-NEXT:    %t2 = fuser.sum %t0 {dims = array<i64: 1>}
// CHECK-NEXT:    %t3 = fuser.broadcast %t2
// CHECK-NEXT:    fuser.output %t3 : !fuser.tensor<128x1xf32>
// CHECK-LABEL: fuser.fusion @sum_broadcast_add_seg1(%t1: !fuser.tensor<128x1024xf32>, %t3: !fuser.tensor<128x1xf32>)
// CHECK-NEXT:    %t3s = fuser.segment_set %t3
// CHECK-NEXT:    %t4 = fuser.add %t1, %t3s
// CHECK-NEXT:    fuser.output %t4 : !fuser.tensor<128x1024xf32>
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<128x1024xf32>, %1: !fuser.tensor<128x1024xf32>) -> !fuser.tensor<128x1024xf32> {
// CHECK-NEXT:    %2 = hir.allocate : !fuser.tensor<128x1xf32>
// CHECK-NEXT:    %3 = hir.launch @sum_broadcast_add_seg0(%0) outs(%2 : !fuser.tensor<128x1xf32>)
// CHECK-NEXT:    %4 = hir.allocate {preallocated} : !fuser.tensor<128x1024xf32>
// CHECK-NEXT:    %5 = hir.launch @sum_broadcast_add_seg1(%1, %3) outs(%4 : !fuser.tensor<128x1024xf32>)
// CHECK-NEXT:    hir.deallocate %2
// CHECK-NEXT:    hir.return %4 : !fuser.tensor<128x1024xf32>
// CHECK-NEXT:  }
