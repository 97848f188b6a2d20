// RUN: fuser-opt %s --split-input-file --verify-diagnostics | filecheck %s

// One case per verifier error.

fuser.fusion @split_extent(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %o, %n = iterdomain.split %i by 5 : !iterdomain.id<12> -> !iterdomain.id<2>, !iterdomain.id<5>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.split: splitting extent 12 by 5 (inner_split = true) gives outer 3 and inner 5, but the results declare outer 2 and inner 5

// -----

fuser.fusion @split_outer(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %o, %n = iterdomain.split %i by 5 {inner_split = false} : !iterdomain.id<12> -> !iterdomain.id<3>, !iterdomain.id<5>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.split: splitting extent 12 by 5 (inner_split = false) gives outer 5 and inner 3, but the results declare outer 3 and inner 5

// -----

fuser.fusion @split_factor(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %o, %n = iterdomain.split %i by 0 : !iterdomain.id<12> -> !iterdomain.id<12>, !iterdomain.id<0>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.split: factor 0 must be positive

// -----

fuser.fusion @split_iter_type(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %o, %n = iterdomain.split %i by 4 : !iterdomain.id<12> -> !iterdomain.id<3, reduction>, !iterdomain.id<4>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.split: outer result is reduction, expected iteration

// -----

fuser.fusion @merge_extent(%a : !fuser.tensor<8x3xf32>) -> !fuser.tensor<8x3xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x3xf32> -> !iterdomain.id<8>, !iterdomain.id<3>
  %m = iterdomain.merge %i, %j : !iterdomain.id<8>, !iterdomain.id<3> -> !iterdomain.id<11>
  fuser.output %a : !fuser.tensor<8x3xf32>
}
// CHECK: iterdomain.merge: result declares extent 11, but merging extents 8 and 3 gives 24

// -----

fuser.fusion @merge_reduction(%a : !fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32> {
  %s = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32>
  %i, %r = iterdomain.logical %s : !fuser.tensor<8xf32> -> !iterdomain.id<8>, !iterdomain.id<12, reduction>
  %m = iterdomain.merge %i, %r : !iterdomain.id<8>, !iterdomain.id<12, reduction> -> !iterdomain.id<96>
  fuser.output %s : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.merge: cannot merge the outer operand (iteration) with the inner operand (reduction); reduction ids merge only with reduction or broadcast ids

// -----

fuser.fusion @merge_parallel(%a : !fuser.tensor<8x3xf32>) -> !fuser.tensor<8x3xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x3xf32> -> !iterdomain.id<8>, !iterdomain.id<3>
  %p = iterdomain.parallelize %i to TIDx : !iterdomain.id<8> -> !iterdomain.id<8, TIDx>
  %m = iterdomain.merge %p, %j : !iterdomain.id<8, TIDx>, !iterdomain.id<3> -> !iterdomain.id<24>
  fuser.output %a : !fuser.tensor<8x3xf32>
}
// CHECK: iterdomain.merge: outer operand is parallelized (TIDx); transform ids first and parallelize the loop ids last

// -----

fuser.fusion @resize_negative(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<4xf32> -> !iterdomain.id<4>
  %r = iterdomain.resize %i left -3 right -2 : !iterdomain.id<4> -> !iterdomain.id<0>
  fuser.output %a : !fuser.tensor<4xf32>
}
// CHECK: iterdomain.resize: resizing extent 4 by left -3 and right -2 gives a negative extent -1

// -----

fuser.fusion @resize_extent(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<4xf32> -> !iterdomain.id<4>
  %r = iterdomain.resize %i left 1 right 2 : !iterdomain.id<4> -> !iterdomain.id<6>
  fuser.output %a : !fuser.tensor<4xf32>
}
// CHECK: iterdomain.resize: result declares extent 6, but resizing extent 4 by left 1 and right 2 gives 7

// -----

fuser.fusion @resize_reduction(%a : !fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32> {
  %s = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32>
  %i, %r = iterdomain.logical %s : !fuser.tensor<8xf32> -> !iterdomain.id<8>, !iterdomain.id<12, reduction>
  %x = iterdomain.resize %r left 1 right 0 : !iterdomain.id<12, reduction> -> !iterdomain.id<13, reduction>
  fuser.output %s : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.resize: cannot resize a reduction id

// -----

fuser.fusion @parallelize_type(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  %p = iterdomain.parallelize %i to TIDx : !iterdomain.id<8> -> !iterdomain.id<8, TIDy>
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.parallelize: result is TIDy, expected TIDx

// -----

fuser.fusion @parallelize_twice(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  %p = iterdomain.parallelize %i to TIDx : !iterdomain.id<8> -> !iterdomain.id<8, TIDx>
  %q = iterdomain.parallelize %p to BIDx : !iterdomain.id<8, TIDx> -> !iterdomain.id<8, BIDx>
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.parallelize: input is parallelized (TIDx)

// -----

fuser.fusion @logical_extent(%a : !fuser.tensor<8x3xf32>) -> !fuser.tensor<8x3xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x3xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  fuser.output %a : !fuser.tensor<8x3xf32>
}
// CHECK: iterdomain.logical: result #1 declares extent 4, but axis 1 of the logical domain has extent 3

// -----

fuser.fusion @logical_count(%a : !fuser.tensor<8x3xf32>) -> !fuser.tensor<8x3xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<8x3xf32> -> !iterdomain.id<8>
  fuser.output %a : !fuser.tensor<8x3xf32>
}
// CHECK: iterdomain.logical: the logical domain of the tensor has 2 ids, but the op declares 1

// -----

fuser.fusion @logical_reduction(%a : !fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32> {
  %s = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<8x12xf32>) -> !fuser.tensor<8xf32>
  %i, %r = iterdomain.logical %s : !fuser.tensor<8xf32> -> !iterdomain.id<8>, !iterdomain.id<12>
  fuser.output %s : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.logical: result #1 is iteration, but axis 1 of the logical domain is reduction

// -----

fuser.fusion @logical_broadcast(%a : !fuser.tensor<8x1xf32>) -> !fuser.tensor<8x1xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x1xf32> -> !iterdomain.id<8>, !iterdomain.id<1>
  fuser.output %a : !fuser.tensor<8x1xf32>
}
// CHECK: iterdomain.logical: result #1 is iteration, but axis 1 of the logical domain is broadcast

// -----

fuser.fusion @logical_twice(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  %j = iterdomain.logical %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.logical: the tensor operand has 2 iterdomain.logical ops, expected one

// -----

fuser.fusion @loop_unused(%a : !fuser.tensor<8x3xf32>) -> !fuser.tensor<8x3xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x3xf32> -> !iterdomain.id<8>, !iterdomain.id<3>
  iterdomain.loop %a [%i] : !fuser.tensor<8x3xf32> [!iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<8x3xf32>
}
// CHECK: iterdomain.loop: id #1 of the logical domain (!iterdomain.id<3>) is not used on the way to the declared ids; every id must be consumed exactly once

// -----

fuser.fusion @loop_twice(%a : !fuser.tensor<8x3xf32>) -> !fuser.tensor<8x3xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x3xf32> -> !iterdomain.id<8>, !iterdomain.id<3>
  %m = iterdomain.merge %i, %j : !iterdomain.id<8>, !iterdomain.id<3> -> !iterdomain.id<24>
  iterdomain.loop %a [%m, %j] : !fuser.tensor<8x3xf32> [!iterdomain.id<24>, !iterdomain.id<3>]
  fuser.output %a : !fuser.tensor<8x3xf32>
}
// CHECK: iterdomain.loop: id #1 of the logical domain (!iterdomain.id<3>) is used 2 times on the way to the declared ids; every id must be consumed exactly once

// -----

fuser.fusion @loop_dropped(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %o, %n = iterdomain.split %i by 4 : !iterdomain.id<12> -> !iterdomain.id<3>, !iterdomain.id<4>
  iterdomain.loop %a [%o] : !fuser.tensor<12xf32> [!iterdomain.id<3>]
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.loop: result #1 (!iterdomain.id<4>) of an iterdomain.split is dropped; every id on the way to the declared ids must be consumed exactly once

// -----

fuser.fusion @loop_unreachable(%a : !fuser.tensor<8xf32>, %b : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  %j = iterdomain.logical %b : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  iterdomain.loop %a [%j] : !fuser.tensor<8xf32> [!iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.loop: id #0 (!iterdomain.id<8>) is not derived from the logical domain of the tensor operand: it is not the result of a split, merge, resize or parallelize of it

// -----

fuser.fusion @loop_no_logical(%a : !fuser.tensor<8xf32>, %b : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %j = iterdomain.logical %b : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  iterdomain.loop %a [%j] : !fuser.tensor<8xf32> [!iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.loop: the tensor operand has no iterdomain.logical (or iterdomain.rfactor) to derive its loop domain from

// -----

fuser.fusion @vectorize_not_innermost(%a : !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %v = iterdomain.parallelize %j to vectorize : !iterdomain.id<4> -> !iterdomain.id<4, vectorize>
  iterdomain.loop %a [%v, %i] : !fuser.tensor<8x4xf32> [!iterdomain.id<4, vectorize>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<8x4xf32>
}
// CHECK: iterdomain.loop: id #0 is vectorized but is not the innermost loop id

// -----

fuser.fusion @vectorize_symbolic(%a : !fuser.tensor<?xf32>) -> !fuser.tensor<?xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<?xf32> -> !iterdomain.id<?>
  %v = iterdomain.parallelize %i to vectorize : !iterdomain.id<?> -> !iterdomain.id<?, vectorize>
  iterdomain.loop %a [%v] : !fuser.tensor<?xf32> [!iterdomain.id<?, vectorize>]
  fuser.output %a : !fuser.tensor<?xf32>
}
// CHECK: iterdomain.loop: id #0 is vectorized but its extent is symbolic

// -----

fuser.fusion @vectorize_too_wide(%a : !fuser.tensor<8x8xf32>) -> !fuser.tensor<8x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x8xf32> -> !iterdomain.id<8>, !iterdomain.id<8>
  %v = iterdomain.parallelize %j to vectorize : !iterdomain.id<8> -> !iterdomain.id<8, vectorize>
  iterdomain.loop %a [%i, %v] : !fuser.tensor<8x8xf32> [!iterdomain.id<8>, !iterdomain.id<8, vectorize>]
  fuser.output %a : !fuser.tensor<8x8xf32>
}
// CHECK: iterdomain.loop: id #1 vectorizes 8 x float32 = 32 bytes, more than 16

// -----

fuser.fusion @parallel_type_twice(%a : !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<8x4xf32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %p = iterdomain.parallelize %i to TIDx : !iterdomain.id<8> -> !iterdomain.id<8, TIDx>
  %q = iterdomain.parallelize %j to TIDx : !iterdomain.id<4> -> !iterdomain.id<4, TIDx>
  iterdomain.loop %a [%p, %q] : !fuser.tensor<8x4xf32> [!iterdomain.id<8, TIDx>, !iterdomain.id<4, TIDx>]
  fuser.output %a : !fuser.tensor<8x4xf32>
}
// CHECK: iterdomain.loop: parallel type TIDx is used by id #0 and id #1; each parallel type binds at most one loop id

// -----

fuser.fusion @too_many_threads(%a : !fuser.tensor<64x64xf32>) -> !fuser.tensor<64x64xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<64x64xf32> -> !iterdomain.id<64>, !iterdomain.id<64>
  %p = iterdomain.parallelize %i to TIDy : !iterdomain.id<64> -> !iterdomain.id<64, TIDy>
  %q = iterdomain.parallelize %j to TIDx : !iterdomain.id<64> -> !iterdomain.id<64, TIDx>
  iterdomain.loop %a [%p, %q] : !fuser.tensor<64x64xf32> [!iterdomain.id<64, TIDy>, !iterdomain.id<64, TIDx>]
  fuser.output %a : !fuser.tensor<64x64xf32>
}
// CHECK: iterdomain.loop: the thread extents [64, 64] make 4096 threads per block, more than 1024

// -----

fuser.fusion @loop_twice_per_tensor(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  iterdomain.loop %a [%i] : !fuser.tensor<8xf32> [!iterdomain.id<8>]
  iterdomain.loop %a [%i] : !fuser.tensor<8xf32> [!iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.loop: the tensor operand has 2 iterdomain.loop ops, expected one

// -----

fuser.fusion @root_not_reshape(%a : !fuser.tensor<8xf32>) -> !fuser.tensor<8xf32> {
  %i = iterdomain.root %a : !fuser.tensor<8xf32> -> !iterdomain.id<8>
  fuser.output %a : !fuser.tensor<8xf32>
}
// CHECK: iterdomain.root: the tensor operand is not the result of a fuser.reshape; only a reshape's result has a root domain distinct from its logical domain

// -----

fuser.fusion @rfactor_extent(%c : !fuser.tensor<2x40xf32>) -> !fuser.tensor<2x2x20xf32> {
  %v = fuser.reshape %c {new_shape = array<i64: 2, 2, 20>} : !fuser.tensor<2x40xf32> -> !fuser.tensor<2x2x20xf32>
  %r0, %r1 = iterdomain.root %v : !fuser.tensor<2x2x20xf32> -> !iterdomain.id<2>, !iterdomain.id<40>
  %o, %i = iterdomain.split %r1 by 2 : !iterdomain.id<40> -> !iterdomain.id<20>, !iterdomain.id<2>
  iterdomain.rfactor %v [%r0, %o, %i] : !fuser.tensor<2x2x20xf32> [!iterdomain.id<2>, !iterdomain.id<20>, !iterdomain.id<2>]
  fuser.output %v : !fuser.tensor<2x2x20xf32>
}
// CHECK: iterdomain.rfactor: id #1 has extent 20, but axis 1 of the tensor has extent 2

// -----

fuser.fusion @rfactor_not_row_major(%c : !fuser.tensor<2x3xf32>) -> !fuser.tensor<6xf32> {
  %v = fuser.reshape %c {new_shape = array<i64: 6>} : !fuser.tensor<2x3xf32> -> !fuser.tensor<6xf32>
  %r0, %r1 = iterdomain.root %v : !fuser.tensor<6xf32> -> !iterdomain.id<2>, !iterdomain.id<3>
  %m = iterdomain.merge %r1, %r0 : !iterdomain.id<3>, !iterdomain.id<2> -> !iterdomain.id<6>
  iterdomain.rfactor %v [%m] : !fuser.tensor<6xf32> [!iterdomain.id<6>]
  fuser.output %v : !fuser.tensor<6xf32>
}
// CHECK: iterdomain.rfactor: the merge of extents 3 and 2 does not keep the row-major order (outer stride 1, inner stride 3)

// -----

fuser.fusion @rfactor_transposed(%c : !fuser.tensor<2x3xf32>) -> !fuser.tensor<3x2xf32> {
  %v = fuser.reshape %c {new_shape = array<i64: 3, 2>} : !fuser.tensor<2x3xf32> -> !fuser.tensor<3x2xf32>
  %r0, %r1 = iterdomain.root %v : !fuser.tensor<3x2xf32> -> !iterdomain.id<2>, !iterdomain.id<3>
  iterdomain.rfactor %v [%r1, %r0] : !fuser.tensor<3x2xf32> [!iterdomain.id<3>, !iterdomain.id<2>]
  fuser.output %v : !fuser.tensor<3x2xf32>
}
// CHECK: iterdomain.rfactor: id #1 (extent 2) has stride 3 in the input's row-major order, but the reshaped tensor needs 1

// -----

fuser.fusion @rfactor_no_root(%c : !fuser.tensor<2x3xf32>) -> !fuser.tensor<6xf32> {
  %v = fuser.reshape %c {new_shape = array<i64: 6>} : !fuser.tensor<2x3xf32> -> !fuser.tensor<6xf32>
  %i = iterdomain.logical %v : !fuser.tensor<6xf32> -> !iterdomain.id<6>
  iterdomain.rfactor %v [%i] : !fuser.tensor<6xf32> [!iterdomain.id<6>]
  fuser.output %v : !fuser.tensor<6xf32>
}
// CHECK: iterdomain.rfactor: the tensor operand has no iterdomain.root to derive its logical domain from

// -----

fuser.fusion @rfactor_resize(%c : !fuser.tensor<6xf32>) -> !fuser.tensor<6xf32> {
  %v = fuser.reshape %c {new_shape = array<i64: 6>} : !fuser.tensor<6xf32> -> !fuser.tensor<6xf32>
  %r = iterdomain.root %v : !fuser.tensor<6xf32> -> !iterdomain.id<6>
  %x = iterdomain.resize %r left 1 right -1 : !iterdomain.id<6> -> !iterdomain.id<6>
  iterdomain.rfactor %v [%x] : !fuser.tensor<6xf32> [!iterdomain.id<6>]
  fuser.output %v : !fuser.tensor<6xf32>
}
// CHECK: iterdomain.rfactor: a reshape is made of splits and merges, found iterdomain.resize


// -----

fuser.fusion @compute_at_range(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  iterdomain.loop %a [%i, %j] {compute_at = 3 : i64} : !fuser.tensor<4x8xf32> [!iterdomain.id<4>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %a is computed at loop position 3, outside [0, 2] (its loop domain has 2 ids)

// -----

fuser.fusion @memory_kind(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  iterdomain.loop %a [%i, %j] {compute_at = 1 : i64, memory = "texture"} : !fuser.tensor<4x8xf32> [!iterdomain.id<4>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %a: unknown memory 'texture' (expected one of registers, shared)

// -----

fuser.fusion @memory_without_position(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  iterdomain.loop %a [%i, %j] {memory = "registers"} : !fuser.tensor<4x8xf32> [!iterdomain.id<4>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %a is placed in registers memory but has no compute_at position (an inlined tensor lives nowhere)

// -----

fuser.fusion @partials_not_reduction(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32> {
  %s = fuser.sum %a {dims = array<i64: 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4xf32>
  %i, %j = iterdomain.logical %s : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<8, reduction>
  iterdomain.loop %s [%i, %j] {compute_at = 1 : i64, partials = array<i64: 0>} : !fuser.tensor<4xf32> [!iterdomain.id<4>, !iterdomain.id<8, reduction>]
  fuser.output %s : !fuser.tensor<4xf32>
}
// CHECK: iterdomain.loop: %s: partials name loop #0 (extent 4), which is not a serial or unrolled reduction id (threads keep their partials anyway)

// -----

fuser.fusion @reverse_parallel(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %p = iterdomain.parallelize %i to BIDx : !iterdomain.id<12> -> !iterdomain.id<12, BIDx>
  %r = iterdomain.reverse %p : !iterdomain.id<12, BIDx> -> !iterdomain.id<12, BIDx>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.reverse: input is parallelized (BIDx); transform ids first and parallelize the loop ids last

// -----

fuser.fusion @reverse_type(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %r = iterdomain.reverse %i : !iterdomain.id<12> -> !iterdomain.id<6>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.reverse: result has type !iterdomain.id<6>, expected the input's type !iterdomain.id<12>


// -----

fuser.fusion @clustered_thread(%a : !fuser.tensor<12xf32>) -> !fuser.tensor<12xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<12xf32> -> !iterdomain.id<12>
  %o, %n = iterdomain.split %i by 4 : !iterdomain.id<12> -> !iterdomain.id<3>, !iterdomain.id<4>
  %t = iterdomain.parallelize %n to TIDx clustered : !iterdomain.id<4> -> !iterdomain.id<4, TIDx>
  fuser.output %a : !fuser.tensor<12xf32>
}
// CHECK: iterdomain.parallelize: a cluster is made of block ids (BIDx, BIDy, BIDz) of a static extent of 1 to 8; the input has extent 4 and the type is TIDx

// -----

fuser.fusion @cluster_too_big(%a : !fuser.tensor<32xf32>) -> !fuser.tensor<32xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<32xf32> -> !iterdomain.id<32>
  %o, %n = iterdomain.split %i by 2 : !iterdomain.id<32> -> !iterdomain.id<16>, !iterdomain.id<2>
  %b = iterdomain.parallelize %o to BIDx clustered : !iterdomain.id<16> -> !iterdomain.id<16, BIDx>
  fuser.output %a : !fuser.tensor<32xf32>
}
// CHECK: iterdomain.parallelize: a cluster is made of block ids (BIDx, BIDy, BIDz) of a static extent of 1 to 8; the input has extent 16 and the type is BIDx

// -----

fuser.fusion @clustered_result_type(%a : !fuser.tensor<32xf32>) -> !fuser.tensor<32xf32> {
  %i = iterdomain.logical %a : !fuser.tensor<32xf32> -> !iterdomain.id<32>
  %o, %n = iterdomain.split %i by 4 : !iterdomain.id<32> -> !iterdomain.id<8>, !iterdomain.id<4>
  %b = iterdomain.parallelize %o to BIDx : !iterdomain.id<8> -> !iterdomain.id<8, BIDx, clustered>
  fuser.output %a : !fuser.tensor<32xf32>
}
// CHECK: iterdomain.parallelize: result is clustered, expected not clustered

// -----

fuser.fusion @align_factor(%a : !fuser.tensor<4x13xf32>) -> !fuser.tensor<4x13xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x13xf32> -> !iterdomain.id<4>, !iterdomain.id<13>
  %r = iterdomain.align %j by 3 : !iterdomain.id<13> -> !iterdomain.id<15>
  fuser.output %a : !fuser.tensor<4x13xf32>
}
// CHECK: iterdomain.align: factor 3 is not one of 2, 4, 8, 16

// -----

fuser.fusion @align_outer(%a : !fuser.tensor<4x13xf32>) -> !fuser.tensor<4x13xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x13xf32> -> !iterdomain.id<4>, !iterdomain.id<13>
  %r = iterdomain.align %i by 8 : !iterdomain.id<4> -> !iterdomain.id<11>
  fuser.output %a : !fuser.tensor<4x13xf32>
}
// CHECK: iterdomain.align: the input must be the innermost id of an iterdomain.logical (the shift is a row-major position of the tensor's logical index)

// -----

fuser.fusion @align_extent(%a : !fuser.tensor<4x13xf32>) -> !fuser.tensor<4x13xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x13xf32> -> !iterdomain.id<4>, !iterdomain.id<13>
  %r = iterdomain.align %j by 8 : !iterdomain.id<13> -> !iterdomain.id<16>
  fuser.output %a : !fuser.tensor<4x13xf32>
}
// CHECK: iterdomain.align: result declares extent 16, but aligning extent 13 by 8 gives 20

// -----

fuser.fusion @prefetch_level(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  iterdomain.loop %a [%i, %j] {compute_at = 1 : i64, prefetch = "L3"} : !fuser.tensor<4x8xf32> [!iterdomain.id<4>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %a: unknown prefetch level 'L3' (expected one of L1, L2)

// -----

fuser.fusion @prefetch_not_input(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %b = fuser.neg %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  %i, %j = iterdomain.logical %b : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  iterdomain.loop %b [%i, %j] {compute_at = 1 : i64, prefetch = "L2"} : !fuser.tensor<4x8xf32> [!iterdomain.id<4>, !iterdomain.id<8>]
  fuser.output %b : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %b is prefetched but is not a fusion input (only a tensor read from global memory has a next iteration to fetch early)

// -----

fuser.fusion @prefetch_without_position(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  iterdomain.loop %a [%i, %j] {prefetch = "L2"} : !fuser.tensor<4x8xf32> [!iterdomain.id<4>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %a is prefetched but has no compute_at position (the prefetch runs one iteration ahead of the loops before it)

// -----

fuser.fusion @prefetch_no_serial_loop(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %i, %j = iterdomain.logical %a : !fuser.tensor<4x8xf32> -> !iterdomain.id<4>, !iterdomain.id<8>
  %b = iterdomain.parallelize %i to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  iterdomain.loop %a [%b, %j] {compute_at = 1 : i64, prefetch = "L2"} : !fuser.tensor<4x8xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<8>]
  fuser.output %a : !fuser.tensor<4x8xf32>
}
// CHECK: iterdomain.loop: %a is prefetched but no loop before its compute_at position 1 is serial: there is no next iteration to prefetch
