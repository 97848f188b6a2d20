"""The iterdomain dialect and the schedule builder/reader (fuser.ir.schedule)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from fuser.ir.dialects.fuser import (
    BINARY_OP_CLASSES,
    FusionOp,
    OutputOp,
    ReshapeOp,
    SumOp,
    TensorType,
)
from fuser.ir.dialects.iterdomain import (
    IterDomainType,
    IterType,
    LogicalOp,
    LoopOp,
    MergeOp,
    ParallelType,
    ResizeOp,
    RfactorOp,
    SplitOp,
    logical_domain_types,
    logical_to_tensor_axes,
    merge_type,
    resize_type,
    split_types,
)
from fuser.ir.dtypes import DType
from fuser.ir.reshape_analysis import analyze_reshape
from fuser.ir.schedule import (
    Const,
    Schedule,
    Var,
    emit_reshape_view,
    loop_structure,
    view_transforms,
)
from fuser.ir.shapes import DYN, ShapeError

ID = IterDomainType


def make_fusion(
    in_shapes: Sequence[Sequence[int]], build
) -> tuple[ModuleOp, FusionOp, list[SSAValue]]:
    """A fusion over f32 inputs whose body ``build(block, args)`` fills; it returns
    the values to output."""
    types = [TensorType(s, DType.float32) for s in in_shapes]
    block = Block(arg_types=types)
    outs = build(block, list(block.args))
    block.add_op(OutputOp(outs))
    fusion = FusionOp("f", types, [v.type for v in outs], Region(block))
    module = ModuleOp([fusion])
    module.verify()
    return module, fusion, outs


def add_fusion(shape: Sequence[int]) -> tuple[ModuleOp, FusionOp, SSAValue]:
    def build(block: Block, args: list[SSAValue]) -> list[SSAValue]:
        op = BINARY_OP_CLASSES["add"](args[0], args[0])
        block.add_op(op)
        return [op.results[0]]

    module, fusion, outs = make_fusion([shape], build)
    return module, fusion, outs[0]


def ops_of(fusion: FusionOp) -> list[str]:
    return [op.name for op in fusion.body.block.ops]


# ---- extent rules -------------------------------------------------------------------


def test_split_extents() -> None:
    o, i = split_types(ID(12), 5)
    assert (o.extent, i.extent) == (3, 5)
    o, i = split_types(ID(12), 5, inner_split=False)
    assert (o.extent, i.extent) == (5, 3)
    o, i = split_types(ID(DYN, IterType.reduction), 4)
    assert (o.extent, i.extent) == (DYN, 4)
    assert o.iter_type == i.iter_type == IterType.reduction


def test_merge_and_resize_extents() -> None:
    assert merge_type(ID(8), ID(3)) == ID(24)
    assert merge_type(ID(8), ID(DYN)) == ID(DYN)
    assert merge_type(ID(1, IterType.broadcast), ID(12, IterType.reduction)) == ID(
        12, IterType.reduction
    )
    assert merge_type(ID(8), ID(12, IterType.reduction)) is None
    assert merge_type(ID(8, IterType.symbolic), ID(3)) == ID(24, IterType.symbolic)
    assert resize_type(ID(10), 2, -3) == ID(9)
    assert resize_type(ID(1, IterType.broadcast), 0, 3) == ID(4)
    assert resize_type(ID(1, IterType.broadcast), 0, 0) == ID(1, IterType.broadcast)


def test_id_type_syntax() -> None:
    assert str(ID(12)) == "!iterdomain.id<12>"
    assert str(ID(DYN, IterType.reduction, ParallelType.TIDx)) == (
        "!iterdomain.id<?, reduction, TIDx>"
    )
    assert str(ID(4, parallel_type=ParallelType.vectorize)) == "!iterdomain.id<4, vectorize>"


def test_declared_extent_that_disagrees_is_an_error() -> None:
    _, fusion, t = add_fusion([12])
    logical = LogicalOp(t)
    split = SplitOp.create(
        operands=[logical.ids[0]],
        properties=dict(SplitOp(logical.ids[0], 5).properties),
        result_types=[ID(2), ID(5)],
    )
    fusion.body.block.insert_ops_before([logical, split], fusion.output_op)
    with pytest.raises(
        VerifyException, match=r"splitting extent 12 by 5 .* gives outer 3 and inner 5"
    ):
        split.verify()
    merge = MergeOp.create(operands=[split.outer, split.inner], result_types=[ID(11)])
    fusion.body.block.insert_op_before(merge, fusion.output_op)
    with pytest.raises(VerifyException, match="merging extents 2 and 5 gives 10"):
        merge.verify()


# ---- logical domains ----------------------------------------------------------------


@pytest.mark.parametrize("keepdim", [False, True])
def test_logical_domain_of_a_reduction(keepdim: bool) -> None:
    def build(block: Block, args: list[SSAValue]) -> list[SSAValue]:
        op = SumOp(args[0], [1], keepdim=keepdim)
        block.add_op(op)
        return [op.result]

    _, _, (s,) = make_fusion([[8, 12, 1]], build)
    assert logical_domain_types(s) == [
        ID(8),
        ID(12, IterType.reduction),
        ID(1, IterType.broadcast),
    ]
    assert logical_to_tensor_axes(s) == ([0, 1, 2] if keepdim else [0, None, 1])


# ---- the schedule builder -----------------------------------------------------------


def test_pointwise_schedule() -> None:
    module, fusion, t = add_fusion([1024, 4096])
    s = Schedule(t).merge(0).split(0, 128 * 4).split(1, 4)
    assert s.extents == [8192, 128, 4]
    s.parallelize(0, "BIDx").parallelize(1, ParallelType.TIDx).parallelize(-1, "vectorize")
    loop = s.emit()
    module.verify()
    assert isinstance(loop, LoopOp)
    assert ops_of(fusion)[1:] == [
        "iterdomain.logical",
        "iterdomain.merge",
        "iterdomain.split",
        "iterdomain.split",
        "iterdomain.parallelize",
        "iterdomain.parallelize",
        "iterdomain.parallelize",
        "iterdomain.loop",
        "fuser.output",
    ]
    ls = loop_structure(fusion, t)
    assert [(a.static_extent, a.parallel_type) for a in ls.loops] == [
        (8192, ParallelType.BIDx),
        (128, ParallelType.TIDx),
        (4, ParallelType.vectorize),
    ]
    assert [str(a.index) for a in ls.logical] == [
        "(((i0 * 512) + ((i1 * 4) + i2)) / 4096)",
        "(((i0 * 512) + ((i1 * 4) + i2)) % 4096)",
    ]
    env = ls.index_env([3, 5, 2])
    flat = 3 * 512 + 5 * 4 + 2
    assert [a.index.evaluate(env) for a in ls.logical] == [flat // 4096, flat % 4096]


def _covered(ls, extents: Sequence[int], env_extra=None) -> list[tuple[int, ...]]:
    """Logical index tuples reached by all loop iterations, predicated to bounds."""
    hits = []
    loop_ext = [a.extent.evaluate(env_extra or {}) for a in ls.loops]
    for idx in itertools.product(*(range(e) for e in loop_ext)):
        env = ls.index_env(idx, env_extra)
        li = tuple(a.index.evaluate(env) for a in ls.logical)
        if all(0 <= x < e for x, e in zip(li, extents, strict=True)):
            hits.append(li)
    return hits


@pytest.mark.parametrize(
    "transforms",
    [
        lambda s: s.merge(0).split(0, 4).split(0, 4),
        lambda s: s.split(1, 3).reorder([2, 0, 1]).merge(1),
        lambda s: s.split(0, 3, inner_split=False).merge(1, 2).parallelize(0, "TIDy"),
        lambda s: s.reorder([1, 0]).merge(0).split(0, 16),
    ],
)
def test_loops_cover_every_element_once(transforms) -> None:
    _, fusion, t = add_fusion([10, 7])
    transforms(Schedule(t)).emit()
    hits = _covered(loop_structure(fusion, t), [10, 7])
    assert sorted(hits) == list(itertools.product(range(10), range(7)))


def test_symbolic_extents_in_loop_structure() -> None:
    _, fusion, t = add_fusion([DYN, 6])
    Schedule(t).merge(0).split(0, 4).parallelize(1, "TIDx").emit()
    ls = loop_structure(fusion, t)
    assert str(ls.loops[0].extent) == "ceilDiv((N0 * 6), 4)"
    assert ls.loops[1].extent == Const(4)
    hits = _covered(ls, [5, 6], {"N0": 5})
    assert sorted(hits) == list(itertools.product(range(5), range(6)))


def test_resize_index_is_shifted() -> None:
    _, fusion, t = add_fusion([6])
    Schedule(t).resize(0, 2, -1).emit()
    ls = loop_structure(fusion, t)
    assert ls.loops[0].static_extent == 7
    assert ls.logical[0].index == Var("i0") - 2
    assert _covered(ls, [6]) == [(i,) for i in range(5)]  # the slice drops the last one


def test_reduction_loop_structure() -> None:
    def build(block: Block, args: list[SSAValue]) -> list[SSAValue]:
        op = SumOp(args[0], [1])
        block.add_op(op)
        return [op.result]

    _, fusion, (s,) = make_fusion([[8, 12]], build)
    Schedule(s).split(1, 4).parallelize(2, "TIDx").parallelize(0, "BIDx").emit()
    ls = loop_structure(fusion, s)
    assert [a.iter_type for a in ls.loops] == [
        IterType.iteration,
        IterType.reduction,
        IterType.reduction,
    ]
    assert [a.tensor_axis for a in ls.logical] == [0, None]
    assert str(ls.logical[1].index) == "((i1 * 4) + i2)"


def test_schedule_errors_leave_the_ir_unchanged() -> None:
    module, fusion, t = add_fusion([8, 8])
    before = str(module)
    with pytest.raises(ValueError, match="loop axis 5 is out of range"):
        Schedule(t).split(5, 2)
    with pytest.raises(ValueError, match="split factor 0 must be positive"):
        Schedule(t).split(0, 0)
    with pytest.raises(ValueError, match="not a permutation"):
        Schedule(t).reorder([0, 0])
    with pytest.raises(VerifyException, match="vectorizes 8 x float32 = 32 bytes"):
        Schedule(t).parallelize(1, "vectorize").emit()
    with pytest.raises(VerifyException, match="parallel type TIDx is used by id #0 and id #1"):
        Schedule(t).parallelize(0, "TIDx").parallelize(1, "TIDx").emit()
    assert str(module) == before
    Schedule(t).emit()
    with pytest.raises(ValueError, match="already has an iterdomain.loop"):
        Schedule(t)


def test_schedule_reuses_an_existing_logical_op() -> None:
    _, fusion, t = add_fusion([4, 4])
    Schedule(t).emit()
    loop = next(op for op in fusion.body.block.ops if isinstance(op, LoopOp))
    loop.detach()
    loop.erase()
    Schedule(t).merge(0).emit()
    assert ops_of(fusion).count("iterdomain.logical") == 1


# ---- reshape as transforms (seed 003) ------------------------------------------------


def reshape_fusion(in_shape: Sequence[int], out_shape: Sequence[int]):
    def build(block: Block, args: list[SSAValue]) -> list[SSAValue]:
        op = ReshapeOp(args[0], out_shape)
        block.add_op(op)
        return [op.result]

    module, fusion, (v,) = make_fusion([in_shape], build)
    reshape = v.owner
    assert isinstance(reshape, ReshapeOp)
    return module, fusion, reshape


def test_seed_003_reshape_is_keep_keep_split() -> None:
    module, fusion, reshape = reshape_fusion([2, 10, 40], [2, 10, 2, 20])
    rf = emit_reshape_view(reshape)
    module.verify()
    assert isinstance(rf, RfactorOp)
    transforms = [
        op for op in fusion.body.block.ops if isinstance(op, (SplitOp, MergeOp, ResizeOp))
    ]
    assert len(transforms) == 1
    (split,) = transforms
    assert isinstance(split, SplitOp)
    assert (split.factor_value, split.is_inner_split) == (2, False)
    assert [v.type for v in rf.ids] == [ID(2), ID(10), ID(2), ID(20)]
    with pytest.raises(ValueError, match="already has an iterdomain.root"):
        emit_reshape_view(reshape)


def test_reshape_with_squeeze_and_broadcast() -> None:
    module, fusion, reshape = reshape_fusion([1, 6, 1], [2, 1, 3])
    emit_reshape_view(reshape)
    Schedule(reshape.result).merge(0).merge(0).emit()
    module.verify()
    ls = loop_structure(fusion, reshape.result)
    for i in range(6):
        env = ls.index_env([i])
        assert [a.index.evaluate(env) for a in ls.root] == [0, i, 0]


def test_unit_only_reshape_is_not_expressible() -> None:
    module, _, reshape = reshape_fusion([1, 1], [1])  # keep, squeeze: merged
    emit_reshape_view(reshape)
    module.verify()
    _, _, reshape = reshape_fusion([1], [])
    with pytest.raises(ShapeError, match="only extent-1 axes"):
        emit_reshape_view(reshape)


def _factors_to_shapes(draw) -> tuple[list[int], list[int]]:
    factors = draw(st.lists(st.integers(1, 4), min_size=1, max_size=6))

    def group() -> list[int]:
        cuts = (
            sorted(draw(st.sets(st.integers(1, len(factors) - 1), max_size=3)))
            if len(factors) > 1
            else []
        )
        parts = np.split(np.array(factors), cuts)
        shape = [int(np.prod(p)) for p in parts]
        for _ in range(draw(st.integers(0, 2))):
            shape.insert(draw(st.integers(0, len(shape))), 1)
        return shape

    return group(), group()


reshape_pairs = st.composite(_factors_to_shapes)


@settings(max_examples=60, deadline=None)
@given(reshape_pairs())
def test_reshape_replay_matches_numpy(pair: tuple[list[int], list[int]]) -> None:
    in_shape, out_shape = pair
    if all(d == 1 for d in in_shape) or all(d == 1 for d in out_shape):
        return  # no id to carry unit axes (tested above)
    steps = analyze_reshape(in_shape, out_shape)
    # extents: replaying the steps on ids gives numpy's shape
    _, fusion, t = add_fusion(in_shape)
    logical = LogicalOp(t)
    ops, out_ids = view_transforms(list(logical.ids), steps)
    expected = np.arange(int(np.prod(in_shape))).reshape(in_shape).reshape(out_shape)
    assert [v.type.extent for v in out_ids] == list(expected.shape)
    for op in ops:
        op.verify()
    # indices: through the IR (root -> rfactor -> loop), each output element reads
    # the input element numpy.reshape puts there
    module, fusion, reshape = reshape_fusion(in_shape, out_shape)
    emit_reshape_view(reshape)
    Schedule(reshape.result).emit()
    module.verify()
    ls = loop_structure(fusion, reshape.result)
    src = np.arange(expected.size).reshape(in_shape)
    for idx in itertools.islice(np.ndindex(*out_shape), 200):
        env = ls.index_env(idx)
        assert tuple(a.index.evaluate(env) for a in ls.logical) == idx
        root_idx = tuple(a.index.evaluate(env) for a in ls.root)
        assert src[root_idx] == expected[idx]


def test_reference_interpreter_ignores_schedules() -> None:
    from fuser.ir.reference import run_fusion

    _, fusion, t = add_fusion([4, 6])
    Schedule(t).merge(0).split(0, 8).parallelize(1, "TIDx").emit()
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    (out,) = run_fusion(fusion, [x])
    np.testing.assert_array_equal(out, x + x)
