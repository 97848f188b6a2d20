// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024"},select-schedulers,schedule-fusions{kinds="pointwise"}' | filecheck %s --check-prefix=POINTWISE
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024"},select-schedulers,schedule-fusions{kinds="inner_reduction"}' | filecheck %s --check-prefix=INNER
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=64x1024"},select-schedulers,schedule-fusions{kinds="inner_reduction"},schedule-fusions' | filecheck %s --check-prefix=ALL
// RUN: not fuser-opt %s -p 'schedule-fusions{kinds="pointwise,columns"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// `kinds` picks the fusions schedule-fusions writes loop domains for: the others are
// left to the per-scheduler lowerings. `inner_reduction` is the reduction kind over
// the fastest axis (the row sum), not the column sum (an outer, cross-grid reduction).
// A second schedule-fusions schedules what the first left, and leaves the rest.

fuser.fusion @scale(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %c = fuser.constant 2.000000e+00 : f64
  %y = fuser.mul %x, %c : (!fuser.tensor<?x?xf32>, f64) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}

fuser.fusion @rows(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}

fuser.fusion @cols(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32> {
  %s = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  fuser.output %s : !fuser.tensor<?xf32>
}

// POINTWISE-LABEL: fuser.fusion @scale
// POINTWISE:         iterdomain.loop %y
// POINTWISE-LABEL: fuser.fusion @rows
// POINTWISE-NOT:     iterdomain
// POINTWISE-LABEL: fuser.fusion @cols
// POINTWISE-NOT:     iterdomain

// INNER-LABEL: fuser.fusion @scale
// INNER-NOT:     iterdomain
// INNER-LABEL: fuser.fusion @rows
// INNER:         iterdomain.loop %s [%s_bidx, %{{.*}}] {compute_at = 1 : i64} : !fuser.tensor<64xf32>
// INNER-LABEL: fuser.fusion @cols
// INNER-NOT:     iterdomain

// ALL-LABEL: fuser.fusion @scale
// ALL:         iterdomain.loop %y
// ALL-LABEL: fuser.fusion @rows
// ALL:         iterdomain.loop %s
// ALL-NOT:     iterdomain.loop %s
// ALL-LABEL: fuser.fusion @cols
// ALL:         iterdomain.loop %s [%s_bidx, %{{[0-9]+}}, %s_unroll, %s_tidy, %s_tidx, %s_vec]

// UNKNOWN: fuser-opt: error: schedule-fusions: unknown kind 'columns' in kinds (expected scheduler kinds no_op, expr_eval, pointwise, reduction, inner_persistent, outer_persistent, inner_outer_persistent, transpose or inner_reduction)
