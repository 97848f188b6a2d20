"""Rows whose width no vector divides, walked in aligned groups (issue 15 item 3):
``iterdomain.align``'s index semantics, the inner persistent heuristic's choice when
aligned groups are on (``FUSER_ALIGNED_ROWS=1``: this module turns them on; the
default, one-element accesses, is tested in ``tests/schedulers/test_sched_heuristics.py``),
and the kernels (CPU interpreter, which rejects a misaligned vector access, and NVRTC)
against the reference interpreter."""

from __future__ import annotations

import dataclasses
import itertools

import ml_dtypes
import numpy as np
import pytest

import benchmarks.workloads as W
from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.codegen.lower.elementwise import Dim, flat_aligned
from fuser.ir.schedule import Schedule, loop_structure
from fuser.runtime.cpu_runner import run_segment_on_cpu
from fuser.runtime.schedule_segment import schedule_segment
from fuser.runtime.signature import Signature
from fuser.schedulers.analysis.sizes import bind_sizes
from fuser.schedulers.registry import select
from fuser.schedulers.target import H100
from tests.kernel_check import assert_close, kernels_and_reference

BF16 = ml_dtypes.bfloat16


@pytest.fixture(autouse=True)
def _aligned_rows_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The heuristic takes aligned groups, as under ``FUSER_ALIGNED_ROWS=1``."""
    import fuser.schedulers.persistent as persistent

    monkeypatch.setattr(persistent, "ALIGNED_ROWS", True)


def _aligned_schedule(fusion, inputs: list[np.ndarray]):  # noqa: ANN001, ANN202
    """``fusion`` scheduled with the heuristic's parameters, but aligned groups of 16
    bytes (what a researcher writes as ``aligned_vectors = true``)."""
    sel = select(fusion, bind_sizes(fusion, [list(x.shape) for x in inputs]), H100)
    params = dataclasses.replace(sel.params, vectorization=16 // inputs[0].itemsize, aligned_vectors=True)
    return schedule_segment(fusion, Signature.of(fusion, inputs), H100, chosen=(sel.kind, params))


def _define(body, dtype: DataType = DataType.BFloat16):
    with FusionDefinition() as fd:
        body(fd, dtype)
    return fd.fusion()


def _inputs(name: str, shape: tuple[int, int], dtype=BF16, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    ins = [rng.standard_normal(shape).astype(dtype)]
    if name == "layernorm":
        ins += [rng.standard_normal(shape[1]).astype(dtype) for _ in range(2)]
    elif name == "rmsnorm":
        ins += [rng.standard_normal(shape[1]).astype(dtype)]
    return ins


def test_an_aligned_id_covers_every_column_of_every_row_once() -> None:
    """``iterdomain.align`` by 8 of a [5, 13] tensor: each row's places 0..19 map to
    columns ``p - (r * 13) % 8``; the columns inside [0, 13) are each hit once, and
    the group of places 8k..8k+7 starts at a row-major position that is a multiple of 8."""
    fusion = _define(lambda fd, dt: fd.add_output(fd.ops.neg(fd.define_tensor([5, 13], dtype=dt))), DataType.Float)
    out = fusion.output_op.values[0]
    s = Schedule(out)
    s.align(1, 8).split(1, 8)
    s.emit()
    ls = loop_structure(fusion, out)
    assert [a.static_extent for a in ls.loops] == [5, 3, 8]
    for r in range(5):
        cols = []
        for c, lane in itertools.product(range(3), range(8)):
            env = ls.index_env([r, c, lane])
            col = ls.logical[1].index.evaluate(env)
            if lane == 0:
                assert (r * 13 + col) % 8 == 0
            if 0 <= col < 13:
                cols.append(col)
        assert sorted(cols) == list(range(13))


@pytest.mark.parametrize(
    ("dtype", "width", "aligned", "threads"),
    [(DataType.BFloat16, 3001, True, 128), (DataType.BFloat16, 4096, False, 128), (DataType.Float, 3001, True, 256),
     (DataType.Float, 1023, True, 128)],
)
def test_the_heuristic_aligns_rows_no_vector_divides(dtype: DataType, width: int, aligned: bool, threads: int) -> None:
    """Aligned groups of 16 bytes on a power of two of threads, 4 groups a thread
    (the H100's best measured splits: ``ALIGNED_MAX_ITEMSIZE``)."""
    fusion = _define(W.softmax, dtype)
    params = select(fusion, bind_sizes(fusion, [[4096, width]]), H100).params
    assert params.aligned_vectors is aligned
    assert params.vectorization == (8 if dtype == DataType.BFloat16 else 4)
    assert params.threads_per_row == threads


def test_a_norm_with_weights_read_by_column_is_not_aligned() -> None:
    fusion = _define(W.layernorm)
    params = select(fusion, bind_sizes(fusion, [[16384, 771], [771], [771]]), H100).params
    assert not params.aligned_vectors and params.vectorization == 1


def test_a_fusion_that_moves_an_axis_is_not_aligned() -> None:
    def body(fd: FusionDefinition, dt: DataType) -> None:
        x = fd.ops.cast(fd.define_tensor([-1, -1], dtype=dt), DataType.Float)
        t = fd.ops.permute(fd.ops.permute(x, [1, 0]), [1, 0])
        fd.add_output(fd.ops.cast(fd.ops.sum(t, [1], keepdim=True), dt))

    from fuser.schedulers.analysis.row_kernel import aligned_rows

    fusion = _define(body)
    assert not aligned_rows(fusion, bind_sizes(fusion, [[64, 77]]))
    fusion = _define(W.softmax)
    assert aligned_rows(fusion, bind_sizes(fusion, [[64, 77]]))


@pytest.mark.parametrize(("name", "shape", "dtype"), [
    ("softmax", (3, 51), BF16), ("softmax", (6, 130), BF16), ("softmax", (5, 1023), BF16), ("softmax", (4, 37), np.float32),
    ("layernorm", (5, 77), BF16), ("rmsnorm", (4, 203), BF16),
])
def test_aligned_rows_match_the_reference_with_vector_accesses(name: str, shape: tuple[int, int], dtype: type) -> None:
    """Every row's shift (``(r * width) % 8`` takes several values over the rows) in the
    interpreter, which raises on a misaligned vector access; the inputs and output
    move as 16-byte vectors inside the rows (the norms' weights, read by column,
    lane by lane: the heuristic does not align them, the schedule here does)."""
    fusion = _define(getattr(W, name), DataType.BFloat16 if dtype is BF16 else DataType.Float)
    ins = _inputs(name, shape, dtype)
    scheduled = None if name == "softmax" else _aligned_schedule(fusion, ins)
    ours, ref, lowered = kernels_and_reference(fusion, ins, "inner_persistent", scheduled)
    assert_close(ours, ref, rtol=2e-2, atol=1e-2)
    src = print_cuda(lowered.kernels[0].module)
    ctype, lanes = ("__nv_bfloat16", 8) if dtype is BF16 else ("float", 4)
    assert f"*reinterpret_cast<const Vec<{ctype}, {lanes}>*>(&in0[" in src
    assert f"*reinterpret_cast<Vec<{ctype}, {lanes}>*>(&out0[" in src
    assert f"* {shape[1]};" in src and f"% {lanes};" in src


def test_a_misaligned_pointer_keeps_element_accesses() -> None:
    """An input whose data pointer is 2-byte aligned only (a view one element into a
    buffer): the groups are not vectors in memory, so the kernel loads element by
    element, and is still right."""
    from fuser.codegen.lower import lower_segment
    from fuser.runtime.cpu_runner import layout_of
    from fuser.runtime.signature import kernel_layouts

    fusion = _define(W.softmax)
    buf = _inputs("softmax", (1, 4 * 51 + 8))[0].reshape(-1)
    x = buf[1 : 1 + 4 * 51].reshape(4, 51)
    assert layout_of(x).pointer_align == 1
    scheduled = schedule_segment(fusion, Signature.of(fusion, [x]))
    lowered = lower_segment(scheduled, kernel_layouts([layout_of(x)]), [None])
    src = print_cuda(lowered.kernels[0].module)
    assert "const Vec<" not in src and "% 8;" in src
    ours, _ = run_segment_on_cpu(scheduled, [x], lowered=lowered)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(1, keepdims=True))
    np.testing.assert_allclose(ours[0].astype(np.float64), e / e.sum(1, keepdims=True), rtol=2e-2, atol=1e-2)


