// RUN: fuser-opt %s --verify-diagnostics --split-input-file | filecheck %s

// One case per hir verifier error.

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate : !fuser.tensor<4x8xf32>
    hir.alias %x, %y : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias: operand %x is program input #0; inputs cannot be aliased

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate : !fuser.tensor<4x8xf32>
    hir.alias %y, %y : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias: %y cannot alias itself

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate : !fuser.tensor<4x4xf32>
    hir.alias %y, %x : !fuser.tensor<4x4xf32>, !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias: value of type !fuser.tensor<4x4xf32> cannot alias target of type !fuser.tensor<4x8xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate : !fuser.tensor<4x8xf32>
    %z = hir.allocate : !fuser.tensor<4x8xf32>
    hir.alias %y, %z : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias: target %z must be defined before the aliased value %y

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate : !fuser.tensor<4x8xf32>
    %z = hir.allocate : !fuser.tensor<4x8xf32>
    %w = hir.allocate : !fuser.tensor<4x8xf32>
    hir.alias %w, %y : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
    hir.alias %w, %z : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>
    hir.return %w : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias: %w is aliased twice

// -----

builtin.module {
  "hir.program"() <{sym_name = "main", function_type = (!fuser.tensor<4x8xf32>) -> ()}> ({
  ^bb0(%x : !fuser.tensor<4xf32>):
    "hir.return"() : () -> ()
  }) : () -> ()
}

// CHECK: Operation does not verify: hir.program @main: block arguments (!fuser.tensor<4xf32>) do not match the inputs (!fuser.tensor<4x8xf32>)

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%s : !hir.stream) -> () {
    hir.return
  }
}

// CHECK: Operation does not verify: hir.program @main: input #0 has type !hir.stream, expected a !fuser.tensor, an index or a scalar

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    hir.return
  }
}

