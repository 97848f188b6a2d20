// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every iterdomain op in its custom form; printing the generic form and parsing it
// back gives the same IR (a loop's compute_at and memory are properties, printed in
// its attribute dictionary).

fuser.fusion @ops(%a : !fuser.tensor<8x12xf32>, %c : !fuser.tensor<2x10x40xf32>, %d : !fuser.tensor<?x1xf32>) -> (!fuser.tensor<8xf32>, !fuser.tensor<2x10x2x20xf32>, !fuser.tensor<?x1xf32>) {
  %s = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32>
  %v = fuser.reshape %c {new_shape = array<i64: 2, 10, 2, 20>, view = #fuser.view<keep, keep, split [2, 20]>} : !fuser.tensor<2x10x40xf32> -> !fuser.tensor<2x10x2x20xf32>
  %i0, %r1 = iterdomain.logical %s : !fuser.tensor<8xf32> -> !iterdomain.id<8>, !iterdomain.id<12, reduction>
  %o, %i = iterdomain.split %r1 by 5 : !iterdomain.id<12, reduction> -> !iterdomain.id<3, reduction>, !iterdomain.id<5, reduction>
  %tx = iterdomain.parallelize %i to TIDx : !iterdomain.id<5, reduction> -> !iterdomain.id<5, reduction, TIDx>
  %bx = iterdomain.parallelize %i0 to BIDx : !iterdomain.id<8> -> !iterdomain.id<8, BIDx>
  iterdomain.loop %s [%bx, %o, %tx] {compute_at = 1 : i64} : !fuser.tensor<8xf32> [!iterdomain.id<8, BIDx>, !iterdomain.id<3, reduction>, !iterdomain.id<5, reduction, TIDx>]
  %r0, %r1b, %r2 = iterdomain.root %v : !fuser.tensor<2x10x2x20xf32> -> !iterdomain.id<2>, !iterdomain.id<10>, !iterdomain.id<40>
  %q0, %q1 = iterdomain.split %r2 by 2 {inner_split = false} : !iterdomain.id<40> -> !iterdomain.id<2>, !iterdomain.id<20>
  iterdomain.rfactor %v [%r0, %r1b, %q0, %q1] : !fuser.tensor<2x10x2x20xf32> [!iterdomain.id<2>, !iterdomain.id<10>, !iterdomain.id<2>, !iterdomain.id<20>]
  %m = iterdomain.merge %r0, %r1b : !iterdomain.id<2>, !iterdomain.id<10> -> !iterdomain.id<20>
  iterdomain.loop %v [%m, %q0, %q1] {compute_at = 1 : i64, memory = "shared"} : !fuser.tensor<2x10x2x20xf32> [!iterdomain.id<20>, !iterdomain.id<2>, !iterdomain.id<20>]
  %d0, %d1 = iterdomain.logical %d : !fuser.tensor<?x1xf32> -> !iterdomain.id<?, symbolic>, !iterdomain.id<1, broadcast>
  %rs = iterdomain.resize %d0 left 1 right -2 : !iterdomain.id<?, symbolic> -> !iterdomain.id<?, symbolic>
  %rb = iterdomain.resize %d1 left 0 right 3 : !iterdomain.id<1, broadcast> -> !iterdomain.id<4>
  %dm = iterdomain.merge %d1, %d0 : !iterdomain.id<1, broadcast>, !iterdomain.id<?, symbolic> -> !iterdomain.id<?, symbolic>
  %u = iterdomain.parallelize %dm to unswitch : !iterdomain.id<?, symbolic> -> !iterdomain.id<?, symbolic, unswitch>
  iterdomain.loop %d [%u] : !fuser.tensor<?x1xf32> [!iterdomain.id<?, symbolic, unswitch>]
  fuser.output %s, %v, %d : !fuser.tensor<8xf32>, !fuser.tensor<2x10x2x20xf32>, !fuser.tensor<?x1xf32>
}

// CHECK-LABEL: fuser.fusion @ops
// CHECK:      %i0, %r1 = iterdomain.logical %s : !fuser.tensor<8xf32> -> !iterdomain.id<8>, !iterdomain.id<12, reduction>
// CHECK-NEXT: %o, %i = iterdomain.split %r1 by 5 : !iterdomain.id<12, reduction> -> !iterdomain.id<3, reduction>, !iterdomain.id<5, reduction>
// CHECK-NEXT: %tx = iterdomain.parallelize %i to TIDx : !iterdomain.id<5, reduction> -> !iterdomain.id<5, reduction, TIDx>
// CHECK-NEXT: %bx = iterdomain.parallelize %i0 to BIDx : !iterdomain.id<8> -> !iterdomain.id<8, BIDx>
// CHECK-NEXT: iterdomain.loop %s [%bx, %o, %tx] {compute_at = 1 : i64} : !fuser.tensor<8xf32> [!iterdomain.id<8, BIDx>, !iterdomain.id<3, reduction>, !iterdomain.id<5, reduction, TIDx>]
// CHECK-NEXT: %r0, %r1b, %r2 = iterdomain.root %v : !fuser.tensor<2x10x2x20xf32> -> !iterdomain.id<2>, !iterdomain.id<10>, !iterdomain.id<40>
// CHECK-NEXT: %q0, %q1 = iterdomain.split %r2 by 2 {inner_split = false} : !iterdomain.id<40> -> !iterdomain.id<2>, !iterdomain.id<20>
// CHECK-NEXT: iterdomain.rfactor %v [%r0, %r1b, %q0, %q1] : !fuser.tensor<2x10x2x20xf32> [!iterdomain.id<2>, !iterdomain.id<10>, !iterdomain.id<2>, !iterdomain.id<20>]
// CHECK-NEXT: %m = iterdomain.merge %r0, %r1b : !iterdomain.id<2>, !iterdomain.id<10> -> !iterdomain.id<20>
// CHECK-NEXT: iterdomain.loop %v [%m, %q0, %q1] {compute_at = 1 : i64, memory = "shared"} : !fuser.tensor<2x10x2x20xf32> [!iterdomain.id<20>, !iterdomain.id<2>, !iterdomain.id<20>]
// CHECK-NEXT: %d0, %d1 = iterdomain.logical %d : !fuser.tensor<?x1xf32> -> !iterdomain.id<?, symbolic>, !iterdomain.id<1, broadcast>
// CHECK-NEXT: %rs = iterdomain.resize %d0 left 1 right -2 : !iterdomain.id<?, symbolic> -> !iterdomain.id<?, symbolic>
// CHECK-NEXT: %rb = iterdomain.resize %d1 left 0 right 3 : !iterdomain.id<1, broadcast> -> !iterdomain.id<4>
// CHECK-NEXT: %dm = iterdomain.merge %d1, %d0 : !iterdomain.id<1, broadcast>, !iterdomain.id<?, symbolic> -> !iterdomain.id<?, symbolic>
// CHECK-NEXT: %u = iterdomain.parallelize %dm to unswitch : !iterdomain.id<?, symbolic> -> !iterdomain.id<?, symbolic, unswitch>
// CHECK-NEXT: iterdomain.loop %d [%u] : !fuser.tensor<?x1xf32> [!iterdomain.id<?, symbolic, unswitch>]
// CHECK-NEXT: fuser.output %s, %v, %d

// GENERIC:      %i0, %r1 = "iterdomain.logical"(%s) : (!fuser.tensor<8xf32>) -> (!iterdomain.id<8>, !iterdomain.id<12, reduction>)
// GENERIC-NEXT: %o, %i = "iterdomain.split"(%r1) <{factor = 5 : i64}> : (!iterdomain.id<12, reduction>) -> (!iterdomain.id<3, reduction>, !iterdomain.id<5, reduction>)
// GENERIC-NEXT: %tx = "iterdomain.parallelize"(%i) <{parallel_type = "TIDx"}> : (!iterdomain.id<5, reduction>) -> !iterdomain.id<5, reduction, TIDx>
// GENERIC:      "iterdomain.loop"(%s, %bx, %o, %tx) <{compute_at = 1 : i64}> : (!fuser.tensor<8xf32>, !iterdomain.id<8, BIDx>, !iterdomain.id<3, reduction>, !iterdomain.id<5, reduction, TIDx>) -> ()
// GENERIC-NEXT: %r0, %r1b, %r2 = "iterdomain.root"(%v)
// GENERIC-NEXT: %q0, %q1 = "iterdomain.split"(%r2) <{factor = 2 : i64, inner_split = false}>
// GENERIC-NEXT: "iterdomain.rfactor"(%v, %r0, %r1b, %q0, %q1)
// GENERIC-NEXT: %m = "iterdomain.merge"(%r0, %r1b) : (!iterdomain.id<2>, !iterdomain.id<10>) -> !iterdomain.id<20>
// GENERIC:      %rs = "iterdomain.resize"(%d0) <{left = 1 : i64, right = -2 : i64}> : (!iterdomain.id<?, symbolic>) -> !iterdomain.id<?, symbolic>

// A prefetched input: each iteration of its serial loop before the compute_at position
// prefetches the next iteration's elements (a property, as compute_at is).
fuser.fusion @prefetched(%x : !fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32> {
  %s = fuser.sum %x {dims = array<i64: 1>} : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32>
  %x0, %x1 = iterdomain.logical %x : !fuser.tensor<8x12xf32> -> !iterdomain.id<8>, !iterdomain.id<12>
  %tx = iterdomain.parallelize %x1 to TIDx : !iterdomain.id<12> -> !iterdomain.id<12, TIDx>
  iterdomain.loop %x [%x0, %tx] {compute_at = 1 : i64, memory = "registers", prefetch = "L2"} : !fuser.tensor<8x12xf32> [!iterdomain.id<8>, !iterdomain.id<12, TIDx>]
  fuser.output %s : !fuser.tensor<8xf32>
}

// CHECK-LABEL: fuser.fusion @prefetched
// CHECK:      iterdomain.loop %x [%x0, %tx] {compute_at = 1 : i64, memory = "registers", prefetch = "L2"} : !fuser.tensor<8x12xf32> [!iterdomain.id<8>, !iterdomain.id<12, TIDx>]

// GENERIC-LABEL: sym_name = "prefetched"
// GENERIC:      "iterdomain.loop"(%x, %x0, %tx) <{compute_at = 1 : i64, memory = "registers", prefetch = "L2"}>
