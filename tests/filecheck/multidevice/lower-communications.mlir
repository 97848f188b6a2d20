// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings,segment,lower-communications' | filecheck %s
// RUN: fuser-opt %s -p 'propagate-shardings,localize-shardings,segment,select-schedulers' | filecheck %s --check-prefix=SEGMENTS
// RUN: not fuser-opt %s -p 'propagate-shardings,segment,lower-communications' 2>&1 | filecheck %s --check-prefix=GLOBAL

// Each resharding is a segment of its own (the communication scheduler), then the
// collective it is: an allreduce of the row-parallel linear's partial sums, and an
// allgather of the output declared replicated.

fuser.fusion @tp(%x: !fuser.tensor<8x16xf32>, %w1: !fuser.tensor<32x16xf32>, %w2: !fuser.tensor<16x32xf32>) -> (!fuser.tensor<8x16xf32>, !fuser.tensor<8x32xf32>) {
  %h = fuser.linear %x, %w1 : (!fuser.tensor<8x16xf32>, !fuser.tensor<32x16xf32>) -> !fuser.tensor<8x32xf32>
  %g = fuser.tanh %h : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  %y = fuser.linear %g, %w2 : (!fuser.tensor<8x32xf32>, !fuser.tensor<16x32xf32>) -> !fuser.tensor<8x16xf32>
  %e = fuser.exp %h : (!fuser.tensor<8x32xf32>) -> !fuser.tensor<8x32xf32>
  iterdomain.shard %w1 {sharding = #iterdomain.sharding<[0, 1], DIDx = 0>} : !fuser.tensor<32x16xf32>
  iterdomain.shard %w2 {sharding = #iterdomain.sharding<[0, 1], DIDx = 1>} : !fuser.tensor<16x32xf32>
  iterdomain.shard %e {sharding = #iterdomain.sharding<[0, 1]>} : !fuser.tensor<8x32xf32>
  fuser.output %y, %e : !fuser.tensor<8x16xf32>, !fuser.tensor<8x32xf32>
}

// SEGMENTS:      attributes {fuser.schedule = {kind = "communication"}}
// SEGMENTS-NEXT:   fuser.reshard
// SEGMENTS-SAME:   local

// CHECK-NOT:     fuser.reshard
// CHECK-LABEL:   hir.program @main(%0: !fuser.tensor<8x16xf32>, %1: !fuser.tensor<16x16xf32>, %2: !fuser.tensor<16x16xf32>) -> (!fuser.tensor<8x16xf32>, !fuser.tensor<8x32xf32>)
// CHECK:         %[[E:.*]], %[[E2:.*]] = hir.launch @tp_seg1
// CHECK:         %[[P:.*]] = hir.launch @tp_seg2(%2, %[[E]]) outs(%{{.*}} : !fuser.tensor<8x16xf32>)
// CHECK:         %[[G:.*]] = hir.allocate {preallocated} : !fuser.tensor<8x32xf32>
// CHECK-NEXT:    hir.allgather %[[E2]], %[[G]] {mesh = #iterdomain.mesh<[0, 1]>, axis = 1 : i64} : !fuser.tensor<8x16xf32>, !fuser.tensor<8x32xf32>
// CHECK:         %[[R:.*]] = hir.allocate {preallocated} : !fuser.tensor<8x16xf32>
// CHECK-NEXT:    hir.allreduce %[[P]], %[[R]] {mesh = #iterdomain.mesh<[0, 1]>} : !fuser.tensor<8x16xf32>, !fuser.tensor<8x16xf32>
// CHECK:         hir.return %[[R]], %[[G]] : !fuser.tensor<8x16xf32>, !fuser.tensor<8x32xf32>

// GLOBAL: error: lower-communications: @tp_seg{{[0-9]+}}: fuser.reshard has global types; run localize-shardings before segment
