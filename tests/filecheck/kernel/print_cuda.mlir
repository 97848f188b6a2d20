// RUN: python -m fuser.codegen.cuda_target %s | filecheck %s

// The CUDA printer: named variables, inlined constants, half conversions, 128-bit
// vector accesses, unrolled loops with carried values, block reductions.

builtin.module {
  kernel.func @scale(%x : memref<?xf16>, %y : memref<?xf16>, %n : index) attributes {block_size = array<i32: 128, 1, 1>, index_bits = 32 : i64} {
    %tid = kernel.thread_id x
    %c4 = arith.constant 4 : index
    %off = arith.muli %tid, %c4 : index
    %ok = arith.cmpi slt, %off, %n : index
    scf.if %ok {
      %v = vector.load %x[%off] : memref<?xf16>, vector<4xf16>
      %e0 = vector.extract %v[0] : f16 from vector<4xf16>
      %f0 = arith.extf %e0 : f16 to f32
      %two = arith.constant 2.0 : f32
      %g0 = arith.mulf %f0, %two : f32
      %h0 = arith.truncf %g0 : f32 to f16
      %w = kernel.from_elements %h0, %h0, %h0, %h0 : (f16, f16, f16, f16) -> vector<4xf16>
      vector.store %w, %y[%off] : memref<?xf16>, vector<4xf16>
    }
    kernel.return
  }
  kernel.func @row_sum(%x : memref<?xf32>, %y : memref<?xf32>, %cols : index) attributes {block_size = array<i32: 64, 1, 1>} {
    %tid = kernel.thread_id x
    %row = kernel.block_id x
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%k] : memref<?xf32>
      %s = arith.addf %a, %v : f32
      scf.yield %s : f32
    } {kernel.unroll}
    %total = kernel.block_reduce %acc {kind = "add", dims = array<i64: 0>} : (f32) -> f32
    memref.store %total, %y[%row] : memref<?xf32>
    kernel.return
  }
}

// The fp16 header for the __half kernel; no bf16 header (no kernel uses __nv_bfloat16).
// CHECK:       #include <cuda_fp16.h>
// CHECK-NOT:   #include <cuda_bf16.h>
// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(128) scale(const __half* __restrict__ x, __half* __restrict__ y, int n) {
// CHECK-NEXT:    int tid = threadIdx.x;
// CHECK-NEXT:    int off = tid * 4;
// CHECK-NEXT:    bool ok = off < n;
// CHECK-NEXT:    if (ok) {
// CHECK-NEXT:      Vec<__half, 4> v = *reinterpret_cast<const Vec<__half, 4>*>(&x[off]);
// CHECK-NEXT:      __half e0 = v.val[0];
// CHECK-NEXT:      float f0 = __half2float(e0);
// CHECK-NEXT:      float g0 = f0 * 2.0f;
// CHECK-NEXT:      __half h0 = __float2half_rn(g0);
// CHECK-NEXT:      Vec<__half, 4> w = {{[{][{]}}h0, h0, h0, h0{{[}][}]}};
// CHECK-NEXT:      *reinterpret_cast<Vec<__half, 4>*>(&y[off]) = w;
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(64) row_sum(const float* __restrict__ x, float* __restrict__ y, long long cols) {
// CHECK-NEXT:    __shared__ __align__(16) unsigned char fuser_red_smem[256];
// CHECK-NEXT:    long long tid = threadIdx.x;
// CHECK-NEXT:    long long row = blockIdx.x;
// CHECK-NEXT:    float a = 0.0f;
// CHECK-NEXT:    #pragma unroll
// CHECK-NEXT:    for (long long k = 0; k < 4; ++k) {
// CHECK-NEXT:      float v = x[k];
// CHECK-NEXT:      float s = a + v;
// CHECK-NEXT:      a = s;
// CHECK-NEXT:    }
// CHECK-NEXT:    float total = fuser_block_reduce<true, false, false, 64, 1>(a, FuserAdd(), fuser_red_smem);
// CHECK-NEXT:    y[row] = total;
// CHECK-NEXT:  }
