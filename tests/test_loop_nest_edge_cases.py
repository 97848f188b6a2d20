"""Loop nests of the compiler driver's schedules for fusions at the edges: a rank-0
tensor, reductions over axes of extent 1 (one element per result, computed where it is
read, so chains of them are no sibling nest), and outputs of one nest that vectorize
differently (an f16 output stores 8 lanes as a vector, an f32 one lane by lane). Each
was a random fusion the driver left to the per-scheduler templates (seeds 25, 301, 425
and 427), as was the kernel of a no-op segment (an expand the host cannot view); now
each lowers from its loop nest, the CPU kernel interpreter runs it to the reference
result, and NVRTC compiles it."""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.frontend.execution import execute_kernels_on_cpu, lowered_segments
from fuser.ir.dialects.iterdomain import LoopOp


def _check(fd: FusionDefinition, xs: Sequence[np.ndarray], rtol: float = 1e-5) -> list[str]:
    """Every segment lowers from its loop nest; the kernels run on the
    CPU to ``fd.execute``'s reference result; the CUDA sources, returned, compile."""
    entry = fd._ensure_defined()
    lowered = lowered_segments(entry, list(xs))
    for seg, _ in lowered:
        assert any(isinstance(op, LoopOp) for op in seg.body.block.ops), seg.sym_name.data
    got = execute_kernels_on_cpu(entry, list(xs))
    want = fd.execute(list(xs))
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=1e-6)
    nvrtc = pytest.importorskip("fuser.codegen.nvrtc")
    sources = []
    for _, low in lowered:
        for k in low.kernels:
            sources.append(print_cuda(k.module))
            nvrtc.compile_cuda(sources[-1], name=k.name)
    return sources


def test_a_rank_0_fusion_is_one_thread() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Half)
        b = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Half)
        fd.add_output(fd.ops.sub(a, b))
    xs = [np.array(1.5, np.float16), np.array(-0.25, np.float16)]
    (src,) = _check(fd, xs)
    assert "__launch_bounds__(1)" in src and "out0[0] =" in src


def test_a_sum_over_a_sum_over_an_extent_1_axis() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[1, 1], contiguity=[None, None], dtype=DataType.Float)
        b = fd.ops.broadcast_in_dim(x, shape=[1, 3, 1], broadcast_dims=[0, 2])
        s = fd.ops.sum(fd.ops.sum(b, dims=[2], keepdim=True), dims=[2], keepdim=True)
        fd.add_output(fd.ops.sum(s, dims=[0, 2], keepdim=False))
    _check(fd, [np.array([[-0.75]], np.float32)])


@pytest.mark.parametrize("correction", [0, 1])
def test_a_var_of_a_var_means_mean_over_an_extent_1_axis(correction: int) -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Float)
        y = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Double)
        var, mean = fd.ops.var_mean(x, dims=[0], correction=correction, keepdim=True)
        v2 = fd.ops.var(mean, dims=[0], correction=0, keepdim=False)
        fd.add_output(fd.ops.maximum(v2, v2))
        fd.add_output(fd.ops.mul(var, y))
        fd.add_output(mean)
    rng = np.random.default_rng(3)
    _check(fd, [rng.standard_normal((1, 5)).astype(np.float32), rng.standard_normal((1, 5))])


def test_outputs_after_a_reduction_that_vectorize_differently() -> None:
    with FusionDefinition() as fd:
        h = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
        f = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fl = fd.ops.floor(h)
        fd.add_output(fd.ops.mul(fl, fd.ops.minimum(fl, f)))  # f32
        fd.add_output(fl)  # f16
        fd.add_output(fd.ops.cat([fl, fd.ops.sum(fl, dims=[0], keepdim=True)], 0))
    rng = np.random.default_rng(4)
    xs = [(rng.standard_normal((32, 128)) * 4).astype(np.float16), rng.standard_normal((32, 128)).astype(np.float32)]
    sources = _check(fd, xs, rtol=1e-3)
    # the f16 output is stored 8 lanes at a time, the f32 one lane by lane
    assert any("Vec<__half, 8>" in s for s in sources)


