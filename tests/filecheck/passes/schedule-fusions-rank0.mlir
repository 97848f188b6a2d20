// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions' | filecheck %s
// RUN: fuser-opt %s -p 'select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA

// A rank-0 fusion: every tensor's logical and loop domains are empty, so the loop
// nest is no loop at all and the kernel is one thread.

// CHECK-LABEL: fuser.fusion @scalar_sub
// CHECK:         %[[D:.*]] = fuser.sub %{{.*}}, %{{.*}} : (!fuser.tensor<f16>, !fuser.tensor<f16>) -> !fuser.tensor<f16>
// CHECK-NEXT:    iterdomain.logical %[[D]] : !fuser.tensor<f16> ->
// CHECK-NEXT:    iterdomain.loop %[[D]] [] : !fuser.tensor<f16> []

// CUDA-LABEL: __global__ void __launch_bounds__(1) scalar_sub_kernel(
// CUDA-NEXT:    fuser_dependent_launch();
// CUDA-NEXT:    __half a_1 = a[0];
// CUDA:         __half b_1 = b[0];
// CUDA:         float t2 = t0 - t1;
// CUDA:         out0[0] = t{{[0-9]+}};
// CUDA-NEXT:  }

fuser.fusion @scalar_sub(%a : !fuser.tensor<f16>, %b : !fuser.tensor<f16>) -> !fuser.tensor<f16> {
  %d = fuser.sub %a, %b : (!fuser.tensor<f16>, !fuser.tensor<f16>) -> !fuser.tensor<f16>
  fuser.output %d : !fuser.tensor<f16>
}