// CHECK: Operation does not verify: hir.program @main: hir.return returns 0 values but the program declares 1 results

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf16> {
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.program @main: result #0 is declared !fuser.tensor<4x8xf16> but hir.return gives !fuser.tensor<4x8xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate : !fuser.tensor<?x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.allocate: result shape [?, 8] has 1 symbolic extents but 0 size operands

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>, %f : f32) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate sizes(%f : f32) : !fuser.tensor<?x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.allocate: size operand #0 must be an index or integer, got f32

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.allocate {preallocated} : !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.allocate: a preallocated buffer must be returned by hir.return

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    hir.for %i = %c0 to %c0 step %c1 {
      %y = hir.allocate {preallocated} : !fuser.tensor<4x8xf32>
    }
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.allocate: a preallocated buffer must be allocated at the top level of a hir.program

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    hir.deallocate %x : !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.deallocate: operand %x is program input #0; the caller owns it

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.launch @nope(%x) : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: no fuser.fusion named @nope in the module

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.launch @id(%x, %x) : (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: @id takes 1 arguments, got 2

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%h : !fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf32> {
    %y = hir.launch @id(%h) : (!fuser.tensor<4x8xf16>) -> !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: argument #0 has type !fuser.tensor<4x8xf16>, but @id expects !fuser.tensor<4x8xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y, %z = hir.launch @id(%x) : (!fuser.tensor<4x8xf32>) -> (!fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>)
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: @id returns 1 values, but the launch has 2 results

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.launch @id(%x) : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<8x4xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: result #0 has type !fuser.tensor<8x4xf32>, but @id returns !fuser.tensor<4x8xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %o = hir.allocate : !fuser.tensor<4x8xf32>
    %y = hir.launch @id(%x) outs(%o, %o : !fuser.tensor<4x8xf32>, !fuser.tensor<4x8xf32>) : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: 2 outs for the 1 results of @id

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %o = hir.allocate : !fuser.tensor<4x4xf32>
    %y = hir.launch @id(%x) outs(%o : !fuser.tensor<4x4xf32>) : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    hir.return %y : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.launch: outs #0 has type !fuser.tensor<4x4xf32>, but result #0 is !fuser.tensor<4x8xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.reshape %x {new_shape = array<i64: 5, 8>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<5x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.reshape: input [4, 8] and new_shape [5, 8] do not have the same number of elements

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.reshape %x {new_shape = array<i64: -1, 8>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<?x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.reshape: new_shape [?, 8] has 1 symbolic extents but 0 size operands

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.reshape %x {new_shape = array<i64: 8, 4>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.reshape: result has type !fuser.tensor<4x8xf32>, but the operands give !fuser.tensor<8x4xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.permute %x {dims = array<i64: 0, 0>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.permute: dims [0, 0] is not a permutation of 0..1

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.squeeze %x {dims = array<i64: 1>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.squeeze: cannot squeeze axis 1 of extent 8

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.broadcast %x {shape = array<i64: 2, 4, 8>, broadcast_dims = array<i64: 1>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<2x4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.broadcast: broadcast_dims [1] has 1 entries for input rank 2

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.broadcast %x {shape = array<i64: 2, 4, 8>, broadcast_dims = array<i64: 2, 1>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<2x4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.broadcast: broadcast_dims [2, 1] must be increasing and within rank 3

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.broadcast %x {shape = array<i64: 2, 4, 9>, broadcast_dims = array<i64: 1, 2>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<2x4x9xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.broadcast: input axis 1 of extent 8 cannot become output axis 2 of extent 9

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.slice %x {starts = array<i64: 0>, ends = array<i64: 4>, strides = array<i64: 1>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.slice: starts, ends and strides need 2 entries each

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %y = hir.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, strides = array<i64: 1, 0>} : !fuser.tensor<4x8xf32> -> !fuser.tensor<4x8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.slice: strides [1, 0] must be positive

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %f = arith.constant 0.0 : f32
    %y = hir.alias_select %x[axis = 0, %f] : !fuser.tensor<4x8xf32>, f32 -> !fuser.tensor<8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias_select: index must be an index or integer, got f32

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %c = arith.constant 0 : index
    %y = hir.alias_select %x[axis = 1, %c] : !fuser.tensor<4x8xf32>, index -> !fuser.tensor<8xf32>
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.alias_select: result has type !fuser.tensor<8xf32>, but the operands give !fuser.tensor<4xf32>

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %f = arith.constant 0.0 : f32
    hir.for %i = %f to %f step %f : f32 {
    }
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.for: lower bound must be an index or integer, got f32

// -----

builtin.module {
  hir.program @main() -> () {
    %a = arith.constant 0 : index
    %b = arith.constant 4 : i64
    "hir.for"(%a, %b, %a) ({
    ^bb0(%i : index):
    }) : (index, i64, index) -> ()
    hir.return
  }
}

// CHECK: Operation does not verify: hir.for: upper bound has type i64, but the lower bound has type index

// -----

builtin.module {
  hir.program @main() -> () {
    %a = arith.constant 0 : index
    "hir.for"(%a, %a, %a) ({
    ^bb0(%i : i64):
    }) : (index, index, index) -> ()
    hir.return
  }
}

// CHECK: Operation does not verify: hir.for: the body must have one block argument of type index (the induction variable)

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %f = arith.constant 0.0 : f32
    %s = hir.stream_for_index %f : f32
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.stream_for_index: index must be an index or integer, got f32

// -----

builtin.module {
  fuser.fusion @id(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %b = fuser.set %a : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
    fuser.output %b : !fuser.tensor<4x8xf32>
  }
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %c = arith.constant 0 : index
    %s = hir.stream_for_index %c {num_streams = 0 : i64} : index
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.stream_for_index: num_streams 0 must be positive

// -----

builtin.module {
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %st = arith.constant 0 : index
    hir.for %i = %c0 to %c4 step %st {
    }
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.for: step must be positive, got 0

// -----

builtin.module {
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %st = arith.constant -1 : index
    hir.for %i = %c0 to %c4 step %st {
    }
    hir.return %x : !fuser.tensor<4x8xf32>
  }
}

// CHECK: Operation does not verify: hir.for: step must be positive, got -1

// -----

// Use before definition inside a program.
builtin.module {
  hir.program @main(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
    %q = hir.squeeze %e {dims = array<i64: 1>} : !fuser.tensor<4x1x8xf32> -> !fuser.tensor<4x8xf32>
    %e = hir.allocate : !fuser.tensor<4x1x8xf32>
    hir.return %q : !fuser.tensor<4x8xf32>
  }
}

// CHECK: hir.program @main: hir.squeeze operand #0 (%e, result #0 of a hir.allocate) is used before it is defined
