// RUN: not fuser-opt %s -p schedule-fusions 2>&1 | filecheck %s

// The single-kernel inner-outer schedule replays the row reductions' loop nest on the
// column reductions; a column reduction whose kept columns (64) are neither mapped to
// the rows' reduced axis (32) by an op nor of its extent cannot take it, and the
// diagnostic names both domains (select-schedulers does not choose this schedule
// here: its run-time check rejects columns of another extent; written by hand).

// CHECK: error: schedule-fusions: @cols: the column reduction %c (ids [264 reduction, 64 iteration]) does not line up with the row reductions' loop nest (ids [264 iteration, 32 reduction]); a single-kernel inner-outer schedule replays one nest on both
fuser.fusion @cols(%a : !fuser.tensor<264x32xf32>, %b : !fuser.tensor<264x64xf32>) -> (!fuser.tensor<264x64xf32>, !fuser.tensor<64xf32>) attributes {fuser.schedule = {kind = "inner_outer_persistent", inner = {fastest_dim = true, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 4 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = true, block = array<i64: 32, 4, 1>, grid = array<i64: 66, 1, 1>, project_to_inputs = false, hold_buffers = true, use_shared_memory = false, buffer_bytes_per_row = 0 : i64, aligned_vectors = false, prefetch = ""}, outer_vectorization = 4 : i64, outer_threads_per_column = 16 : i64, partial_buffer_bytes = 128 : i64, rows_kind = "inner_persistent", rows = {fastest_dim = true, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 4 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = false, block = array<i64: 32, 4, 1>, grid = array<i64: 66, 1, 1>, project_to_inputs = false, hold_buffers = false, use_shared_memory = false, buffer_bytes_per_row = 0 : i64, aligned_vectors = false, prefetch = ""}, cols_kind = "reduction", cols = {fastest_dim = false, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 32 : i64, persistent_batch = 1 : i64, cross_block = true, cross_grid = false, block = array<i64: 8, 32, 1>, grid = array<i64: 1, 1, 1>, project_to_inputs = false, hold_buffers = false, use_shared_memory = false, buffer_bytes_per_row = 0 : i64, aligned_vectors = false, prefetch = ""}, single_kernel = true}} {
  %m = fuser.max %a {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<264x32xf32>) -> !fuser.tensor<264x1xf32>
  %y = fuser.maximum %m, %b : (!fuser.tensor<264x1xf32>, !fuser.tensor<264x64xf32>) -> !fuser.tensor<264x64xf32>
  %c = fuser.min %b {dims = array<i64: 0>} : (!fuser.tensor<264x64xf32>) -> !fuser.tensor<64xf32>
  fuser.output %y, %c : !fuser.tensor<264x64xf32>, !fuser.tensor<64xf32>
}
