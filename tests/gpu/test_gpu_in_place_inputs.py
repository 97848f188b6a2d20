"""In-place updates whose input is also read through another argument, on the GPU
(the CPU side is tests/test_in_place_inputs.py). ``x + x.T`` written into ``x``:
the program passes ``hir.permute %x`` beside ``%x``, so the kernel writing ``x``
read ``x`` transposed while other blocks overwrote it, a result that depended on the
order the blocks ran in; ``mark-aliases`` now puts the update behind a temporary. A
caller passing the updated tensor as another input gets a ``ValueError``, on the
first call and on the replayed ones."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n", [256, 4096])
def test_x_plus_its_transpose_into_x(n: int) -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(x, fd.ops.permute(x, [1, 0])), alias_input=x)
    for _ in range(3):  # the walk, then the replays
        a = torch.randn(n, n, device="cuda")
        want = a + a.T
        fd.execute([a])
        torch.cuda.synchronize()
        assert torch.equal(a, want)


def test_the_updated_tensor_passed_again() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        y = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(x, fd.ops.permute(y, [1, 0])), alias_input=x)
    for _ in range(3):  # distinct tensors: the walk, then the replays
        a, b = torch.randn(512, 512, device="cuda"), torch.randn(512, 512, device="cuda")
        want = a + b.T
        fd.execute([a, b])
        assert torch.equal(a, want)
    a = torch.randn(512, 512, device="cuda")
    before = a.clone()
    with pytest.raises(ValueError, match=r"input #1 shares memory with input #0"):
        fd.execute([a, a])
    with pytest.raises(ValueError, match=r"input #1 shares memory with input #0"):
        fd.execute([a[:256], a[128:384]])
    torch.cuda.synchronize()
    assert torch.equal(a, before)


def test_the_same_tensor_twice_read_element_by_element() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        y = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(x, y), alias_input=x)
    for _ in range(3):
        a = torch.randn(1 << 20, device="cuda")
        want = a * a
        fd.execute([a, a])
        assert torch.equal(a, want)
