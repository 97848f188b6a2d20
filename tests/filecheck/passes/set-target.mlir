// RUN: fuser-opt %s -p 'set-target{gpu=h100}' | filecheck %s --check-prefix=SET
// RUN: fuser-opt %s -p 'set-target{gpu=h100},select-schedulers' | filecheck %s --check-prefix=H100
// RUN: fuser-opt %s -p 'set-target{gpu=h100},select-schedulers{gpu=h100}' | filecheck %s --check-prefix=H100
// RUN: fuser-opt %s -p select-schedulers | filecheck %s --check-prefix=TINY

// The module says which GPU it is compiled for; the passes read it. The same column
// sum, scheduled for a 4-SM GPU written in the IR (16 column blocks are 4 a SM: one
// kernel of 32 x 32 threads a block, no row split) and, after set-target, for the
// H100 (16 column blocks for 132 SMs: grid.y = 66 row splits).

builtin.module attributes {fuser.target = #fuser.target<"tiny", sm_80, sm_count = 4, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 49152, smem_per_sm = 65536, l2_bytes = 4194304, memory_bandwidth_gbs = 500.0, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
  fuser.fusion @col_sum(%x : !fuser.tensor<32768x2048xf32>) -> !fuser.tensor<2048xf32> {
    %s = fuser.sum %x {dims = array<i64: 0>, keepdim = false} : (!fuser.tensor<32768x2048xf32>) -> !fuser.tensor<2048xf32>
    fuser.output %s : !fuser.tensor<2048xf32>
  }
}

// SET-LABEL: builtin.module attributes {fuser.target = #fuser.target<"h100", sm_90, sm_count = 132, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 232448, smem_per_sm = 233472, l2_bytes = 52428800, memory_bandwidth_gbs = 3350.0, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
// SET-NEXT:    fuser.fusion @col_sum(%x: !fuser.tensor<32768x2048xf32>) -> !fuser.tensor<2048xf32> {
// SET-NEXT:      %s = fuser.sum %x {dims = array<i64: 0>, keepdim = false} : (!fuser.tensor<32768x2048xf32>) -> !fuser.tensor<2048xf32>

// H100-LABEL: fuser.fusion @col_sum
// H100-SAME: cross_grid = true
// H100-SAME: grid = array<i64: 16, 66, 1>

// TINY-LABEL: builtin.module attributes {fuser.target = #fuser.target<"tiny"
// TINY-NEXT: fuser.fusion @col_sum
// TINY-SAME: cross_grid = false, block = array<i64: 32, 32, 1>, grid = array<i64: 16, 1, 1>
