"""Ported behaviours: reshape (static, dynamic, vector inputs), permute, squeeze,
pad, cat, slice, zero-size axes, indexing ops, iota and full."""

from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import check, define, randn

from fuser import DataType
from fuser.ir.dialects.fuser import ReshapeOp

pytest.importorskip("fuser.ir.reference")


def test_static_reshape_carries_keep_merge_split_view() -> None:
    x = randn(2, 10, 40)

    def fn(fd):
        t0 = fd.define_tensor(shape=[2, 10, 40], contiguity=[True, True, True], dtype=DataType.Float)
        t1 = fd.ops.reshape(t0, new_shape=[2, 10, 2, 20])
        fd.add_output(fd.ops.relu(t1))

    fd = check(fn, [x], [np.maximum(x.reshape(2, 10, 2, 20), 0)])
    assert "view = #fuser.view<keep, keep, split [2, 20]>" in fd.fusion_ir()


def test_symbolic_reshape_is_concretized_per_size_without_new_fusion() -> None:
    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.reshape(t0, new_shape=[-1, 4])
        fd.add_output(t1 * 2.0)

    fd = define(fn)
    assert "view" not in fd.fusion_ir()  # decided at execute
    for n in (2, 3, 5):
        x = randn(n, 8)
        (out,) = fd.execute([x])
        np.testing.assert_allclose(out, x.reshape(-1, 4) * 2)
    assert fd.num_runtimes() == 3  # one concretization per size ...
    fusions = [rt.fusion for rt in fd._entry.runtimes.values()]
    assert all(any(isinstance(op, ReshapeOp) and op.view is not None for op in f.walk()) for f in fusions)
    assert fd.id() == define(fn).id()  # ... but one fusion


@pytest.mark.parametrize("as_tuple", [False, True])
def test_dynamic_reshape_with_vector_input(as_tuple) -> None:
    x = randn(4, 6)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        v = fd.define_vector(3, dtype=DataType.Int)
        fd.add_output(fd.ops.reshape(t0, v))

    shape = (2, 3, 4) if as_tuple else [2, 3, 4]
    check(fn, [x, shape], [x.reshape(2, 3, 4)])
    fd = define(fn)
    (out,) = fd.execute([x, (6, 4, 1) if as_tuple else [6, 4, 1]])
    assert out.shape == (6, 4, 1)


def test_dynamic_reshape_with_scalars_and_shape() -> None:
    x, y = randn(3, 8), randn(6, 4)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s0 = fd.define_scalar(dtype=DataType.Int)
        t2 = fd.ops.reshape(t0, [s0, 4])
        fd.add_output(t2)
        fd.add_output(fd.ops.reshape(t0, t1.shape()) + t1)

    check(fn, [x, y, 6], [x.reshape(6, 4), x.reshape(6, 4) + y])


def test_permute_and_squeeze() -> None:
    x = randn(2, 1, 3, 4)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, 1, -1, -1], contiguity=[True, None, True, True], dtype=DataType.Float)
        t1 = fd.ops.squeeze(t0, [1])
        fd.add_output(fd.ops.permute(t1, dims=[2, 0, 1]))

    check(fn, [x], [x.squeeze(1).transpose(2, 0, 1)])


def test_view_outputs_share_memory_with_inputs() -> None:
    x = randn(4, 6)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.permute(t0, [1, 0]))
        fd.add_output(fd.ops.reshape(t0, [2, 12]))
        fd.add_output(fd.ops.strided_slice(t0, [1, 0], [3, 6], [1, 2]))
        fd.add_output(fd.ops.exp(t0))

    fd = define(fn)
    p, r, s, e = fd.execute([x])
    assert np.shares_memory(p, x) and np.shares_memory(r, x) and np.shares_memory(s, x)
    assert not np.shares_memory(e, x)
    np.testing.assert_array_equal(s, x[1:3, 0:6:2])
    np.testing.assert_array_equal(r, x.reshape(2, 12))


