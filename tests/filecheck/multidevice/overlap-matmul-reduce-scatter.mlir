// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings,segment,lower-communications,overlap-matmul-reduce-scatter' --split-input-file | filecheck %s
// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings,segment,lower-communications' --split-input-file | filecheck %s --check-prefix=PLAIN

// Row-parallel linear into a sequence-parallel output (2 devices): without the pass,
// the GEMM of all 8 rows, then a reduce-scatter. With it: the GEMM of the peer's 4
// rows, their partial sums sent to it on the ring's stream while this device's own 4
// rows are multiplied, then the received sum added into this device's output.

fuser.fusion @mm_rs(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32> {
  %y = fuser.linear %x, %w : (!fuser.tensor<8x16xf32>, !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32>
  %ys = fuser.set %y : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8x12xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<12x16xf32>
  iterdomain.shard %ys {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<8x12xf32>
  fuser.output %ys : !fuser.tensor<8x12xf32>
}

// PLAIN-LABEL: hir.program @main
// PLAIN:         %[[P:.*]] = hir.launch @mm_rs_seg0(%0, %1) outs
// PLAIN:         hir.reduce_scatter %[[P]], %{{.*}} {mesh = #iterdomain.mesh<[0, 1]>, axis = 0 : i64} : !fuser.tensor<8x12xf32>, !fuser.tensor<4x12xf32>

// CHECK-LABEL: fuser.fusion @mm_rs_seg0_chunk4(%x: !fuser.tensor<4x8xf32>, %w: !fuser.tensor<12x8xf32>) -> !fuser.tensor<4x12xf32>
// CHECK-NEXT:    %y = fuser.linear %x, %w : (!fuser.tensor<4x8xf32>, !fuser.tensor<12x8xf32>) -> !fuser.tensor<4x12xf32>
// CHECK-LABEL: fuser.fusion @mm_rs_seg0_acc(%partial: !fuser.tensor<4x12xf32>, %received: !fuser.tensor<4x12xf32>) -> !fuser.tensor<4x12xf32>
// CHECK-NEXT:    %0 = fuser.add %partial, %received
// CHECK-LABEL: hir.program @main(%0: !fuser.tensor<8x8xf32>, %1: !fuser.tensor<12x8xf32>) -> !fuser.tensor<4x12xf32>
// CHECK-NOT:     hir.reduce_scatter
// CHECK-NEXT:    %[[OUT:.*]] = hir.allocate {preallocated} : !fuser.tensor<4x12xf32>
// CHECK-NEXT:    %[[X3:.*]] = hir.reshape %0 {new_shape = array<i64: 2, 4, 8>}
// CHECK-NEXT:    %[[ME:.*]] = hir.mesh_position {mesh = #iterdomain.mesh<[0, 1]>} : index
// CHECK-NEXT:    %[[S0:.*]] = hir.get_current_stream : !hir.stream
// CHECK:         %[[RING:.*]] = hir.stream_for_index
// CHECK:         %[[NEXT:.*]] = arith.remsi
// CHECK:         %[[PREV:.*]] = arith.remsi
// First step: the peer's rows, (p + 1) mod 2.
// CHECK:         %[[C0:.*]] = arith.remsi
// CHECK-NEXT:    %[[X0:.*]] = hir.alias_select %[[X3]][axis = 0, %[[C0]]]
// CHECK-NEXT:    %[[A0:.*]] = hir.allocate : !fuser.tensor<4x12xf32>
// CHECK-NEXT:    hir.launch @mm_rs_seg0_chunk4(%[[X0]], %1) outs(%[[A0]] : !fuser.tensor<4x12xf32>)
// CHECK-NEXT:    %[[R:.*]] = hir.allocate : !fuser.tensor<4x12xf32>
// CHECK-NEXT:    hir.set_current_stream %[[RING]]
// CHECK-NEXT:    hir.synchronize_stream %[[S0]]
// CHECK-NEXT:    hir.send %[[A0]] to(%[[NEXT]] : index)
// CHECK-NEXT:    hir.recv %[[R]] from(%[[PREV]] : index)
// CHECK-NEXT:    hir.set_current_stream %[[S0]]
// Second (last) step: this device's rows, meanwhile; then the sum into the output.
// CHECK:         %[[C1:.*]] = arith.remsi
// CHECK-NEXT:    %[[X1:.*]] = hir.alias_select %[[X3]][axis = 0, %[[C1]]]
// CHECK-NEXT:    %[[A1:.*]] = hir.allocate : !fuser.tensor<4x12xf32>
// CHECK-NEXT:    hir.launch @mm_rs_seg0_chunk4(%[[X1]], %1) outs(%[[A1]] : !fuser.tensor<4x12xf32>)
// CHECK-NEXT:    hir.synchronize_stream %[[RING]]
// CHECK-NEXT:    hir.launch @mm_rs_seg0_acc(%[[A1]], %[[R]]) outs(%[[OUT]] : !fuser.tensor<4x12xf32>)
// CHECK-NEXT:    hir.synchronize_stream %[[RING]]
// CHECK-NEXT:    hir.deallocate %[[A0]]
// CHECK-NEXT:    hir.deallocate %[[R]]
// CHECK-NEXT:    hir.deallocate %[[A1]]
// CHECK-NEXT:    hir.return %[[OUT]]

// -----

// A reduce-scatter along the columns: not a ring of row chunks; left as it is.
fuser.fusion @mm_rs_cols(%x: !fuser.tensor<8x16xf32>, %w: !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32> {
  %y = fuser.linear %x, %w : (!fuser.tensor<8x16xf32>, !fuser.tensor<12x16xf32>) -> !fuser.tensor<8x12xf32>
  %ys = fuser.set %y : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8x12xf32>
  iterdomain.shard %x {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x16xf32>
  iterdomain.shard %w {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<12x16xf32>
  iterdomain.shard %ys {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<8x12xf32>
  fuser.output %ys : !fuser.tensor<8x12xf32>
}

// CHECK-LABEL: hir.program @main
// CHECK:         hir.reduce_scatter %{{.*}}, %{{.*}} {mesh = #iterdomain.mesh<[0, 1]>, axis = 1 : i64} : !fuser.tensor<8x12xf32>, !fuser.tensor<8x6xf32>
// CHECK-NOT:     hir.send
