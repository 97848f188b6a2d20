// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=96x1024"},select-schedulers,schedule-fusions,lower-to-kernels{symbolic=batch}' -t cuda > %t.96
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=200x1024"},select-schedulers,schedule-fusions,lower-to-kernels{symbolic=batch}' -t cuda > %t.200
// RUN: diff %t.96 %t.200
// RUN: filecheck %s --check-prefix=CUDA < %t.96
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=96x1024"},select-schedulers,schedule-fusions,lower-to-kernels{symbolic="0:0"}' | filecheck %s
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=96x1024"},select-schedulers,schedule-fusions,lower-to-kernels' -t cuda | filecheck %s --check-prefix=STATIC
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=96x1024"},select-schedulers,schedule-fusions,lower-to-kernels{symbolic="0"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=96x1024"},select-schedulers,schedule-fusions,lower-to-kernels{symbolic="3:0"}' 2>&1 | filecheck %s --check-prefix=NOAXIS

// A symbolic batch: the kernel takes the row count as an int64 argument, and 96 and
// 200 rows print the same CUDA (one binary serves both). Without the option the
// rows are a constant.
fuser.fusion @softmax(%x : !fuser.tensor<?x1024xf32>) -> !fuser.tensor<?x1024xf32> {
  %m = fuser.max %x {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x1024xf32>) -> !fuser.tensor<?x1xf32>
  %d = fuser.sub %x, %m : (!fuser.tensor<?x1024xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x1024xf32>
  %e = fuser.exp %d : (!fuser.tensor<?x1024xf32>) -> !fuser.tensor<?x1024xf32>
  %s = fuser.sum %e {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<?x1024xf32>) -> !fuser.tensor<?x1xf32>
  %y = fuser.div %e, %s : (!fuser.tensor<?x1024xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x1024xf32>
  fuser.output %y : !fuser.tensor<?x1024xf32>
}

// CUDA-LABEL: extern "C" __global__ void __launch_bounds__({{[0-9]+}}) softmax_kernel(const float* __restrict__ x, float* __restrict__ out0, long long extent_n0) {
// CUDA:         int n0_idx = static_cast<int>(extent_n0);
// CUDA:         < n0_idx;

// CHECK-LABEL: kernel.func @softmax_kernel(%x: memref<?xf32>, %out0: memref<?xf32>, %extent_n0: i64)
// CHECK-SAME:    fuser.launch_args = ["input 0", "output 0", "extent 0 = 96"]
// CHECK:         %n0_idx = arith.index_cast %extent_n0 : i64 to index

// STATIC-LABEL: softmax_kernel(const float* __restrict__ x, float* __restrict__ out0) {
// STATIC-NOT:   extent_n0

// BAD: lower-to-kernels: bad symbolic entry '0'; expected batch or INPUT:AXIS,... such as 0:0
// NOAXIS: lower-to-kernels: @softmax has no tensor input #3 with an axis 0 (symbolic option)
