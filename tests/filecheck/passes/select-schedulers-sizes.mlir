// The same symbolic softmax, bound to two sizes: persistent for short rows and
// unschedulable as one kernel for rows of 2^21 floats (segmentation splits it).
// RUN: fuser-opt %s -p 'bind-sizes{sizes="0=4x1024"},select-schedulers{gpu=h200 debug=true}' | filecheck %s
// RUN: not fuser-opt %s -p 'bind-sizes{sizes="0=4x2097152"},select-schedulers' 2>&1 | filecheck %s --check-prefix=BIG

// CHECK-LABEL: fuser.fusion @softmax(%x: !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4x1024xf32>
// CHECK-SAME: fuser.schedule = {kind = "inner_persistent"
// CHECK-SAME: fuser.schedule_rejections = {no_op = "not alias-only: output #0 is computed by fuser.div", expr_eval = "output #0 is a tensor; only scalar outputs are host work", matmul = "the fusion has no matmul or linear", communication = "the fusion has no fuser.reshard", reduction = "the fusion has 2 persistent buffer(s); a persistent scheduler keeps them", transpose = "the fusion has reductions", pointwise = "the fusion has reductions (fuser.max, fuser.sum)"}

// BIG: error: select-schedulers: no scheduler accepts @softmax on h100:
// BIG-NEXT: no_op: not alias-only: output #0 is computed by fuser.div
// BIG: reduction: the fusion has 2 persistent buffer(s)
// BIG: inner_persistent: persistent buffers need 8388608 B per row; h100 has 220160 B of registers and 228352 B of shared memory per block
// BIG-NEXT: outer_persistent: reduction type is inner, this scheduler takes outer
// BIG-NEXT: inner_outer_persistent: reduction type is inner, this scheduler takes inner_outer

fuser.fusion @softmax(%x : !fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %mb = fuser.broadcast %m {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %d = fuser.sub %x, %mb : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  %e = fuser.exp %d : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?x?xf32>
  %s = fuser.sum %e {dims = array<i64: 1>} : (!fuser.tensor<?x?xf32>) -> !fuser.tensor<?xf32>
  %sb = fuser.broadcast %s {is_broadcast_dim = array<i1: false, true>} : (!fuser.tensor<?xf32>) -> !fuser.tensor<?x1xf32>
  %y = fuser.div %e, %sb : (!fuser.tensor<?x?xf32>, !fuser.tensor<?x1xf32>) -> !fuser.tensor<?x?xf32>
  fuser.output %y : !fuser.tensor<?x?xf32>
}
