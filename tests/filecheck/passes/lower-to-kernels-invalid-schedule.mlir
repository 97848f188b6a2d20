// RUN: not fuser-opt %s -p lower-to-kernels 2>&1 | filecheck %s


// A schedule annotation without a kind.
fuser.fusion @bad(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {vectorization = 4 : i64}} {
  %y = fuser.neg %x : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %y : !fuser.tensor<4xf32>
}
// CHECK: fuser-opt: error: lower-to-kernels: @bad has a fuser.schedule without a known kind

