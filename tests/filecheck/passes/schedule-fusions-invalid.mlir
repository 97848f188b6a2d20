// RUN: not fuser-opt %s -p 'schedule-fusions' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not fuser-opt %s -p 'schedule-fusions{strict=false}' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4x6"},schedule-fusions{strict=false}' 2>&1 | filecheck %s --check-prefix=VECTOR
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4x8"},schedule-fusions{strict=false}' | filecheck %s --check-prefix=SIZED

// MISSING: error: schedule-fusions: @unscheduled has no fuser.schedule attribute; run select-schedulers first
// SYMBOLIC: error: schedule-fusions: @row_sum: input #0 has symbolic extents [?, ?] and the schedule vectorizes; bind them first (bind-sizes{sizes="0=..."}) so that the vector width can be checked
// VECTOR: error: schedule-fusions: @row_sum: vectorization = 4 does not divide the innermost extent 6 of x (shape [4, 6])

// SIZED-LABEL: fuser.fusion @unscheduled
// SIZED-NOT:   iterdomain
// SIZED-LABEL: fuser.fusion @row_sum
// SIZED:       iterdomain.loop %s [%s_bidx, %{{.*}}, %s_tidx, %{{.*}}] {compute_at = 1 : i64} : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<1, reduction>, !iterdomain.id<32, reduction, TIDx>, !iterdomain.id<4, reduction>]

fuser.fusion @unscheduled(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %y = fuser.exp %x : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}

fuser.fusion @row_sum(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> attributes {fuser.schedule = {kind = "reduction", fastest_dim = true, vectorization = 4 : i64, threads_per_row = 32 : i64, rows_per_block = 1 : i64, persistent_batch = 1 : i64, cross_block = false, cross_grid = false, block = array<i64: 32, 1, 1>, grid = array<i64: 4, 1, 1>}} {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}
