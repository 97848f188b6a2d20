// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings,segment,lower-communications,overlap-allgather-matmul{chunks=2}' | filecheck %s
// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings,segment,lower-communications' | filecheck %s --check-prefix=PLAIN
// RUN: not fuser-opt %s -p 'overlap-allgather-matmul{chunks=0}' 2>&1 | filecheck %s --check-prefix=OPTION

// Sequence-parallel input, gathered before a linear (declared replicated through a
// set: the set is the resharding). Without the pass: an allgather, then the GEMM on
// all 64 rows. With it: stream loops of 16-row chunks: the transfers of the other
// device's chunks (hir.send/hir.recv), this device's own chunks' GEMMs (no transfer)
// while they run, then the received chunks' GEMMs.

fuser.fusion @agmm(%x: !fuser.tensor<64x32xf32>, %w: !fuser.tensor<48x32xf32>) -> !fuser.tensor<64x48xf32> {
  %xg = fuser.set %x : (!fuser.tensor<64x32xf32>) -> !fuser.tensor<64x32xf32>
  %y = fuser.linear %xg, %w : (!fuser.tensor<64x32xf32>, !fuser.tensor<48x32xf32>) -> !fuser.tensor<64x48xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<64x32xf32>
  iterdomain.shard %xg {sharding = #iterdomain.sharding<[0, 1]>} : !fuser.tensor<64x32xf32>
  fuser.output %y : !fuser.tensor<64x48xf32>
}

// PLAIN-LABEL: hir.program @main
// PLAIN:         hir.allgather %0, %[[G:.*]] {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<32x32xf32>, !fuser.tensor<64x32xf32>
// PLAIN:         hir.launch @agmm_seg{{[0-9]+}}(%1, %[[G]]) outs

// CHECK-LABEL: fuser.fusion @agmm_seg{{[0-9]+}}_chunk16(%w: !fuser.tensor<48x32xf32>, %xg: !fuser.tensor<16x32xf32>) -> !fuser.tensor<16x48xf32>
// CHECK-NEXT:    %y = fuser.linear %xg, %w : (!fuser.tensor<16x32xf32>, !fuser.tensor<48x32xf32>) -> !fuser.tensor<16x48xf32>
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<32x32xf32>, %1: !fuser.tensor<48x32xf32>) -> !fuser.tensor<64x48xf32>
// CHECK-NOT:     hir.allgather
// CHECK:         %[[G:.*]] = hir.allocate : !fuser.tensor<64x32xf32>
// CHECK:         %[[O:.*]] = hir.allocate {preallocated} : !fuser.tensor<64x48xf32>
// CHECK-NEXT:    %[[X3:.*]] = hir.reshape %0 {new_shape = array<i64: 2, 16, 32>}
// CHECK-NEXT:    %[[G3:.*]] = hir.reshape %[[G]] {new_shape = array<i64: 4, 16, 32>}
// CHECK-NEXT:    %[[O3:.*]] = hir.reshape %[[O]] {new_shape = array<i64: 4, 16, 48>}
// CHECK-NEXT:    %[[P:.*]] = hir.mesh_position {mesh = #iterdomain.mesh<[0, 1]>} : index
// CHECK-NEXT:    %[[S0:.*]] = hir.get_current_stream
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[CS:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[CD:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[CN:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[MINE:.*]] = arith.muli %[[P]], %[[CS]] : index

// First the transfers, queued before any GEMM (the communication kernels hold their
// SMs before a GEMM takes them all): ring step k = i / 2 sends this device's chunk to
// p - k and receives p + k's.
// CHECK-NEXT:    hir.for %[[I:.*]] = %[[CS]] to %[[CN]] step %[[C1]] {
// CHECK-NEXT:      %[[S:.*]] = hir.stream_for_index %[[I]] : index
// CHECK-NEXT:      hir.set_current_stream %[[S]]
// CHECK-NEXT:      hir.synchronize_stream %[[S0]]
// CHECK-NEXT:      %[[SUB:.*]] = arith.remsi %[[I]], %[[CS]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.divsi %[[I]], %[[CS]] : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[P]], %[[K]] : index
// CHECK-NEXT:      %[[SRC:.*]] = arith.remsi %[[UP]], %[[CD]] : index
// CHECK-NEXT:      %[[R0:.*]] = arith.muli %[[SRC]], %[[CS]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.addi %[[R0]], %[[SUB]] : index
// CHECK-NEXT:      %[[GS:.*]] = hir.alias_select %[[G3]][axis = 0, %[[R]]]
// CHECK-NEXT:      %[[PD:.*]] = arith.addi %[[P]], %[[CD]] : index
// CHECK-NEXT:      %[[DOWN:.*]] = arith.subi %[[PD]], %[[K]] : index
// CHECK-NEXT:      %[[DST:.*]] = arith.remsi %[[DOWN]], %[[CD]] : index
// CHECK-NEXT:      %[[XS:.*]] = hir.alias_select %[[X3]][axis = 0, %[[SUB]]]
// CHECK-NEXT:      hir.send %[[XS]] to(%[[DST]] : index) {mesh = #iterdomain.mesh<[0, 1]>}
// CHECK-NEXT:      hir.recv %[[GS]] from(%[[SRC]] : index) {mesh = #iterdomain.mesh<[0, 1]>}
// CHECK-NEXT:      hir.set_current_stream %[[S0]]
// CHECK-NEXT:    } {stream_axis = "allgather rows (transfer)"}

// Then this device's own chunks: no transfer, multiplied straight from its input.
// CHECK-NEXT:    hir.for %[[J:.*]] = %[[C0]] to %[[CS]] step %[[C1]] {
// CHECK-NEXT:      %[[T:.*]] = hir.stream_for_index %[[J]] : index
// CHECK-NEXT:      hir.set_current_stream %[[T]]
// CHECK-NEXT:      hir.synchronize_stream %[[S0]]
// CHECK-NEXT:      %[[SUB2:.*]] = arith.remsi %[[J]], %[[CS]] : index
// CHECK-NEXT:      %[[XS2:.*]] = hir.alias_select %[[X3]][axis = 0, %[[SUB2]]]
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[MINE]], %[[SUB2]] : index
// CHECK-NEXT:      %[[OS:.*]] = hir.alias_select %[[O3]][axis = 0, %[[ROW]]]
// CHECK-NEXT:      hir.launch @agmm_seg{{[0-9]+}}_chunk16(%1, %[[XS2]]) outs(%[[OS]] : !fuser.tensor<16x48xf32>)
// CHECK-NEXT:      hir.set_current_stream %[[S0]]
// CHECK-NEXT:      hir.synchronize_stream %[[T]]
// CHECK-NEXT:    } {stream_axis = "allgather rows (own)"}

// Last, each received chunk's product on its transfer's stream (after the transfer).
// CHECK-NEXT:    hir.for %[[L:.*]] = %[[CS]] to %[[CN]] step %[[C1]] {
// CHECK-NEXT:      %[[U:.*]] = hir.stream_for_index %[[L]] : index
// CHECK-NEXT:      hir.set_current_stream %[[U]]
// CHECK:           %[[GS2:.*]] = hir.alias_select %[[G3]][axis = 0, %[[R2:.*]]]
// CHECK-NEXT:      %[[OS2:.*]] = hir.alias_select %[[O3]][axis = 0, %[[R2]]]
// CHECK-NEXT:      hir.launch @agmm_seg{{[0-9]+}}_chunk16(%1, %[[GS2]]) outs(%[[OS2]] : !fuser.tensor<16x48xf32>)
// CHECK-NEXT:      hir.set_current_stream %[[S0]]
// CHECK-NEXT:      hir.synchronize_stream %[[U]]
// CHECK-NEXT:    } {stream_axis = "allgather rows (ring)"}
// CHECK:         hir.return %[[O]]

// OPTION: error: overlap-allgather-matmul: chunks must be positive, got 0
