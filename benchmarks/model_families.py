"""Tiny Hugging Face models of many families through ``torch.compile(backend="fuser")``:
one training step of each against eager torch, and what stayed in torch (issue 16's
real clients, beyond GPT-2 and Llama).

Run it on the CPU (the reference interpreter) or on the GPU machine::

    python3 benchmarks/model_families.py [--device cuda] [--only bert,t5] [--json out.jsonl]

Each family is built from a small config with random weights (no downloads: hidden
32, two layers, two heads, vocabulary 64), takes a batch of 2 x 8 tokens (a 2 x 6
target for an encoder-decoder, 2 images of 16 x 16 for ViT) and runs forward, loss and
backward once through the backend and once eagerly. The table says per family:

- the two losses and the worst gradient error: each gradient's largest difference over
  its largest entry, or over a thousandth of the model's largest gradient where that
  is larger (attention's key bias has a gradient that is zero in exact arithmetic:
  softmax ignores a shift of its row, so its entries are rounding noise);
- how many ATen ops ran in fuser partitions and how many in torch, and which ops
  stayed in torch (the report of ``fuser.frontend.torch_backend.recording``).

A family whose step raises is a row with the error; the script exits 1 when any step
failed, a partition did not translate or fell back to torch at its first call, or any
gradient is off by more than ``--tol``.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_LM = {"vocab_size": 64, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": 0}
_LAYERS = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
           "max_position_embeddings": 32}
_NO_DROPOUT = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


def _families() -> dict[str, Callable[[Any], Any]]:
    """Family name -> builder of its tiny model from the ``transformers`` module."""
    lm, layers, nd = _LM, _LAYERS, _NO_DROPOUT
    return {
        "bert": lambda t: t.BertForMaskedLM(t.BertConfig(**lm, **layers, **nd)),
        "roberta": lambda t: t.RobertaForMaskedLM(
            t.RobertaConfig(**{**lm, "pad_token_id": 1}, **{**layers, "max_position_embeddings": 40}, **nd)),
        "distilbert": lambda t: t.DistilBertForMaskedLM(t.DistilBertConfig(
            vocab_size=64, dim=32, hidden_dim=64, n_layers=2, n_heads=2, max_position_embeddings=32, dropout=0.0,
            attention_dropout=0.0, pad_token_id=0)),
        "electra": lambda t: t.ElectraForMaskedLM(t.ElectraConfig(**lm, embedding_size=32, **layers, **nd)),
        "albert": lambda t: t.AlbertForMaskedLM(t.AlbertConfig(**lm, embedding_size=16, **layers, **nd)),
        "deberta_v2": lambda t: t.DebertaV2ForMaskedLM(t.DebertaV2Config(**lm, **layers, **nd)),
        "mistral": lambda t: t.MistralForCausalLM(t.MistralConfig(**lm, **layers, num_key_value_heads=1)),
        "qwen2": lambda t: t.Qwen2ForCausalLM(t.Qwen2Config(**lm, **layers, num_key_value_heads=1)),
        "gemma": lambda t: t.GemmaForCausalLM(t.GemmaConfig(**lm, **layers, num_key_value_heads=1, head_dim=16)),
        "gemma2": lambda t: t.Gemma2ForCausalLM(t.Gemma2Config(**lm, **layers, num_key_value_heads=1, head_dim=16)),
        "phi": lambda t: t.PhiForCausalLM(
            t.PhiConfig(**lm, **layers, resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0)),
        "phi3": lambda t: t.Phi3ForCausalLM(t.Phi3Config(**lm, **layers, num_key_value_heads=1)),
        "gpt_neox": lambda t: t.GPTNeoXForCausalLM(
            t.GPTNeoXConfig(**lm, **layers, hidden_dropout=0.0, attention_dropout=0.0)),
        "opt": lambda t: t.OPTForCausalLM(t.OPTConfig(
            **lm, hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=32,
            dropout=0.0, attention_dropout=0.0, word_embed_proj_dim=32)),
        "falcon": lambda t: t.FalconForCausalLM(t.FalconConfig(
            vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, hidden_dropout=0.0,
            attention_dropout=0.0, bos_token_id=0, eos_token_id=0)),
        "bloom": lambda t: t.BloomForCausalLM(t.BloomConfig(
            vocab_size=64, hidden_size=32, n_layer=2, n_head=2, hidden_dropout=0.0, attention_dropout=0.0,
            bos_token_id=0, eos_token_id=0)),
        "gptj": lambda t: t.GPTJForCausalLM(t.GPTJConfig(
            vocab_size=64, n_embd=32, n_layer=2, n_head=2, n_positions=32, rotary_dim=8, resid_pdrop=0.0,
            embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)),
        "starcoder2": lambda t: t.Starcoder2ForCausalLM(t.Starcoder2Config(
            **lm, **layers, num_key_value_heads=1, residual_dropout=0.0, embedding_dropout=0.0,
            attention_dropout=0.0)),
        "olmo": lambda t: t.OlmoForCausalLM(t.OlmoConfig(**lm, **layers, num_key_value_heads=1)),
        "stablelm": lambda t: t.StableLmForCausalLM(t.StableLmConfig(**lm, **layers, num_key_value_heads=1)),
        "mixtral": lambda t: t.MixtralForCausalLM(t.MixtralConfig(
            **lm, **layers, num_key_value_heads=1, num_local_experts=4, num_experts_per_tok=2)),
        "t5": lambda t: t.T5ForConditionalGeneration(t.T5Config(
            vocab_size=64, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, dropout_rate=0.0,
            decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)),
        "bart": lambda t: t.BartForConditionalGeneration(t.BartConfig(
            vocab_size=64, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=32,
            dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, pad_token_id=1, bos_token_id=0,
            eos_token_id=2, decoder_start_token_id=2)),
        "vit": lambda t: t.ViTForImageClassification(t.ViTConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=16,
            patch_size=8, num_labels=5, **nd)),
    }


FAMILIES = tuple(_families())
"""The families, in the table's order."""


