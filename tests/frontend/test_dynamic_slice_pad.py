"""Slice, pad and reshape with sizes and indices given as scalars and vectors (issue 11:
nvFuser's test_pad_dynamic, test_reshape_dynamic, test_slice_api, test_slice_error_checks).

Bounds and widths known at definition time (constants, and scalars computed from them)
give static ``fuser.slice``/``fuser.pad``; ones known only at run time give
``fuser.dynamic_slice``/``fuser.dynamic_pad``, and ``execute`` concretizes the fusion
per input values (one runtime per value set, one fusion id)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from frontend_helpers import check, define, randn, rerun_printed

from fuser import DataType, FusionDefinition
from fuser.frontend.building import NvFuserCheckError
from fuser.ir.context import parse_module
from fuser.ir.dialects import fuser as F

pytest.importorskip("fuser.ir.reference")


def ops_of(fd: FusionDefinition, cls: type) -> list[Any]:
    return [op for op in fd.fusion().walk() if isinstance(op, cls)]


def runtime_ops(fd: FusionDefinition, cls: type) -> list[Any]:
    return [
        op for rt in fd._entry.runtimes.values() for op in rt.fusion.walk() if isinstance(op, cls)
    ]


# ---- pad ----------------------------------------------------------------------------


def test_pad_widths_computed_from_constants_are_static() -> None:
    """nvFuser's test_pad_dynamic: ``cast(2.5 * 7, Int)`` widths are constants."""
    x = randn(1, 2, 3)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.from_pytorch(x)
        s = fd.ops.cast(
            fd.ops.mul(fd.define_scalar(2.5, dtype=DataType.Float), 7), dtype=DataType.Int
        )
        fd.add_output(fd.ops.pad(t0, fd.define_vector([s, s, s, s], dtype=DataType.Int)))

    fd = check(fn, [x], [np.pad(x, [(0, 0), (17, 17), (17, 17)])])
    assert ops_of(fd, F.PadOp) and not ops_of(fd, F.DynamicPadOp)


@pytest.mark.parametrize("widths", [[1, 2, 0, 3], [-1, 2, 3, -2], [0, 0, 0, 0], [2, -4, 1, 1]])
def test_pad_widths_from_inputs_match_torch(widths: list[int]) -> None:
    x = torch.randn(3, 4)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.pad(t0, fd.define_vector(4), 1.5))

    fd = check(fn, [x.numpy(), *widths], [tF.pad(x, widths, value=1.5).numpy()])
    assert ops_of(fd, F.DynamicPadOp) and not ops_of(fd, F.PadOp)
    assert runtime_ops(fd, F.PadOp) and not runtime_ops(fd, F.DynamicPadOp)


def test_pad_is_concretized_per_width_values_under_one_fusion() -> None:
    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        lo = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.pad(t0, [lo, 1]))

    fd = define(fn)
    x = randn(5)
    for lo in (0, 2, 2, -3):
        (out,) = fd.execute([x, lo])
        np.testing.assert_array_equal(out, tF.pad(torch.from_numpy(x), [lo, 1]).numpy())
    assert fd.num_runtimes() == 3
    assert define(fn).id() == fd.id()


def test_pad_errors() -> None:
    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.pad(t0, fd.define_vector(2)))

    fd = define(fn)
    x = randn(3, 4)
    with pytest.raises(
        ValueError,
        match=r"pad: pad of axis 1 \(extent 4\) by \(-3, -2\) is negative "
        r"\(pad_widths V3 = \[-3, -2\] at these inputs\)",
    ):
        fd.execute([x, -3, -2])
    with pytest.raises(
        ValueError, match=r"input 1 \(S1\): expected a scalar of dtype int64, got 1.5"
    ):
        fd.execute([x, 1.5, 0])
    with FusionDefinition() as fd2:
        t0 = fd2.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        with pytest.raises(
            RuntimeError,
            match="pad: Number of pad widths must be at most twice the input dimension",
        ):
            fd2.ops.pad(t0, fd2.define_vector(4))
        t1 = fd2.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        with pytest.raises(ValueError, match=r"pad: 3 pad widths must be pairs for at most 2 axes"):
            fd2.ops.pad(t1, [fd2.define_scalar(dtype=DataType.Int), 1, 2])
        with pytest.raises(
            ValueError, match=r"pad: pad_widths must be a list, a tuple or a vector"
        ):
            fd2.ops.pad(t0, "1, 1")


# ---- slice --------------------------------------------------------------------------


