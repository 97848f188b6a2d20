// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x256,1=1024x256,2=1024,3=256x1024"},segment,select-schedulers' | filecheck %s
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x256,1=1024x256,2=1024,3=256x1024"},segment,select-schedulers,schedule-fusions,lower-to-kernels' | filecheck %s --check-prefix=KERNELS
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x256,1=1024x256,2=1024,3=256x1024"},segment,select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA

// An MLP block (linear + bias, relu, linear, residual add) in bf16. No generated kernel
// computes a matrix product: every kernel scheduler rejects a fusion holding one, so
// each linear gets a segment of its own, scheduled "matmul" (a cuBLAS call at run
// time), and the pointwise work between them is generated kernels. The cast of %gb
// is not forwarded into the second linear's segment: a library call runs its op alone.

fuser.fusion @mlp(%x : !fuser.tensor<?x?xbf16>, %w1 : !fuser.tensor<?x?xbf16>, %b1 : !fuser.tensor<?xbf16>, %w2 : !fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xbf16> {
  %h = fuser.linear %x, %w1, %b1 : (!fuser.tensor<?x?xbf16>, !fuser.tensor<?x?xbf16>, !fuser.tensor<?xbf16>) -> !fuser.tensor<?x?xbf16>
  %hf = fuser.cast %h {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %g = fuser.relu %hf : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %gb = fuser.cast %g {dtype = bf16} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  %y = fuser.linear %gb, %w2 : (!fuser.tensor<?x?xbf16>, !fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xbf16>
  %yf = fuser.cast %y {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %xf = fuser.cast %x {dtype = f32} : (!fuser.tensor<?x?xbf16>) -> !fuser.tensor<?x?xf32>
  %r = fuser.add %yf, %xf : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %rb = fuser.cast %r {dtype = bf16} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xbf16>
  fuser.output %rb : !fuser.tensor<?x?xbf16>
}

// CHECK-LABEL: fuser.fusion @mlp_seg0(%x: !fuser.tensor<64x256xbf16>, %w1: !fuser.tensor<1024x256xbf16>, %b1: !fuser.tensor<1024xbf16>) -> !fuser.tensor<64x1024xbf16> attributes {fuser.schedule = {kind = "matmul"}} {
// CHECK-NEXT:    %h = fuser.linear %x, %w1, %b1
// CHECK-NEXT:    fuser.output %h
// CHECK-LABEL: fuser.fusion @mlp_seg1(%h: !fuser.tensor<64x1024xbf16>) -> !fuser.tensor<64x1024xbf16> attributes {fuser.schedule = {kind = "pointwise"
// CHECK-NEXT:    %hf = fuser.cast %h
// CHECK-NEXT:    %g = fuser.relu %hf
// CHECK-NEXT:    %gb = fuser.cast %g
// CHECK-NEXT:    fuser.output %gb
// CHECK-LABEL: fuser.fusion @mlp_seg2(%w2: !fuser.tensor<256x1024xbf16>, %gb: !fuser.tensor<64x1024xbf16>) -> !fuser.tensor<64x256xbf16> attributes {fuser.schedule = {kind = "matmul"}} {
// CHECK-NEXT:    %y = fuser.linear %gb, %w2
// CHECK-NEXT:    fuser.output %y
// CHECK-LABEL: fuser.fusion @mlp_seg3(%x: !fuser.tensor<64x256xbf16>, %y: !fuser.tensor<64x256xbf16>)
// CHECK-LABEL: hir.program @main
// CHECK-NEXT:    %4 = hir.allocate : !fuser.tensor<64x1024xbf16>
// CHECK-NEXT:    %5 = hir.launch @mlp_seg0(%0, %1, %2) outs(%4 : !fuser.tensor<64x1024xbf16>)
// CHECK-NEXT:    %6 = hir.allocate : !fuser.tensor<64x1024xbf16>
// CHECK-NEXT:    %7 = hir.launch @mlp_seg1(%5) outs(%6 : !fuser.tensor<64x1024xbf16>)
// CHECK-NEXT:    hir.deallocate %4
// CHECK-NEXT:    %8 = hir.allocate : !fuser.tensor<64x256xbf16>
// CHECK-NEXT:    %9 = hir.launch @mlp_seg2(%3, %7) outs(%8 : !fuser.tensor<64x256xbf16>)

// The library segments get no kernel; the pointwise ones one each.
// KERNELS: fuser.fusion @mlp_seg0({{.*}}fuser.kernels = []
// KERNELS: fuser.fusion @mlp_seg1({{.*}}fuser.kernels = [@mlp_seg1_kernel]
// KERNELS: kernel.func @mlp_seg1_kernel(
// KERNELS: fuser.fusion @mlp_seg2({{.*}}fuser.kernels = []
// KERNELS: fuser.fusion @mlp_seg3({{.*}}fuser.kernels = [@mlp_seg3_kernel]

// The CUDA has the two kernels, and names the library calls at its end.
// CUDA: __global__ void __launch_bounds__(128) mlp_seg1_kernel(
// CUDA: __global__ void __launch_bounds__(128) mlp_seg3_kernel(
// CUDA-LABEL: // Library calls, no generated kernel:
// CUDA-NEXT: // @mlp_seg0: fuser.linear (cuBLAS through torch at run time)
// CUDA-NEXT: // @mlp_seg2: fuser.linear (cuBLAS through torch at run time)
