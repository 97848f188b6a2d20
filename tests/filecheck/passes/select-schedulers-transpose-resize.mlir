// A transpose whose transposed input is concatenated along the tiled axis: the output
// has more row tiles than the input (257 rows against 256, tiles of 64), so the
// transpose kind rejects the resize and names it; the pointwise kind takes the fusion
// and lowers it (random fusion seed 618, which failed on the GPU in the lowering).
// RUN: fuser-opt %s -p 'select-schedulers{debug=true}' | filecheck %s
// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA

// CHECK-LABEL: fuser.fusion @cat_of_transposed
// CHECK-SAME: fuser.schedule = {kind = "pointwise"
// CHECK-SAME: transpose = "fuser.cat changes an extent between the tensors of a tile (pointwise takes it)"

// CUDA: extern "C" __global__ void
// CUDA-SAME: cat_of_transposed_kernel(
// CUDA-NOT: __shared__

fuser.fusion @cat_of_transposed(%x : !fuser.tensor<33x256xf16>, %b : !fuser.tensor<1x33xf16>) -> !fuser.tensor<257x33xf16> {
  %t = fuser.permute %x {dims = array<i64: 1, 0>} : (!fuser.tensor<33x256xf16>) -> !fuser.tensor<256x33xf16>
  %s = fuser.silu %t : (!fuser.tensor<256x33xf16>) -> !fuser.tensor<256x33xf16>
  %c = fuser.cat %s, %b {dim = 0 : i64} : (!fuser.tensor<256x33xf16>, !fuser.tensor<1x33xf16>) -> !fuser.tensor<257x33xf16>
  fuser.output %c : !fuser.tensor<257x33xf16>
}
