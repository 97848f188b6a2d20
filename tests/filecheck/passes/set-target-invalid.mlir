// RUN: not fuser-opt %s -p 'set-target{gpu=a100}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not fuser-opt %s -p 'set-target{gpu=h200},select-schedulers{gpu=h100}' 2>&1 | filecheck %s --check-prefix=DISAGREE
// RUN: not fuser-opt %s -p 'set-target{gpu=h200},lower-to-kernels{gpu=h100}' 2>&1 | filecheck %s --check-prefix=LOWER

fuser.fusion @f(%x : !fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32> {
  %y = fuser.neg %x : (!fuser.tensor<4x8xf32>) -> !fuser.tensor<4x8xf32>
  fuser.output %y : !fuser.tensor<4x8xf32>
}

// UNKNOWN: fuser-opt: error: set-target: unknown GPU target 'a100'; expected one of h100, h200 or device
// DISAGREE: fuser-opt: error: select-schedulers: gpu=h100 but the module's fuser.target is 'h200'; leave gpu out to use the module's target, or set-target first
// LOWER: fuser-opt: error: lower-to-kernels: gpu=h100 but the module's fuser.target is 'h200'; leave gpu out to use the module's target, or set-target first
