// RUN: fuser-opt %s --cse -p canonicalize,dce --canonicalize --print-between-passes | filecheck %s
// RUN: fuser-opt %s -p dce --cse --print-between-passes | filecheck %s --check-prefix=PFIRST

// Pass flags and -p pipelines run in command-line order: cse, canonicalize, dce,
// canonicalize; --print-between-passes shows the IR after every pass but the last.

fuser.fusion @f(%a : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {
  %0 = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  %1 = fuser.exp %a : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  %2 = fuser.add %0, %1 : (!fuser.tensor<4xf32>, !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>
  fuser.output %2 : !fuser.tensor<4xf32>
}

// CHECK:      IR after cse:
// CHECK:        %0 = fuser.exp %a
// CHECK-NEXT:   %1 = fuser.add %0, %0
// CHECK:      IR after canonicalize:
// CHECK:      IR after dce:
// CHECK-NOT:  IR after
// CHECK:      fuser.fusion @f
// CHECK-NEXT:   %0 = fuser.exp %a
// CHECK-NEXT:   %1 = fuser.add %0, %0
// CHECK-NEXT:   fuser.output %1

// PFIRST:     IR after dce:
// PFIRST-NOT: IR after
