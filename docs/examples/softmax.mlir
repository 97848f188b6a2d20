// docs/passes.md, select-schedulers: softmax over the last axis (inner persistent).
//   fuser-opt docs/examples/softmax.mlir --select-schedulers --debug-schedulers
fuser.fusion @softmax(%x : !fuser.tensor<4096x1024xf32>) -> !fuser.tensor<4096x1024xf32> {
  %m = fuser.max %x {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4096x1024xf32>) -> !fuser.tensor<4096x1xf32>
  %d = fuser.sub %x, %m : (!fuser.tensor<4096x1024xf32>, !fuser.tensor<4096x1xf32>) -> !fuser.tensor<4096x1024xf32>
  %e = fuser.exp %d : (!fuser.tensor<4096x1024xf32>) -> !fuser.tensor<4096x1024xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<4096x1024xf32>) -> !fuser.tensor<4096x1xf32>
  %y = fuser.truediv %e, %s : (!fuser.tensor<4096x1024xf32>, !fuser.tensor<4096x1xf32>) -> !fuser.tensor<4096x1024xf32>
  fuser.output %y : !fuser.tensor<4096x1024xf32>
}