def test_slice_api_bounds_as_lists_vectors_shapes_and_inputs() -> None:
    """nvFuser's test_slice_api: the same slice with static bounds, a constant vector
    and ``T0.shape()``, and a vector of inputs."""
    x = randn(2, 5, 10)
    offset = (0, 1, 2)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        fd.add_output(
            fd.ops.slice(t0, start_indices=offset, end_indices=(2, 5, 10), strides=(1, 1, 1))
        )
        fd.add_output(fd.ops.slice(t0, fd.define_vector(offset), t0.shape()))
        fd.add_output(fd.ops.slice(t0, fd.define_vector(3), fd.define_vector(3)))

    want = x[:, 1:, 2:]
    fd = check(fn, [x, *offset, *x.shape], [want, want, want])
    assert len(ops_of(fd, F.SliceOp)) == 1 and len(ops_of(fd, F.DynamicSliceOp)) == 2
    assert not runtime_ops(fd, F.DynamicSliceOp)
    # The vector inputs may also be given as lists (spread over their scalars).
    outs = fd.execute([x, list(offset), list(x.shape)])
    np.testing.assert_array_equal(outs[2], want)


@pytest.mark.parametrize(
    ("start", "end"),
    [((0, 1), (3, 4)), ((-2, 0), (3, -1)), ((1, 3), (9, 2)), ((-9, 5), (2, 9)), ((3, 0), (3, 4))],
)
def test_slice_run_time_bounds_are_normalized_like_python(start: tuple, end: tuple) -> None:
    x = randn(3, 4)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.slice(t0, fd.define_vector(2), fd.define_vector(2)))

    want = torch.from_numpy(x)[start[0] : end[0], start[1] : end[1]].numpy()
    check(fn, [x, *start, *end], [want])


def test_slice_manual_normalization_requires_bounds_in_range() -> None:
    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(
            fd.ops.slice(t0, fd.define_vector(2), fd.define_vector(2), manual_normalization=True)
        )

    fd = define(fn)
    assert "manual_normalization=True" in repr(fd)
    x = randn(3, 4)
    np.testing.assert_array_equal(fd.execute([x, 1, 0, 3, 4])[0], x[1:3, 0:4])
    np.testing.assert_array_equal(fd.execute([x, 0, 0, 3, 9])[0], x)  # nvFuser clamps [0:n]
    with pytest.raises(
        ValueError,
        match=r"manual_normalization=True the bounds must lie in order in "
        r"\[0, 4\] \(axis 1\), got \[-1:4\] from start_indices V3\[1\] and end_indices V6\[1\]",
    ):
        fd.execute([x, 0, -1, 3, 4])
    with pytest.raises(ValueError, match=r"got \[2:1\]"):
        fd.execute([x, 2, 0, 1, 4])

    # The flag is part of the definition: another fusion than without it.
    def plain(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.slice(t0, fd.define_vector(2), fd.define_vector(2)))

    assert define(plain).id() != fd.id()


def test_static_slice_end_beyond_the_extent_is_clamped() -> None:
    x = randn(5, 5)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[5, 5], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.slice(t0, [2, 0], [9, 5]))

    fd = check(fn, [x], [x[2:, :]])
    assert ops_of(fd, F.SliceOp)[0].result.type.get_shape() == (3, 5)


# nvFuser's test_slice_error_checks: the checks, their order and their text.
SLICE_ERRORS = [
    (
        [-1, -2],
        [5, 5],
        [7, 7],
        2,
        r"Slice operation start_indices must be greater than or equal to 0\. Start Indices: -1",
    ),
    (
        [3, 4],
        [1, 2],
        [1, 1],
        2,
        r"Slice operation end_indices must be greater than or equal to start_indices\. "
        r"Start Indices: 3 End Indices: 1",
    ),
    (
        [0, 0],
        [5, 5],
        [5, 5],
        2,
        r"nvFuser Limitation: All slice operation strides must be of const size 1\.",
    ),
    (
        [0, 0, 0],
        [4, 4, 4],
        [1, 1, 1],
        2,
        r"Number of tensor dimensions does not match slice dimensions! "
        r"Tensor-dims: 2 Slice-dims: 3",
    ),
    (
        [0, 0, 0],
        [4, 4],
        [1, 1],
        2,
        r"Slice start_indices and strides don't match! Start Indices: 3 Strides: 2",
    ),
    (
        [0, 0],
        [4, 4, 4],
        [1, 1],
        2,
        r"Slice indexing attribute dimensions don't match! Start Indices: 2 End Indices: 3",
    ),
    (
        [0, 0],
        [4, 4],
        [1, 1, 1],
        2,
        r"Slice start_indices and strides don't match! Start Indices: 2 Strides: 3",
    ),
]


