"""Outputs that are views of an input run as torch views only when torch can view
them; a reshape merging an expanded axis needs a copy and runs as a kernel (random
fusion seed 464 crashed with torch's "view size is not compatible" before)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu


def test_reshape_of_an_expanded_input_is_materialized() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        b = fd.ops.broadcast_in_dim(x, shape=[4, 3], broadcast_dims=[0])
        fd.add_output(fd.ops.reshape(b, [12]))
    t = torch.randn(4, device="cuda")
    (out,) = fd.execute([t])
    torch.testing.assert_close(out, t[:, None].expand(4, 3).reshape(12))


def test_reshape_that_torch_can_view_stays_a_view() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.reshape(x, [24]))
    t = torch.randn(4, 6, device="cuda")
    (out,) = fd.execute([t])
    assert out.data_ptr() == t.data_ptr() and out.shape == (24,)
