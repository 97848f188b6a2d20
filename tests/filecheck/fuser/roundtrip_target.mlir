// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// #fuser.target: the GPU a module is compiled for, as a fact in the IR (set-target
// attaches it; segment, select-schedulers and lower-to-kernels read it).

builtin.module attributes {fuser.target = #fuser.target<"tiny", sm_80, sm_count = 4, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 49152, smem_per_sm = 65536, l2_bytes = 4194304, memory_bandwidth_gbs = 500.5, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
}

// CHECK: builtin.module attributes {fuser.target = #fuser.target<"tiny", sm_80, sm_count = 4, regs_per_sm = 65536, max_regs_per_thread = 255, smem_per_block_optin = 49152, smem_per_sm = 65536, l2_bytes = 4194304, memory_bandwidth_gbs = 500.5, max_threads_per_block = 1024, warp_size = 32, max_threads_per_sm = 2048, max_blocks_per_sm = 32>} {
