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


def test_outputs_beside_the_update_read_the_old_values() -> None:
    """An Adam step's shape: ``m`` updated in place, the parameter's update computed
    from the new ``m``. The pointwise kernel evaluated each output from its loads, so
    the second output loaded ``m`` after the kernel had stored the update into it
    (found by the CPU kernel interpreter once it wrote in place, as the GPU does)."""
    with FusionDefinition() as fd:
        m = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        g = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        p = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        m_new = fd.ops.add(fd.ops.mul(m, 0.9), fd.ops.mul(g, 0.1))
        fd.add_output(m_new, alias_input=m)
        fd.add_output(fd.ops.sub(p, fd.ops.mul(m_new, 0.01)), alias_input=p)
    for _ in range(3):
        m0, g0, p0 = (torch.randn(1024, 1024, device="cuda") for _ in range(3))
        m, p = m0.clone(), p0.clone()
        fd.execute([m, g0, p])
        want_m = m0 * 0.9 + g0 * 0.1
        torch.testing.assert_close(m, want_m)
        torch.testing.assert_close(p, p0 - want_m * 0.01)


def test_a_transpose_into_its_own_input() -> None:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.permute(x, [1, 0]), alias_input=x)
    for _ in range(3):
        a = torch.randn(2048, 2048, device="cuda")
        want = a.T.clone()
        fd.execute([a])
        assert torch.equal(a, want)


def test_readers_of_the_updated_input_run_before_the_update() -> None:
    from tests.test_in_place_inputs import _readers_after_the_update

    with FusionDefinition() as fd:
        _readers_after_the_update(fd)
    for _ in range(3):
        x = torch.tensor([[-0.5]], device="cuda")
        y = torch.tensor([[1.0], [2.0], [3.0]], device="cuda")
        outs = fd.execute([x, y])
        assert x.item() == 3.0
        assert outs[1].tolist() == [1]
        torch.testing.assert_close(outs[2].cpu(), torch.tensor([[float(torch.exp(torch.tensor(-0.5))), -0.5]]))


def test_an_adam_step_in_one_kernel() -> None:
    """benchmarks/adam_step.py's step: ``m``, ``v`` and ``p`` written in place by one
    kernel that stores them after loading them (store groups), checked against
    float64 over several sizes and calls."""
    from benchmarks.adam_step import adam_fusion, reference, scalars

    fd = adam_fusion()
    for n in (1 << 20, 1000003, 4096):
        for _ in range(2):  # the walk, then the replay
            p0, g0, m0 = (torch.randn(n, device="cuda") for _ in range(3))
            v0 = torch.rand(n, device="cuda")
            want = reference(*(t.double() for t in (p0, g0, m0, v0)))
            p, m, v = p0.clone(), m0.clone(), v0.clone()
            fd.execute([p, g0, m, v, *scalars()])
            for got, w in zip((m, v, p), want, strict=True):
                torch.testing.assert_close(got.double(), w, rtol=1e-5, atol=1e-6)


def test_a_clipped_adam_step_writes_its_moments_from_one_segment() -> None:
    """benchmarks/adam_step.py --clip: the gradient's norm, then the step. At 16M
    elements the norm is a reduction segment of its own, and ``fold-in-place-copies``
    lets the pointwise step write ``m``, ``v`` and ``p`` itself (two kernels fewer
    than the cut); smaller sizes are one persistent segment with the copies. Checked
    against float64 at each size, the walk and the replay."""
    from benchmarks.adam_step import _launches, adam_fusion, reference, scalars

    fd, fd_cut = adam_fusion(clip=True), adam_fusion(cut=True, clip=True)
    for n in (1 << 24, 1000003, 4096):
        for _ in range(2):
            p0, g0, m0 = (torch.randn(n, device="cuda") for _ in range(3))
            v0 = torch.rand(n, device="cuda")
            want = reference(*(t.double() for t in (p0, g0, m0, v0)), clip=1.0)
            p, m, v = p0.clone(), m0.clone(), v0.clone()
            fd.execute([p, g0, m, v, *scalars(), 1.0])
            for got, w in zip((m, v, p), want, strict=True):
                torch.testing.assert_close(got.double(), w, rtol=1e-5, atol=1e-6)
    args = [torch.randn(1 << 24, device="cuda") for _ in range(4)]
    assert _launches(fd, args, (*scalars(), 1.0)) == _launches(fd_cut, args, (*scalars(), 1.0)) - 2


def test_a_segmented_run_writes_a_view_of_the_input_back_into_it() -> None:
    """GPU fuzz seeds 2257 and 2585: after ``fd.segment``, the update is a strided
    view of the very input it is written into (``x[0:1:3]`` of a one-element ``x``);
    torch's ``copy_`` refuses views that share memory, so the value is copied first."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[1], contiguity=[None], dtype=DataType.Float)
        fd.add_output(fd.ops.cos(x))
        fd.add_output(fd.ops.strided_slice(x, [0], [1], [3]), alias_input=x)
    a = torch.randn(1, device="cuda")
    want = torch.cos(a)
    fd.segment([a.clone()])
    before = a.clone()
    (got,) = fd.execute([a])
    torch.testing.assert_close(got, want)
    assert torch.equal(a, before)
