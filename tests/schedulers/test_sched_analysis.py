"""The analyses shared by the schedulers."""

from __future__ import annotations

import fusions as F
import numpy as np
import pytest
from fusions import Builder

from fuser.ir.dialects.fuser import PermuteOp, ReshapeOp, SizeOp, TensorType
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN
from fuser.schedulers.analysis.alias_only import alias_only_reason, is_alias_only
from fuser.schedulers.analysis.domain_map import build_domain_map
from fuser.schedulers.analysis.graph import reductions
from fuser.schedulers.analysis.persistent_buffers import buffer_sizes, find_persistent_buffers
from fuser.schedulers.analysis.reduction_type import (
    ReductionType,
    is_fastest_dim_reduction,
    reduction_type,
)
from fuser.schedulers.analysis.sizes import SizeBindingError, bind_sizes
from fuser.schedulers.analysis.transpose import find_transpose_groups
from fuser.schedulers.persistent import first_extents
from fuser.schedulers.target import H100

# ---- concrete sizes ------------------------------------------------------------------


def test_bind_sizes_propagates_through_ops() -> None:
    f = F.softmax()
    sizes = bind_sizes(f, [(4, 1024)])
    ops = list(f.body.block.ops)
    assert sizes.shape(f.inputs[0]) == (4, 1024)
    assert sizes.shape(ops[0].results[0]) == (4,)  # max
    assert sizes.shape(ops[1].results[0]) == (4, 1)  # broadcast
    assert sizes.shape(ops[-2].results[0]) == (4, 1024)  # div
    # The original fusion keeps its symbolic types.
    assert f.inputs[0].type.get_shape() == (DYN, DYN)


def test_bind_sizes_accepts_arrays_and_evaluates_size_ops() -> None:
    b = Builder()
    x = b.input([DYN, DYN])
    n = b.op(SizeOp(x, 1))
    r = b.op(ReshapeOp(x, [DYN], sizes=[b.binary("mul", b.op(SizeOp(x, 0)), n)]))
    f = b.finish(r)
    sizes = bind_sizes(f, [np.zeros((3, 5), np.float32)])
    assert sizes.scalar(n) == 5
    assert sizes.shape(r) == (15,)


def test_bind_sizes_rejects_mismatched_shapes() -> None:
    f = F.pointwise_broadcast()
    with pytest.raises(SizeBindingError, match="3 inputs but 1"):
        bind_sizes(f, [(4, 8)])
    with pytest.raises(SizeBindingError, match="do not broadcast"):
        bind_sizes(f, [(4, 8), (7,), (4,)])
    with pytest.raises(SizeBindingError, match="given shape is"):
        bind_sizes(F.views_only(), [(8, 2, 6)])


# ---- reduction type ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (F.softmax, ReductionType.INNER),
        (F.outer_norm, ReductionType.OUTER),
        (F.layer_norm_backward, ReductionType.INNER_OUTER),
        (F.pointwise_broadcast, ReductionType.NONE),
        (F.col_sum, ReductionType.OUTER),
    ],
)
def test_reduction_type(build, expected) -> None:
    assert reduction_type(build()) is expected


def test_reduction_type_follows_stride_order_and_skips_broadcast_axes() -> None:
    b = Builder()
    # Column-major [?, ?]: axis 0 is the fastest, so reducing it is inner.
    x = b.input([DYN, DYN], stride_order=[0, 1])
    f = b.finish(b.sum(x, [0]))
    assert is_fastest_dim_reduction(reductions(f)[0])
    b = Builder()
    y = b.input([DYN, 1])  # innermost axis has extent 1: axis 0 is the fastest
    f = b.finish(b.sum(y, [0]))
    assert reduction_type(f) is ReductionType.INNER


# ---- persistent buffers --------------------------------------------------------------


def test_softmax_buffers_and_projection() -> None:
    f = F.softmax()
    info = find_persistent_buffers(f)
    ops = list(f.body.block.ops)
    assert info.values == (f.inputs[0], ops[3].results[0])  # x and exp(x - max)
    sizes = buffer_sizes(info, bind_sizes(f, [(4, 1024)]))
    assert (sizes.unprojected, sizes.projected) == (8192, 4096)
    assert sizes.project_to_inputs


def test_half_precision_projection_halves_the_buffer() -> None:
    f = F.rms_norm()
    sizes = buffer_sizes(find_persistent_buffers(f), bind_sizes(f, [(8, 4096), (4096,)]))
    assert sizes.unprojected == 4096 * 4  # the float32 cast
    assert sizes.projected == 4096 * 2  # the float16 input
    assert sizes.bytes_per_row == 8192


def test_no_buffers_when_the_input_is_not_reused() -> None:
    assert not find_persistent_buffers(F.row_sum())
    assert not find_persistent_buffers(F.seed_reduction_epilogue())


