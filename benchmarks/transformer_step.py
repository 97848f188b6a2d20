"""One training step (forward, loss, backward) of Hugging Face models through
``torch.compile(backend="fuser")``, side by side with eager torch and inductor.

    python3 benchmarks/transformer_step.py [--only gpt2,llama] [--variants eager,fuser,fuser-ordered] [--steps 20]
                                           [--profile] [--dump-segments DIR] [--host-profile] [--json FILE]

(``FUSER_CUDA_GRAPHS=0`` in the environment: the partitions launch every kernel per
call instead of replaying CUDA graphs. The ``fuser-*`` variants compile with the
backend's other partitionings: ``FUSER_VARIANTS``.)

Models (random weights from a config, no download; bf16 on the GPU, dropout off):

* ``gpt2_small``: GPT-2's 124M configuration, batch 8 x 512 tokens;
* ``llama_block``: a Llama-style model of one decoder layer at hidden 4096
  (intermediate 11008, 32 heads, vocabulary 32000), batch 2 x 1024 tokens.

Per model and variant (eager, inductor, fuser): the first step's wall time (compile
included; for the fuser variants also split by fuser's compile stages,
``benchmarks/stage_timer.py``: the rest is dynamo, AOTAutograd and running), the
median step time over ``--steps`` steps (wall clock, synchronized) and of the host's
time to enqueue a step (``host_ms``: a step no longer than that is host-bound), the loss, the
peak of allocated memory over the timed steps and the memory torch's allocator holds
after them (CUDA graphs' private pools included), and the largest
relative gradient error against eager over the parameters
(``max |g - g_eager| / max |g_eager|``, per parameter; bf16 rounding makes inductor's
non-zero too), plus the fuser backend's partition report in numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.environment import environment  # noqa: E402
from benchmarks.stage_timer import stage_times  # noqa: E402


def models() -> dict[str, tuple[Any, tuple[int, int], int]]:
    """name -> (model factory, (batch, tokens), vocabulary)."""
    import transformers

    def gpt2() -> Any:
        cfg = transformers.GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        return transformers.GPT2LMHeadModel(cfg)

    def llama() -> Any:
        cfg = transformers.LlamaConfig(
            hidden_size=4096, intermediate_size=11008, num_hidden_layers=1, num_attention_heads=32,
            num_key_value_heads=32, vocab_size=32000, max_position_embeddings=2048,
        )
        return transformers.LlamaForCausalLM(cfg)

    return {"gpt2_small": (gpt2, (8, 512), 50257), "llama_block": (llama, (2, 1024), 32000)}


def step(model: Any, ids: Any) -> Any:
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    return loss


def run_variant(model: Any, compiled: Any, ids: Any, steps: int, stages: bool = False) -> dict[str, Any]:
    """The first step's time (``stages``: split by fuser's compile stages,
    ``benchmarks/stage_timer.py``), the median of ``steps`` more and of their host
    time (the step's enqueue, before the GPU drains it: a step as long as its enqueue
    is host-bound), the loss, the gradients and the memory."""
    import torch

    torch.cuda.synchronize()
    with stage_times() if stages else contextlib.nullcontext({}) as spent:
        t0 = time.perf_counter()
        loss = step(compiled, ids)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
    # On the host: gradients kept on the device would count in every later variant's peak.
    grads = {n: p.grad.detach().cpu() for n, p in model.named_parameters() if p.grad is not None}
    times, enqueued = [], []
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        model.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step(compiled, ids)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        enqueued.append(t1 - t0)
    return {"first_s": round(first, 2), "first_stages_s": {k: round(v, 2) for k, v in spent.items()},
            "step_ms": round(statistics.median(times) * 1e3, 2),
            "host_ms": round(statistics.median(enqueued) * 1e3, 2),
            "loss": float(loss), "grads": grads,
            "peak_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2),
            "reserved_gb": round(torch.cuda.memory_reserved() / 2**30, 2)}


def busy_us(spans: list[tuple[float, float]]) -> float:
    """The time covered by at least one of ``spans`` (start, end): kernels that
    overlap count once. A kernel launched as a programmatic dependent launch starts
    while the kernel before it finishes and waits for it, so the sum of the
    profiler's kernel durations counts that wait twice."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def profile_table(compiled: Any, ids: Any) -> tuple[str, float]:
    """torch.profiler's CUDA kernels of one step, by total time, and the GPU's busy
    time over them (ms; overlapping kernels counted once: ``busy_us``)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(compiled, ids)
        torch.cuda.synchronize()
    events = prof.key_averages()
    totals: dict[str, float] = {}
    for e in events:
        us = e.device_time_total
        if us:
            kind = kernel_kind(e.key)
            totals[kind] = totals.get(kind, 0.0) + us
    summary = ", ".join(f"{k} {v / 1e3:.2f} ms" for k, v in sorted(totals.items(), key=lambda kv: -kv[1]))
    spans = [
        (e.time_range.start, e.time_range.end) for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start
    ]
    summed = sum(totals.values()) / 1e3
    table = events.table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=60)
    if not spans:  # no kernel spans recorded: say so rather than pass the sum off as busy time
        return f"kernels of one step: {summed:.2f} ms summed (no kernel spans for the busy time) ({summary})\n{table}", summed
    busy = busy_us(spans) / 1e3
    return f"kernels of one step: {busy:.2f} ms busy, {summed:.2f} ms summed ({summary})\n{table}", busy


def dump_segments(directory: str) -> int:
    """Every generated segment the fusion cache compiled, as ``<kernel name>.mlir``
    in ``directory`` (its fusion and each kernel's grid and block, so that a
    profile's ``nvfuser_fusion_idN_segM`` can be read) and ``<kernel name>.cu`` (the
    CUDA C it launched). Returns how many."""
    from fuser.frontend.cache import FusionCache

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for entry in FusionCache.get()._entries:  # noqa: SLF001
        for program, _ in entry.gpu_plans.values():
            for name, seg in program._launched.items():  # noqa: SLF001
                if seg is None:
                    continue
                launches = "\n".join(f"// kernel {i}: grid {k.grid} block {k.block}"
                                      for i, k in enumerate(seg.lowered.kernels))
                (out / f"{name}.mlir").write_text(f"{launches}\n{seg.fusion}\n")
                (out / f"{name}.cu").write_text(seg.source)
                n += 1
    return n


def kernel_kind(name: str) -> str:
    """A CUDA kernel's family by its name: library GEMMs, attention, inductor's Triton
    kernels, ATen's own kernels, copies, or (the rest) kernels fuser generated."""
    low = name.lower()
    if any(k in low for k in ("gemm", "nvjet", "cutlass", "xmma", "cublas", "splitk")):
        return "gemm"
    if any(k in low for k in ("flash", "fmha", "attention", "attn")):
        return "attention"
    if low.startswith("triton"):
        return "triton"
    if "memcpy" in low or "memset" in low:
        return "copy"
    if "at::" in low or "native" in low or "elementwise" in low or "reduce_kernel" in low:
        return "aten"
    return "generated"