def test_a_no_op_segments_kernel_is_its_written_pointwise_loop_nest() -> None:
    # Random fusion 13's no-op segment: two expands of a broadcast input. The host
    # returns views where it can; the kernel that materializes it is a loop nest too.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.BFloat16)
        y = fd.ops.broadcast_in_dim(x, shape=[8, 2, 16], broadcast_dims=[1, 2])
        fd.add_output(fd.ops.broadcast_in_dim(y, shape=[8, 2, 8, 16], broadcast_dims=[0, 1, 3]))
    xs = [np.random.default_rng(5).standard_normal((2, 1)).astype(ml_dtypes.bfloat16)]
    (seg, _), = lowered_segments(fd._ensure_defined(), xs)
    assert 'kind = "no_op"' in str(seg)
    (src,) = _check(fd, xs)
    assert "Vec<__nv_bfloat16, 8>" in src


@pytest.mark.parametrize("rows", [0, 3])
def test_a_no_op_segments_outputs_of_several_shapes_are_loop_nests(rows: int) -> None:
    """Two expands of different shapes: a written loop nest per shape (a kernel each
    where their loops differ), none for an empty one."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
        y = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Half)
        fd.add_output(fd.ops.broadcast_in_dim(x, shape=[rows, 4], broadcast_dims=[0, 1]))
        fd.add_output(fd.ops.broadcast_in_dim(y, shape=[2, 3, 16], broadcast_dims=[1, 2]))
    xs = [np.arange(rows, dtype=np.float32).reshape(rows, 1), np.linspace(-1, 1, 16, dtype=np.float16)[None]]
    ((seg, low),) = lowered_segments(fd._ensure_defined(), xs)
    assert 'kind = "no_op"' in str(seg.attributes["fuser.schedule"])
    stored = [[a.index for a in k.args if a.kind == "output"] for k in low.kernels]
    assert stored == ([[1]] if rows == 0 else [[0], [1]])  # 4 floats a vector, 8 halves
    _check(fd, xs)


def test_an_empty_output_gets_no_kernel() -> None:
    # nvFuser's test_zero_size_dim: a loop nest over 0x0 would divide by its zero
    # extents, and there is nothing to store: the segment lowers to no kernel.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[0, 0], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.relu(x))
    xs = [np.ones((0, 0), np.float32)]
    ((_, low),) = lowered_segments(fd._ensure_defined(), xs)
    assert low.kernels == []
    assert fd.generate_cuda_code(xs) == ""
    assert fd.execute(xs)[0].shape == (0, 0)
    (out,) = execute_kernels_on_cpu(fd._ensure_defined(), xs)  # divided by zero before
    assert out.shape == (0, 0) and out.dtype == np.float32


def test_an_empty_output_beside_a_full_one_is_left_out_of_the_kernel() -> None:
    """relu(x) of a 0x5 input is empty; its column sum is five zeros: one kernel, the
    sum's loop nest over zero rows, stores the sum alone."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.relu(x))
        fd.add_output(fd.ops.sum(x, [0]))
    xs = [np.ones((0, 5), np.float32)]
    ((_, low),) = lowered_segments(fd._ensure_defined(), xs)
    (kernel,) = low.kernels
    assert [a.index for a in kernel.args if a.kind == "output"] == [1]
    empty, sums = execute_kernels_on_cpu(fd._ensure_defined(), xs)
    assert empty.shape == (0, 5) and np.array_equal(sums, np.zeros(5, np.float32))


# The outer persistent kind from its two written loop nests (statistics, apply):
# Welford statistics over the rows, then (x - mean) * rsqrt(var + eps), at shapes the
# splits do not divide and in bf16 (vectors of 8 in the apply nest, 4 in the
# statistics' f32 nest).
@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((64, 24), DataType.Float), ((45, 37), DataType.Float), ((96, 48), DataType.BFloat16)],
)
def test_an_outer_normalization_runs_from_its_two_loop_nests(shape: tuple[int, int], dtype: DataType) -> None:
    import ml_dtypes

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
        xf = fd.ops.cast(x, DataType.Float)
        var, mean = fd.ops.var_mean(xf, dims=[0], correction=0, keepdim=True)
        y = fd.ops.mul(fd.ops.sub(xf, mean), fd.ops.rsqrt(fd.ops.add(var, fd.define_scalar(1e-5))))
        fd.add_output(fd.ops.cast(y, dtype))
        fd.add_output(mean)
    npdt = np.float32 if dtype == DataType.Float else ml_dtypes.bfloat16
    xs = [np.random.default_rng(1).standard_normal(shape).astype(npdt)]
    (seg, _), *_ = lowered_segments(fd._ensure_defined(), xs)
    assert 'kind = "outer_persistent"' in str(seg.attributes["fuser.schedule"])
    sources = _check(fd, xs, rtol=1e-2 if dtype == DataType.BFloat16 else 1e-5)
    apply = next(s for s in sources if "_apply(" in s)
    if dtype == DataType.BFloat16:  # 16-byte vectors of the input and the output
        assert "Vec<__nv_bfloat16, 8> in0_v = *reinterpret_cast" in apply
        assert "*reinterpret_cast<Vec<__nv_bfloat16, 8>*>(&out1[" in apply


