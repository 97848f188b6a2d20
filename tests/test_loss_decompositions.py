"""The negative log-likelihood loss as fusible ops (``frontend/loss_decompositions.py``)
and what the torch.compile backend makes of a cross entropy with it: the pick and the
gradient are fuser ops, the min-cut partitioner (``min_cut_without_detach``) saves the
logits and two numbers a row instead of the float32 log-probabilities, and a contiguous
partition input is declared contiguous (a reshape of it is a view, not a copy)."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from fuser.frontend import loss_decompositions as L  # noqa: E402
from fuser.frontend import torch_backend  # noqa: E402

aten = torch.ops.aten


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Any:
    torch._dynamo.reset()  # noqa: SLF001
    yield
    torch._dynamo.reset()  # noqa: SLF001


def _case(dtype: Any = torch.float32) -> tuple[Any, Any]:
    torch.manual_seed(0)
    logp = torch.randn(6, 11).log_softmax(1).to(dtype)
    target = torch.tensor([3, -100, 0, 10, 7, -100])  # two ignored rows, both ends of the classes
    return logp, target


def _matches_aten(logp: Any, target: Any, weight: Any, reduction: int, exact: bool) -> None:
    """Forward (value and total weight) and backward against ATen's ops; bit for bit
    when ``exact`` (no class weights: the pick adds zeros to one value)."""
    tol = {"rtol": 0, "atol": 0} if exact else {}
    want, want_total = aten.nll_loss_forward(logp, target, weight, reduction, -100)
    got, got_total = L.nll_loss_forward(logp, target, weight, reduction, -100)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, **tol)
    if reduction != 0:
        torch.testing.assert_close(got_total, want_total, **tol)
    grad_out = torch.randn(want.shape, dtype=logp.dtype)
    want_g = aten.nll_loss_backward(grad_out, logp, target, weight, reduction, -100, want_total)
    got_g = L.nll_loss_backward(grad_out, logp, target, weight, reduction, -100, want_total)
    assert got_g.dtype == want_g.dtype and got_g.shape == want_g.shape
    torch.testing.assert_close(got_g, want_g, **tol)


@pytest.mark.parametrize("reduction", [0, 1, 2], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_forward_and_backward_match_aten(reduction: int, dtype: Any, weighted: bool) -> None:
    logp, target = _case(dtype)
    weight = torch.rand(11, generator=torch.Generator().manual_seed(1)).to(dtype) if weighted else None
    _matches_aten(logp, target, weight, reduction, exact=not weighted)


def test_an_ignore_index_inside_the_classes_is_ignored() -> None:
    logp, _ = _case()
    target = torch.tensor([3, 5, 0, 5, 7, 1])
    want = aten.nll_loss_forward(logp, target, None, 1, 5)
    got = L.nll_loss_forward(logp, target, None, 1, 5)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("reduction", [0, 1, 2], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_one_row_matches_aten(reduction: int, weighted: bool) -> None:
    weight = torch.rand(11) if weighted else None
    _matches_aten(torch.randn(11).log_softmax(0), torch.tensor(7), weight, reduction, exact=not weighted)


def test_other_shapes_are_left_to_torch() -> None:
    logp = torch.randn(2, 11, 3).log_softmax(1)
    target = torch.zeros(2, 3, dtype=torch.long)
    assert L.nll_loss_forward(logp, target, None, 1, -100) is NotImplemented
    total = torch.tensor(6.0)
    assert L.nll_loss_backward(torch.tensor(1.0), logp, target, None, 1, -100, total) is NotImplemented


def _cross_entropy(logits: Any, target: Any) -> Any:
    return torch.nn.functional.cross_entropy(logits.float(), target, ignore_index=-100)


CLASS_WEIGHTS = torch.rand(11, generator=torch.Generator().manual_seed(2))


def _weighted_cross_entropy(logits: Any, target: Any) -> Any:
    return torch.nn.functional.cross_entropy(logits, target, weight=CLASS_WEIGHTS, ignore_index=-100)


@pytest.mark.parametrize("loss_fn", [_cross_entropy, _weighted_cross_entropy], ids=["plain", "weighted"])
def test_a_cross_entropy_runs_in_fuser_and_matches_eager(loss_fn: Any) -> None:
    """The loss and its gradient through the backend: the pick (``nll_loss_forward``)
    and the gradient (``nll_loss_backward``) are fuser ops, so no op of the loss stays in
    torch, and the values match eager."""
    torch.manual_seed(0)
    logits = torch.randn(6, 11, requires_grad=True)
    ref = logits.detach().clone().requires_grad_(True)
    target = torch.tensor([3, -100, 0, 10, 7, 1])
    with torch_backend.recording() as report:
        loss = torch.compile(loss_fn, backend="fuser")(logits, target)
        loss.backward()
    want = loss_fn(ref, target)
    want.backward()
    torch.testing.assert_close(loss, want)
    torch.testing.assert_close(logits.grad, ref.grad)
    assert not [op for op in report.torch_ops if "nll_loss" in op], report.torch_ops
    assert any("arange" in op for op in report.fuser_ops)


def test_min_cut_saves_the_logits_not_the_log_probabilities() -> None:
    """Autograd detaches the log-softmax's output for its backward; min-cut would take
    the detach as an unfusible use and save the [N, C] float32 log-probabilities.
    Without detaches it saves the bf16 logits and the row statistics."""
    from functorch.compile import aot_function, make_boxed_func

    saved: list[Any] = []

    def forward_compiler(gm: Any, _: Any) -> Any:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        saved.extend(v.meta["val"] for v in out.args[0][1:])  # the first output is the loss
        return make_boxed_func(gm)

    fn = aot_function(
        _cross_entropy, forward_compiler, lambda gm, _: make_boxed_func(gm),
        partition_fn=torch_backend.min_cut_without_detach, decompositions=torch_backend._decompositions(),  # noqa: SLF001
    )
    logits = torch.randn(6, 11, dtype=torch.bfloat16, requires_grad=True)
    fn(logits, torch.tensor([3, -100, 0, 10, 7, 1])).backward()
    wide = [t for t in saved if isinstance(t, torch.Tensor) and t.shape == (6, 11)]
    assert wide and all(t.dtype == torch.bfloat16 for t in wide), [(t.shape, t.dtype) for t in saved]
    assert logits.grad is not None


def test_a_contiguous_input_is_declared_contiguous_and_a_later_strided_one_is_copied() -> None:
    """A partition traced with a contiguous input declares it contiguous, so its
    reshape is a view on the host (no copy kernel). A later call with the same shape
    laid out otherwise fails fuser's layout check; the partition retries with a
    contiguous copy."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from fuser.frontend.torch_graph import definition_of

    def f(x: Any) -> Any:
        return aten.view.default(aten.mul.Tensor(x, 2.0), [32]), aten.view.default(x, [32])

    gm = make_fx(f, tracing_mode="fake")(torch.randn(4, 8))
    fd = definition_of(gm)
    assert "contiguity=[True, True]" in str(fd)
    part = torch_backend.FuserPartition(fd, False, gm)
    x = torch.randn(4, 8)
    for arg in (x, torch.randn(8, 4).t()):
        got = part(arg)
        torch.testing.assert_close(got[0], arg.reshape(32) * 2)
        torch.testing.assert_close(got[1], arg.reshape(32))
    assert part.failed is None
