"""Seed 000's fusion at nvFuser's test sizes and at 16 x 2^20 on the GPU (issue 10,
item 2): ``fd.execute`` on CUDA tensors segments when no single kernel can run it
(the same decision as ``fd.plan``) and equals torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("s0, s1", [((2, 32), (2, 128)), ((2, 32), (2, 32)), ((16, 1 << 20), (16, 1 << 20))])
def test_seed000_runs_and_equals_torch(s0: tuple[int, int], s1: tuple[int, int]) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t3 = fd.ops.broadcast(fd.ops.sum(t0, dims=[1]), is_broadcast_dim=[False, True])
        fd.add_output(fd.ops.add(t1, t3))
    a = torch.randn(s0, device="cuda")
    b = torch.randn(s1, device="cuda")
    (out,) = fd.execute([a, b])
    expected = b.double() + a.double().sum(1, keepdim=True)
    torch.testing.assert_close(out.double(), expected, rtol=1e-4, atol=1e-3 * (s0[1] ** 0.5))
