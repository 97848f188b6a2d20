// An in-place update through the whole pipeline to CUDA: mark-aliases writes the
// update into the caller's %x (hir.launch ... outs(..., %x)), and lower-to-kernels
// gives the kernel's %x argument and the output written into it aliased_args
// (codegen/aliased_args.py): plain pointers, not __restrict__; %g stays read-only.
// RUN: fuser-opt %s --strip-bookend-views --segment -p mark-aliases,select-schedulers,schedule-fusions,lower-to-kernels | filecheck %s --check-prefix=IR
// RUN: fuser-opt %s --strip-bookend-views --segment -p mark-aliases,select-schedulers,schedule-fusions,lower-to-kernels -t cuda | filecheck %s

fuser.fusion @update(%x : !fuser.tensor<1024x256xf32>, %g : !fuser.tensor<1024x256xf32>) -> () {
  %c = fuser.constant 1.000000e-01 : f64
  %d = fuser.mul %g, %c : (!fuser.tensor<1024x256xf32>, f64) -> !fuser.tensor<1024x256xf32>
  %n = fuser.sub %x, %d : (!fuser.tensor<1024x256xf32>, !fuser.tensor<1024x256xf32>) -> !fuser.tensor<1024x256xf32>
  fuser.output %n : !fuser.tensor<1024x256xf32> {alias_inputs = array<i64: 0>}
}

// IR:      kernel.func @{{[a-z_0-9]+}}_kernel(
// IR-SAME:   aliased_args = array<i64: 0, 2>
// IR:      hir.launch @{{[a-z_0-9]+}}(%0, %1) outs(%0 :

// CHECK: extern "C" __global__ void __launch_bounds__({{[0-9]+}}) {{[a-z_0-9]+}}_kernel(float* {{[a-z0-9_]+}}, const float* __restrict__ {{[a-z0-9_]+}}, float* out0) {
