"""nvFuser behaviours the conformance suite checks (issue 11, part 2): output kinds,
keyword aliases, fusion information, more ops."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fuser import DataType, FusionDefinition


def test_fusion_without_tensor_inputs_returns_torch_tensors() -> None:
    with FusionDefinition() as fd:
        n = fd.define_scalar(3, dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, fd.define_scalar(100), fd.define_scalar(1), DataType.Int32))
    out = fd.execute([])
    assert isinstance(out[0], torch.Tensor)
    assert torch.equal(out[0], torch.tensor([100, 101, 102], dtype=torch.int32))


def test_numpy_inputs_still_give_numpy_outputs() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.neg(t0))
    out = fd.execute([np.ones(3, dtype=np.float32)])
    assert isinstance(out[0], np.ndarray)
    np.testing.assert_array_equal(out[0], -np.ones(3, dtype=np.float32))


@pytest.mark.parametrize("scalar", [2, np.int64(2)])
def test_scalar_only_inputs_give_torch_tensors(scalar: object) -> None:
    with FusionDefinition() as fd:
        s = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(s, dtype=DataType.Int))
    out = fd.execute([scalar])
    assert isinstance(out[0], torch.Tensor)
    assert out[0].tolist() == [0, 1]


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
def test_reductions_take_nvfuser_dim_keyword(op: str) -> None:
    x = torch.randn(2, 3, 4)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(getattr(fd.ops, op)(t0, dim=0))
        fd.add_output(getattr(fd.ops, op)(t0, dim=-1, keepdim=True))
    out = fd.execute([x])
    want = {"sum": torch.sum, "prod": torch.prod, "max": torch.amax, "min": torch.amin}[op]
    torch.testing.assert_close(out[0], want(x, 0))
    torch.testing.assert_close(out[1], want(x, -1, keepdim=True))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"dims": [0], "dim": 0}, "dims or dim, not both"), ({"dim": [0]}, "dim must be an integer")],
)
def test_reduction_dim_keyword_errors(kwargs: dict, message: str) -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        with pytest.raises(ValueError, match=message):
            fd.ops.sum(t0, **kwargs)


def test_inputs_outputs_extents_are_indices() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        c2 = fd.define_scalar(3.0)
        t4 = fd.ops.mul(fd.ops.add(t0, t1), c2)
        fd.add_output(fd.ops.sum(t4, [-1], False, DataType.Float))
    assert fd.inputs() == [0, 1]
    assert fd.outputs() == [5]
    assert fd.extents() == [-1, -2, -3, -4, -5, -6]


def _binary_fd(name: str, a_dt: DataType, b_dt: DataType) -> FusionDefinition:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=a_dt)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=b_dt)
        fd.add_output(getattr(fd.ops, name)(a, b))
    return fd


_I32 = np.array([-1, -2147483648, 1073741824, -64463884, 7, 0, 12, -18], dtype=np.int32)
_SHIFTS = np.array([3, 0, 31, 32, -1, 5, 1, 40], dtype=np.int32)


@pytest.mark.parametrize(
    ("name", "dts", "a", "b", "want"),
    [
        (
            "logical_right_shift", (DataType.Int32, DataType.Int32), _I32, _SHIFTS,
            [536870911, -2147483648, 0, 0, 0, 0, 6, 0],
        ),
        (
            "gcd", (DataType.Int, DataType.Int), np.array([12, -18, 0, 7, 0], dtype=np.int64),
            np.array([18, 12, 5, -21, 0], dtype=np.int64), [6, 6, 5, 7, 0],
        ),
    ],
)  # fmt: skip
def test_integer_binary_ops_reference_and_kernel(
    name: str, dts: tuple[DataType, DataType], a: np.ndarray, b: np.ndarray, want: list[int]
) -> None:
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    fd = _binary_fd(name, *dts)
    (out,) = fd.execute([a, b])
    assert out.tolist() == want
    (kernel_out,), _ = run_segment_on_cpu(fd.fusion(), [a, b])
    assert kernel_out.tolist() == want
    assert {"logical_right_shift": "fuser_lshr(", "gcd": "fuser_gcd("}[name] in fd.generate_cuda_code([a, b])


def test_nextafter_reference_and_kernel() -> None:
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    fd = _binary_fd("nextafter", DataType.Float, DataType.Float)
    a = np.array([1.0, 0.0, -2.0, 3.0], dtype=np.float32)
    b = np.array([2.0, -1.0, -2.0, 0.0], dtype=np.float32)
    want = torch.nextafter(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    (out,) = fd.execute([a, b])
    np.testing.assert_array_equal(out, want)
    (kernel_out,), _ = run_segment_on_cpu(fd.fusion(), [a, b])
    np.testing.assert_array_equal(kernel_out, want)
    assert "nextafterf(" in fd.generate_cuda_code([a, b])


def test_nextafter_rejects_half_and_gcd_rejects_floats() -> None:
    with FusionDefinition() as fd:
        h = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)
        with pytest.raises(ValueError, match="nextafter.*float32 or float64"):
            fd.ops.nextafter(h, h)
        with pytest.raises(ValueError, match="gcd.*integer"):
            fd.ops.gcd(h, h)


@pytest.mark.parametrize("diagonal", [-1, 0, 2, -5, 20])
@pytest.mark.parametrize(
    ("shape", "dtype"), [((4, 16), torch.float16), ((2, 5, 3), torch.int32), ((3, 3), torch.bool)]
)
def test_triu(diagonal: int, shape: tuple[int, ...], dtype: torch.dtype) -> None:
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    x = torch.testing.make_tensor(shape, dtype=dtype, device="cpu")
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.triu(fd.from_pytorch(x), diagonal))
    assert f"fd.ops.triu(T0, diagonal={diagonal})" in repr(fd)
    assert fd.outputs() == [1]
    (out,) = fd.execute([x])
    assert torch.equal(out, torch.triu(x, diagonal))
    (kernel_out,), _ = run_segment_on_cpu(fd.fusion(), [x.numpy()])
    np.testing.assert_array_equal(kernel_out, torch.triu(x, diagonal).numpy())
    scope: dict = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(repr(fd), scope)  # noqa: S102 - the printed definition must rebuild the fusion
    with FusionDefinition() as fd2:
        scope[f"nvfuser_fusion_id{fd.id()}"](fd2)
    assert fd2.id() == fd.id()


def test_triu_errors() -> None:
    with FusionDefinition() as fd:
        t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        with pytest.raises(ValueError, match="triu: input T0 must have at least 2 dimensions"):
            fd.ops.triu(t1)
        with pytest.raises(ValueError, match="triu"):
            fd.ops.triu(t1, 1.5)


def test_plan_binds_an_iota_whose_length_is_a_runtime_scalar() -> None:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.iota(n, dtype=DataType.Float))
    assert fd.plan([5]).num_kernels == 1
    assert fd.execute([5])[0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize(
    ("shape", "dim", "dtype"),
    [((8, 16), 0, torch.float32), ((4,), -1, torch.int32), ((3, 5, 7), 1, torch.float16), ((16, 64), 1, torch.float32)],
)  # fmt: skip
def test_cumsum(shape: tuple[int, ...], dim: int, dtype: torch.dtype) -> None:
    """The reference and the generated kernel (CPU kernel interpreter) agree with torch
    (which sums float32 in float64 on the CPU: a few float32 ulps apart)."""
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    x = torch.testing.make_tensor(shape, dtype=dtype, device="cpu")
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        fd.add_output(fd.ops.mul(fd.ops.cumsum(t0, dim=dim), t0))
    assert f"fd.ops.cumsum(T0, dim={dim})" in repr(fd)
    acc = torch.float32 if dtype == torch.float16 else None
    want = (torch.cumsum(x, dim, dtype=acc).to(dtype) * x).numpy()
    (out,) = fd.execute([x])
    tol = 2e-3 if dtype == torch.float16 else 1e-4
    np.testing.assert_allclose(out.numpy().astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    (kernel_out,), _ = run_segment_on_cpu(fd.fusion(), [x.numpy()])
    np.testing.assert_array_equal(kernel_out, out.numpy())
    assert "for (" in fd.generate_cuda_code([x])


def test_cumsum_errors() -> None:
    with FusionDefinition() as fd:
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Bool)
        f = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        with pytest.raises(ValueError, match="cumsum: input must be a number tensor, got bool"):
            fd.ops.cumsum(b, 0)
        with pytest.raises(ValueError, match="cumsum: dim 2 is out of range for rank 2"):
            fd.ops.cumsum(f, 2)
        with pytest.raises(ValueError, match="cumsum"):
            fd.ops.cumsum(f, 0.5)


def test_executing_an_undefined_fusion_raises_not_implemented() -> None:
    fd = FusionDefinition()
    with pytest.raises(NotImplementedError, match="no definition"):
        fd.execute([np.ones(4, dtype=np.float32)])
    with FusionDefinition() as empty:  # defined, with nothing in it: runs
        pass
    assert empty.execute([]) == []


def test_slice_manual_normalization_and_cat_manual_padding_keywords() -> None:
    x = torch.randn(4, 6)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        a = fd.ops.slice(t0, [0, 0], [4, 3], [1, 1], manual_normalization=0)
        b = fd.ops.slice(t0, [0, 3], [4, 6], [1, 1], manual_normalization=True)
        fd.add_output(fd.ops.cat([b, a], dim=-1, manual_padding=0))
        with pytest.raises(ValueError, match=r"slice: Slice operation start_indices must be greater than or equal to 0\. Start Indices: -1"):
            fd.ops.slice(t0, [0, -1], [4, 6], manual_normalization=True)
        with pytest.raises(ValueError, match="slice: manual_normalization must be a bool"):
            fd.ops.slice(t0, [0, 0], [4, 6], manual_normalization="yes")
        with pytest.raises(ValueError, match="cat: manual_padding=True .* is not supported"):
            fd.ops.cat([a, b], dim=-1, manual_padding=True)
    (out,) = fd.execute([x])
    assert torch.equal(out, torch.cat([x[:, 3:], x[:, :3]], dim=-1))


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_with_a_0d_index_keeps_the_axis(dim: int) -> None:
    from fuser.runtime.cpu_runner import run_segment_on_cpu

    x = torch.randn(8, 16)
    i = torch.tensor(2, dtype=torch.long)
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.index_select(fd.from_pytorch(x), fd.from_pytorch(i), dim))
    want = torch.index_select(x, dim, i)
    (out,) = fd.execute([x, i])
    assert torch.equal(out, want)
    (kernel_out,), _ = run_segment_on_cpu(fd.fusion(), [x.numpy(), i.numpy()])
    np.testing.assert_array_equal(kernel_out, want.numpy())


def test_index_select_rejects_a_2d_index() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        i = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int)
        with pytest.raises(ValueError, match=r"index_select: index must be a 1-D \(or 0-D\) integer"):
            fd.ops.index_select(x, i, 0)


def test_repro_error_str_names_the_section_and_reproduces_the_fusion() -> None:
    x = np.ones((2, 3), dtype=np.float32)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t0))
    text = fd._repro_error_str("executing", [x])
    assert text.startswith("An error occurred while executing the fusion definition.")
    assert "fd.ops.exp(T0)" in text
    assert "(no repro script" in FusionDefinition()._repro_error_str("executing", [x])
