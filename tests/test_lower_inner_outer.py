"""Inner-outer persistent segments (layer-norm backward) lowered as a row half and a
column half: kernel outputs equal the reference; kernels compile with NVRTC."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower import concrete_shapes, default_out_layouts, lower_segment
from fuser.codegen.lower.common import LoweringError
from fuser.codegen.lower.inner_outer import half_fusion, lower_inner_outer
from fuser.codegen.nvrtc import compile_cuda
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import layout_of, run_segment_on_cpu
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100


def layer_norm_backward(dtype=DataType.Float):
    with FusionDefinition() as fd:
        dy = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        mean = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        rstd = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
        dyf, xf, wf = (fd.ops.cast(t, DataType.Float) for t in (dy, x, w))
        xhat = fd.ops.mul(fd.ops.sub(xf, mean), rstd)
        g = fd.ops.mul(dyf, fd.ops.broadcast(wf, [True, False]))
        a = fd.ops.sum(g, [1], keepdim=True)
        c = fd.ops.sum(fd.ops.mul(g, xhat), [1], keepdim=True)
        n = fd.ops.cast(fd.ops.size(x, 1), DataType.Float)
        t = fd.ops.sub(fd.ops.sub(fd.ops.mul(g, n), a), fd.ops.mul(xhat, c))
        fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.div(rstd, n), t), dtype))
        fd.add_output(fd.ops.sum(fd.ops.mul(dyf, xhat), [0]))
        fd.add_output(fd.ops.sum(dyf, [0]))
    return fd.fusion()


def inputs(rows: int, cols: int, dt=np.float32):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(dt)
    mean = x.astype(np.float32).mean(1, keepdims=True)
    rstd = 1 / np.sqrt(x.astype(np.float32).var(1, keepdims=True) + 1e-5)
    return [rng.standard_normal((rows, cols)).astype(dt), x, mean, rstd.astype(np.float32),
            rng.standard_normal(cols).astype(dt)]


def lower_for(fusion, xs):
    lays = [layout_of(x) for x in xs]
    shapes = concrete_shapes(fusion, [x.shape for x in xs])
    return lower_inner_outer(
        fusion, lays, [None] * len(xs), default_out_layouts(fusion, shapes, lays), H100, "ln_bwd", lower_segment
    )


def test_the_scheduler_picks_inner_outer_for_enough_rows() -> None:
    fusion = layer_norm_backward()
    sel = select(fusion, bind_sizes(fusion, [(264, 64), (264, 64), (264, 1), (264, 1), (64,)]), H100)
    assert sel.kind == "inner_outer_persistent"


@pytest.mark.parametrize("rows,cols", [(6, 40), (9, 64)])
def test_layer_norm_backward_matches_reference(rows: int, cols: int) -> None:
    fusion = layer_norm_backward()
    xs = inputs(rows, cols)
    lowered = lower_for(fusion, xs)
    assert lowered.scheduler == "inner_outer_persistent"
    assert {a.index for k in lowered.kernels for a in k.args if a.kind == "output"} == {0, 1, 2}
    ours, _ = run_segment_on_cpu(fusion, xs, lowered)
    ref = run_fusion(fusion, [x.copy() for x in xs])
    for o, r in zip(ours, ref, strict=True):
        np.testing.assert_allclose(o, r, rtol=2e-5, atol=2e-5)
    for m in lowered.modules():
        compile_cuda(print_cuda(m), name="ln_bwd", fusion="ln_bwd")


def test_half_fusion_keeps_inputs_and_drops_dead_ops() -> None:
    fusion = layer_norm_backward()
    half = half_fusion(fusion, [1, 2], "cols")
    assert len(half.inputs) == len(fusion.inputs)
    assert len(half.output_op.values) == 2
    names = [op.name for op in half.body.block.ops]
    assert names.count("fuser.sum") == 2  # the row sums are gone


def test_an_output_needing_both_kinds_is_rejected() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        r = fd.ops.sum(x, [1], keepdim=True)
        c = fd.ops.sum(x, [0], keepdim=True)
        fd.add_output(fd.ops.add(fd.ops.add(x, r), c))
    fusion = fd.fusion()
    x = np.ones((4, 40), np.float32)
    with pytest.raises(LoweringError, match="depends on both row and column reductions"):
        lower_for(fusion, [x])
