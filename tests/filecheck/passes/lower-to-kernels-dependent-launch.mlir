// RUN: fuser-opt %s -p select-schedulers,schedule-fusions,lower-to-kernels | filecheck %s
// RUN: fuser-opt %s -p set-target{gpu=h200},select-schedulers,schedule-fusions,lower-to-kernels | filecheck %s
// RUN: fuser-opt %s -p select-schedulers,schedule-fusions,lower-to-kernels -t cuda | filecheck %s --check-prefix=CUDA
// RUN: sed 's/^builtin.module {/builtin.module attributes {fuser.target = #fuser.target<"a100", sm_80, sm_count = 108, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 166912, smem_per_sm = 167936, l2_bytes = 41943040, memory_bandwidth_gbs = 1555.0, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {/' %s | fuser-opt -p select-schedulers,schedule-fusions,lower-to-kernels | filecheck %s --check-prefix=SM80

// lower-to-kernels marks the kernels the runtime launches as programmatic dependent
// launches on the target (codegen/dependent_launch.py): on an sm_90 GPU a kernel of at
// most two waves of blocks (@small: 2048 blocks of 128 threads, one wave on 132 SMs)
// gets `dependent_launch` and its CUDA starts with fuser_dependent_launch(); the row
// sum of 65536 rows (65536 blocks, 31 waves) does not, and on an sm_80 target no
// kernel does.

builtin.module {
  fuser.fusion @small(%x : !fuser.tensor<1024x1024xf32>) -> !fuser.tensor<1024x1024xf32> {
    %t = fuser.mul %x, %x : (!fuser.tensor<1024x1024xf32>, !fuser.tensor<1024x1024xf32>) -> !fuser.tensor<1024x1024xf32>
    fuser.output %t : !fuser.tensor<1024x1024xf32>
  }
  fuser.fusion @large(%x : !fuser.tensor<65536x1024xf32>) -> !fuser.tensor<65536xf32> {
    %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<65536x1024xf32>) -> !fuser.tensor<65536xf32>
    fuser.output %s : !fuser.tensor<65536xf32>
  }
}

// CHECK:       kernel.func @small_kernel(
// CHECK-SAME:    dependent_launch
// CHECK:       kernel.func @large_kernel(
// CHECK-NOT:     dependent_launch
// CHECK-SAME:    fuser.grid = array<i64: 65536, 1, 1>

// CUDA-LABEL:  void __launch_bounds__(128) small_kernel(
// CUDA-NEXT:     fuser_dependent_launch();
// CUDA-LABEL:  void __launch_bounds__(128) large_kernel(
// CUDA-NOT:      fuser_dependent_launch();
// CUDA:          }

// SM80:        kernel.func @small_kernel(
// SM80-NOT:    dependent_launch
// SM80:        kernel.func @large_kernel(
// SM80-NOT:    dependent_launch
// SM80:        kernel.return
