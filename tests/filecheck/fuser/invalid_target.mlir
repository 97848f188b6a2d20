// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// A #fuser.target names every property, in order, each positive.

builtin.module attributes {fuser.target = #fuser.target<"x", sm_90, sm_count = 4>} {
}
// CHECK: #fuser.target: missing regs_per_sm, max_regs_per_thread, smem_per_block_optin, smem_per_sm, l2_bytes, memory_bandwidth_gbs, max_threads_per_block, warp_size, max_threads_per_sm, max_blocks_per_sm

// -----

builtin.module attributes {fuser.target = #fuser.target<"x", sm_90, sm_count = 4, sm_count = 5>} {
}
// CHECK: #fuser.target: sm_count is given twice

// -----

builtin.module attributes {fuser.target = #fuser.target<"x", sm_90, cores = 4>} {
}
// CHECK: #fuser.target: unknown property 'cores'

// -----

builtin.module attributes {fuser.target = #fuser.target<"x", sm_90, sm_count = 0, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 49152, smem_per_sm = 65536, l2_bytes = 4194304, memory_bandwidth_gbs = 500.0, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
}
// CHECK: #fuser.target: sm_count must be positive, got 0

// -----

builtin.module attributes {fuser.target = #fuser.target<"x", volta, sm_count = 4, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 49152, smem_per_sm = 65536, l2_bytes = 4194304, memory_bandwidth_gbs = 500.0, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
}
// CHECK: #fuser.target: compute capability must be sm_XY, got volta
