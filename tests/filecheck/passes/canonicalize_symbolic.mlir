// RUN: fuser-opt %s --canonicalize | filecheck %s

// A symbolic reshape of a reshape becomes one symbolic reshape (the outer size
// operands, no view); a static reshape of a symbolic one keeps no view either.

fuser.fusion @symbolic(%a : !fuser.tensor<?x64xf32>, %n : i64, %m : i64) -> !fuser.tensor<?x8xf32> {
  %0 = fuser.reshape %a sizes(%n : i64) {new_shape = array<i64: -1, 8, 8>} : !fuser.tensor<?x64xf32> -> !fuser.tensor<?x8x8xf32>
  %1 = fuser.reshape %0 sizes(%m : i64) {new_shape = array<i64: -1, 8>} : !fuser.tensor<?x8x8xf32> -> !fuser.tensor<?x8xf32>
  fuser.output %1 : !fuser.tensor<?x8xf32>
}

// CHECK-LABEL: fuser.fusion @symbolic
// CHECK-NEXT:    %0 = fuser.reshape %a sizes(%m : i64) {new_shape = array<i64: -1, 8>} : !fuser.tensor<?x64xf32> -> !fuser.tensor<?x8xf32>
// CHECK-NEXT:    fuser.output %0
