"""``torch.compile(backend="fuser")`` on the GPU (``pytest -m gpu``): the training
step of a tiny GPT-2 and a tiny Llama on CUDA, fuser's partitions as generated kernels
and cuBLAS segments, against eager torch (loss and every gradient). The CPU side is
tests/test_torch_backend.py; the real sizes are benchmarks/transformer_step.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from benchmarks import model_families  # noqa: E402
from fuser.frontend.torch_backend import NEW_TENSORS_ONLY, fuser_backend, recording  # noqa: E402
from tests import backend_cases as cases  # noqa: E402

pytestmark = pytest.mark.gpu


def _gpt2() -> Any:
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_embd=64, n_layer=2, n_head=4, vocab_size=128, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
    ))


def _llama() -> Any:
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=128, max_position_embeddings=64, bos_token_id=0, eos_token_id=0,
    ))


@pytest.mark.parametrize("build", [_gpt2, _llama], ids=["gpt2", "llama"])
def test_training_step_on_cuda_matches_eager(build: Any) -> None:
    torch._dynamo.reset()  # noqa: SLF001
    torch.manual_seed(0)
    ref = build().cuda()
    ours = copy.deepcopy(ref)
    ids = torch.randint(0, 128, (4, 32), device="cuda")
    compiled = torch.compile(ours, backend=fuser_backend)
    with recording() as report:
        loss = compiled(input_ids=ids, labels=ids).loss
        loss.backward()
    loss_ref = ref(input_ids=ids, labels=ids).loss
    loss_ref.backward()
    torch.testing.assert_close(loss, loss_ref, rtol=1e-4, atol=1e-5)
    for (name, p1), p2 in zip(ref.named_parameters(), ours.parameters(), strict=True):
        err = (p1.grad - p2.grad).abs().max().item() / (p1.grad.abs().max().item() + 1e-12)
        assert err < 1e-3, f"{name}: gradient relative error {err:.2e}"
    assert len(report.fuser_ops) > 4 * len(report.torch_ops)


@pytest.mark.parametrize("name", ["bert", "gptj", "t5", "vit"])
def test_model_families_on_cuda_match_eager(name: str) -> None:
    """An encoder, interleaved rotary embeddings, an encoder-decoder and a vision
    model: their training steps on CUDA match eager torch, and every partition ran in
    fuser (none fell back to torch at its first run: T5's did, when a partition
    joined a CPU constant's copy to GPU nodes), partitions without inputs included."""
    torch._dynamo.reset()  # noqa: SLF001
    torch.manual_seed(0)
    ref = cases.family(name)().cuda()
    step = model_families.train_step(ref, cases.batch(ref, "cuda"))
    torch.testing.assert_close(step.loss, step.loss_eager, rtol=1e-4, atol=1e-5)
    cases.grads_match(ref, step.ours, rtol=1e-3)
    assert not step.fell_back, step.fell_back
    report = step.report
    failed = [f for g in report.graphs for f in g.fallbacks]
    assert not failed, failed
    assert len(report.fuser_ops) > 4 * len(report.torch_ops)
    # T5's position buckets (a partition without inputs) run on the GPU their trace gives.
    assert not [op for g in report.graphs for op, why in g.torch_ops if why == NEW_TENSORS_ONLY]


@pytest.mark.parametrize("case", sorted(cases.OP_CASES))
def test_ops_of_real_models_on_cuda(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each op of ``backend_cases.OP_CASES`` in a CUDA partition (generated kernels),
    outputs and gradients against eager torch."""
    monkeypatch.setenv("FUSER_BACKEND_CHECK", "1")
    cases.run_op_case(case, "cuda")

