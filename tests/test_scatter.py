"""``fuser.scatter`` (nvFuser's ``scatter``, ``torch.scatter``): the reference against
torch, the frontend (printing, replay, errors), and the GPU lowering (a pull over the
index's extent along ``dim``) run by the kernel interpreter and compiled by NVRTC."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.cuda_printer import print_cuda
from fuser.ir.dialects import fuser as F
from fuser.ir.reference import run_fusion
from fuser.runtime.cpu_runner import run_segment_on_cpu

torch = pytest.importorskip("torch")

NP_OF = {DataType.Float: np.float32, DataType.Int: np.int64, DataType.Half: np.float16}


def _define(body: Callable[[FusionDefinition], None]) -> FusionDefinition:
    with FusionDefinition() as fd:
        body(fd)
    return fd


def _tensor(fd: FusionDefinition, rank: int, dtype: DataType) -> object:
    return fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=dtype)


def _unique_index(shape: tuple[int, ...], dim: int, extent: int, seed: int = 0) -> np.ndarray:
    """An index whose entries along ``dim`` are distinct (a permutation prefix), so the
    result does not depend on the order of writes (as torch's topk indices)."""
    rng = np.random.default_rng(seed)
    moved = list(shape)
    moved.append(moved.pop(dim))
    flat = np.stack([rng.permutation(extent)[: moved[-1]] for _ in range(int(np.prod(moved[:-1])))])
    return np.ascontiguousarray(np.moveaxis(flat.reshape(moved), -1, dim).astype(np.int64))


def _scatter_fusion(rank: int, dim: int, dtype: DataType, scalar_src: bool) -> FusionDefinition:
    def body(fd: FusionDefinition) -> None:
        t0 = _tensor(fd, rank, dtype)
        t1 = _tensor(fd, rank, DataType.Int)
        src = (
            fd.define_scalar(None, dtype=DataType.Double)
            if scalar_src
            else _tensor(fd, rank, dtype)
        )
        fd.add_output(fd.ops.scatter(t0, t1, src, dim))

    return _define(body)


CASES = [
    # (input shape, index shape, src shape, dim)
    ((16, 8), (5, 8), (5, 8), 0),
    ((16, 8), (5, 3), (6, 8), 0),
    ((6, 10), (4, 3), (4, 3), 1),
    ((3, 4, 5), (2, 4, 2), (3, 4, 5), -1),
    ((3, 4, 5), (3, 2, 5), (3, 2, 5), 1),
    ((7,), (0,), (0,), 0),
]


@pytest.mark.parametrize(("xs", "is_", "ss", "dim"), CASES)
@pytest.mark.parametrize("dtype", [DataType.Float, DataType.Int])
def test_reference_matches_torch_scatter(xs, is_, ss, dim, dtype: DataType) -> None:  # noqa: ANN001
    rng = np.random.default_rng(0)
    npdt = NP_OF[dtype]
    x = (rng.standard_normal(xs) * 10).astype(npdt)
    src = (rng.standard_normal(ss) * 10).astype(npdt)
    idx = _unique_index(is_, dim % len(xs), xs[dim])
    fd = _scatter_fusion(len(xs), dim, dtype, scalar_src=False)
    (out,) = fd.execute([x, idx, src])
    want = torch.scatter(torch.from_numpy(x), dim, torch.from_numpy(idx), torch.from_numpy(src))
    np.testing.assert_array_equal(out, want.numpy())


@pytest.mark.parametrize("dtype", [DataType.Float, DataType.Int])
def test_scalar_src_is_converted_to_the_input_dtype(dtype: DataType) -> None:
    x = np.arange(24).reshape(4, 6).astype(NP_OF[dtype])
    idx = _unique_index((2, 6), 0, 4)
    fd = _scatter_fusion(2, 0, dtype, scalar_src=True)
    (out,) = fd.execute([x, idx, 1.5])
    want = torch.scatter(torch.from_numpy(x), 0, torch.from_numpy(idx), 1.5)
    np.testing.assert_array_equal(out, want.numpy())


def test_duplicate_indices_last_position_along_dim_wins() -> None:
    """torch leaves the winner of duplicate indices undefined on the GPU; fuser's
    reference and kernel both take the last position along ``dim``."""
    x = np.zeros((3, 2), np.float32)
    idx = np.array([[1, 0], [1, 0], [2, 0]])
    src = np.array([[10.0, 20.0], [11.0, 21.0], [12.0, 22.0]], np.float32)
    fd = _scatter_fusion(2, 0, DataType.Float, scalar_src=False)
    (out,) = fd.execute([x, idx, src])
    np.testing.assert_array_equal(out, [[0, 22], [11, 0], [12, 0]])
    (kernel_out,), _ = run_segment_on_cpu(fd.fusion(), [x, idx, src])
    np.testing.assert_array_equal(kernel_out, out)


def test_out_of_range_index_raises_naming_the_op() -> None:
    fd = _scatter_fusion(2, 0, DataType.Float, scalar_src=False)
    x = np.zeros((3, 2), np.float32)
    src = np.ones((1, 2), np.float32)
    for bad in (3, -1):
        with pytest.raises(
            ValueError,
            match=rf"fuser.scatter: the index operand holds {bad}, out of range \[0, 3\)",
        ):
            fd.execute([x, np.array([[0, bad]]), src])
    with pytest.raises(
        ValueError, match="fuser.scatter: index extent 3 exceeds input extent 2 on axis 1"
    ):
        fd.execute([x, np.zeros((1, 3), np.int64), np.ones((1, 3), np.float32)])
    with pytest.raises(
        ValueError, match="fuser.scatter: index extent 2 exceeds src extent 1 on axis 0"
    ):
        fd.execute([x, np.zeros((2, 2), np.int64), src])


def test_frontend_errors_name_the_operand() -> None:
    def rank(fd: FusionDefinition) -> None:
        fd.ops.scatter(
            _tensor(fd, 2, DataType.Float),
            _tensor(fd, 2, DataType.Int),
            _tensor(fd, 1, DataType.Float),
            0,
        )

    def dim(fd: FusionDefinition) -> None:
        fd.ops.scatter(
            _tensor(fd, 2, DataType.Float),
            _tensor(fd, 2, DataType.Int),
            _tensor(fd, 2, DataType.Float),
            2,
        )

    def index_dtype(fd: FusionDefinition) -> None:
        fd.ops.scatter(
            _tensor(fd, 2, DataType.Float),
            _tensor(fd, 2, DataType.Float),
            _tensor(fd, 2, DataType.Float),
            0,
        )

    def src_dtype(fd: FusionDefinition) -> None:
        fd.ops.scatter(
            _tensor(fd, 2, DataType.Float),
            _tensor(fd, 2, DataType.Int),
            _tensor(fd, 2, DataType.Half),
            0,
        )

    with pytest.raises(
        ValueError, match="scatter: Tensor arguments have different dimensions 2, 2 and 1"
    ):
        _define(rank)
    with pytest.raises(
        ValueError,
        match=r"scatter: Tensor arguments have dimension 2 so dim argument must satisfy -2 <= dim < 2, but received 2",
    ):
        _define(dim)
    with pytest.raises(ValueError, match="scatter.*index must be an integer tensor"):
        _define(index_dtype)
    with pytest.raises(
        ValueError, match="scatter.*src dtype float16 differs from input dtype float32"
    ):
        _define(src_dtype)


def test_prints_as_nvfuser_and_replays() -> None:
    fd = _scatter_fusion(2, 0, DataType.Float, scalar_src=True)
    text = repr(fd)
    assert "T3 = fd.ops.scatter(T0, T1, S2, dim=0)" in text
    assert "fuser.scatter" in fd.fusion_ir()
    again = FusionDefinition.from_mlir(str(fd.fusion()))
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    idx = np.array([[3, 0]])
    np.testing.assert_array_equal(again.execute([x, idx, 2.0])[0], fd.execute([x, idx, 2.0])[0])


@pytest.mark.parametrize(
    ("xs", "is_", "ss", "dim", "dtype", "scalar_src"),
    [
        ((32, 128), (16, 128), (16, 128), 0, DataType.Float, False),  # vectorizable
        ((16, 8), (5, 3), (6, 8), 0, DataType.Float, False),
        ((6, 10), (4, 3), (4, 3), 1, DataType.Int, False),
        ((3, 4, 5), (2, 4, 2), (3, 4, 5), -1, DataType.Half, False),
        ((32, 12), (7, 12), None, 0, DataType.Float, True),
    ],
)
def test_kernel_on_the_cpu_matches_the_reference_and_compiles(
    xs, is_, ss, dim, dtype, scalar_src
) -> None:  # noqa: ANN001
    """The pointwise kernel (scatter, then sigmoid/neg as in
    test_scatter_output_intermediate) run by the kernel interpreter is bit-exact with
    the reference; its CUDA compiles with NVRTC."""
    rng = np.random.default_rng(1)
    npdt = NP_OF[dtype]
    rank = len(xs)

    def body(fd: FusionDefinition) -> None:
        t0 = _tensor(fd, rank, dtype)
        t1 = _tensor(fd, rank, DataType.Int)
        src = (
            fd.define_scalar(None, dtype=DataType.Double)
            if scalar_src
            else _tensor(fd, rank, dtype)
        )
        t3 = fd.ops.scatter(t0, t1, src, dim)
        fd.add_output(fd.ops.neg(t3) if dtype == DataType.Int else fd.ops.sigmoid(t3))

    fd = _define(body)
    x = (rng.standard_normal(xs) * 4).astype(npdt)
    idx = _unique_index(is_, dim % rank, xs[dim])
    src = 1.5 if scalar_src else (rng.standard_normal(ss) * 4).astype(npdt)
    fusion = fd.fusion()
    (ours,), lowered = run_segment_on_cpu(fusion, [x, idx, src])
    (ref,) = run_fusion(fusion, [x.copy(), idx, src])
    np.testing.assert_array_equal(ours, ref)
    text = print_cuda(lowered.kernels[0].module)
    assert "for (" in text
    nvrtc = pytest.importorskip("fuser.codegen.nvrtc")
    nvrtc.compile_cuda(text, name=lowered.kernels[0].name, fusion=fusion.sym_name.data)


def test_scatter_feeding_a_reduction() -> None:
    def body(fd: FusionDefinition) -> None:
        t0 = _tensor(fd, 2, DataType.Float)
        t1 = _tensor(fd, 2, DataType.Int)
        t2 = _tensor(fd, 2, DataType.Float)
        fd.add_output(fd.ops.sum(fd.ops.scatter(t0, t1, t2, 1), dims=[1]))

    fd = _define(body)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 32)).astype(np.float32)
    idx = _unique_index((8, 5), 1, 32)
    src = rng.standard_normal((8, 5)).astype(np.float32)
    (out,) = fd.execute([x, idx, src])
    want = torch.scatter(torch.from_numpy(x), 1, torch.from_numpy(idx), torch.from_numpy(src)).sum(
        1
    )
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-5, atol=1e-5)
    (ours,), _ = run_segment_on_cpu(fd.fusion(), [x, idx, src])
    np.testing.assert_allclose(ours, out, rtol=1e-6, atol=1e-6)


def test_verifier_rejects_a_bad_src_rank() -> None:
    with pytest.raises(F.InferError, match="src rank 1 differs from input rank 2"):
        F.ScatterOp.out_type(
            F.TensorType([4, 2], F.DType.float32),
            F.TensorType([1, 2], F.DType.int64),
            F.TensorType([2], F.DType.float32),
            0,
        )


def test_invalid_error_is_an_infer_error() -> None:
    with pytest.raises(F.InferError, match="input must have at least 1 dimension"):
        F.ScatterOp.out_type(
            F.TensorType([], F.DType.float32),
            F.TensorType([], F.DType.int64),
            F.DType.float32.to_xdsl(),
            0,
        )