def test_pad_cat_and_pad_before_cat() -> None:
    x, y = randn(2, 3), randn(2, 5)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.pad(t0, [1, 2]))
        fd.add_output(fd.ops.pad(t0, [0, 0, 1, 1], 7.0))
        fd.add_output(fd.ops.cat([t0, t1], dim=1))
        p = fd.ops.pad(t0, [0, 2])  # (2, 5) then cat on dim 0
        fd.add_output(fd.ops.cat([p, t1], 0))

    check(
        fn,
        [x, y],
        [
            np.pad(x, ((0, 0), (1, 2))),
            np.pad(x, ((1, 1), (0, 0)), constant_values=7.0),
            np.concatenate([x, y], 1),
            np.concatenate([np.pad(x, ((0, 0), (0, 2))), y], 0),
        ],
    )


def test_slice_with_strides() -> None:
    x = randn(6, 7)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.strided_slice(t0, start_indices=[1, 2], end_indices=[5, 7], strides=[2, 1])
        fd.add_output(t1 + 1.0)

    check(fn, [x], [x[1:5:2, 2:7] + 1])


def test_zero_size_axes() -> None:
    x = randn(0, 4)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(t0 * 2.0)
        fd.add_output(fd.ops.sum(t0, [0]))
        fd.add_output(fd.ops.cat([t0, t0], 0))

    check(fn, [x], [x * 2, np.zeros(4, np.float32), np.zeros((0, 4), np.float32)])


def test_gather_take_along_axis_index_select_select() -> None:
    x = randn(4, 5)
    gi = np.array([[0, 1], [3, 2], [1, 1], [0, 4]], dtype=np.int64)
    ti = np.array([[1], [0], [3], [2]], dtype=np.int64)
    si = np.array([3, 0, 3], dtype=np.int64)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        g = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        t = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        s = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        fd.add_output(fd.ops.gather(t0, g, 1))
        fd.add_output(fd.ops.take_along_axis(t0, t, 1))
        fd.add_output(fd.ops.index_select(t0, s, 0))
        fd.add_output(fd.ops.select(t0, 2, 1))

    check(
        fn,
        [x, gi, ti, si],
        [np.take_along_axis(x, gi, 1), np.take_along_axis(x, ti, 1), x[si], x[:, 2]],
    )


def test_iota_and_full() -> None:
    def fn(fd):
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, 2, 3, DataType.Int))
        fd.add_output(fd.ops.iota(4, 0.5, 0.25, DataType.Float))
        fd.add_output(fd.ops.full([2, 3], 1.5, DataType.Half))
        fd.add_output(fd.ops.full(shape=[n, 2], fill_value=True, dtype=DataType.Bool))

    check(
        fn,
        [5],
        [2 + 3 * np.arange(5), 0.5 + 0.25 * np.arange(4), np.full((2, 3), 1.5), np.ones((5, 2), bool)],
        [np.int64, np.float32, np.float16, np.bool_],
    )


def test_aliased_output_updates_input_in_place() -> None:
    x, y = randn(3, 4), randn(3, 4)
    x0 = x.copy()

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.add(t0, t1)
        fd.add_output(t2, alias_input=t0)
        fd.add_output(fd.ops.mul(t2, 2.0))

    fd = define(fn)
    outs = fd.execute([x, y])
    assert len(outs) == 1  # the aliased output is not returned
    np.testing.assert_allclose(x, x0 + y)
    np.testing.assert_allclose(outs[0], (x0 + y) * 2)
    assert "fd.add_output(T2, alias_input=T0)" in repr(fd)
    assert "alias_inputs = array<i64: 0, -1>" in fd.fusion_ir()


def test_output_stride_order() -> None:
    x = randn(3, 4)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t0), stride_order=[0, 1])

    fd = check(fn, [x], [-x])
    (out,) = fd.execute([x])
    assert out.strides == (4, 12)  # column-major: axis 0 innermost


