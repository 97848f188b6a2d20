// RUN: python -m fuser.codegen.cuda_target %s | filecheck %s

// Complex values in a kernel: the fuser_complex<T> preamble, a complex scalar parameter,
// complex-dialect ops as its operators and functions, and a complex warp sum.

kernel.func @csum(%x : memref<?xcomplex<f32>>, %s : complex<f64>, %y : memref<?xcomplex<f32>>, %r : memref<?xf32>) attributes {block_size = array<i32: 32, 1, 1>, index_bits = 32 : i64} {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<?xcomplex<f32>>
  %re = complex.re %s : complex<f64>
  %im = complex.im %s : complex<f64>
  %re32 = arith.truncf %re : f64 to f32
  %im32 = arith.truncf %im : f64 to f32
  %s32 = complex.create %re32, %im32 : complex<f32>
  %m = complex.mul %v, %s32 : complex<f32>
  %q = complex.rsqrt %m : complex<f32>
  %sum = kernel.warp_reduce %q {kind = "add"} : (complex<f32>) -> complex<f32>
  memref.store %sum, %y[%tid] : memref<?xcomplex<f32>>
  %a = complex.abs %sum : complex<f32>
  memref.store %a, %r[%tid] : memref<?xf32>
  kernel.return
}

// CHECK: struct __align__(2 * sizeof(T)) fuser_complex {
// CHECK: csum(const fuser_complex<float>* __restrict__ x, fuser_complex<double> s, fuser_complex<float>* __restrict__ y, float* __restrict__ r)
// CHECK: fuser_complex<float> v = x[tid];
// CHECK: double re = s.re;
// CHECK: fuser_complex<float> s32 = fuser_complex<float>(re32, im32);
// CHECK: fuser_complex<float> m = v * s32;
// CHECK: fuser_complex<float> q = fuser_crsqrt(m);
// CHECK: fuser_complex<float> sum = fuser_warp_reduce(q, FuserAdd());
// CHECK: float a = fuser_cabs(sum);
