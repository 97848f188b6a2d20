"""Variants for the three rows of ``RESULTS.md`` where fuser trailed torch.compile.

gelu_bookend_views f32 (pointwise), row_sum_4096 f32 (streaming inner reduction) and
col_sum_32768x2048 bf16 (split column reduction), plus their neighbours (gelu bf16,
row_sum 1024/16384, col_sum f32) so that a default change is checked against them in the
same run. One device call compiles every variant (process pool), checks each against
torch in float64 and times it (``benchmarks/tune.py``'s ``tune_workload``: do_bench
median, L2 flushed; ``base`` is the heuristic's choice, timed three times for the
spread)::

    python3 benchmarks/tune_gaps.py [--only gelu,row_sum] [--budget 200] [--json $OUT/gaps.jsonl]
    python3 benchmarks/tune_gaps.py --dry        # no GPU: lower + NVRTC, ptxas report

Variant knobs (scheduler parameters, written as each variant's loop nest by
``schedule-fusions``): pointwise ``unroll`` / ``block`` / ``grid``; row kernels
``threads_per_row`` x ``rows_per_block``; column kernels ``block.y`` and ``splits``
(the row splits of a cross-grid reduction). Cache-hint
variants (``ldcs``: ``ld.global.cs`` loads, ``stcs``: ``st.global.cs`` stores, ``ldg``:
``ld.global.nc``) rewrite the printed CUDA's 16-byte vector accesses (an experiment: the
printer has no such option; one is added only if it wins).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import tune  # noqa: E402
from benchmarks.workloads import Workload, build, workloads  # noqa: E402

Variant = dict[str, Any]
EXACT = 1 << 30
"""A pointwise grid at least the tile count: one tile per block, no grid-stride loop."""

CASES = [
    ("gelu_bookend_views", ("float32", "bfloat16")),
    ("row_sum_4096", ("float32", "bfloat16")),
    ("col_sum_32768x2048", ("bfloat16", "float32")),
    ("row_sum_1024", ("float32",)),
    ("row_sum_16384", ("float32",)),
]

HINT_HELPERS = r"""
template <typename V> __device__ __forceinline__ V fuser_ldcs(const V* p) {
  static_assert(sizeof(V) == 16, "16-byte vectors");
  uint4 u = __ldcs(reinterpret_cast<const uint4*>(p));
  return *reinterpret_cast<V*>(&u);
}
template <typename V> __device__ __forceinline__ V fuser_ldg(const V* p) {
  static_assert(sizeof(V) == 16, "16-byte vectors");
  uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
  return *reinterpret_cast<V*>(&u);
}
template <typename V> __device__ __forceinline__ void fuser_stcs(V* p, V v) {
  static_assert(sizeof(V) == 16, "16-byte vectors");
  __stcs(reinterpret_cast<uint4*>(p), *reinterpret_cast<uint4*>(&v));
}
"""
_VEC16 = r"Vec<(?:float, 4|__nv_bfloat16, 8|__half, 8)>"
_LOAD = re.compile(r"\*reinterpret_cast<const (" + _VEC16 + r")\*>\((&\w+\[\w+\])\)")
_STORE = re.compile(r"\*reinterpret_cast<(" + _VEC16 + r")\*>\((&\w+\[\w+\])\) = (\w+);")


def with_hints(source: str, hints: str) -> str:
    """``hints``: '+'-joined ``ldcs``/``ldg``/``stcs``, applied to 16-byte vector accesses."""
    marker = "extern \"C\" __global__"
    head, sep, rest = source.partition(marker)
    for hint in hints.split("+"):
        if hint == "stcs":
            rest, n = _STORE.subn(r"fuser_stcs(reinterpret_cast<\1*>(\2), \3);", rest)
        else:
            rest, n = _LOAD.subn(rf"fuser_{hint}(reinterpret_cast<const \1*>(\2))", rest)
        if not n:
            raise RuntimeError(f"hint {hint}: no 16-byte access to rewrite")
    return head + HINT_HELPERS + sep + rest


# ---- variants ---------------------------------------------------------------------------


def pointwise_variants(n: int, itemsize: int) -> list[Variant]:
    v = 16 // itemsize
    out: list[Variant] = []

    def add(label: str, block: int, unroll: int, grid: int = EXACT, hints: str = "") -> None:
        out.append({"label": label, "params": {"unroll": unroll, "block": (block, 1, 1), "grid": (grid, 1, 1)},
                    "hints": hints})

    for block in (128, 256):
        for unroll in (1, 2, 4, 8):
            if (block, unroll) != (128, 4):
                add(f"B{block} U{unroll}", block, unroll)
    sms = 132
    for block, unroll, per_sm in ((128, 4, 16), (128, 4, 32), (128, 8, 16), (256, 4, 8), (256, 4, 16),
                                  (128, 1, 16), (256, 2, 16)):
        tiles = -(-n // (block * v * unroll))
        grid = sms * per_sm
        if grid < tiles:
            add(f"B{block} U{unroll} grid {per_sm}/SM", block, unroll, grid)
    for hints in ("stcs", "ldcs", "ldcs+stcs", "ldg"):
        add(f"B128 U4 {hints}", 128, 4, EXACT, hints)
    for hints in ("stcs", "ldcs+stcs"):
        add(f"B128 U8 {hints}", 128, 8, EXACT, hints)
        add(f"B256 U4 {hints}", 256, 4, EXACT, hints)
    return out


def row_variants(cols: int, itemsize: int) -> list[Variant]:
    v = 16 // itemsize
    vecs = -(-cols // v)
    out: list[Variant] = []
    for tpr in (32, 64, 128, 256, 512, 1024):
        batch = -(-vecs // tpr)
        if batch * v > 128 or (batch == 1 and tpr > vecs):
            continue
        for rpb in (1, 2, 4, 8):
            if not 128 <= tpr * rpb <= 1024:
                continue
            out.append({"label": f"T{tpr}xR{rpb} b{batch}",
                        "params": {"threads_per_row": tpr, "rows_per_block": rpb, "cross_block": tpr > 32,
                                   "block": (tpr, rpb, 1)}})
    return out


def column_variants(rows: int, cols: int, itemsize: int) -> list[Variant]:
    v = 16 // itemsize
    bx = min(32, max(1, cols // v))
    out: list[Variant] = []
    for by in (4, 8):
        for splits in (None, 66, 99, 115, 264):
            out.append({"label": f"{bx}x{by} S{splits or 'auto'}",
                        "params": {"block": (bx, by, 1), "threads_per_row": by}, "splits": splits})
    return out


def variants_for(w: Workload, dtype: str) -> list[Variant]:
    itemsize = 2 if dtype == "bfloat16" else 4
    base: Variant = {"label": "base", "params": {}}
    out = [base, dict(base, label="base again")]
    rows, cols = w.shapes[0]
    if w.name.startswith("gelu"):
        out += pointwise_variants(rows * cols, itemsize)
    elif w.name.startswith("row_sum"):
        out += row_variants(cols, itemsize)
    else:
        out += column_variants(rows, cols, itemsize)
    out.append(dict(base, label="base third"))
    return out


# ---- compiling (process pool, before CUDA starts) ----------------------------------------


def compile_job(job: tuple[str, str, int]) -> dict:
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.codegen.nvrtc import CompileOptions, compile_cuda

    wname, dtype, i = job
    w = {w.name: w for w in workloads()}[wname]
    fusion = build(w, dtype).fusion()
    layouts, out_layouts = tune.layouts_for(w, dtype, fusion)
    var = variants_for(w, dtype)[i]
    res: dict[str, Any] = {"variant": var["label"]}
    try:
        lowered = tune.lower_variant(fusion, layouts, out_layouts, var)
        source = print_cuda(*lowered.modules())
        if var.get("hints"):
            source = with_hints(source, var["hints"])
        compiled = compile_cuda(source, name=lowered.kernels[0].name, fusion=fusion.sym_name.data,
                                options=CompileOptions(arch="sm_90", extra=("--ptxas-options=-v",)))
        res["report"] = " | ".join(
            ln.split(":", 1)[-1].strip() for ln in compiled.log.splitlines()
            if "Used" in ln or ("spill" in ln and " 0 bytes spill stores" not in ln))
        for k in lowered.kernels:
            k.module = None
        res["image"] = compiled.image
        res["lowered"] = lowered
        res["launch"] = " ".join(f"{k.block}x{k.grid}" for k in lowered.kernels)
    except Exception as e:  # noqa: BLE001 - reported in the table
        res["error"] = f"{type(e).__name__}: {e}"[:300]
    return res


def compile_all(cases: list[tuple[Workload, str]], procs: int) -> dict[tuple[str, str], list[dict]]:
    import multiprocessing as mp

    jobs = [(w.name, dtype, i) for w, dtype in cases for i in range(len(variants_for(w, dtype)))]
    t0 = time.time()
    with mp.get_context("fork").Pool(procs) as pool:
        results = pool.map(compile_job, jobs, chunksize=1)
    print(f"# compiled {len(jobs)} variants in {time.time() - t0:.1f} s", flush=True)
    out: dict[tuple[str, str], list[dict]] = {}
    for (wname, dtype, _), res in zip(jobs, results, strict=True):
        out.setdefault((wname, dtype), []).append(res)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of workload names")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--budget", type=float, default=200.0, help="seconds before no new variant starts")
    parser.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "gaps.jsonl"))
    parser.add_argument("--dry", action="store_true", help="no GPU: lower and compile only")
    parser.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    args = parser.parse_args()
    by_name = {w.name: w for w in workloads()}
    only = [s for s in args.only.split(",") if s]
    cases = [(by_name[n], d) for n, ds in CASES for d in ds
             if d in args.dtypes.split(",") and (not only or any(s in n for s in only))]
    compiled = compile_all(cases, args.procs)
    if args.dry:
        for (wname, dtype), results in compiled.items():
            print(f"== {wname} {dtype}")
            for res in results:
                what = res.get("error", "")[:150] or f"{res['launch']:36} {res['report']}"
                print(f"  {res['variant']:30} {what}")
        return
    import torch

    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}", flush=True)
    deadline = time.time() + args.budget
    rows: list[dict] = []
    with open(args.json, "w") as log:
        for w, dtype in cases:
            if time.time() > deadline:
                break
            try:
                rows += tune.tune_workload(w, dtype, compiled[(w.name, dtype)], deadline, log)
            except Exception as e:  # noqa: BLE001
                print(f"# {w.name} {dtype}: {type(e).__name__}: {e}", flush=True)
            torch.cuda.empty_cache()
    tune.print_table(rows)
    tune.print_best(rows)


if __name__ == "__main__":
    main()