@pytest.mark.parametrize(("starts", "ends", "strides", "rank", "message"), SLICE_ERRORS)
def test_slice_errors_are_nvfusers(
    starts: list, ends: list, strides: list, rank: int, message: str
) -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=DataType.Float)
        with pytest.raises(NvFuserCheckError, match="slice: " + message) as info:
            fd.ops.slice(t0, starts, ends, strides)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)


def test_slice_stride_from_an_input_is_not_const_one() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        with pytest.raises(RuntimeError, match="strides must be of const size 1"):
            fd.ops.slice(t0, [0], [1], fd.define_vector(1))
        # a constant scalar 1 is const
        fd.add_output(fd.ops.slice(t0, [0], [1], [fd.define_scalar(1, dtype=DataType.Int)]))


def test_strided_slice_is_fusers_extension() -> None:
    x = randn(6, 7)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.strided_slice(t0, [1, -5], [5, 7], [2, 3]))

    check(fn, [x], [x[1:5:2, -5:7:3]])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        with pytest.raises(ValueError, match=r"strided_slice: strides \[0\] must be positive"):
            fd.ops.strided_slice(t0, [0], [1], [0])
        with pytest.raises(
            ValueError, match="strided_slice: start_indices, end_indices and strides need 1"
        ):
            fd.ops.strided_slice(t0, [0, 0], [1], [1])


# ---- reshape and vectors of non-integer scalars -------------------------------------


def reshape_dynamic(fd: FusionDefinition) -> None:
    """nvFuser's test_reshape_dynamic: the second size is a Double computed from S0."""
    s0 = fd.define_scalar(None, dtype=DataType.Int)
    t1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
    s3 = fd.ops.mul(fd.define_scalar(1, dtype=DataType.Int), s0)
    s6 = fd.ops.ne(fd.ops.signbit(s3), fd.define_scalar(False, dtype=DataType.Bool))
    s9 = fd.ops.cast(fd.ops.fmod(fd.define_scalar(192, dtype=DataType.Int), s3), dtype=DataType.Int)
    s12 = fd.ops.bitwise_and(s6, fd.ops.ne(s9, fd.define_scalar(0, dtype=DataType.Int)))
    s15 = fd.ops.mul(fd.define_scalar(192, dtype=DataType.Int), fd.ops.reciprocal(s3))
    s17 = fd.ops.sub(s15, fd.ops.cast(s12, dtype=DataType.Int))
    assert s17.dtype in (DataType.Float, DataType.Double)
    t19 = fd.ops.reshape(t1, new_shape=fd.define_vector([s0, s17], dtype=DataType.Int))
    fd.add_output(fd.ops.sum(t19, dims=[1], keepdim=False, dtype=DataType.Null))


