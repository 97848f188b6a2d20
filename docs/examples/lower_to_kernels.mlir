// docs/passes.md, lower-to-kernels: y = x * x + 1 on a 1024x1024 f32 tensor.
//   fuser-opt docs/examples/lower_to_kernels.mlir -p select-schedulers,schedule-fusions,lower-to-kernels
//   fuser-opt docs/examples/lower_to_kernels.mlir -p select-schedulers,schedule-fusions,lower-to-kernels -t cuda
fuser.fusion @square_plus_one(%x : !fuser.tensor<1024x1024xf32>) -> !fuser.tensor<1024x1024xf32> {
  %t = fuser.mul %x, %x : (!fuser.tensor<1024x1024xf32>, !fuser.tensor<1024x1024xf32>) -> !fuser.tensor<1024x1024xf32>
  %c = fuser.constant 1.000000e+00 : f64
  %y = fuser.add %t, %c : (!fuser.tensor<1024x1024xf32>, f64) -> !fuser.tensor<1024x1024xf32>
  fuser.output %y : !fuser.tensor<1024x1024xf32>
}
