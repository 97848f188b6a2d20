"""nvFuser behaviours the conformance suite checks (issue 11, part 2): output kinds,
keyword aliases, fusion information, more ops."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fuser_ir import DataType, FusionDefinition


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
