// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4x1024,1=4x1024"}' | filecheck %s
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4x1024,1=4x1024"}' | fuser-opt | filecheck %s
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4x1024,1=4x1024"},canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers' | filecheck %s --check-prefix=DRIVER
// RUN: fuser-opt --print-pipeline=0=4x1024,1=4x1024 | filecheck %s --check-prefix=SPEC

// Seed 000 with symbolic extents: bind-sizes writes the extents the inputs imply
// into every type (the broadcast's 4x1 included), keeping layouts; the driver's
// pipeline after it needs no sizes option.

fuser.fusion @sum_broadcast_add(%t0 : !fuser.tensor<?x?xf32>, %t1 : !fuser.tensor<?x?xf32, contiguity=[true, true]>) -> !fuser.tensor<?x?xf32> {
  %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32, contiguity=[true, true]>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %t4 : !fuser.tensor<?x?xf32>
}

// CHECK-LABEL: fuser.fusion @sum_broadcast_add(%t0: !fuser.tensor<4x1024xf32>, %t1: !fuser.tensor<4x1024xf32, contiguity=[true, true]>) -> !fuser.tensor<4x1024xf32> {
// CHECK-NEXT:    %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
// CHECK-NEXT:    %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<4xf32>) -> !fuser.tensor<4x1xf32>
// CHECK-NEXT:    %t4 = fuser.add %t1, %t3 : (!fuser.tensor<4x1024xf32, contiguity=[true, true]>, !fuser.tensor<4x1xf32>) -> !fuser.tensor<4x1024xf32>
// CHECK-NEXT:    fuser.output %t4 : !fuser.tensor<4x1024xf32>

// DRIVER-LABEL: fuser.fusion @sum_broadcast_add_seg0
// DRIVER-SAME:  fuser.schedule = {kind = "inner_persistent"
// DRIVER-LABEL: hir.program @main(%0: !fuser.tensor<4x1024xf32>, %1: !fuser.tensor<4x1024xf32, contiguity=[true, true]>) -> !fuser.tensor<4x1024xf32> {
// DRIVER-NEXT:    %2 = hir.allocate {preallocated} : !fuser.tensor<4x1024xf32>
// DRIVER-NEXT:    %3 = hir.launch @sum_broadcast_add_seg0(%0, %1) outs(%2 : !fuser.tensor<4x1024xf32>)
// DRIVER-NEXT:    hir.return %2

// The driver's pipeline, as --print-pipeline prints it (the DRIVER run above):
// SPEC: {{^}}bind-sizes{sizes="0=4x1024,1=4x1024"},canonicalize,strip-bookend-views,mark-aliases,segment,fold-in-place-copies,select-schedulers{debug=true},schedule-fusions{{$}}