def test_a_two_pass_variance_over_the_rows_is_segmented_into_loop_nests() -> None:
    """sum((x - mean)^2) over the rows reads the mean, a reduction: the outer persistent
    kind computes one level of statistics, so it rejects the chain and the segmenter
    splits it (random fusion 643 fell back to the columns template before)."""
    from fuser.schedulers.outer_persistent import OuterPersistentScheduler

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        mean = fd.ops.div(fd.ops.sum(x, [0], keepdim=True), fd.define_scalar(40.0))
        d = fd.ops.sub(x, mean)
        fd.add_output(fd.ops.div(fd.ops.sum(fd.ops.mul(d, d), [0], keepdim=True), fd.define_scalar(40.0)))
        fd.add_output(d)
    xs = [np.random.default_rng(7).standard_normal((40, 24)).astype(np.float32)]
    fusion = fd._ensure_defined().fusion
    reject = OuterPersistentScheduler.can_schedule_compile_time(fusion)
    assert reject is not None and "reads another reduction's result" in reject.reason
    segments = lowered_segments(fd._ensure_defined(), xs)
    assert len(segments) > 1
    _check(fd, xs, rtol=1e-4)


@pytest.mark.parametrize("view", ["squeeze", "unsqueeze"])
def test_a_held_reduction_read_through_a_squeezing_reshape(view: str) -> None:
    """A row reduction held in registers, reshaped to drop (or add) an axis of extent 1
    and read by an op: the reshape keeps the other axes' indices, so the op reads the
    reduction at the index it is held at. Through the linear index (``(i0 * 8 + i1) /
    8``) the lowering could not tell and rejected the plan (random fusion seed 3033 on
    the GPU)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        keep = view == "squeeze"
        m = fd.ops.min(x, dims=[2], keepdim=keep)
        r = fd.ops.reshape(m, [32, 8] if keep else [32, 8, 1])
        fd.add_output(fd.ops.maximum(r, fd.define_scalar(0.0)))
        fd.add_output(fd.ops.gt(x, fd.define_scalar(-1.0)))
    xs = [np.random.default_rng(3).standard_normal((32, 8, 33)).astype(np.float32)]
    _check(fd, xs)


def test_an_output_that_is_a_persistent_buffer_is_not_held() -> None:
    """``exp(x)`` is an output and a persistent buffer of the min over the whole row
    (read again by ``min + exp(x)``): holding it in registers at the reduction's loop
    would leave it without a store (the lowering rejected the plan, random fusion seed
    4321 on the GPU), so it is computed inline where the loop nest stores it."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[1, -1], contiguity=[None, True], dtype=DataType.Float)
        e = fd.ops.exp(x)
        m = fd.ops.min(e, dims=[0, 1], keepdim=True)
        fd.add_output(fd.ops.add(m, e))
        fd.add_output(e)
        fd.add_output(m)
        fd.add_output(fd.ops.cast(fd.ops.ge(x, fd.define_scalar(0.0)), DataType.Int32))
    for n in (8, 1000):
        _check(fd, [np.random.default_rng(n).standard_normal((1, n)).astype(np.float32)])


def test_sibling_reductions_stored_and_not_take_one_vectorization() -> None:
    """Column sum and min of one input (siblings: one loop nest folds both), the min an
    output and the sum only read by ``min + sum``: the stored min's lanes were a vector
    and the sum's a serial loop, loop nests the lowering would not fold together
    (random fusion seed 7089 on the GPU). Siblings now take one vectorization."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.sum(x, dims=[0], keepdim=True)
        m = fd.ops.min(x, dims=[0], keepdim=True)
        fd.add_output(m)
        fd.add_output(fd.ops.add(m, s))
    # rtol: a sum of 256 floats in another order, where min + sum nearly cancels
    _check(fd, [np.random.default_rng(5).standard_normal((256, 256)).astype(np.float32)], rtol=1e-4)
