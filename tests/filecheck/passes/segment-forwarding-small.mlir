// RUN: fuser-opt %s --segment | filecheck %s

// A tiny GPT-2's loss backward partition as the torch backend defines it
// (frontend/loss_decompositions.py). The gradient of the picked log-probabilities,
// %dy = where(iota == target, scale, 0), is [32, 50257] but built from small tensors
// alone (the targets, a 0-d scale), so it is forwarded (segment's forwarded_ops,
// rule 2): the segment that reduces it and the one that subtracts it both recompute
// it, and no segment writes a [32, 50257] intermediate. Without the rule the reducing
// segment wrote %dy in f32 for the other to read back.

fuser.fusion @xent_bwd(%g : !fuser.tensor<f32>, %valid : !fuser.tensor<32xi1>, %labels : !fuser.tensor<2x17xi64>,
                       %logits : !fuser.tensor<2x16x50257xbf16>, %amax : !fuser.tensor<32x1xf32>,
                       %lse : !fuser.tensor<32x1xf32>) -> !fuser.tensor<2x16x50257xbf16> {
  %ng = fuser.neg %g : (!fuser.tensor<f32>) -> !fuser.tensor<f32>
  %n = fuser.sum %valid {dims = array<i64: 0>} : (!fuser.tensor<32xi1>) -> !fuser.tensor<i64>
  %nf = fuser.cast %n : (!fuser.tensor<i64>) -> !fuser.tensor<f32>
  %scale = fuser.truediv %ng, %nf : (!fuser.tensor<f32>, !fuser.tensor<f32>) -> !fuser.tensor<f32>
  %shifted = fuser.slice %labels {starts = array<i64: 0, 1>, ends = array<i64: 2, 17>, strides = array<i64: 1, 1>} : (!fuser.tensor<2x17xi64>) -> !fuser.tensor<2x16xi64>
  %copied = fuser.set %shifted : (!fuser.tensor<2x16xi64>) -> !fuser.tensor<2x16xi64>
  %t = fuser.reshape %copied {new_shape = array<i64: 32>, view = #fuser.view<merge 2>} : !fuser.tensor<2x16xi64> -> !fuser.tensor<32xi64>
  %c50257 = fuser.constant 50257 : i64
  %c0 = fuser.constant 0 : i64
  %c1 = fuser.constant 1 : i64
  %classes = fuser.iota %c50257, %c0, %c1 : (i64, i64, i64) -> !fuser.tensor<50257xi64>
  %none = fuser.constant -1 : i64
  %none_t = fuser.full %none {shape = array<i64>} : i64 -> !fuser.tensor<i64>
  %tv = fuser.where %valid, %t, %none_t : (!fuser.tensor<32xi1>, !fuser.tensor<32xi64>, !fuser.tensor<i64>) -> !fuser.tensor<32xi64>
  %cb = fuser.reshape %classes {new_shape = array<i64: 1, 50257>, view = #fuser.view<broadcast, keep>} : !fuser.tensor<50257xi64> -> !fuser.tensor<1x50257xi64>
  %tb = fuser.reshape %tv {new_shape = array<i64: 32, 1>, view = #fuser.view<keep, broadcast>} : !fuser.tensor<32xi64> -> !fuser.tensor<32x1xi64>
  %hit = fuser.eq %cb, %tb : (!fuser.tensor<1x50257xi64>, !fuser.tensor<32x1xi64>) -> !fuser.tensor<32x50257xi1>
  %zero = fuser.constant 0.000000e+00 : f64
  %zero_t = fuser.full %zero {shape = array<i64>} : f64 -> !fuser.tensor<f32>
  %dy = fuser.where %hit, %scale, %zero_t : (!fuser.tensor<32x50257xi1>, !fuser.tensor<f32>, !fuser.tensor<f32>) -> !fuser.tensor<32x50257xf32>
  %xf = fuser.cast %logits : (!fuser.tensor<2x16x50257xbf16>) -> !fuser.tensor<2x16x50257xf32>
  %x = fuser.reshape %xf {new_shape = array<i64: 32, 50257>, view = #fuser.view<merge 2, keep>} : !fuser.tensor<2x16x50257xf32> -> !fuser.tensor<32x50257xf32>
  %d = fuser.sub %x, %amax : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x1xf32>) -> !fuser.tensor<32x50257xf32>
  %logp = fuser.sub %d, %lse : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x1xf32>) -> !fuser.tensor<32x50257xf32>
  %p = fuser.exp %logp : (!fuser.tensor<32x50257xf32>) -> !fuser.tensor<32x50257xf32>
  %s = fuser.sum %dy {dims = array<i64: 1>, keepdim = true} : (!fuser.tensor<32x50257xf32>) -> !fuser.tensor<32x1xf32>
  %m = fuser.mul %p, %s : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x1xf32>) -> !fuser.tensor<32x50257xf32>
  %dx = fuser.sub %dy, %m : (!fuser.tensor<32x50257xf32>, !fuser.tensor<32x50257xf32>) -> !fuser.tensor<32x50257xf32>
  %dx3 = fuser.reshape %dx {new_shape = array<i64: 2, 16, 50257>, view = #fuser.view<split [2, 16], keep>} : !fuser.tensor<32x50257xf32> -> !fuser.tensor<2x16x50257xf32>
  %out = fuser.cast %dx3 : (!fuser.tensor<2x16x50257xf32>) -> !fuser.tensor<2x16x50257xbf16>
  fuser.output %out : !fuser.tensor<2x16x50257xbf16>
}

// CHECK-LABEL: fuser.fusion @xent_bwd_seg0(%g: !fuser.tensor<f32>, %valid: !fuser.tensor<32xi1>) -> !fuser.tensor<f32>
// CHECK:         fuser.output %scale : !fuser.tensor<f32>
// CHECK-LABEL: fuser.fusion @xent_bwd_seg1(%valid: !fuser.tensor<32xi1>, %labels: !fuser.tensor<2x17xi64>, %scale: !fuser.tensor<f32>) -> (!fuser.tensor<32x1xi64>, !fuser.tensor<32x1xf32>)
// CHECK:         %dy = fuser.where %hit, %scale, %zero_t
// CHECK-NEXT:    %s = fuser.sum %dy
// CHECK-NEXT:    fuser.output %tb, %s : !fuser.tensor<32x1xi64>, !fuser.tensor<32x1xf32>
// CHECK-LABEL: fuser.fusion @xent_bwd_seg2(%logits: !fuser.tensor<2x16x50257xbf16>, %amax: !fuser.tensor<32x1xf32>, %lse: !fuser.tensor<32x1xf32>, %tb: !fuser.tensor<32x1xi64>, %scale: !fuser.tensor<f32>, %s: !fuser.tensor<32x1xf32>)
// CHECK:         %classes = fuser.iota
// CHECK:         %dy = fuser.where %hit, %scale, %zero_t
// CHECK:         %m = fuser.mul %p, %s
// CHECK-NEXT:    %1 = fuser.reshape %dy
// CHECK-LABEL: hir.program @main
// CHECK-NOT:     hir.allocate : !fuser.tensor<32x50257xf32>
// CHECK:         hir.launch @xent_bwd_seg0
// CHECK-NOT:     hir.allocate : !fuser.tensor<32x50257xf32>
// CHECK:         hir.launch @xent_bwd_seg1
// CHECK-NOT:     hir.allocate : !fuser.tensor<32x50257xf32>
// CHECK:         hir.launch @xent_bwd_seg2
// CHECK:         hir.return
