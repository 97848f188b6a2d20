// RUN: fuser-opt %S/../../../examples/sum_broadcast_add.mlir | fuser-opt --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-run %S/../../../examples/sum_broadcast_add.mlir --shapes 3x4 3x4 | filecheck %s --check-prefix=RESULT
// RUN: not fuser-run %S/../../../examples/sum_broadcast_add.mlir 2>&1 | filecheck %s --check-prefix=NOSHAPE

// Seed 000: reduction + broadcast + pointwise with symbolic extents
// (examples/sum_broadcast_add.mlir). fuser-run needs the shapes of the symbolic
// inputs.

// CHECK-LABEL: fuser.fusion @sum_broadcast_add(%t0: !fuser.tensor<?x?xf32>, %t1: !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
// CHECK-NEXT:    %t2 = fuser.sum %t0 {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
// CHECK-NEXT:    %t3 = fuser.broadcast %t2 {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
// CHECK-NEXT:    %t4 = fuser.add %t1, %t3 : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
// CHECK-NEXT:    fuser.output %t4 : !fuser.tensor<?x?xf32>

// RESULT: out0: shape (3, 4) float32

// NOSHAPE: fuser-run: error: input #0 (%t0: !fuser.tensor<?x?xf32>) has symbolic extents: give its shape with --shapes