def _stride_ranks(strides: tuple[int, ...]) -> list[int]:
    """nvFuser's stride order of a dense array: the rank of each axis's stride."""
    order = sorted(range(len(strides)), key=lambda a: strides[a])
    ranks = [0] * len(strides)
    for r, a in enumerate(order):
        ranks[a] = r
    return ranks


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_output_stride_order_positional_and_stride_order_op(perm: tuple[int, int, int]) -> None:
    """nvFuser's ``add_output(t, stride_order)`` overload (a list of ints given second
    is the stride order, not alias_input) and ``fd.ops.stride_order``: same values,
    the requested allocation order, and both print and replay."""
    x = randn(2, 3, 4, 5)

    def positional(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True] * 4, dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t0, dims=[2]), perm)

    def op(fd):
        t0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True] * 4, dtype=DataType.Float)
        t2 = fd.ops.stride_order(fd.ops.sum(t0, dims=[2]), perm)
        fd.add_output(t2)

    want = x.sum(axis=2)
    for fn, line in [
        (positional, f"fd.add_output(T1, stride_order={list(perm)})"),
        (op, f"T2 = fd.ops.stride_order(T1, stride_order={list(perm)})"),
    ]:
        fd = check(fn, [x], [want])
        assert line in repr(fd)
        (out,) = fd.execute([x])
        np.testing.assert_allclose(out, want, rtol=1e-5)
        assert _stride_ranks(tuple(s // out.itemsize for s in out.strides)) == list(perm)


def test_stride_order_op_keeps_the_input_layout_for_other_uses() -> None:
    """The reordered tensor is a new state; the original stays row-major when it is an
    output too, and an explicit add_output stride_order wins over the op's."""
    x = randn(3, 4)

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.neg(t0)
        t2 = fd.ops.stride_order(t1, [0, 1])
        fd.add_output(t1)
        fd.add_output(t2)
        fd.add_output(t2, stride_order=[1, 0])

    fd = check(fn, [x], [-x, -x, -x])
    outs = fd.execute([x])
    assert [o.strides for o in outs] == [(16, 4), (4, 12), (16, 4)]


def test_stride_order_errors_name_the_op() -> None:
    def bad_len(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.ops.stride_order(t0, [0])

    def bad_perm(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t0), [0, 0])

    def twice(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t0), [0, 1], stride_order=[1, 0])

    def aliased(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t0), alias_input=t0, stride_order=[1, 0])

    with pytest.raises(ValueError, match=r"stride_order \[0\] must have one entry per axis"):
        define(bad_len)
    with pytest.raises(ValueError, match=r"add_output: stride_order \[0, 0\] is not a permutation"):
        define(bad_perm)
    with pytest.raises(ValueError, match="add_output: stride_order given twice"):
        define(twice)
    with pytest.raises(ValueError, match="add_output: stride_order can't be dictated for aliased"):
        define(aliased)


def test_gpu_plans_are_keyed_by_the_scalars_that_give_extents() -> None:
    """A GPU plan holds its output shapes, so scalars that become extents (iota's
    length, full's sizes, through scalar arithmetic) key it by value; a scalar that only
    scales values, or a size read from a tensor (already in the key), does not."""
    from fuser import FusionDefinition

    with FusionDefinition() as iota:
        n = iota.define_scalar(dtype=DataType.Int)
        iota.add_output(iota.ops.iota(iota.ops.add(n, n), dtype=DataType.Float))
    entry = iota._ensure_defined()
    assert entry.scalar_extents
    assert entry.gpu_key([5]) != entry.gpu_key([7])
    assert entry.gpu_key([5]) == entry.gpu_key([5])

    with FusionDefinition() as full:
        t = full.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        a = full.define_scalar(dtype=DataType.Double)
        full.add_output(full.ops.mul(full.ops.full([full.ops.size(t, 0)], a, DataType.Float), t))
    entry = full._ensure_defined()
    assert not entry.scalar_extents
    x = np.ones(4, np.float32)
    assert entry.gpu_key([x, 1.5]) == entry.gpu_key([x, 2.5])
