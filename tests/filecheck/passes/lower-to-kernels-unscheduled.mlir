// RUN: not fuser-opt %s -p lower-to-kernels 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not fuser-opt %s -p select-schedulers,lower-to-kernels 2>&1 | filecheck %s --check-prefix=SELECTED
// RUN: fuser-opt %s -p select-schedulers,schedule-fusions,lower-to-kernels | filecheck %s

// lower-to-kernels lowers only the loop nest written in the fusion (iterdomain ops):
// a fusion without one names the passes that write it, whether or not a scheduler
// was selected. After schedule-fusions the same fusion lowers.

fuser.fusion @neg(%x : !fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32> {
  %y = fuser.neg %x : (!fuser.tensor<8x4xf32>) -> !fuser.tensor<8x4xf32>
  fuser.output %y : !fuser.tensor<8x4xf32>
}

// BARE: fuser-opt: error: lower-to-kernels: cannot lower @neg: @neg has no loop nest (no iterdomain.loop op): run select-schedulers and schedule-fusions first, or write its loop nest
// BARE-NOT: Traceback

// SELECTED: fuser-opt: error: lower-to-kernels: cannot lower @neg: @neg has no loop nest (no iterdomain.loop op): run schedule-fusions after select-schedulers to write its pointwise schedule
// SELECTED-NOT: Traceback

// CHECK-LABEL: fuser.fusion @neg
// CHECK-SAME:    fuser.kernels = [@neg_kernel]
// CHECK:         iterdomain.loop %y
// CHECK:       kernel.func @neg_kernel(%x: memref<?xf32>, %out0: memref<?xf32>)
// CHECK:         arith.negf
// CHECK:         kernel.return
