// RUN: fuser-opt %s --split-input-file -p schedule-fusions | filecheck %s
// RUN: fuser-opt %s --split-input-file -p 'schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=CUDA
// RUN: fuser-opt %s --split-input-file -p 'schedule-fusions,lower-to-kernels' | filecheck %s --check-prefix=KERNELS

// A no_op segment is host work (views of its inputs). Its schedule is the kernel that
// materializes it when the host cannot return a view: pointwise, vectors of 16 bytes
// of the widest output (8 halves) where the innermost extents divide, block.x = 128.

// CHECK-LABEL: fuser.fusion @expand
// CHECK:         %[[M:.*]] = iterdomain.merge %{{.*}}, %{{.*}} : !iterdomain.id<3>, !iterdomain.id<16> -> !iterdomain.id<48>
// CHECK-NEXT:    %[[O:.*]], %[[V:.*]] = iterdomain.split %[[M]] by 8 : !iterdomain.id<48> -> !iterdomain.id<6>, !iterdomain.id<8>
// CHECK-NEXT:    %[[B:.*]], %[[T:.*]] = iterdomain.split %[[O]] by 128 : !iterdomain.id<6> -> !iterdomain.id<1>, !iterdomain.id<128>
// CHECK:         iterdomain.loop %y [%y_bidx, %y_tidx, %y_vec] : !fuser.tensor<3x16xf16> [!iterdomain.id<1, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]

// CUDA-LABEL: expand_kernel(
// CUDA:         *reinterpret_cast<Vec<__half, 8>*>(&out0[{{.*}}]) = t{{[0-9]+}};

fuser.fusion @expand(%x : !fuser.tensor<1x16xf16>) -> !fuser.tensor<3x16xf16> attributes {fuser.schedule = {kind = "no_op"}} {
  %y = fuser.broadcast_in_dim %x {shape = array<i64: 3, 16>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<1x16xf16> -> !fuser.tensor<3x16xf16>
  fuser.output %y : !fuser.tensor<3x16xf16>
}

// -----

// An odd innermost extent: no vectors (8, 4 and 2 do not divide 7).

// CHECK-LABEL: fuser.fusion @odd
// CHECK:         iterdomain.loop %y [%y_bidx, %y_tidx] : !fuser.tensor<2x7xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<128, TIDx>]

fuser.fusion @odd(%x : !fuser.tensor<7xf32>) -> !fuser.tensor<2x7xf32> attributes {fuser.schedule = {kind = "no_op"}} {
  %y = fuser.broadcast_in_dim %x {shape = array<i64: 2, 7>, broadcast_dims = array<i64: 1>} : !fuser.tensor<7xf32> -> !fuser.tensor<2x7xf32>
  fuser.output %y : !fuser.tensor<2x7xf32>
}

// -----

// Every output is an input: nothing to compute, nothing written, no kernel.

// CHECK-LABEL: fuser.fusion @alias
// CHECK-NOT:     iterdomain.
// CHECK:         fuser.output %x

// KERNELS-LABEL: fuser.fusion @alias
// KERNELS-SAME:    fuser.kernels = []

fuser.fusion @alias(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> attributes {fuser.schedule = {kind = "no_op"}} {
  fuser.output %x : !fuser.tensor<4xf32>
}

// -----

// Outputs of two shapes: a loop nest each, replayed on what it reads (%x takes the
// first's). Their loops agree here (8 and 12 elements: one block of 128 threads of
// 4-vectors), so they are one kernel, each output predicated on its own extents.

// CHECK-LABEL: fuser.fusion @two_shapes
// CHECK:         iterdomain.loop %a [%a_bidx, %a_tidx, %a_vec] : !fuser.tensor<2x4xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]
// CHECK:         iterdomain.loop %x [%x_bidx, %x_tidx, %x_vec] : !fuser.tensor<1x4xf32>
// CHECK:         iterdomain.loop %b [%b_bidx, %b_tidx, %b_vec] : !fuser.tensor<3x4xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]

// CUDA-LABEL: two_shapes_kernel(const float* __restrict__ x, float* __restrict__ out0, float* __restrict__ out1) {
// CUDA:         out0[
// CUDA:         out1[
// CUDA-NOT:     two_shapes_kernel_nest

fuser.fusion @two_shapes(%x : !fuser.tensor<1x4xf32>) -> (!fuser.tensor<2x4xf32>, !fuser.tensor<3x4xf32>) attributes {fuser.schedule = {kind = "no_op"}} {
  %a = fuser.broadcast_in_dim %x {shape = array<i64: 2, 4>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<1x4xf32> -> !fuser.tensor<2x4xf32>
  %b = fuser.broadcast_in_dim %x {shape = array<i64: 3, 4>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<1x4xf32> -> !fuser.tensor<3x4xf32>
  fuser.output %a, %b : !fuser.tensor<2x4xf32>, !fuser.tensor<3x4xf32>
}

// -----

// Outputs whose loop nests differ (8 halves against 4 floats a vector): a kernel
// each, in the order of the outputs (each kernel's out0 is its own output).

// CHECK-LABEL: fuser.fusion @two_nests
// CHECK:         iterdomain.loop %a [%a_bidx, %a_tidx, %a_vec] : !fuser.tensor<64x16xf16> [!iterdomain.id<1, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<8, vectorize>]
// CHECK:         iterdomain.loop %b [%b_bidx, %b_tidx, %b_vec] : !fuser.tensor<32x16xf32> [!iterdomain.id<1, BIDx>, !iterdomain.id<128, TIDx>, !iterdomain.id<4, vectorize>]

// CUDA-LABEL: two_nests_kernel_nest0(const __half* __restrict__ x, const float* __restrict__ y, __half* __restrict__ out0) {
// CUDA:         *reinterpret_cast<Vec<__half, 8>*>(&out0[
// CUDA-LABEL: two_nests_kernel_nest1(const __half* __restrict__ x, const float* __restrict__ y, float* __restrict__ out0) {
// CUDA:         *reinterpret_cast<Vec<float, 4>*>(&out0[

fuser.fusion @two_nests(%x : !fuser.tensor<1x16xf16>, %y : !fuser.tensor<1x16xf32>) -> (!fuser.tensor<64x16xf16>, !fuser.tensor<32x16xf32>) attributes {fuser.schedule = {kind = "no_op"}} {
  %a = fuser.broadcast_in_dim %x {shape = array<i64: 64, 16>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<1x16xf16> -> !fuser.tensor<64x16xf16>
  %b = fuser.broadcast_in_dim %y {shape = array<i64: 32, 16>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<1x16xf32> -> !fuser.tensor<32x16xf32>
  fuser.output %a, %b : !fuser.tensor<64x16xf16>, !fuser.tensor<32x16xf32>
}

// -----

// An empty output: nothing to store, no loop nest.

// CHECK-LABEL: fuser.fusion @empty
// CHECK-NOT:     iterdomain.
// CHECK:         fuser.output %y

fuser.fusion @empty(%x : !fuser.tensor<1x1xf32>) -> !fuser.tensor<0x0xf32> attributes {fuser.schedule = {kind = "no_op"}} {
  %y = fuser.broadcast_in_dim %x {shape = array<i64: 0, 0>, broadcast_dims = array<i64: 0, 1>} : !fuser.tensor<1x1xf32> -> !fuser.tensor<0x0xf32>
  fuser.output %y : !fuser.tensor<0x0xf32>
}
