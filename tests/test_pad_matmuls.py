"""``pad_matmuls``: unaligned matrix products of an ATen graph padded before AOTAutograd
partitions it (``fuser.frontend.pad_matmuls``), on the CPU with ``mode="always"``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

from fuser.frontend import torch_backend  # noqa: E402
from fuser.frontend.pad_matmuls import pad_matmuls, pad_mode  # noqa: E402

aten = torch.ops.aten


def _calls(gm: Any, target: Any) -> list[Any]:
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target is target]


def test_an_unaligned_product_runs_on_padded_operands_and_is_sliced() -> None:
    """``x @ w.T`` with M, K, N = 6, 5, 7 (float32: multiples of 4 wanted): the
    weight is padded before its transpose, in its own row-major order; the product is
    8 x 8 and its slice the result. Returned from the graph, the slice is copied into
    the strides eager gave the product (inductor's ``keep_output_stride``)."""

    def f(x: Any, w: Any) -> Any:
        return aten.mm.default(x, aten.t.default(w))

    x, w = torch.randn(6, 5), torch.randn(7, 5)
    gm = make_fx(f, tracing_mode="fake")(x, w)
    assert pad_matmuls(gm, "always") == 1
    (mm,) = _calls(gm, aten.mm.default)
    assert [tuple(a.meta["val"].shape) for a in mm.args] == [(8, 8), (8, 8)]
    pads = _calls(gm, aten.constant_pad_nd.default)
    assert sorted(p.args[0].name for p in pads) == ["w_1", "x_1"]
    assert _calls(gm, aten.t.default)[0].args[0].target is aten.constant_pad_nd.default
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert out.target is aten.clone.default and out.kwargs["memory_format"] is torch.contiguous_format
    sliced = _calls(gm, aten.slice.Tensor)[-1]  # (rows, then columns)
    assert sliced.meta["val"].stride() == (8, 1) and tuple(sliced.meta["val"].shape) == (6, 7)
    got = gm(x, w)
    torch.testing.assert_close(got, x @ w.T)
    assert got.stride() == (7, 1)


def test_two_products_of_one_tensor_share_its_pad() -> None:
    """A gradient read as ``g @ w`` (K = 5) and as ``g.T @ h`` (M = 5) is padded once:
    the transposed read pads the tensor under the transpose, with the same widths."""

    def f(g: Any, w: Any, h: Any) -> Any:
        return aten.mm.default(g, w), aten.mm.default(aten.t.default(g), h)

    g, w, h = torch.randn(8, 5), torch.randn(5, 8), torch.randn(8, 8)
    gm = make_fx(f, tracing_mode="fake")(g, w, h)
    assert pad_matmuls(gm, "always") == 2
    pads = _calls(gm, aten.constant_pad_nd.default)
    assert sorted(p.args[0].name for p in pads) == ["g_1", "w_1"]
    assert len(_calls(gm, aten.t.default)) == 1  # the original transpose is gone
    a, b = gm(g, w, h)
    torch.testing.assert_close(a, g @ w)
    torch.testing.assert_close(b, g.T @ h)


def test_a_bias_is_padded_and_a_batch_view_keeps_the_row_pitch() -> None:
    """``addmm`` gets a padded bias; the ``_unsafe_view`` that folds a batched
    product back becomes a ``view`` of the slice (strided, no copy), which the graph's
    output copies into eager's contiguous strides."""

    def f(x: Any, w: Any, b: Any) -> Any:
        y = aten.addmm.default(b, aten.view.default(x, [6, 5]), aten.t.default(w))
        return aten._unsafe_view.default(y, [2, 3, 7])

    x, w, b = torch.randn(2, 3, 5), torch.randn(7, 5), torch.randn(7)
    gm = make_fx(f, tracing_mode="fake")(x, w, b)
    assert pad_matmuls(gm, "always") == 1
    assert not _calls(gm, aten._unsafe_view.default)
    (view,) = _calls(gm, aten.view.default)[1:]  # (the first folds x)
    assert view.meta["val"].stride() == (24, 8, 1)
    got = gm(x, w, b)
    torch.testing.assert_close(got, torch.nn.functional.linear(x, w, b))
    assert got.stride() == (21, 7, 1)


def test_aligned_products_and_the_modes_that_leave_them() -> None:
    def f(x: Any, w: Any) -> Any:
        return aten.mm.default(x, w)

    aligned = make_fx(f, tracing_mode="fake")(torch.randn(8, 4), torch.randn(4, 12))
    assert pad_matmuls(aligned, "always") == 0
    for mode in ("never", "auto"):  # auto: only large GEMMs on the GPU
        gm = make_fx(f, tracing_mode="fake")(torch.randn(6, 5), torch.randn(5, 7))
        assert pad_matmuls(gm, mode) == 0
        assert not _calls(gm, aten.constant_pad_nd.default)


def test_the_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FUSER_PAD_MATMULS", raising=False)
    assert pad_mode() == "auto"
    monkeypatch.setenv("FUSER_PAD_MATMULS", "sometimes")
    with pytest.raises(ValueError, match="FUSER_PAD_MATMULS must be one of auto, always, never"):
        pad_mode()


def test_a_strided_trace_is_declared_and_a_later_contiguous_argument_restrided() -> None:
    """A partition traced with a row-pitched input declares that layout (a reshape
    of it is a host view); called with a contiguous tensor of the same shape, fuser
    rejects the layout and the partition copies the argument into the traced
    strides."""
    from fuser.frontend.torch_graph import definition_of

    def f(x: Any) -> Any:
        return (aten.mul.Tensor(aten.view.default(x, [2, 3, 5]), 2.0),)

    traced = torch.randn(6, 8)[:, :5]
    gm = make_fx(f, tracing_mode="fake")(traced)
    fd = definition_of(gm)
    assert "contiguity=[False, True]" in str(fd)
    part = torch_backend.FuserPartition(fd, False, gm, input_strides=[(8, 1)])
    for arg in (traced, torch.randn(6, 5)):
        (got,) = part(arg)
        torch.testing.assert_close(got, arg.reshape(2, 3, 5) * 2)
    assert part.failed is None


def _tiny_gpt2_1001() -> Any:
    """A one-layer GPT-2 whose vocabulary (1001) no vector divides, seeded."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_embd=32, n_layer=1, n_head=2, vocab_size=1001, n_positions=32, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
    )
    return transformers.GPT2LMHeadModel(config)


def test_gpt2_with_an_odd_vocabulary_trains_through_padded_products(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny GPT-2 whose vocabulary (1001) no vector divides, with every unaligned
    product padded: loss, logits and every gradient match eager. The LM head is a
    1004-wide product; the logits returned to the caller have eager's strides."""
    monkeypatch.setenv("FUSER_PAD_MATMULS", "always")
    ref = _tiny_gpt2_1001()
    ours = copy.deepcopy(ref)
    ids = torch.randint(0, 1001, (2, 8))
    out = torch.compile(ours, backend="fuser")(input_ids=ids, labels=ids)
    out.loss.backward()
    want = ref(input_ids=ids, labels=ids)
    want.loss.backward()
    assert out.logits.stride() == want.logits.stride() == (8 * 1001, 1001, 1)
    from fuser.frontend.cache import FusionCache

    texts = [str(e.fusion) for e in FusionCache.get()._entries]  # noqa: SLF001
    assert any("fuser.matmul" in t and "-> !fuser.tensor<16x1004xf32>" in t for t in texts)
    torch.testing.assert_close(out.logits, want.logits)
    torch.testing.assert_close(out.loss, want.loss)
    for (name, p), q in zip(ref.named_parameters(), ours.parameters(), strict=True):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5, msg=name)


def test_inference_graphs_are_padded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without autograd there is no joint graph: the inference graph is padded before
    it is partitioned, and its outputs keep eager's strides."""
    from fuser.frontend.cache import FusionCache

    monkeypatch.setenv("FUSER_PAD_MATMULS", "always")
    ref = _tiny_gpt2_1001().eval()
    ours = copy.deepcopy(ref)
    ids = torch.randint(0, 1001, (2, 8))
    known = len(FusionCache.get()._entries)  # noqa: SLF001 - (the cache is the process's)
    with torch.no_grad():
        got = torch.compile(ours, backend="fuser")(input_ids=ids).logits
        want = ref(input_ids=ids).logits
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    texts = [str(e.fusion) for e in FusionCache.get()._entries[known:]]  # noqa: SLF001
    assert any("fuser.matmul" in t and "-> !fuser.tensor<16x1004xf32>" in t for t in texts)
