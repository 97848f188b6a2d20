// Layer norm over the hidden axis of a half-precision activation, as the torch
// frontend writes it: compute in float32, var_mean (biased, correction 0),
// normalize, scale and shift, cast back. Also returns the mean and the inverse
// standard deviation for the backward pass (a persistent/inner-outer scheduler
// candidate, seed 004).
//
//   fuser-run examples/layer_norm.mlir
fuser.fusion @layer_norm(%x : !fuser.tensor<256x1024xf16>, %weight : !fuser.tensor<1024xf32>, %bias : !fuser.tensor<1024xf32>) -> (!fuser.tensor<256x1024xf16>, !fuser.tensor<256x1xf32>, !fuser.tensor<256x1xf32>) {
  %xf = fuser.cast %x : (!fuser.tensor<256x1024xf16>) -> !fuser.tensor<256x1024xf32>
  %var, %mean = fuser.var_mean %xf {dims = array<i64: 1>, correction = 0.000000e+00 : f64, keepdim = true} : (!fuser.tensor<256x1024xf32>) -> (!fuser.tensor<256x1xf32>, !fuser.tensor<256x1xf32>)
  %eps = fuser.constant 1.000000e-05 : f64
  %ve = fuser.add %var, %eps : (!fuser.tensor<256x1xf32>, f64) -> !fuser.tensor<256x1xf32>
  %rstd = fuser.rsqrt %ve : (!fuser.tensor<256x1xf32>) -> !fuser.tensor<256x1xf32>
  %centered = fuser.sub %xf, %mean : (!fuser.tensor<256x1024xf32>, !fuser.tensor<256x1xf32>) -> !fuser.tensor<256x1024xf32>
  %normed = fuser.mul %centered, %rstd : (!fuser.tensor<256x1024xf32>, !fuser.tensor<256x1xf32>) -> !fuser.tensor<256x1024xf32>
  %w = fuser.broadcast_in_dim %weight {shape = array<i64: 256, 1024>, broadcast_dims = array<i64: 1>} : !fuser.tensor<1024xf32> -> !fuser.tensor<256x1024xf32>
  %b = fuser.broadcast_in_dim %bias {shape = array<i64: 256, 1024>, broadcast_dims = array<i64: 1>} : !fuser.tensor<1024xf32> -> !fuser.tensor<256x1024xf32>
  %scaled = fuser.mul %normed, %w : (!fuser.tensor<256x1024xf32>, !fuser.tensor<256x1024xf32>) -> !fuser.tensor<256x1024xf32>
  %shifted = fuser.add %scaled, %b : (!fuser.tensor<256x1024xf32>, !fuser.tensor<256x1024xf32>) -> !fuser.tensor<256x1024xf32>
  %y = fuser.cast %shifted : (!fuser.tensor<256x1024xf32>) -> !fuser.tensor<256x1024xf16>
  fuser.output %y, %mean, %rstd : !fuser.tensor<256x1024xf16>, !fuser.tensor<256x1xf32>, !fuser.tensor<256x1xf32>
}