def host_profile(compiled: Any, ids: Any, steps: int = 5) -> str:
    """cProfile's top functions (own time) over ``steps`` steps: where the host goes."""
    import cProfile
    import io
    import pstats

    import torch

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step(compiled, ids)
    torch.cuda.synchronize()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).sort_stats("tottime")
    stats.print_stats(25)
    stats.sort_stats("ncalls").print_stats("hot_launch|fuser hot launcher", 12)
    return out.getvalue()


def graph_counts(launchers: list[Any] | None = None, shared: bool | None = None) -> str:
    """How many launchers replay CUDA graphs, how many graphs they hold, the memory
    those graphs keep for good (``hot_launch.Graphs``: with private pools the sum of
    every graph's intermediates and scratch; with pools shared per stream, at least
    the largest graph's), and why any turned them off. ``launchers``: the process's
    ``HotLauncher``s by default; ``shared``: ``hot_launch.shared_pools()`` by default."""
    from fuser.runtime import hot_launch

    if launchers is None:
        # type(), not isinstance(): gc also lists weak proxies, whose referent may be gone.
        launchers = [o for o in gc.get_objects() if type(o) is hot_launch.HotLauncher]
    if shared is None:
        shared = hot_launch.shared_pools()
    graphed = [x.graphs for x in launchers if x.graphs is not None]
    off = sorted({g.why for g in graphed if g.off})
    if shared:
        kept = max((g.owned for g in graphed if g.execs), default=0)
        owning = f"owning >= {kept / 2**30:.2f} GB (shared pools)"
    else:
        kept = sum(g.owned * len(g.execs) for g in graphed)
        owning = f"owning {kept / 2**30:.2f} GB"
    return (f"hot launchers {len(launchers)}, with graphs {len(graphed)}, graphs "
            f"{sum(len(g.execs) for g in graphed)}, {owning}, off {sum(g.off for g in graphed)} {off}")