def test_per_row_values_and_size_reads_are_not_buffers() -> None:
    f = F.layer_norm_backward()
    info = find_persistent_buffers(f)
    # mean/rstd ([?, 1]) are per-row; x is only read again by fuser.size.
    assert all(v.type.get_shape()[-1] == DYN for v in info.values)
    assert f.inputs[1] not in info.values
    assert len(info.values) == 2


def test_the_remembered_analysis_follows_changes_to_the_fusion() -> None:
    """The analysis is remembered per fusion (the registry and schedule-fusions ask
    several times): a schedule written since changes nothing, a changed operand does
    (softmax's final div reading the input instead of exp(x - max): exp is no longer
    kept across the sum)."""
    from fuser.ir.schedule import Schedule

    f = F.softmax()
    first = find_persistent_buffers(f)
    assert find_persistent_buffers(f) is first
    for v in [f.inputs[0], *(op.results[0] for op in list(f.body.block.ops)[:-1])]:
        Schedule(v).split(1, 32).parallelize(2, "TIDx").emit()
    assert find_persistent_buffers(f) is first  # iterdomain ops annotate: same analysis
    ops = [op for op in f.body.block.ops if op.name.startswith("fuser.")]
    div = next(op for op in ops if op.name == "fuser.div")
    exp = ops[3].results[0]
    assert exp in first.values
    div.operands = [f.inputs[0] if v is exp else v for v in div.operands]
    again = find_persistent_buffers(f)
    assert again is not first and exp not in again.values


def test_remembered_analyses_do_not_keep_fusions_alive() -> None:
    """The analysis holds the fusion's values (and so the fusion): only the last few
    analysed fusions stay alive, not every fusion a process ever compiled."""
    import gc
    import weakref

    from fuser.schedulers.analysis import persistent_buffers as PB

    refs = []
    for _ in range(3 * PB._CACHE_SIZE):
        f = F.softmax()
        find_persistent_buffers(f)
        refs.append(weakref.ref(f))
        del f
    gc.collect()
    assert sum(r() is not None for r in refs) <= PB._CACHE_SIZE


def test_a_very_large_normalization_holds_one_vector_a_thread() -> None:
    """Past LARGE_FUSION_OPS ops, the inner persistent heuristic targets one vector a
    thread (the kernel is every op once per element a thread holds, unrolled)."""
    from fuser.schedulers.persistent import (
        LARGE_FUSION_OPS,
        fusion_buffer_sizes,
        inner_persistent_params,
    )

    f = F.softmax()
    sizes = bind_sizes(f, [(4096, 1024)])
    args = (first_extents(f, sizes), fusion_buffer_sizes(f, sizes), 4, H100)
    small = inner_persistent_params(*args, ops=10)
    large = inner_persistent_params(*args, ops=LARGE_FUSION_OPS + 1)
    assert (small.threads_per_row, small.persistent_batch) == (64, 4)
    assert (large.threads_per_row, large.persistent_batch) == (256, 1)


# ---- domain map and transpose ----------------------------------------------------------


def test_reference_covers_every_input() -> None:
    f = F.pointwise_broadcast()
    ref = build_domain_map(f).reference()
    assert ref is f.output_op.values[0]
    # A reduction output does not cover the reduced axis of its input.
    assert build_domain_map(F.row_sum()).reference() is None


def test_transpose_groups_for_permute_add() -> None:
    f = F.permute_add()
    g = find_transpose_groups(f)
    assert g is not None
    assert set(g.group1) == {f.inputs[1], f.output_op.values[0]}
    assert g.group2 == (f.inputs[0],)
    assert (g.inner1, g.inner2) == (1, 0)


def test_broadcast_inputs_are_not_a_transpose() -> None:
    assert find_transpose_groups(F.pointwise_broadcast()) is None


def test_transposed_input_layout_is_a_transpose() -> None:
    b = Builder()
    a = b.input([64, 64], stride_order=[0, 1])  # column-major input
    c = b.input([64, 64])
    f = b.finish(b.binary("add", a, c))
    g = find_transpose_groups(f)
    assert g is not None and g.group2 == (a,)


# ---- alias-only ------------------------------------------------------------------------


def test_alias_only() -> None:
    assert is_alias_only(F.views_only())
    assert alias_only_reason(F.softmax()) == "output #0 is computed by fuser.div"
    b = Builder()
    x = b.input([4, 8])
    f = b.finish(b.op(PermuteOp(x, [1, 0])), b.cast(x, DType.float16))
    assert alias_only_reason(f) == "output #1 is computed by fuser.cast"


def test_tensor_type_helper() -> None:
    assert isinstance(F.views_only().inputs[0].type, TensorType)
