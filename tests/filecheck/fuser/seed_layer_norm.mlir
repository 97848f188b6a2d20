// RUN: fuser-opt %S/../../../examples/layer_norm.mlir | filecheck %s
// RUN: fuser-opt %S/../../../examples/layer_norm.mlir --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-run %S/../../../examples/layer_norm.mlir | filecheck %s --check-prefix=RESULT

// A layer norm in half precision computed in float32 (examples/layer_norm.mlir):
// var_mean with keepdim, rsqrt, broadcast_in_dim of the affine parameters.

// CHECK-LABEL: fuser.fusion @layer_norm(%x: !fuser.tensor<256x1024xf16>, %weight: !fuser.tensor<1024xf32>, %bias: !fuser.tensor<1024xf32>)
// CHECK-NEXT:    %xf = fuser.cast %x : (!fuser.tensor<256x1024xf16>) -> !fuser.tensor<256x1024xf32>
// CHECK-NEXT:    %var, %mean = fuser.var_mean %xf {dims = array<i64: 1>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<256x1024xf32>) -> (!fuser.tensor<256x1xf32>, !fuser.tensor<256x1xf32>)
// CHECK-NEXT:    %eps = fuser.constant 1.000000e-05 : f64
// CHECK-NEXT:    %ve = fuser.add %var, %eps
// CHECK-NEXT:    %rstd = fuser.rsqrt %ve
// CHECK-NEXT:    %centered = fuser.sub %xf, %mean
// CHECK-NEXT:    %normed = fuser.mul %centered, %rstd
// CHECK-NEXT:    %w = fuser.broadcast_in_dim %weight {shape = array<i64: 256, 1024>, broadcast_dims = array<i64: 1>} : !fuser.tensor<1024xf32> -> !fuser.tensor<256x1024xf32>
// CHECK-NEXT:    %b = fuser.broadcast_in_dim %bias
// CHECK-NEXT:    %scaled = fuser.mul %normed, %w
// CHECK-NEXT:    %shifted = fuser.add %scaled, %b
// CHECK-NEXT:    %y = fuser.cast %shifted : (!fuser.tensor<256x1024xf32>) -> !fuser.tensor<256x1024xf16>
// CHECK-NEXT:    fuser.output %y, %mean, %rstd : !fuser.tensor<256x1024xf16>, !fuser.tensor<256x1xf32>, !fuser.tensor<256x1xf32>

// The normalized output has mean ~0; the inverse standard deviation of N(0, 1) rows is ~1.
// RESULT: out0: shape (256, 1024) float16 min {{.*}} mean -0.0{{[0-9]*}}
// RESULT: out1: shape (256, 1) float32
// RESULT: out2: shape (256, 1) float32 min 0.9{{.*}} max 1.0{{.*}} mean 1.0
