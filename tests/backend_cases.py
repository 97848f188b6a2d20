"""Cases shared by the CPU and GPU tests of ``torch.compile(backend="fuser")``
(tests/test_torch_backend.py, tests/gpu/test_gpu_torch_backend.py): tiny Hugging Face
models of several families with a training batch, the ATen ops of real models with
their inputs, and the gradient comparison."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from benchmarks import model_families  # noqa: E402


def grads_match(ref: Any, ours: Any, rtol: float = 1e-5) -> None:
    """The worst gradient error (``model_families.gradient_error``: relative to each
    gradient's largest entry, or to a thousandth of the model's largest gradient where
    that is larger, since a gradient that is zero in exact arithmetic, attention's key
    bias, is rounding noise) is under ``rtol``; a gradient missing on one side fails."""
    err, name = model_families.gradient_error(ref, ours)
    assert err < rtol, f"{name}: gradient relative error {err:.2e}"


def rotate_half(x: Any) -> Any:
    """Llama's rotary halves: its backward is two ``slice_backward``s."""
    return torch.cat((-x[..., 4:], x[..., :4]), -1) * 2.0


def interleaved(x: Any) -> Any:
    """GPT-J's interleaved rotary pairs: slices of step 2 (their backward too)."""
    return torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2).exp()


def mask_rows(x: Any, m: Any) -> Any:
    return x.masked_fill(m, -1e4).softmax(-1) + x.masked_fill(m, torch.tensor(2.0, device=x.device))


def new_tensors(x: Any) -> Any:
    zeros = torch.zeros(4, 8, device=x.device)
    return x + zeros + x.new_ones(8) + torch.full((4, 1), 3.0, device=x.device) + torch.ones_like(x)


def position_buckets(x: Any) -> Any:
    """T5's relative position buckets: computed from ``arange`` alone, a partition
    without inputs (``cumsum``, in torch, stands between it and ``x``), which runs on
    the device its trace gives."""
    q = torch.arange(8, device=x.device)
    rel = q[None, :] - q[:, None]
    bucket = torch.where(rel > 0, 4, 0) + torch.minimum(rel.abs(), torch.full_like(rel, 3))
    return x + torch.cumsum(bucket.float().log1p(), 0)


def fill_and_copy(x: Any, y: Any, v: Any) -> Any:
    """In-place fills and a copy into a new tensor: functional ``fill`` (a scalar, a
    0-d tensor) and ``copy`` (``y`` broadcast into ``x``'s shape) after tracing."""
    return x.clone().fill_(2.0) + torch.empty_like(x).copy_(y) * x.clone().fill_(v)


OP_CASES: dict[str, tuple[Any, Any, list[str]]] = {
    # name: (function, inputs, the ATen ops of its graphs that now run in fuser)
    "slice_backward": (rotate_half, lambda: [torch.randn(2, 3, 8, requires_grad=True)],
                       ["aten.slice_backward.default"]),
    "step-slices": (interleaved, lambda: [torch.randn(2, 3, 8, requires_grad=True)],
                    ["aten.slice.Tensor", "aten.slice_backward.default", "aten.stack.default"]),
    "odd-steps": (lambda x: (x[:, 1:8:3] * 3.0).exp() + x[:, -3::2].sum(),
                  lambda: [torch.randn(3, 8, requires_grad=True)], ["aten.slice_backward.default"]),
    "select": (lambda x: x[:, 1] * 2 + x.select(0, -1).sum(), lambda: [torch.randn(3, 5, requires_grad=True)],
               ["aten.select.int", "aten.select_backward.default"]),
    "split": (lambda x: [a * i for i, a in enumerate(x.split(3, dim=1))] + list(x.split([2, 6], dim=-1)),
              lambda: [torch.randn(4, 8, requires_grad=True)], ["aten.split.Tensor", "aten.split_with_sizes.default"]),
    "new-tensors": (new_tensors, lambda: [torch.randn(4, 8)],
                    ["aten.zeros.default", "aten.new_ones.default", "aten.full.default", "aten.ones_like.default"]),
    "positions": (position_buckets, lambda: [torch.randn(8, 8, requires_grad=True)],
                  ["aten.arange.default", "aten.minimum.default", "aten.log1p.default"]),
    "fill-copy": (fill_and_copy, lambda: [torch.randn(4, 8), torch.randn(8), torch.tensor(3.0)],
                  ["aten.fill.Scalar", "aten.fill.Tensor", "aten.copy.default", "aten.empty_like.default"]),
    "masked_fill": (mask_rows, lambda: [torch.randn(4, 8, requires_grad=True), torch.rand(4, 8) > 0.5],
                    ["aten.masked_fill.Scalar", "aten.masked_fill.Tensor"]),
    "safe_softmax": (lambda x: torch.ops.aten._safe_softmax(x, -1),  # noqa: SLF001
                     lambda: [torch.cat((torch.randn(3, 8), torch.full((1, 8), float("-inf"))))],
                     ["aten._safe_softmax.default"]),
    "bitwise": (lambda x, m, n: torch.where(m & ~n | (m ^ n), x, 0.0),
                lambda: [torch.randn(4, 8), torch.rand(4, 8) > 0.5, torch.rand(4, 8) > 0.5],
                ["aten.bitwise_and.Tensor", "aten.bitwise_not.default", "aten.bitwise_or.Tensor"]),
    "pow": (lambda x, y: torch.pow(x.abs() + 1, y) + torch.pow(2.0, y), lambda: [torch.randn(4, 8), torch.randn(4, 8)],
            ["aten.pow.Tensor_Tensor", "aten.pow.Scalar"]),
    "constant": (lambda x: x * torch.tensor([1.0, 2.0, 3.0, 4.0], device=x.device), lambda: [torch.randn(3, 4)],
                 ["aten.lift_fresh_copy.default"]),
}