def test_the_flat_claim_holds_only_for_its_shape_and_row_indices() -> None:
    """``Dim.flat``: a claim made for [4, 51] with these row indices is not one for a
    [51] weight read at the same column, another row index or a strided layout."""
    row, other = Dim(None, 2), Dim(None, 3)
    col = Dim(None, 6, 1, (8, (4, 51), (row.key(),)))
    assert flat_aligned((row, col), 1, 8, (4, 51), (51, 1))
    assert flat_aligned((row, col), 1, 4, (4, 51), (51, 1))
    assert not flat_aligned((row, col), 1, 16, (4, 51), (51, 1))
    assert not flat_aligned((col,), 0, 8, (51,), (1,))
    assert not flat_aligned((other, col), 1, 8, (4, 51), (51, 1))
    assert not flat_aligned((row, col), 1, 8, (4, 51), (64, 1))


def test_a_row_over_a_cluster_is_walked_in_aligned_groups() -> None:
    """Few long rows no vector divides (3 rows of 9001 bf16): the row over 4 blocks of
    a cluster, each block's part in aligned groups (the groups split over the blocks)."""
    fusion = _define(W.softmax)
    ins = _inputs("softmax", (3, 9001))
    ours, ref, lowered = kernels_and_reference(fusion, ins, "inner_persistent")
    assert_close(ours, ref, rtol=2e-2, atol=1e-2)
    (kern,) = lowered.kernels
    assert kern.grid == (3, 4, 1)
    src = print_cuda(kern.module)
    assert "*reinterpret_cast<const Vec<__nv_bfloat16, 8>*>(&in0[" in src and "% 8;" in src
