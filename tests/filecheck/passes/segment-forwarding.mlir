// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4x2097152"},segment' | filecheck %s

// A bf16 softmax over 4 rows of 2^21: no scheduler takes it whole (a row does not fit
// on chip, not even split over a cluster of 8 blocks), so it is segmented. (Rows of
// 128256, a Llama-3 vocabulary, are one kernel over a cluster: schedule-fusions-cluster.mlir.) The cast of the input is forwarded
// (segment's input forwarding, nvFuser's forwardInputs): the segments that need
// cast(x) recompute it from the bf16 input instead of one segment writing it in f32
// for the others to read (20 bytes an element moved; 14 with forwarding).

fuser.fusion @softmax(%x : !fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xbf16> {
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %m = fuser.max %xf {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %d = fuser.sub %xf, %m : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %e = fuser.exp %d : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x1xf32>
  %y = fuser.div %e, %s : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %yb = fuser.cast %y {dtype = bf16} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  fuser.output %yb : !fuser.tensor<?x?xbf16>
}

// CHECK-LABEL: fuser.fusion @softmax_seg0(%x: !fuser.tensor<4x2097152xbf16>) -> !fuser.tensor<4x1xf32>
// CHECK-NEXT:    %xf = fuser.cast %x {dtype = f32}
// CHECK-NEXT:    %m = fuser.max %xf
// CHECK-NEXT:    fuser.output %m
// CHECK-LABEL: fuser.fusion @softmax_seg1(%x: !fuser.tensor<4x2097152xbf16>, %m: !fuser.tensor<4x1xf32>)
// CHECK-NEXT:    %xf = fuser.cast %x {dtype = f32}
// CHECK-NEXT:    %d = fuser.sub %xf, %m
// CHECK-NEXT:    %e = fuser.exp %d
// CHECK-NEXT:    %s = fuser.sum %e
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<4x2097152xbf16>) -> !fuser.tensor<4x2097152xbf16> {
// CHECK-NEXT:    %1 = hir.allocate : !fuser.tensor<4x1xf32>
// CHECK-NEXT:    %2 = hir.launch @softmax_seg0(%0) outs(%1 : !fuser.tensor<4x1xf32>)
// CHECK:         hir.launch @softmax_seg1(%0, %2)