def tiny_gpt2(vocab: int = 64) -> Any:
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(
        n_embd=32, n_layer=2, n_head=2, vocab_size=vocab, n_positions=32, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
    )
    return transformers.GPT2LMHeadModel(config)


def tiny_gpt2_odd_vocabulary() -> Any:
    """Loss rows no vector divides, as GPT-2 small's 50257."""
    return tiny_gpt2(1001)


def tiny_llama() -> Any:
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
        vocab_size=64, max_position_embeddings=32, bos_token_id=0, eos_token_id=0,
    )
    return transformers.LlamaForCausalLM(config)


def family(name: str) -> Any:
    """The builder of family ``name``'s tiny model (``benchmarks/model_families.py``):
    BERT (an encoder), GPT-J (interleaved rotary pairs: slices of step 2), T5 (an
    encoder-decoder with relative position buckets), ViT (a patch convolution, then an
    encoder), ..."""

    def build() -> Any:
        pytest.importorskip("transformers")
        return model_families.build(name)

    return build


batch = model_families.batch
"""A training batch for a tiny model (``benchmarks/model_families.py``)."""


def run_op_case(case: str, device: str) -> None:
    """``OP_CASES[case]`` through ``torch.compile(backend="fuser")`` on ``device``: its
    outputs and gradients match eager torch, and its ops ran in fuser partitions."""
    from fuser.frontend import torch_backend

    fn, make, ops = OP_CASES[case]
    torch._dynamo.reset()  # noqa: SLF001
    torch.manual_seed(0)
    args = [a.detach().to(device).requires_grad_(a.requires_grad) for a in make()]
    with torch_backend.recording() as report:
        got = torch.compile(fn, backend=torch_backend.fuser_backend)(*args)
    want = fn(*[a.detach() for a in args])
    gots, wants = (got, want) if isinstance(got, list) else ([got], [want])
    for g, w in zip(gots, wants, strict=True):
        assert g.device == w.device
        torch.testing.assert_close(g, w)
    leaves = [a for a in args if a.requires_grad]
    if leaves:
        with torch_backend.recording() as backward:
            ours = torch.autograd.grad(sum(g.sum() for g in gots), leaves)
        again = fn(*args)
        theirs = torch.autograd.grad(sum(w.sum() for w in (again if isinstance(again, list) else [again])), leaves)
        for a, b in zip(ours, theirs, strict=True):
            torch.testing.assert_close(a, b)
        report.graphs.extend(backward.graphs)
    ran = set(report.fuser_ops)
    assert set(ops) <= ran, (set(ops) - ran, str(report))
    assert not [op for op in report.torch_ops if op in ops], str(report)
