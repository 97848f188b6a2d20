// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// broadcast_in_dim with static shapes and with symbolic sizes bound to operands.

fuser.fusion @broadcast_in_dim(%0: !fuser.tensor<16xf32>, %1: !fuser.tensor<4x1xf32>, %2: i64) -> (!fuser.tensor<8x16xf32>, !fuser.tensor<4x8x2xf32>, !fuser.tensor<?x16xf32>) {
  %3 = fuser.broadcast_in_dim %0 {shape = array<i64: 8, 16>, broadcast_dims = array<i64: 1>} : !fuser.tensor<16xf32> -> !fuser.tensor<8x16xf32>
  %4 = fuser.broadcast_in_dim %1 {shape = array<i64: 4, 8, 2>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x8x2xf32>
  %5 = fuser.broadcast_in_dim %0 sizes(%2 : i64) {shape = array<i64: -1, 16>, broadcast_dims = array<i64: 1>} : !fuser.tensor<16xf32> -> !fuser.tensor<?x16xf32>
  fuser.output %3, %4, %5 : !fuser.tensor<8x16xf32>, !fuser.tensor<4x8x2xf32>, !fuser.tensor<?x16xf32>
}

// CHECK-LABEL: fuser.fusion @broadcast_in_dim(%0: !fuser.tensor<16xf32>, %1: !fuser.tensor<4x1xf32>, %2: i64) -> (!fuser.tensor<8x16xf32>, !fuser.tensor<4x8x2xf32>, !fuser.tensor<?x16xf32>) {
// CHECK-NEXT:  %3 = fuser.broadcast_in_dim %0 {shape = array<i64: 8, 16>, broadcast_dims = array<i64: 1>} : !fuser.tensor<16xf32> -> !fuser.tensor<8x16xf32>
// CHECK-NEXT:  %4 = fuser.broadcast_in_dim %1 {shape = array<i64: 4, 8, 2>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<4x1xf32> -> !fuser.tensor<4x8x2xf32>
// CHECK-NEXT:  %5 = fuser.broadcast_in_dim %0 sizes(%2 : i64) {shape = array<i64: -1, 16>, broadcast_dims = array<i64: 1>} : !fuser.tensor<16xf32> -> !fuser.tensor<?x16xf32>
// CHECK-NEXT:  fuser.output %3, %4, %5 : !fuser.tensor<8x16xf32>, !fuser.tensor<4x8x2xf32>, !fuser.tensor<?x16xf32>

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.broadcast_in_dim"
// GENERIC: "fuser.broadcast_in_dim"
// GENERIC: "fuser.broadcast_in_dim"
// GENERIC: "fuser.output"
