// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// broadcast inserts extent-1 axes where is_broadcast_dim is true.

fuser.fusion @broadcast(%0: !fuser.tensor<16xf32>, %1: !fuser.tensor<?x4xf32>) -> (!fuser.tensor<1x16xf32>, !fuser.tensor<16x1x1xf32>, !fuser.tensor<?x1x4xf32>) {
  %2 = fuser.broadcast %0 {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<1x16xf32>
  %3 = fuser.broadcast %0 {is_broadcast_dim = array<i1: false, true, true>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<16x1x1xf32>
  %4 = fuser.broadcast %1 {is_broadcast_dim = array<i1: false, true, false>} : (!fuser.tensor<?x4xf32>) -> !fuser.tensor<?x1x4xf32>
  fuser.output %2, %3, %4 : !fuser.tensor<1x16xf32>, !fuser.tensor<16x1x1xf32>, !fuser.tensor<?x1x4xf32>
}

// CHECK-LABEL: fuser.fusion @broadcast(%0: !fuser.tensor<16xf32>, %1: !fuser.tensor<?x4xf32>) -> (!fuser.tensor<1x16xf32>, !fuser.tensor<16x1x1xf32>, !fuser.tensor<?x1x4xf32>) {
// CHECK-NEXT:  %2 = fuser.broadcast %0 {is_broadcast_dim = array<i1: true, false>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<1x16xf32>
// CHECK-NEXT:  %3 = fuser.broadcast %0 {is_broadcast_dim = array<i1: false, true, true>} : (!fuser.tensor<16xf32>) -> !fuser.tensor<16x1x1xf32>
// CHECK-NEXT:  %4 = fuser.broadcast %1 {is_broadcast_dim = array<i1: false, true, false>} : (!fuser.tensor<?x4xf32>) -> !fuser.tensor<?x1x4xf32>
// CHECK-NEXT:  fuser.output %2, %3, %4 : !fuser.tensor<1x16xf32>, !fuser.tensor<16x1x1xf32>, !fuser.tensor<?x1x4xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.broadcast"
// GENERIC: "fuser.broadcast"
// GENERIC: "fuser.broadcast"
// GENERIC: "fuser.output"