def build(name: str) -> Any:
    """The tiny model of family ``name`` (random weights, training mode)."""
    import transformers

    model = _families()[name](transformers)
    model.train()
    return model


def batch(model: Any, device: str = "cpu") -> dict[str, Any]:
    """A training batch for ``model`` on ``device``: token ids as labels, a target
    sequence for an encoder-decoder, images and classes for a vision model."""
    import torch

    if model.config.model_type == "vit":
        out = {"pixel_values": torch.randn(2, 3, 16, 16), "labels": torch.randint(0, 5, (2,))}
    else:
        ids = torch.randint(3, model.config.vocab_size, (2, 8))
        labels = torch.randint(3, model.config.vocab_size, (2, 6)) if model.config.is_encoder_decoder else ids
        out = {"input_ids": ids, "labels": labels}
    return {k: v.to(device) for k, v in out.items()}


def gradient_error(ref: Any, ours: Any) -> tuple[float, str]:
    """The worst gradient error of ``ours`` against ``ref`` and its parameter's name
    (module docstring); infinite where only one of the two has a gradient."""
    top = max((p.grad.abs().max().item() for p in ref.parameters() if p.grad is not None), default=0.0)
    worst = (0.0, "")
    for (name, p1), p2 in zip(ref.named_parameters(), ours.parameters(), strict=True):
        if p1.grad is None or p2.grad is None:
            if (p1.grad is None) != (p2.grad is None):
                return float("inf"), name
            continue
        scale = max(p1.grad.abs().max().item(), 1e-3 * top) + 1e-30
        err = (p1.grad - p2.grad).abs().max().item() / scale
        if err > worst[0]:
            worst = (err, name)
    return worst


@dataclass
class Step:
    """A training step through the backend next to the same step in eager torch."""

    ours: Any
    """The model the backend ran (a copy of the eager one), with its gradients."""
    loss: Any
    loss_eager: Any
    report: Any
    """What ran where (``torch_backend.Report``)."""
    fell_back: list[str]
    """The warnings of partitions that fuser could not run at their first call."""
    seconds: float


def train_step(ref: Any, data: dict[str, Any]) -> Step:
    """Forward, loss and backward of a copy of ``ref`` through
    ``torch.compile(backend=fuser_backend)``, then of ``ref`` itself eagerly, on
    ``data``; each model keeps its gradients."""
    import torch

    from fuser.frontend.torch_backend import fuser_backend, recording

    ours = copy.deepcopy(ref)
    t0 = time.perf_counter()
    with recording() as report, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = torch.compile(ours, backend=fuser_backend)(**data).loss
        loss.backward()
    seconds = time.perf_counter() - t0
    loss_eager = ref(**data).loss
    loss_eager.backward()
    fell_back = [str(w.message) for w in caught if "a partition runs in torch" in str(w.message)]
    return Step(ours, loss, loss_eager, report, fell_back, seconds)


def run(name: str, device: str = "cpu") -> dict[str, Any]:
    """One training step of family ``name`` through the backend and eagerly."""
    import torch

    torch._dynamo.reset()  # noqa: SLF001
    torch.manual_seed(0)
    ref = build(name).to(device)
    step = train_step(ref, batch(ref, device))
    err, where = gradient_error(ref, step.ours)
    report = step.report
    return {
        "family": name, "device": device, "loss_eager": step.loss_eager.item(), "loss_fuser": step.loss.item(),
        "grad_err": err, "grad_err_at": where, "fuser_ops": len(report.fuser_ops),
        "torch_ops": len(report.torch_ops), "in_torch": dict(collections.Counter(report.torch_ops).most_common()),
        "failed_partitions": [why for g in report.graphs for _, why in g.fallbacks],
        "fell_back": step.fell_back, "first_step_s": round(step.seconds, 2),
    }


def _short(op: str) -> str:
    return op.removeprefix("aten.").removesuffix(".default")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", default="", help="comma-separated families (default: all)")
    ap.add_argument("--tol", type=float, default=1e-4, help="the largest gradient error that passes")
    ap.add_argument("--json", help="append one row per family to this JSONL file")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(FAMILIES)
    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        ap.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    print("| family | loss eager | loss fuser | worst gradient error | ops in fuser | ops in torch | "
          "what stayed in torch |")
    print("|---|---|---|---|---|---|---|")
    bad = 0
    for name in names:
        try:
            row = run(name, args.device)
        except Exception as e:  # noqa: BLE001 - one family's failure is a row of the table
            row = {"family": name, "device": args.device, "error": f"{type(e).__name__}: {e}"}
            print(f"| {name} | - | - | - | - | - | {row['error'][:200]} |", flush=True)
            bad += 1
        else:
            left = ", ".join(f"{_short(op)} x{k}" if k > 1 else _short(op) for op, k in row["in_torch"].items())
            print(f"| {name} | {row['loss_eager']:.6f} | {row['loss_fuser']:.6f} | {row['grad_err']:.1e} | "
                  f"{row['fuser_ops']} | {row['torch_ops']} | {left} |", flush=True)
            bad += row["grad_err"] > args.tol or bool(row["failed_partitions"] or row["fell_back"])
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
