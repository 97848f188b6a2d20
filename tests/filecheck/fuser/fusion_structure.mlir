// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Several fusions in a module; scalar inputs; a fusion with no inputs; one that
// returns an input unchanged; attributes on a fusion are kept.

fuser.fusion @empty() -> f32 {
  %c = fuser.constant 1.000000e+00 : f32
  fuser.output %c : f32
}
fuser.fusion @passthrough(%a : !fuser.tensor<?xi64>, %s : i1) -> (!fuser.tensor<?xi64>, i1) attributes {segment = 2 : i64} {
  fuser.output %a, %s : !fuser.tensor<?xi64>, i1
}

// CHECK-LABEL: fuser.fusion @empty() -> f32 {
// CHECK-NEXT:    %c = fuser.constant 1.000000e+00 : f32
// CHECK-NEXT:    fuser.output %c : f32
// CHECK-LABEL: fuser.fusion @passthrough(%a: !fuser.tensor<?xi64>, %s: i1) -> (!fuser.tensor<?xi64>, i1) attributes {segment = 2 : i64} {
// CHECK-NEXT:    fuser.output %a, %s : !fuser.tensor<?xi64>, i1

// GENERIC: "fuser.fusion"() <{sym_name = "empty", function_type = () -> f32}>
// GENERIC: "fuser.fusion"() <{sym_name = "passthrough", function_type = (!fuser.tensor<?xi64>, i1) -> (!fuser.tensor<?xi64>, i1)}> ({
