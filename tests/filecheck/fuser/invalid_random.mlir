// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Malformed random ops, one per chunk: the verifier names the op, the operand and the
// problem.

// An integer result.
fuser.fusion @f(%a : f64, %s : i64) -> !fuser.tensor<4xi32> {
  %r = fuser.uniform %a, %a, %s, %s {shape = array<i64: 4>} : f64, f64, i64, i64 -> !fuser.tensor<4xi32>
  fuser.output %r : !fuser.tensor<4xi32>
}
// CHECK: fuser.uniform: random values must be f64, f32, f16 or bf16, got int32

// -----

// A seed that is not an i64 scalar.
fuser.fusion @f(%a : f64, %s : i32, %o : i64) -> !fuser.tensor<4xf32> {
  %r = fuser.normal %a, %a, %s, %o {shape = array<i64: 4>} : f64, f64, i32, i64 -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.normal: rng_seed must be an i64 scalar, got i32

// -----

// A tensor distribution parameter.
fuser.fusion @f(%a : !fuser.tensor<4xf32>, %s : i64) -> !fuser.tensor<4xf32> {
  %r = fuser.normal %a, %a, %s, %s {shape = array<i64: 4>} : !fuser.tensor<4xf32>, !fuser.tensor<4xf32>, i64, i64 -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.normal: mean must be a scalar, got !fuser.tensor<4xf32>

// -----

// A bool bound.
fuser.fusion @f(%a : i1, %b : f64, %s : i64) -> !fuser.tensor<4xf32> {
  %r = fuser.uniform %a, %b, %s, %s {shape = array<i64: 4>} : i1, f64, i64, i64 -> !fuser.tensor<4xf32>
  fuser.output %r : !fuser.tensor<4xf32>
}
// CHECK: fuser.uniform: low must be a real number scalar, got i1

// -----

// A symbolic axis without a size operand.
fuser.fusion @f(%a : f64, %s : i64) -> !fuser.tensor<?xf32> {
  %r = fuser.uniform %a, %a, %s, %s {shape = array<i64: -1>} : f64, f64, i64, i64 -> !fuser.tensor<?xf32>
  fuser.output %r : !fuser.tensor<?xf32>
}
// CHECK: fuser.uniform: shape [?] has 1 symbolic entries but 0 size operands