@pytest.mark.parametrize("rows", [32, 64, 12])
def test_reshape_with_double_sizes_truncates_and_concretizes(rows: int) -> None:
    x = randn(4, 8, 6)
    fd = check(
        reshape_dynamic, [rows, x], [x.reshape(rows, 192 // rows).sum(1)], rtol=1e-5, atol=1e-5
    )
    # The sizes are folded once S0 is bound: a static keep/merge/split view.
    assert all(op.view is not None for op in runtime_ops(fd, F.ReshapeOp))


def test_vector_of_a_double_scalar_truncates_toward_zero() -> None:
    x = randn(2, 3)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        f = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.reshape(t0, fd.define_vector([f, 2])))

    check(fn, [x, 3.9], [x.reshape(3, 2)])


def test_vector_entry_errors() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        nan = fd.define_scalar(float("nan"), dtype=DataType.Double)
        with pytest.raises(
            ValueError,
            match=r"define_vector: values entry 0 \(S1\) is nan, which is not an integer",
        ):
            fd.define_vector([nan, 1])
        with pytest.raises(
            ValueError, match=r"pad: pad_widths entry 1 must be an integer or a scalar, got 1.5"
        ):
            fd.ops.pad(t0, [1, 1.5])
        with pytest.raises(
            ValueError, match=r"slice: start_indices entry 0 must be an integer or a scalar, got T0"
        ):
            fd.ops.slice(t0, [t0, 0], [1, 1])


def test_scalar_ops_of_constants_are_folded() -> None:
    with FusionDefinition() as fd:
        s = fd.define_scalar(-3, dtype=DataType.Int)
        assert fd.ops.signbit(s).known is True
        assert fd.ops.reciprocal(fd.define_scalar(4, dtype=DataType.Int)).known == 0.25
        assert fd.ops.bitwise_and(fd.ops.ne(s, 0), fd.define_scalar(True)).known is True
        assert fd.ops.cast(fd.define_scalar(float("inf")), DataType.Int).known is None


# ---- printing, from_mlir, the reference semantics, CUDA -----------------------------


def test_printed_definition_and_from_mlir_rebuild_dynamic_slice_and_pad() -> None:
    x = randn(4, 6)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.define_scalar(dtype=DataType.Int)
        t1 = fd.ops.slice(t0, [0, s], t0.shape())
        fd.add_output(fd.ops.pad(t1, [s, 1, 1, s], 2.0))

    fd = define(fn)
    want = tF.pad(torch.from_numpy(x)[:, 2:], [2, 1, 1, 2], value=2.0).numpy()
    np.testing.assert_array_equal(fd.execute([x, 2])[0], want)
    _, (again,) = rerun_printed(fd, [x, 2])
    np.testing.assert_array_equal(again, want)
    text = fd.fusion_ir()
    assert "fuser.dynamic_slice" in text and "fuser.dynamic_pad" in text
    fd2 = FusionDefinition.from_mlir(text)
    np.testing.assert_array_equal(fd2.execute([x, 2])[0], want)


MLIR = """
fuser.fusion @f(%x: !fuser.tensor<?x?xf32>, %a: i64, %b: i32, %w: i64) -> (!fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>) {
  %z = fuser.constant 0 : i64
  %s = fuser.dynamic_slice %x starts(%a, %z : i64, i64) ends(%b, %a : i32, i64) : !fuser.tensor<?x?xf32> -> !fuser.tensor<?x?xf32>
  %v = fuser.constant -1.0 : f32
  %p = fuser.dynamic_pad %x, %v widths(%w, %a, %a, %w) : (!fuser.tensor<?x?xf32>, f32, i64, i64, i64, i64) -> !fuser.tensor<?x?xf32>
  fuser.output %s, %p : !fuser.tensor<?x?xf32>, !fuser.tensor<?x?xf32>
}
"""


@pytest.mark.parametrize(("a", "b", "w"), [(1, 3, 2), (-2, 9, -1), (4, -3, 0), (0, 0, 1)])
def test_reference_semantics_of_dynamic_slice_and_pad_match_torch(a: int, b: int, w: int) -> None:
    from fuser.ir.reference import run_fusion

    fusion = next(op for op in parse_module(MLIR).walk() if isinstance(op, F.FusionOp))
    x = randn(5, 6)
    s, p = run_fusion(fusion, [x, np.int64(a), np.int32(b), np.int64(w)])
    t = torch.from_numpy(x)
    np.testing.assert_array_equal(s, t[a:b, 0:a].numpy())
    np.testing.assert_array_equal(p, tF.pad(t, [w, a, a, w], value=-1.0).numpy())


def test_reference_dynamic_pad_with_a_negative_extent_is_an_error() -> None:
    from fuser.ir.reference import InterpreterError, run_fusion

    fusion = next(op for op in parse_module(MLIR).walk() if isinstance(op, F.FusionOp))
    x = randn(5, 6)
    with pytest.raises(
        InterpreterError, match=r"fuser.dynamic_pad: pad of axis 0 \(extent 5\) by \(-4, -4\)"
    ):
        run_fusion(fusion, [x, np.int64(-4), np.int32(1), np.int64(-4)])


def test_concretized_dynamic_slice_and_pad_compile_with_nvrtc() -> None:
    """The concretized fusion is a normal static one: its CUDA compiles."""
    x = randn(4, 6)

    def fn(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.ops.slice(t0, fd.define_vector(2), t0.shape())
        fd.add_output(fd.ops.exp(fd.ops.pad(t1, fd.define_vector(4), 0.5)))

    fd = define(fn)
    inputs = [x, 1, 2, 1, 0, 2, 1]
    src = fd.generate_cuda_code(inputs)
    assert "__global__" in src
    nvrtc = pytest.importorskip("fuser.codegen.nvrtc")
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.frontend.execution import lowered_segments

    for _, lowered in lowered_segments(fd._ensure_defined(), inputs):
        for k in lowered.kernels:
            nvrtc.compile_cuda(print_cuda(k.module), name=k.name)
