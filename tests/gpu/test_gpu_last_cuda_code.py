"""``fd.last_cuda_code()`` on the GPU: the kernels of this fusion's last run, every
segment's for a segmented fusion, and a reason when the run launched none."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu


def test_last_cuda_code_is_this_fusions_kernel() -> None:
    with FusionDefinition() as a:
        x = a.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        a.add_output(a.ops.exp(x))
    with FusionDefinition() as b:
        x = b.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        b.add_output(b.ops.sin(x))
    t = torch.randn(1024, device="cuda")
    a.execute([t])
    b.execute([t])
    assert "expf(" in a.last_cuda_code() and "sinf(" not in a.last_cuda_code()
    assert "sinf(" in b.last_cuda_code()


def test_segmented_run_shows_every_segment() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.broadcast(fd.ops.sum(t0, dims=[1]), [False, True])
        fd.add_output(fd.ops.add(t1, s))
    t0 = torch.randn(2, 32, device="cuda")
    t1 = torch.randn(2, 128, device="cuda")
    fd.execute([t0, t1])
    code = fd.last_cuda_code()
    assert code.count("__global__") == fd.plan([t0, t1]).num_kernels >= 2


def test_view_only_run_says_no_kernel_was_launched() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.permute(x, [1, 0]))
    fd.execute([torch.randn(8, 4, device="cuda")])
    with pytest.raises(RuntimeError, match="launched no kernel"):
        fd.last_cuda_code()
