// RUN: fuser-opt %s | fuser-opt | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// An output aliased to an input (nvFuser's add_output(t, alias_input=inp), e.g. a
// running-stats update) is written in place and is not a result of the fusion.

fuser.fusion @running_mean(%stats : !fuser.tensor<64xf32>, %x : !fuser.tensor<32x64xf32>, %momentum : f64) -> !fuser.tensor<64xf32> {
  %mean = fuser.sum %x {dims = array<i64: 0>} : (!fuser.tensor<32x64xf32>) -> !fuser.tensor<64xf32>
  %upd = fuser.lerp %stats, %mean, %momentum : (!fuser.tensor<64xf32>, !fuser.tensor<64xf32>, f64) -> !fuser.tensor<64xf32>
  fuser.output %upd, %mean : !fuser.tensor<64xf32>, !fuser.tensor<64xf32> {alias_inputs = array<i64: 0, -1>}
}

// CHECK-LABEL: fuser.fusion @running_mean(%stats: !fuser.tensor<64xf32>, %x: !fuser.tensor<32x64xf32>, %momentum: f64) -> !fuser.tensor<64xf32> {
// CHECK-NEXT:    %mean = fuser.sum %x {dims = array<i64: 0>}
// CHECK-NEXT:    %upd = fuser.lerp %stats, %mean, %momentum
// CHECK-NEXT:    fuser.output %upd, %mean : !fuser.tensor<64xf32>, !fuser.tensor<64xf32> {alias_inputs = array<i64: 0, -1>}
