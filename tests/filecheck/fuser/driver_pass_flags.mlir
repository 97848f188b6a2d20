// RUN: fuser-opt %s --canonicalize | filecheck %s
// RUN: fuser-opt %s -p canonicalize | filecheck %s
// RUN: fuser-opt %s --canonicalize= | filecheck %s
// RUN: fuser-opt %s | filecheck %s --check-prefix=NOPASS
// RUN: fuser-opt --help | filecheck %s --check-prefix=HELP

// Every pass is a flag: --canonicalize is -p canonicalize (an empty option list is
// allowed). Without passes the IR is printed unchanged.

fuser.fusion @f(%a : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %0 = fuser.permute %a {dims = array<i64: 0, 1>} : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %0 : !fuser.tensor<4x8xf32>
}

// CHECK-LABEL: fuser.fusion @f
// CHECK-NEXT:    fuser.output %a : !fuser.tensor<4x8xf32>

// NOPASS:      fuser.permute

// HELP: passes as flags
// HELP: --canonicalize