FUSER_VARIANTS: dict[str, dict[str, str]] = {
    "fuser": {},
    "fuser-ordered": {"FUSER_PARTITIONS": "ordered"},
    "fuser-aot-default": {"FUSER_AOT_PARTITIONER": "default"},
    "fuser-ordered-aot-default": {"FUSER_PARTITIONS": "ordered", "FUSER_AOT_PARTITIONER": "default"},
    "fuser-private-pools": {"FUSER_GRAPH_POOL": "private"},
}
"""The backend's variants: the environment each compiles and runs under (the
partitioning choices of ``fuser.frontend.torch_backend``), so one run compares them."""


def grad_error(grads: dict[str, Any], ref: dict[str, Any]) -> float:
    worst = 0.0
    for name, g in ref.items():
        scale = g.abs().max().item() or 1.0
        worst = max(worst, (grads[name].float() - g.float()).abs().max().item() / scale)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--json")
    ap.add_argument("--profile", action="store_true", help="the compiled variants' CUDA kernels of one step, by family and the top 25")
    ap.add_argument("--dump-segments", metavar="DIR",
                    help="write every generated segment's fusion to DIR/<model>-<variant>/<kernel>.mlir")
    ap.add_argument("--host-profile", action="store_true", help="the fuser variant's top host functions (cProfile)")
    ap.add_argument("--variants", default="eager,inductor,fuser",
                    help="eager (always run: the reference), inductor, fuser, fuser-ordered, fuser-aot-default, "
                         "fuser-ordered-aot-default")
    args = ap.parse_args()
    for variant in args.variants.split(","):
        if variant not in ("eager", "inductor") and variant not in FUSER_VARIANTS:
            raise SystemExit(f"unknown variant {variant!r}: eager, inductor, {', '.join(FUSER_VARIANTS)}")
    import torch

    from fuser.frontend.cache import FusionCache
    from fuser.frontend.torch_backend import fuser_backend, recording

    rows = []
    for name, (factory, (batch, tokens), vocab) in models().items():
        if args.only and not any(k in name for k in args.only.split(",")):
            continue
        torch.manual_seed(0)
        base = factory().to(device="cuda", dtype=torch.bfloat16)
        ids = torch.randint(0, vocab, (batch, tokens), device="cuda")
        results: dict[str, dict[str, Any]] = {}
        report = None
        variants = ["eager", *(v for v in args.variants.split(",") if v != "eager")]
        for variant in variants:
            torch._dynamo.reset()  # noqa: SLF001
            model = copy.deepcopy(base)
            if variant == "eager":
                compiled = model
            elif variant == "inductor":
                compiled = torch.compile(model)
            else:
                compiled = torch.compile(model, backend=fuser_backend)
            with recording() as rep, environment(FUSER_VARIANTS.get(variant, {})):
                results[variant] = run_variant(model, compiled, ids, args.steps, variant in FUSER_VARIANTS)
            r = results[variant]
            split = ", ".join(f"{k} {v}" for k, v in r["first_stages_s"].items())
            print(f"# {name} {variant}: step {r['step_ms']} ms (host {r['host_ms']} ms), first {r['first_s']} s"
                  f"{f' ({split})' if split else ''}, peak {r['peak_gb']} GB, reserved {r['reserved_gb']} GB",
                  flush=True)
            if args.profile and variant != "eager":
                table, results[variant]["kernels_ms"] = profile_table(compiled, ids)
                print(table, flush=True)
            if variant in FUSER_VARIANTS:
                shared = FUSER_VARIANTS[variant].get("FUSER_GRAPH_POOL", "shared") != "private"
                report = rep if variant == "fuser" or report is None else report
                print(graph_counts(shared=shared), flush=True)
                if args.dump_segments:
                    n = dump_segments(f"{args.dump_segments}/{name}-{variant}")
                    print(f"{n} segments written to {args.dump_segments}/{name}-{variant}", flush=True)
                if args.host_profile:
                    print(host_profile(compiled, ids), flush=True)
                    print(graph_counts(shared=shared), flush=True)
            del model, compiled
            # The process-wide fusion cache keeps every compiled partition (and its CUDA
            # graphs' pools): drop it, so that the next variant's memory is its own.
            FusionCache.reset()
            gc.collect()
            torch.cuda.empty_cache()
        ref = results["eager"]["grads"]
        row = {"model": name, "batch": batch, "tokens": tokens}
        for variant, r in results.items():
            row[f"{variant}_step_ms"] = r["step_ms"]
            row[f"{variant}_host_ms"] = r["host_ms"]  # the step's enqueue: near step_ms when host-bound
            row[f"{variant}_first_s"] = r["first_s"]
            if r["first_stages_s"]:
                row[f"{variant}_first_stages_s"] = r["first_stages_s"]
            row[f"{variant}_loss"] = round(r["loss"], 5)
            row[f"{variant}_peak_gb"] = r["peak_gb"]  # allocated, over the timed steps
            row[f"{variant}_reserved_gb"] = r["reserved_gb"]
            if "kernels_ms" in r:  # --profile: the step's kernel time, steadier than the host-bound step
                row[f"{variant}_kernels_ms"] = round(r["kernels_ms"], 2)
            if variant != "eager":
                row[f"{variant}_grad_err"] = float(f"{grad_error(r['grads'], ref):.2e}")
        if report is not None:
            row["fuser_partitions"] = sum(len(g.partitions) for g in report.graphs)
            row["fuser_ops"] = len(report.fuser_ops)
            row["torch_ops"] = len(report.torch_ops)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if report is not None:
            print(report, flush=True)
        del base
        torch.cuda.empty_cache()
    print("| model | eager ms | inductor ms | fuser ms | fuser/eager | fuser/inductor | first step s (eager/inductor/fuser) | "
          "grad err inductor | grad err fuser | loss eager/fuser | ops in fuser/torch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "inductor_step_ms" not in r or "fuser_step_ms" not in r:
            continue  # a partial run: its JSON line above has the numbers
        print(f"| {r['model']} | {r['eager_step_ms']} | {r['inductor_step_ms']} | {r['fuser_step_ms']} | "
              f"{r['fuser_step_ms'] / r['eager_step_ms']:.2f} | {r['fuser_step_ms'] / r['inductor_step_ms']:.2f} | "
              f"{r['eager_first_s']}/{r['inductor_first_s']}/{r['fuser_first_s']} | {r['inductor_grad_err']:.1e} | "
              f"{r['fuser_grad_err']:.1e} | {r['eager_loss']}/{r['fuser_loss']} | {r['fuser_ops']}/{r['torch_ops']} |")
    kernels = [r for r in rows if "inductor_kernels_ms" in r and "fuser_kernels_ms" in r]
    for r in kernels:  # --profile: the kernels alone, which a host-bound step hides
        print(f"# {r['model']} kernels of one step: fuser {r['fuser_kernels_ms']} ms, inductor "
              f"{r['inductor_kernels_ms']} ms, fuser/inductor {r['fuser_kernels_ms'] / r['inductor_kernels_ms']:.2f}")
    if args.json:
        Path(args.json).write_text("\n".join(json.dumps(r) for r in rows) + "\n")


if __name__ == "__main__":
    main()
