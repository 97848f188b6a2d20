// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Unary ops on scalar inputs give scalars; a float op keeps a float scalar's own
// dtype (nvFuser: exp of a Float scalar is a Float), and makes an integer one f32.

fuser.fusion @scalars(%0: f32, %1: i64) -> (f32, i64, f32) {
  %2 = fuser.exp %0 : (f32) -> f32
  %3 = fuser.neg %1 : (i64) -> i64
  %4 = fuser.exp %1 : (i64) -> f32
  fuser.output %2, %3, %4 : f32, i64, f32
}

// CHECK-LABEL: fuser.fusion @scalars(%0: f32, %1: i64) -> (f32, i64, f32) {
// CHECK-NEXT:  %2 = fuser.exp %0 : (f32) -> f32
// CHECK-NEXT:  %3 = fuser.neg %1 : (i64) -> i64
// CHECK-NEXT:  %4 = fuser.exp %1 : (i64) -> f32
// CHECK-NEXT:  fuser.output %2, %3, %4 : f32, i64, f32

// GENERIC: "fuser.fusion"
// GENERIC: "fuser.exp"
// GENERIC: "fuser.neg"
// GENERIC: "fuser.exp"
// GENERIC: "fuser.output"
