// RUN: fuser-opt %s -p "canonicalize,strip-bookend-views,mark-aliases,segment,compute-half-in-float" | filecheck %s
// RUN: fuser-opt %s -p "canonicalize,compute-half-in-float,strip-bookend-views,mark-aliases,segment" | filecheck %s --check-prefix=BEFORE

// A tiny bf16 Llama block's backward partition (torch.compile, backend="fuser").
// Run after `segment` (as the torch backend runs it), compute-half-in-float leaves the
// values passed between kernels in bf16; run before it, chain values that two segments
// read cross between kernels in float32 (twice the bytes).

// CHECK-NOT: hir.allocate : !fuser.tensor<32x64xf32>
// CHECK: hir.program
// CHECK-NOT: hir.allocate : !fuser.tensor<32x64xf32>
// BEFORE: hir.allocate : !fuser.tensor<32x64xf32>

fuser.fusion @nvfuser_fusion_id5(%0: !fuser.tensor<32x128xbf16, contiguity=[true, true]>, %1: !fuser.tensor<32x64xbf16, contiguity=[true, true]>, %2: !fuser.tensor<2x16x64xf32, contiguity=[true, true, true]>, %3: !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>, %4: !fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>, %5: !fuser.tensor<32x64xbf16, contiguity=[true, true]>, %6: !fuser.tensor<32x128xbf16, contiguity=[true, true]>, %7: !fuser.tensor<32x128xbf16, contiguity=[true, true]>, %8: !fuser.tensor<32x64xbf16, contiguity=[true, true]>, %9: !fuser.tensor<32x128xbf16, contiguity=[true, true]>, %10: !fuser.tensor<2x16x64xf32, contiguity=[true, true, true]>, %11: !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>, %12: !fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>, %13: !fuser.tensor<32x64xbf16, contiguity=[true, true]>, %14: !fuser.tensor<32x64xbf16, contiguity=[true, true]>, %15: !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, %16: !fuser.tensor<2x2x16x32xbf16, contiguity=[false, false, false, false]>, %17: !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, %18: !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, %19: !fuser.tensor<1x16x32xf32, contiguity=[none, true, true]>, %20: !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, %21: !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, %22: !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, %23: !fuser.tensor<2x2x16x32xbf16, contiguity=[false, false, false, false]>, %24: !fuser.tensor<32x64xbf16, contiguity=[true, true]>, %25: !fuser.tensor<64x64xbf16, contiguity=[true, true]>, %26: !fuser.tensor<64x64xbf16, contiguity=[true, true]>, %27: !fuser.tensor<64x64xbf16, contiguity=[true, true]>, %28: !fuser.tensor<64xbf16, contiguity=[true]>, %29: !fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>, %30: !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>, %31: !fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>) -> (!fuser.tensor<128x64xbf16>, !fuser.tensor<64xbf16>, !fuser.tensor<64x128xbf16>, !fuser.tensor<128x64xbf16>, !fuser.tensor<128x64xbf16>, !fuser.tensor<64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64xbf16>, !fuser.tensor<2x16x64xbf16>) {
  %32 = fuser.permute %0 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x128xbf16, contiguity=[true, true]>) -> !fuser.tensor<128x32xbf16>
  %33 = fuser.matmul %32, %1 : (!fuser.tensor<128x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<128x64xbf16>
  %34 = fuser.permute %33 {dims = array<i64: 1, 0>} : (!fuser.tensor<128x64xbf16>) -> !fuser.tensor<64x128xbf16>
  %35 = fuser.permute %34 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x128xbf16>) -> !fuser.tensor<128x64xbf16>
  %36 = fuser.mul %2, %3 : (!fuser.tensor<2x16x64xf32, contiguity=[true, true, true]>, !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>) -> !fuser.tensor<2x16x64xf32>
  %37 = fuser.cast %36 : (!fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xbf16>
  %38 = fuser.mul %4, %37 : (!fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>, !fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xbf16>
  %39 = fuser.sum %38 {dims = array<i64: 0, 1>, keepdim = true} : (!fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<1x1x64xbf16>
  %40 = fuser.reshape %39 {new_shape = array<i64: 64>, view = #fuser.view<squeeze, squeeze, keep>} : !fuser.tensor<1x1x64xbf16> -> !fuser.tensor<64xbf16>
  %41 = fuser.permute %5 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x32xbf16>
  %42 = fuser.matmul %41, %6 : (!fuser.tensor<64x32xbf16>, !fuser.tensor<32x128xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x128xbf16>
  %43 = fuser.permute %42 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x128xbf16>) -> !fuser.tensor<128x64xbf16>
  %44 = fuser.permute %43 {dims = array<i64: 1, 0>} : (!fuser.tensor<128x64xbf16>) -> !fuser.tensor<64x128xbf16>
  %45 = fuser.permute %7 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x128xbf16, contiguity=[true, true]>) -> !fuser.tensor<128x32xbf16>
  %46 = fuser.matmul %45, %8 : (!fuser.tensor<128x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<128x64xbf16>
  %47 = fuser.permute %46 {dims = array<i64: 1, 0>} : (!fuser.tensor<128x64xbf16>) -> !fuser.tensor<64x128xbf16>
  %48 = fuser.permute %47 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x128xbf16>) -> !fuser.tensor<128x64xbf16>
  %49 = fuser.permute %9 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x128xbf16, contiguity=[true, true]>) -> !fuser.tensor<128x32xbf16>
  %50 = fuser.matmul %49, %8 : (!fuser.tensor<128x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<128x64xbf16>
  %51 = fuser.permute %50 {dims = array<i64: 1, 0>} : (!fuser.tensor<128x64xbf16>) -> !fuser.tensor<64x128xbf16>
  %52 = fuser.permute %51 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x128xbf16>) -> !fuser.tensor<128x64xbf16>
  %53 = fuser.mul %10, %11 : (!fuser.tensor<2x16x64xf32, contiguity=[true, true, true]>, !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>) -> !fuser.tensor<2x16x64xf32>
  %54 = fuser.cast %53 : (!fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xbf16>
  %55 = fuser.mul %12, %54 : (!fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>, !fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xbf16>
  %56 = fuser.sum %55 {dims = array<i64: 0, 1>, keepdim = true} : (!fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<1x1x64xbf16>
  %57 = fuser.reshape %56 {new_shape = array<i64: 64>, view = #fuser.view<squeeze, squeeze, keep>} : !fuser.tensor<1x1x64xbf16> -> !fuser.tensor<64xbf16>
  %58 = fuser.permute %13 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x32xbf16>
  %59 = fuser.matmul %58, %14 : (!fuser.tensor<64x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %60 = fuser.permute %59 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %61 = fuser.permute %60 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %62 = fuser.add %15, %16 : (!fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, !fuser.tensor<2x2x16x32xbf16, contiguity=[false, false, false, false]>) -> !fuser.tensor<2x2x16x32xbf16>
  %63 = fuser.slice %62 {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 2, 2, 16, 32>, strides = array<i64: 1, 1, 1, 1>} : (!fuser.tensor<2x2x16x32xbf16>) -> !fuser.tensor<2x2x16x32xbf16>
  %64 = fuser.add %17, %18 : (!fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>) -> !fuser.tensor<2x2x16x32xbf16>
  %65 = fuser.cos %19 : (!fuser.tensor<1x16x32xf32, contiguity=[none, true, true]>) -> !fuser.tensor<1x16x32xf32>
  %66 = fuser.constant 1.000000e+00 : f64
  %67 = fuser.mul %65, %66 : (!fuser.tensor<1x16x32xf32>, f64) -> !fuser.tensor<1x16x32xf32>
  %68 = fuser.cast %67 : (!fuser.tensor<1x16x32xf32>) -> !fuser.tensor<1x16x32xbf16>
  %69 = fuser.reshape %68 {new_shape = array<i64: 1, 1, 16, 32>, view = #fuser.view<keep, broadcast, keep, keep>} : !fuser.tensor<1x16x32xbf16> -> !fuser.tensor<1x1x16x32xbf16>
  %70 = fuser.mul %20, %69 : (!fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, !fuser.tensor<1x1x16x32xbf16>) -> !fuser.tensor<2x2x16x32xbf16>
  %71 = fuser.add %64, %70 : (!fuser.tensor<2x2x16x32xbf16>, !fuser.tensor<2x2x16x32xbf16>) -> !fuser.tensor<2x2x16x32xbf16>
  %72 = fuser.add %21, %22 : (!fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>, !fuser.tensor<2x2x16x32xbf16, contiguity=[true, true, true, true]>) -> !fuser.tensor<2x2x16x32xbf16>
  %73 = fuser.mul %23, %69 : (!fuser.tensor<2x2x16x32xbf16, contiguity=[false, false, false, false]>, !fuser.tensor<1x1x16x32xbf16>) -> !fuser.tensor<2x2x16x32xbf16>
  %74 = fuser.add %72, %73 : (!fuser.tensor<2x2x16x32xbf16>, !fuser.tensor<2x2x16x32xbf16>) -> !fuser.tensor<2x2x16x32xbf16>
  %75 = fuser.permute %63 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<2x2x16x32xbf16>) -> !fuser.tensor<2x16x2x32xbf16>
  %76 = fuser.set %75 : (!fuser.tensor<2x16x2x32xbf16>) -> !fuser.tensor<2x16x2x32xbf16>
  %77 = fuser.reshape %76 {new_shape = array<i64: 2, 16, 64>, view = #fuser.view<keep, keep, merge 2>} : !fuser.tensor<2x16x2x32xbf16> -> !fuser.tensor<2x16x64xbf16>
  %78 = fuser.reshape %77 {new_shape = array<i64: 32, 64>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x16x64xbf16> -> !fuser.tensor<32x64xbf16>
  %79 = fuser.permute %78 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x64xbf16>) -> !fuser.tensor<64x32xbf16>
  %80 = fuser.matmul %79, %24 : (!fuser.tensor<64x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %81 = fuser.permute %80 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %82 = fuser.permute %25 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %83 = fuser.permute %82 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %84 = fuser.matmul %78, %83 : (!fuser.tensor<32x64xbf16>, !fuser.tensor<64x64xbf16>) -> !fuser.tensor<32x64xbf16>
  %85 = fuser.reshape %84 {new_shape = array<i64: 2, 16, 64>, view = #fuser.view<split [2, 16], keep>} : !fuser.tensor<32x64xbf16> -> !fuser.tensor<2x16x64xbf16>
  %86 = fuser.permute %81 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %87 = fuser.permute %71 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<2x2x16x32xbf16>) -> !fuser.tensor<2x16x2x32xbf16>
  %88 = fuser.set %87 : (!fuser.tensor<2x16x2x32xbf16>) -> !fuser.tensor<2x16x2x32xbf16>
  %89 = fuser.reshape %88 {new_shape = array<i64: 2, 16, 64>, view = #fuser.view<keep, keep, merge 2>} : !fuser.tensor<2x16x2x32xbf16> -> !fuser.tensor<2x16x64xbf16>
  %90 = fuser.reshape %89 {new_shape = array<i64: 32, 64>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x16x64xbf16> -> !fuser.tensor<32x64xbf16>
  %91 = fuser.permute %90 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x64xbf16>) -> !fuser.tensor<64x32xbf16>
  %92 = fuser.matmul %91, %24 : (!fuser.tensor<64x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %93 = fuser.permute %92 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %94 = fuser.permute %26 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %95 = fuser.permute %94 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %96 = fuser.matmul %90, %95 : (!fuser.tensor<32x64xbf16>, !fuser.tensor<64x64xbf16>) -> !fuser.tensor<32x64xbf16>
  %97 = fuser.reshape %96 {new_shape = array<i64: 2, 16, 64>, view = #fuser.view<split [2, 16], keep>} : !fuser.tensor<32x64xbf16> -> !fuser.tensor<2x16x64xbf16>
  %98 = fuser.add %85, %97 : (!fuser.tensor<2x16x64xbf16>, !fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xbf16>
  %99 = fuser.permute %93 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %100 = fuser.permute %74 {dims = array<i64: 0, 2, 1, 3>} : (!fuser.tensor<2x2x16x32xbf16>) -> !fuser.tensor<2x16x2x32xbf16>
  %101 = fuser.set %100 : (!fuser.tensor<2x16x2x32xbf16>) -> !fuser.tensor<2x16x2x32xbf16>
  %102 = fuser.reshape %101 {new_shape = array<i64: 2, 16, 64>, view = #fuser.view<keep, keep, merge 2>} : !fuser.tensor<2x16x2x32xbf16> -> !fuser.tensor<2x16x64xbf16>
  %103 = fuser.reshape %102 {new_shape = array<i64: 32, 64>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x16x64xbf16> -> !fuser.tensor<32x64xbf16>
  %104 = fuser.permute %103 {dims = array<i64: 1, 0>} : (!fuser.tensor<32x64xbf16>) -> !fuser.tensor<64x32xbf16>
  %105 = fuser.matmul %104, %24 : (!fuser.tensor<64x32xbf16>, !fuser.tensor<32x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %106 = fuser.permute %105 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %107 = fuser.permute %27 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16, contiguity=[true, true]>) -> !fuser.tensor<64x64xbf16>
  %108 = fuser.permute %107 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %109 = fuser.matmul %103, %108 : (!fuser.tensor<32x64xbf16>, !fuser.tensor<64x64xbf16>) -> !fuser.tensor<32x64xbf16>
  %110 = fuser.reshape %109 {new_shape = array<i64: 2, 16, 64>, view = #fuser.view<split [2, 16], keep>} : !fuser.tensor<32x64xbf16> -> !fuser.tensor<2x16x64xbf16>
  %111 = fuser.add %98, %110 : (!fuser.tensor<2x16x64xbf16>, !fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xbf16>
  %112 = fuser.permute %106 {dims = array<i64: 1, 0>} : (!fuser.tensor<64x64xbf16>) -> !fuser.tensor<64x64xbf16>
  %113 = fuser.mul %111, %28 : (!fuser.tensor<2x16x64xbf16>, !fuser.tensor<64xbf16, contiguity=[true]>) -> !fuser.tensor<2x16x64xbf16>
  %114 = fuser.cast %29 : (!fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>) -> !fuser.tensor<2x16x64xf32>
  %115 = fuser.mul %114, %30 : (!fuser.tensor<2x16x64xf32>, !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>) -> !fuser.tensor<2x16x64xf32>
  %116 = fuser.cast %115 : (!fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xbf16>
  %117 = fuser.mul %111, %116 : (!fuser.tensor<2x16x64xbf16>, !fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xbf16>
  %118 = fuser.sum %117 {dims = array<i64: 0, 1>, keepdim = true} : (!fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<1x1x64xbf16>
  %119 = fuser.reshape %118 {new_shape = array<i64: 64>, view = #fuser.view<squeeze, squeeze, keep>} : !fuser.tensor<1x1x64xbf16> -> !fuser.tensor<64xbf16>
  %120 = fuser.cast %113 : (!fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xf32>
  %121 = fuser.mul %120, %114 : (!fuser.tensor<2x16x64xf32>, !fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xf32>
  %122 = fuser.mul %120, %30 : (!fuser.tensor<2x16x64xf32>, !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>) -> !fuser.tensor<2x16x64xf32>
  %123 = fuser.sum %121 {dims = array<i64: 2>, keepdim = true} : (!fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x1xf32>
  %124 = fuser.mul %30, %30 : (!fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>, !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>) -> !fuser.tensor<2x16x1xf32>
  %125 = fuser.mul %124, %30 : (!fuser.tensor<2x16x1xf32>, !fuser.tensor<2x16x1xf32, contiguity=[true, true, none]>) -> !fuser.tensor<2x16x1xf32>
  %126 = fuser.constant -5.000000e-01 : f64
  %127 = fuser.mul %123, %126 : (!fuser.tensor<2x16x1xf32>, f64) -> !fuser.tensor<2x16x1xf32>
  %128 = fuser.mul %127, %125 : (!fuser.tensor<2x16x1xf32>, !fuser.tensor<2x16x1xf32>) -> !fuser.tensor<2x16x1xf32>
  %129 = fuser.broadcast_in_dim %128 {shape = array<i64: 2, 16, 64>, broadcast_dims = array<i64: 0, 1, 2>} : !fuser.tensor<2x16x1xf32> -> !fuser.tensor<2x16x64xf32>
  %130 = fuser.constant 64 : i64
  %131 = fuser.truediv %129, %130 : (!fuser.tensor<2x16x64xf32>, i64) -> !fuser.tensor<2x16x64xf32>
  %132 = fuser.constant 1.000000e+00 : f64
  %133 = fuser.pow %114, %132 : (!fuser.tensor<2x16x64xf32>, f64) -> !fuser.tensor<2x16x64xf32>
  %134 = fuser.constant 2.000000e+00 : f64
  %135 = fuser.mul %133, %134 : (!fuser.tensor<2x16x64xf32>, f64) -> !fuser.tensor<2x16x64xf32>
  %136 = fuser.mul %131, %135 : (!fuser.tensor<2x16x64xf32>, !fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xf32>
  %137 = fuser.add %122, %136 : (!fuser.tensor<2x16x64xf32>, !fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xf32>
  %138 = fuser.cast %137 : (!fuser.tensor<2x16x64xf32>) -> !fuser.tensor<2x16x64xbf16>
  %139 = fuser.add %31, %138 : (!fuser.tensor<2x16x64xbf16, contiguity=[true, true, true]>, !fuser.tensor<2x16x64xbf16>) -> !fuser.tensor<2x16x64xbf16>
  fuser.output %35, %40, %44, %48, %52, %57, %61, %86, %99, %112, %119, %139 : !fuser.tensor<128x64xbf16>, !fuser.tensor<64xbf16>, !fuser.tensor<64x128xbf16>, !fuser.tensor<128x64xbf16>, !fuser.tensor<128x64xbf16>, !fuser.tensor<64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64x64xbf16>, !fuser.tensor<64xbf16>, !fuser.tensor<2x16x64xbf16>
}
