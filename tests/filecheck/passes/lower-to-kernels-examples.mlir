// The shipped examples through the driver's passes plus schedule-fusions: the loop
// nest schedule-fusions writes, saved and lowered by a second fuser-opt call, gives the
// same CUDA as the one-shot pipeline (the lowering reads only the IR).
//
// RUN: fuser-opt %S/../../../examples/gelu_bookend_views.mlir -p 'canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.gelu.one
// RUN: fuser-opt %S/../../../examples/gelu_bookend_views.mlir -p 'canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions' > %t.gelu.mlir
// RUN: fuser-opt %t.gelu.mlir -p lower-to-kernels -t cuda > %t.gelu.two
// RUN: diff %t.gelu.one %t.gelu.two
// RUN: filecheck %s --check-prefix=GELU < %t.gelu.two
//
// RUN: fuser-opt %S/../../../examples/transpose_bookend_views.mlir -p 'canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.tr.one
// RUN: fuser-opt %S/../../../examples/transpose_bookend_views.mlir -p 'canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions' > %t.tr.mlir
// RUN: fuser-opt %t.tr.mlir -p lower-to-kernels -t cuda > %t.tr.two
// RUN: diff %t.tr.one %t.tr.two
//
// Seed 000 at nvFuser's own sizes: a reduction segment (its output broadcast back to
// [2, 1]; 32 threads per row: a warp reduction) and a pointwise segment, both from
// their loop nests.
// RUN: fuser-opt %S/../../../examples/sum_broadcast_add.mlir -p 'bind-sizes{sizes="0=2x32,1=2x128"},canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.sba.one
// RUN: fuser-opt %S/../../../examples/sum_broadcast_add.mlir -p 'bind-sizes{sizes="0=2x32,1=2x128"},canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions' > %t.sba.mlir
// RUN: fuser-opt %t.sba.mlir -p lower-to-kernels -t cuda > %t.sba.two
// RUN: diff %t.sba.one %t.sba.two
// RUN: filecheck %s --check-prefix=SBA < %t.sba.two
//
// Layer norm (seed 004's inner persistent kind): var_mean is computed at the rows' loop
// (a Welford stage: mean, M2 and count per thread, Chan's merge across the block),
// the f16 input held in registers there; mean and rstd are stored once per row.
// RUN: fuser-opt %S/../../../examples/layer_norm.mlir -p 'canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions,lower-to-kernels' -t cuda > %t.ln.one
// RUN: fuser-opt %S/../../../examples/layer_norm.mlir -p 'canonicalize,strip-bookend-views,mark-aliases,segment,select-schedulers,schedule-fusions' > %t.ln.mlir
// RUN: fuser-opt %t.ln.mlir -p lower-to-kernels -t cuda > %t.ln.two
// RUN: diff %t.ln.one %t.ln.two
// RUN: filecheck %s --check-prefix=LN < %t.ln.two

// The GELU kernel: 4-wide vector loads and stores through the 3-D segment's unravelled index.
// GELU-LABEL: void __launch_bounds__(128) gelu_seg0_kernel(
// GELU:         Vec<float, 4> t1_v = *reinterpret_cast<const Vec<float, 4>*>
// GELU:         *reinterpret_cast<Vec<float, 4>*>(&out0[

// SBA-LABEL: void __launch_bounds__(64) sum_broadcast_add_seg0_kernel(
// SBA:         fuser_warp_reduce(
// SBA-LABEL: void __launch_bounds__(128) sum_broadcast_add_seg1_kernel(

// LN-LABEL: void __launch_bounds__(128) layer_norm_seg0_kernel(
// LN:         Vec<__half, 4> x_v = *reinterpret_cast<const Vec<__half, 4>*>(&x[
// LN:         FuserWelford<float> welford = fuser_block_reduce<true, false, false, {{[0-9]+}}, {{[0-9]+}}>(
// LN-NOT:     &x[
// LN:         if (
// LN:           out0[{{.*}}] = welford.mean;
// LN-NOT:     &x[
// LN:         *reinterpret_cast<Vec<__half, 4>*>(&out2[
