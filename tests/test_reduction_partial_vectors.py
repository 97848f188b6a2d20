"""A plain reduction of long rows that no 16-byte vector divides (a 1-D sum of an odd
extent: an optimizer's gradient norm over 29,360,131 elements): the reduction
heuristic walks them in aligned groups (``aligned_vectors``, ``ALIGNED_MIN_VECTORS``),
and its lowering folds each group as one vector load where the group is inside the
row and lane by lane where it straddles the row's start or end (both lowerings: the
grid reduction's and, for a row one block folds, the computeAt one). Before, such a
row was loaded element by element. FileCheck:
tests/filecheck/passes/schedule-fusions-reduction-aligned.mlir. Checked in the CPU kernel interpreter (which rejects a
misaligned vector access) against float64, with NVRTC compiling the kernels."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend import execution
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.reduction import ALIGNED_MIN_VECTORS, ReductionScheduler
from fuser.schedulers.target import H100

BF16 = ml_dtypes.bfloat16


def _sum_of_squares(rank: int, dtype: DataType) -> FusionDefinition:
    with FusionDefinition() as fd:
        g = fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=dtype)
        x = fd.ops.cast(g, DataType.Float) if dtype != DataType.Float else g
        fd.add_output(fd.ops.sum(fd.ops.mul(x, x), dims=[rank - 1]))
    return fd


def _params(fd: FusionDefinition, shape: tuple[int, ...]):  # noqa: ANN202
    fusion = fd.fusion()
    sizes = bind_sizes(fusion, [list(shape)])
    assert ReductionScheduler.can_schedule(fusion, sizes, H100) is None
    return ReductionScheduler.heuristic(fusion, sizes, H100)


@pytest.mark.parametrize(
    ("shape", "aligned"),
    [
        ((29360131,), True),  # odd and long: aligned groups of 4 floats
        ((ALIGNED_MIN_VECTORS * 4 + 1,), True),
        ((ALIGNED_MIN_VECTORS * 4 - 3,), False),  # short: one-element accesses
        ((64, 100003), True),  # rows shifted against the vectors
        ((1 << 24,), False),  # divisible: plain vectors
    ],
)
def test_the_heuristic_aligns_long_rows_no_vector_divides(shape: tuple[int, ...], aligned: bool) -> None:
    p = _params(_sum_of_squares(len(shape), DataType.Float), shape)
    assert p.aligned_vectors == aligned
    assert p.vectorization == (4 if aligned or shape[-1] % 4 == 0 else 1)


def test_a_row_read_with_a_column_input_is_not_aligned() -> None:
    """``x * w`` summed over rows: ``w`` is read by column, not a vector of a shifted
    group (``aligned_rows``)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.mul(x, fd.ops.broadcast(w, [True, False])), dims=[1]))
    fusion = fd.fusion()
    sizes = bind_sizes(fusion, [[64, 100003], [100003]])
    assert ReductionScheduler.can_schedule(fusion, sizes, H100) is None
    p = ReductionScheduler.heuristic(fusion, sizes, H100)
    assert not p.aligned_vectors and p.vectorization == 1


@pytest.mark.parametrize(
    ("shape", "npdt", "dt"),
    [
        ((100003,), np.float32, DataType.Float),
        ((70001,), BF16, DataType.BFloat16),
        ((3, 100003), np.float32, DataType.Float),  # rows 1 and 2 start off the vectors
        ((2, 65539), BF16, DataType.BFloat16),
        ((1027,), np.float32, DataType.Float),  # one block: the computeAt lowering
        ((8, 1027), np.float32, DataType.Float),
    ],
)
def test_aligned_groups_sum_like_float64_with_vector_loads(shape: tuple[int, ...], npdt: type, dt: DataType) -> None:
    fd = _sum_of_squares(len(shape), dt)
    a = np.random.default_rng(len(shape)).standard_normal(shape).astype(npdt)
    cuda = fd.generate_cuda_code([a])
    main = cuda[cuda.index("__global__") :]
    assert "reinterpret_cast<const Vec<" in main  # the group inside the row: one vector
    assert "} else {" in main  # the group at the row's edges: lane by lane
    (out,) = execution.execute_kernels_on_cpu(fd._ensure_defined(), [a], nvrtc=True)  # noqa: SLF001
    want = (a.astype(np.float64) ** 2).sum(-1)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_an_input_off_the_vectors_keeps_element_loads() -> None:
    """A view starting one element into its buffer: no group is 16-byte aligned in
    memory, so the kernel loads element by element (the interpreter would reject a
    misaligned vector load), and the sum is still right."""
    fd = _sum_of_squares(1, DataType.Float)
    a = np.random.default_rng(3).standard_normal(100004).astype(np.float32)[1:]
    (out,) = execution.execute_kernels_on_cpu(fd._ensure_defined(), [a], nvrtc=False)  # noqa: SLF001
    np.testing.assert_allclose(out, (a.astype(np.float64) ** 2).sum(), rtol=1e-5)
