"""``fuser.frontend.devices``: fuser's device model (CPU tensors are inputs) or nvFuser's
(``from_pytorch`` takes CUDA tensors and CPU scalars only), and integer division in the
generated CUDA as CUDA's ``/`` (what torch and nvFuser compute on the GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend.devices import cpu_tensors_allowed, set_cpu_tensors

torch = pytest.importorskip("torch")


@pytest.fixture
def nvfuser_model():  # noqa: ANN201 - a fixture
    old = set_cpu_tensors(False)
    yield
    set_cpu_tensors(old)


def test_fuser_takes_cpu_tensors_by_default() -> None:
    assert cpu_tensors_allowed()
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.relu(fd.from_pytorch(torch.randn(4, 4))))
    (out,) = fd.execute([-torch.ones(4, 4)])
    assert torch.equal(out, torch.zeros(4, 4))


@pytest.mark.usefixtures("nvfuser_model")
def test_nvfusers_model_rejects_cpu_tensors_but_not_scalars() -> None:
    assert not cpu_tensors_allowed()
    with pytest.raises(
        ValueError,
        match="Found unsupported device cpu, only scalar CPU or CUDA tensors are supported",
    ):
        with FusionDefinition() as fd:
            fd.from_pytorch(torch.randn(4, 4))
    with FusionDefinition() as fd:
        t = fd.from_pytorch(torch.tensor(2.0))  # a CPU scalar tensor is fine
        fd.add_output(t)
    with FusionDefinition() as fd:  # numpy arrays are fuser's own inputs either way
        fd.add_output(fd.from_pytorch(np.zeros((2, 2), np.float32)))


def test_set_cpu_tensors_checks_its_argument() -> None:
    with pytest.raises(ValueError, match="expected True or False"):
        set_cpu_tensors(1)  # type: ignore[arg-type]


def test_integer_division_is_cudas_slash() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        fd.add_output(fd.ops.div(a, b))
    x = np.array([7, -7, 5], np.int64)
    y = np.array([2, 2, 0], np.int64)
    code = fd.generate_cuda_code([x, y], intrinsic_code=False)
    assert " / " in code and "== 0 ?" not in code  # no zero guard: the GPU's own result
    # The CPU reference truncates and gives 0 for a division by zero.
    np.testing.assert_array_equal(fd.execute([x, y])[0], [3, -3, 0])
