// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// Round-trip of every hir op, in custom and generic form.

builtin.module {
  fuser.fusion @add(%a : !fuser.tensor<4x?xf32>, %b : !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32> {
    %c = fuser.add %a, %b : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
    fuser.output %c : !fuser.tensor<4x?xf32>
  }
  hir.program @ops(%x : !fuser.tensor<4x?xf32>, %n : index) -> (!fuser.tensor<4x?xf32>, !fuser.tensor<?x4xf32>) {
    %y = hir.allocate sizes(%n : index) {zero_init, preallocated} : !fuser.tensor<4x?xf32>
    %z = hir.launch @add(%x, %x) outs(%y : !fuser.tensor<4x?xf32>) : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
    %w = hir.launch @add(%x, %y) : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
    %tmp = hir.allocate sizes(%n : index) : !fuser.tensor<4x?xf32>
    hir.alias %tmp, %w : !fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>
    hir.deallocate %w : !fuser.tensor<4x?xf32>
    %p = hir.permute %x {dims = array<i64: 1, 0>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<?x4xf32>
    %r = hir.reshape %x sizes(%n : index) {new_shape = array<i64: 2, 2, -1>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<2x2x?xf32>
    %e = hir.reshape %x sizes(%n : index) {new_shape = array<i64: 4, 1, -1>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<4x1x?xf32>
    %q = hir.squeeze %e {dims = array<i64: 1>} : !fuser.tensor<4x1x?xf32> -> !fuser.tensor<4x?xf32>
    %b = hir.broadcast %q sizes(%n : index) {shape = array<i64: 3, 4, -1>, broadcast_dims = array<i64: 1, 2>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<3x4x?xf32>
    %sl = hir.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 4, 8>, strides = array<i64: 2, 1>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<2x?xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    hir.for %i = %c0 to %c4 step %c1 {
      %s0 = hir.get_current_stream : !hir.stream
      %s = hir.stream_for_index %i {num_streams = 2 : i64} : index
      hir.set_current_stream %s
      hir.synchronize_stream %s0
      %row = hir.alias_select %y[axis = 0, %i] : !fuser.tensor<4x?xf32>, index -> !fuser.tensor<?xf32>
    }
    hir.for %j = %c0 to %c4 step %c1 {
    }
    hir.return %y, %p : !fuser.tensor<4x?xf32>, !fuser.tensor<?x4xf32>
  }
  hir.program @empty() -> () {
    hir.return
  }
}

// CHECK-LABEL: hir.program @ops(%x: !fuser.tensor<4x?xf32>, %n: index) -> (!fuser.tensor<4x?xf32>, !fuser.tensor<?x4xf32>) {
// CHECK-NEXT:    %y = hir.allocate sizes(%n : index) {zero_init, preallocated} : !fuser.tensor<4x?xf32>
// CHECK-NEXT:    %z = hir.launch @add(%x, %x) outs(%y : !fuser.tensor<4x?xf32>) : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
// CHECK-NEXT:    %w = hir.launch @add(%x, %y) : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
// CHECK-NEXT:    %tmp = hir.allocate sizes(%n : index) : !fuser.tensor<4x?xf32>
// CHECK-NEXT:    hir.alias %tmp, %w : !fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>
// CHECK-NEXT:    hir.deallocate %w : !fuser.tensor<4x?xf32>
// CHECK-NEXT:    %p = hir.permute %x {dims = array<i64: 1, 0>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<?x4xf32>
// CHECK-NEXT:    %r = hir.reshape %x sizes(%n : index) {new_shape = array<i64: 2, 2, -1>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<2x2x?xf32>
// CHECK-NEXT:    %e = hir.reshape %x sizes(%n : index) {new_shape = array<i64: 4, 1, -1>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<4x1x?xf32>
// CHECK-NEXT:    %q = hir.squeeze %e {dims = array<i64: 1>} : !fuser.tensor<4x1x?xf32> -> !fuser.tensor<4x?xf32>
// CHECK-NEXT:    %b = hir.broadcast %q sizes(%n : index) {shape = array<i64: 3, 4, -1>, broadcast_dims = array<i64: 1, 2>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<3x4x?xf32>
// CHECK-NEXT:    %sl = hir.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 4, 8>, strides = array<i64: 2, 1>} : !fuser.tensor<4x?xf32> -> !fuser.tensor<2x?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    hir.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %s0 = hir.get_current_stream : !hir.stream
// CHECK-NEXT:      %s = hir.stream_for_index %i {num_streams = 2 : i64} : index
// CHECK-NEXT:      hir.set_current_stream %s
// CHECK-NEXT:      hir.synchronize_stream %s0
// CHECK-NEXT:      %row = hir.alias_select %y[axis = 0, %i] : !fuser.tensor<4x?xf32>, index -> !fuser.tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    hir.for %j = %c0 to %c4 step %c1 {
// CHECK-NEXT:    }
// CHECK-NEXT:    hir.return %y, %p : !fuser.tensor<4x?xf32>, !fuser.tensor<?x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  hir.program @empty() {
// CHECK-NEXT:    hir.return
// CHECK-NEXT:  }

// GENERIC:       "hir.program"() <{sym_name = "ops", function_type = (!fuser.tensor<4x?xf32>, index) -> (!fuser.tensor<4x?xf32>, !fuser.tensor<?x4xf32>)}> ({
// GENERIC-NEXT:  ^{{.*}}(%x: !fuser.tensor<4x?xf32>, %n: index):
// GENERIC-NEXT:    %y = "hir.allocate"(%n) <{zero_init, preallocated}> : (index) -> !fuser.tensor<4x?xf32>
// GENERIC-NEXT:    %z = "hir.launch"(%x, %x, %y) <{callee = @add, operandSegmentSizes = array<i32: 2, 1>}> : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
// GENERIC-NEXT:    %w = "hir.launch"(%x, %y) <{callee = @add, operandSegmentSizes = array<i32: 2, 0>}> : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> !fuser.tensor<4x?xf32>
// GENERIC-NEXT:    %tmp = "hir.allocate"(%n) : (index) -> !fuser.tensor<4x?xf32>
// GENERIC-NEXT:    "hir.alias"(%tmp, %w) : (!fuser.tensor<4x?xf32>, !fuser.tensor<4x?xf32>) -> ()
// GENERIC-NEXT:    "hir.deallocate"(%w) : (!fuser.tensor<4x?xf32>) -> ()
// GENERIC-NEXT:    %p = "hir.permute"(%x) <{dims = array<i64: 1, 0>}> : (!fuser.tensor<4x?xf32>) -> !fuser.tensor<?x4xf32>
// GENERIC-NEXT:    %r = "hir.reshape"(%x, %n) <{new_shape = array<i64: 2, 2, -1>, operandSegmentSizes = array<i32: 1, 1>}> : (!fuser.tensor<4x?xf32>, index) -> !fuser.tensor<2x2x?xf32>
// GENERIC:         %b = "hir.broadcast"(%q, %n) <{shape = array<i64: 3, 4, -1>, broadcast_dims = array<i64: 1, 2>, operandSegmentSizes = array<i32: 1, 1>}>
// GENERIC-NEXT:    %sl = "hir.slice"(%x) <{starts = array<i64: 1, 0>, ends = array<i64: 4, 8>, strides = array<i64: 2, 1>}>
// GENERIC:         "hir.for"(%c0, %c4, %c1) ({
// GENERIC-NEXT:    ^{{.*}}(%i: index):
// GENERIC-NEXT:      %s0 = "hir.get_current_stream"() : () -> !hir.stream
// GENERIC-NEXT:      %s = "hir.stream_for_index"(%i) <{num_streams = 2 : i64}> : (index) -> !hir.stream
// GENERIC-NEXT:      "hir.set_current_stream"(%s) : (!hir.stream) -> ()
// GENERIC-NEXT:      "hir.synchronize_stream"(%s0) : (!hir.stream) -> ()
// GENERIC-NEXT:      %row = "hir.alias_select"(%y, %i) <{axis = 0 : i64}> : (!fuser.tensor<4x?xf32>, index) -> !fuser.tensor<?xf32>
// GENERIC-NEXT:    }) : (index, index, index) -> ()
// GENERIC:         "hir.return"(%y, %p) : (!fuser.tensor<4x?xf32>, !fuser.tensor<?x4xf32>) -> ()
