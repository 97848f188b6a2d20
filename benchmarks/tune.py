"""Compile, check and time scheduler/lowering variants of the reduction workloads.

One device call does it all (``benchmarks/TUNING.md`` records the runs)::

    python3 benchmarks/tune.py [--only softmax_4096,layernorm] [--dtypes bfloat16] \
        [--variants prefetch,halves] [--budget 300] [--json $OUT/tune.json]
    python3 benchmarks/tune.py --only layernorm_backward_16384 --shapes 2048x8192,8192x2048   # other sizes
    python3 benchmarks/tune.py --only unaligned --variants aligned,xR   # rows no vector divides:
                                               # aligned groups (``aligned_vectors``) and one-element splits
    python3 benchmarks/tune.py --dry [--ptx]   # no GPU: lower + NVRTC every variant, ptxas report
                                               # (--ptx: the PTX instruction mix of each main loop)

For every workload of ``benchmarks/workloads.py`` in ``CASES`` and each dtype it runs
the fusion once through ``fd.execute`` (the real path: segmentation, scheduler,
lowering, NVRTC) and takes its segment; then for each variant it schedules that
segment again with overridden scheduler parameters (``ReductionParams`` fields:
threads per row, rows per block, block shape; ``splits``: a cross-grid reduction over
that many row splits on ``grid.y``) recorded as its ``fuser.schedule``
(``fuser.runtime.schedule_segment``, ``chosen``), writes its loop nest with
``schedule-fusions`` and lowers it (the one loop-nest lowering), compiles and loads it, poisons the outputs (NaN), launches, compares with torch in float64
(``|out - ref| / |ref|``), and times the segment's kernels with
``triton.testing.do_bench`` (median, L2 flushed before each run) plus each kernel of a
multi-kernel segment alone. The first variant of every workload is the heuristic's
own choice (``base``), timed twice to show the spread. Prints one table and writes
every number (with registers and local-memory bytes per kernel) as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.environment import environment  # noqa: E402
from benchmarks.workloads import Workload, build, torch_reference, workloads  # noqa: E402

Variant = dict[str, Any]
"""``label``; ``params``: ReductionParams fields to replace (an outer persistent
schedule's ``stats``, an inner-outer one's ``inner``), ``splits``: the number of row
splits of a cross-grid reduction (``grid.y``), and ``outer``: fields of an inner-outer
schedule's own record (``single_kernel``: false for the two kernel groups); ``env``:
environment variables set while the variant is lowered (``FUSER_PREFETCH``)."""


# ---- variants ---------------------------------------------------------------------------


def row_variants(cols: int, itemsize: int, aligned: bool = False) -> Iterator[Variant]:
    """Threads per row x rows per block for a row kernel: ``V`` = 16 bytes of the
    loaded element (one element when the width is not a multiple), at most 64 values
    a thread. ``aligned``: rows no 16-byte vector divides walked in aligned groups of
    16 bytes (``aligned_vectors``; labels ``aligned ...``)."""
    v = 16 // itemsize
    while cols % v and not aligned:
        v //= 2
    vecs = -(-(cols + (v - 1 if aligned else 0)) // v)
    for tpr in (32, 64, 128, 256, 512, 1024):
        batch = -(-vecs // tpr)
        if batch * v > 64 or (batch == 1 and tpr > vecs and tpr > 32):
            continue
        for rpb in (1, 2, 4):
            if not 128 <= tpr * rpb <= 1024 or (tpr * rpb == 1024 and batch * v > 16):
                continue
            params = {"threads_per_row": tpr, "rows_per_block": rpb, "cross_block": tpr > 32, "block": (tpr, rpb, 1)}
            if aligned:
                params = {**params, "vectorization": v, "aligned_vectors": True}
            yield {"label": f"{'aligned ' if aligned else ''}T{tpr}xR{rpb} b{batch}", "params": params}


def column_variants(rows: int, cols: int, itemsize: int) -> Iterator[Variant]:
    """Column vectors x rows of threads (``block``) x row splits for a column kernel
    (``splits`` 1: one kernel, no grid reduction)."""
    v = 16 // itemsize
    bx = min(32, max(1, cols // v))
    for by in (4, 8, 16, 32):
        for splits in (None, 1, 2, 4, 64, 132):
            if splits is not None and rows // splits < by * 4:
                continue
            params = {"block": (bx, by, 1), "threads_per_row": by}
            yield {"label": f"{bx}x{by} S{splits or 'auto'}", "params": params, "splits": splits}


CASES = [
    # (workload, dtypes): most important first (the budget may stop the run early).
    ("softmax_4096", ("bfloat16", "float32")),
    ("layernorm_backward_16384x1024", ("bfloat16", "float32")),
    ("layernorm_backward_32768x768", ("bfloat16", "float32")),
    ("layernorm_backward_4096x4096", ("bfloat16", "float32")),
    ("layernorm_16384", ("bfloat16", "float32")),
    ("rmsnorm_4096", ("float32", "bfloat16")),
    ("outer_norm_16384x1024", ("bfloat16", "float32")),
    ("col_sum_32768x2048", ("bfloat16", "float32")),
    ("layernorm_4096", ("bfloat16", "float32")),
    ("rmsnorm_16384", ("bfloat16", "float32")),
    ("softmax_1024", ("bfloat16", "float32")),
    ("softmax_16384", ("bfloat16", "float32")),
    ("layernorm_1024", ("bfloat16", "float32")),
    ("rmsnorm_1024", ("bfloat16", "float32")),
    ("sum_bcast_add_8192x3072", ("bfloat16", "float32")),
    ("row_sum_4096", ("bfloat16", "float32")),
    ("middle_sum_64x1024x256", ("float32", "bfloat16")),
    ("vocab_softmax_32x50257", ("bfloat16", "float32")),
    ("few_rows_softmax_8x32000", ("bfloat16", "float32")),
    ("softmax_unaligned_4096x3001", ("bfloat16", "float32")),
    ("softmax_unaligned_8192x1023", ("bfloat16", "float32")),
    ("layernorm_unaligned_16384x771", ("bfloat16", "float32")),
]


def variants_for(w: Workload, dtype: str, fusion: Any) -> list[Variant]:

    kind = "reduction" if any(k in w.name for k in ("col_sum", "row_sum", "middle_sum")) else (
        "outer_persistent" if "outer" in w.name else "inner_persistent")
    itemsize = 2 if dtype == "bfloat16" else 4
    del fusion
    base: Variant = {"label": "base", "params": {}}
    out = [base]
    if "layernorm_backward" in w.name:  # inner-outer: the one kernel's row schedule, its grid, or the halves
        rows, cols = w.shapes[0]
        out.append({"label": "halves", "params": {}, "outer": {"single_kernel": False}})
        out += [{"label": f"prefetch {lv}", "params": {}, "env": {"FUSER_PREFETCH": lv}} for lv in ("L2", "L1")]
        out.append({"label": "no prefetch", "params": {"prefetch": ""}})
        out.append({"label": "hold buffers", "params": {"hold_buffers": True}})
        out.append({"label": "pipeline", "params": {}, "env": {"FUSER_PIPELINE_LOADS": "1"}})
        out.append({"label": "pipeline hold", "params": {"hold_buffers": True}, "env": {"FUSER_PIPELINE_LOADS": "1"}})
        out += [{"label": f"cap{n} pipeline", "params": {}, "env": {"FUSER_PIPELINE_LOADS": f"bytes={n}"}}
                for n in (8, 40)]
        out += [{"label": f"cap{n} pipeline prefetch L2", "params": {},
                 "env": {"FUSER_PIPELINE_LOADS": f"bytes={n}", "FUSER_PREFETCH": "L2"}} for n in (8, 40)]
        out.append({"label": "pipeline prefetch L2", "params": {},
                    "env": {"FUSER_PIPELINE_LOADS": "1", "FUSER_PREFETCH": "L2"}})
        vecs = cols * itemsize // 16
        for tpr in (32, 64, 128, 256, 512):
            for rpb in (1, 2, 4, 8):
                if not 128 <= tpr * rpb <= 1024 or vecs % tpr or vecs // tpr > 16:
                    continue
                for g in (132, 264, 396, 528):
                    params = {"threads_per_row": tpr, "rows_per_block": rpb, "cross_block": tpr > 32,
                              "block": (tpr, rpb, 1), "grid": (g, 1, 1)}
                    out.append({"label": f"T{tpr}xR{rpb} b{vecs // tpr} G{g}", "params": params})
                    out.append({"label": f"hold T{tpr}xR{rpb} b{vecs // tpr} G{g}",
                                "params": {**params, "hold_buffers": True}})
                    out.append({"label": f"pipeline T{tpr}xR{rpb} b{vecs // tpr} G{g}", "params": params,
                                "env": {"FUSER_PIPELINE_LOADS": "1"}})
    elif "vocab" in w.name or "few_rows" in w.name:  # few long rows: threads x blocks of a cluster a row
        rows, cols = w.shapes[0]
        out += [
            {"label": f"T{t}xR1 C{c}", "params": {"threads_per_row": t, "rows_per_block": 1, "cross_block": True,
                                                  "block": (t, 1, 1), "cross_grid": c > 1, "grid": (rows, c, 1)}}
            for c in (1, 2, 4, 8)
            for t in (128, 256, 512, 1024)
            if cols / (c * t) <= 128
        ]
    elif kind in ("inner_persistent", "reduction") and "col_sum" not in w.name and "middle_sum" not in w.name:
        rows, cols = w.shapes[0]
        out += list(row_variants(cols, itemsize))
        if cols % (16 // itemsize):
            out += list(row_variants(cols, itemsize, aligned=True))
    elif kind in ("outer_persistent", "reduction"):
        if len(w.shapes[0]) == 3:  # a middle-axis sum: the kept axes are the columns
            outer, rows, inner = w.shapes[0]
            cols = outer * inner
        else:
            rows, cols = w.shapes[0]
        out += list(column_variants(rows, cols, itemsize))
    out.append({"label": "base again", "params": {}})
    return [v for v in out if not LABELS or v["label"].startswith("base") or any(x in v["label"] for x in LABELS)]


LABELS: list[str] = []
"""``--variants``: substrings of the variant labels to run (all when empty; ``base``
and ``base again`` always run)."""


# ---- lowering and compiling (no GPU; in a process pool) -----------------------------------


def layouts_for(w: Workload, dtype: str, fusion: Any) -> tuple[list, list]:
    """Contiguous, 16-byte aligned input and output layouts (what torch allocates)."""
    from fuser.codegen.lower import concrete_shapes
    from fuser.codegen.lower.common import TensorLayout

    align = 8 if dtype == "bfloat16" else 4
    layouts = [TensorLayout.contiguous(s, align) for s in w.shapes]
    shapes = concrete_shapes(fusion, [lay.shape for lay in layouts])
    return layouts, [TensorLayout.contiguous(shapes[v], align) for v in fusion.output_op.values]


def lower_variant(fusion: Any, layouts: list, out_layouts: list, var: Variant) -> Any:
    """The heuristic's parameters with the variant's overrides, written as the
    segment's loop nest (``schedule_segment`` with ``chosen``) and lowered."""
    from fuser.codegen.lower import lower_segment
    from fuser.runtime.schedule_segment import schedule_segment
    from fuser.runtime.signature import Signature, kernel_layouts
    from fuser.schedulers.analysis.sizes import bind_sizes
    from fuser.schedulers.params import InnerOuterParams, OuterPersistentParams
    from fuser.schedulers.registry import select
    from fuser.schedulers.target import H100

    unknown = set(var) - {"label", "params", "splits", "hints", "outer", "env"}
    if unknown:
        raise ValueError(f"variant {var['label']}: unknown keys {sorted(unknown)} (a variant is scheduler parameters)")
    shape_args = [lay.shape if lay is not None else None for lay in layouts]
    sel = select(fusion, bind_sizes(fusion, shape_args), H100)
    params = sel.params
    red = params.stats if isinstance(params, OuterPersistentParams) else (
        params.inner if isinstance(params, InnerOuterParams) else params
    )
    if var["params"]:
        red = dataclasses.replace(red, **var["params"])  # type: ignore[type-var]
    if var.get("splits"):
        n = var["splits"]
        red = dataclasses.replace(red, cross_grid=n > 1, grid=(red.grid[0], n, 1))  # type: ignore[union-attr]
    if isinstance(params, OuterPersistentParams):
        params = dataclasses.replace(params, stats=red)
    elif isinstance(params, InnerOuterParams):  # ``outer``: the fields of the combined record
        params = dataclasses.replace(params, inner=red, **var.get("outer", {}))
    else:
        params = red
    scheduled = schedule_segment(fusion, Signature(tuple(shape_args)), H100, chosen=(sel.kind, params))
    return lower_segment(scheduled, kernel_layouts(layouts), None, out_layouts)  # as fd.execute lowers it


def resized(w: Workload, m: int, n: int) -> Workload:
    """``w`` at ``[m, n]``: every extent of its inputs and outputs equal to its first
    input's rows becomes ``m``, equal to its columns ``n`` (named ``<name>@<m>x<n>``)."""
    m0, n0 = w.shapes[0][-2:]
    if m0 == n0:
        raise ValueError(f"{w.name}: rows and columns have the same extent; resize a workload where they differ")

    def f(shape: list[int]) -> list[int]:
        return [m if e == m0 else n if e == n0 else e for e in shape]

    return dataclasses.replace(
        w, name=f"{w.name}@{m}x{n}", shapes=[f(x) for x in w.shapes], out_shapes=[f(x) for x in w.out_shapes]
    )


def find_workload(name: str) -> Workload:
    """A workload of ``workloads()`` by name, or ``resized`` (``<name>@<m>x<n>``)."""
    base, _, size = name.partition("@")
    w = {w.name: w for w in workloads()}[base]
    if not size:
        return w
    m, n = (int(x) for x in size.split("x"))
    return resized(w, m, n)


def compile_job(job: tuple[str, str, int]) -> dict:
    """Lower and compile variant ``i`` of a workload: the cubin, the launch plan (the
    lowered kernels without their IR) and the ptxas report."""
    from fuser.codegen.cuda_printer import print_cuda
    from fuser.codegen.nvrtc import CompileOptions, compile_cuda

    wname, dtype, i = job
    w = find_workload(wname)
    fusion = build(w, dtype).fusion()
    layouts, out_layouts = layouts_for(w, dtype, fusion)
    var = variants_for(w, dtype, fusion)[i]
    res: dict[str, Any] = {"variant": var["label"]}
    try:
        with environment(var.get("env", {})):
            lowered = lower_variant(fusion, layouts, out_layouts, var)
        source = print_cuda(*lowered.modules())
        compiled = compile_cuda(source, name=lowered.kernels[0].name, fusion=fusion.sym_name.data,
                                options=CompileOptions(arch="sm_90", extra=("--ptxas-options=-v",)))
        res["report"] = " | ".join(
            ln.split(":", 1)[-1].strip() for ln in compiled.log.splitlines()
            if "Used" in ln or ("spill" in ln and " 0 bytes spill stores" not in ln))
        for k in lowered.kernels:
            k.module = None
        res["image"] = compiled.image
        res["lowered"] = lowered
        if PTX_MIX:
            from benchmarks.ptx_stats import loop_mix

            res["ptx"] = loop_mix(source, lowered.kernels[0].name)
    except Exception as e:  # noqa: BLE001 - reported in the table
        res["error"] = f"{type(e).__name__}: {e}"[:300]
    return res


PTX_MIX: list[bool] = []
"""``--ptx``: with ``--dry``, also the PTX instruction mix of each variant's first
kernel's main loop (``benchmarks/ptx_stats.py``)."""


def compile_all(cases: list[tuple[Workload, str]], procs: int) -> dict[tuple[str, str], list[dict]]:
    """Every variant of every case, compiled in ``procs`` processes (before CUDA starts)."""
    import multiprocessing as mp

    jobs = []
    for w, dtype in cases:
        fusion = build(w, dtype).fusion()
        jobs += [(w.name, dtype, i) for i in range(len(variants_for(w, dtype, fusion)))]
    t0 = time.time()
    with mp.get_context("fork").Pool(procs) as pool:
        results = pool.map(compile_job, jobs, chunksize=1)
    print(f"# compiled {len(jobs)} variants in {time.time() - t0:.1f} s", flush=True)
    out: dict[tuple[str, str], list[dict]] = {}
    for (wname, dtype, _), res in zip(jobs, results, strict=True):
        out.setdefault((wname, dtype), []).append(res)
    return out


# ---- measuring --------------------------------------------------------------------------


def bench(fn: Any) -> float:
    from triton.testing import do_bench

    return do_bench(fn, warmup=10, rep=40, return_mode="median") * 1e3


def rel_error(out: Any, ref: Any) -> float:
    out = out.double()
    if not bool(out.isfinite().all()):
        return math.inf
    return float((out - ref).norm() / max(float(ref.norm()), 1e-30))


_copy_cache: dict[int, float] = {}


def copy_us(nbytes: int) -> float:
    import torch

    if nbytes not in _copy_cache:
        buf = torch.empty(nbytes // 8 + 1, dtype=torch.float32, device="cuda")
        dst = torch.empty_like(buf)
        _copy_cache[nbytes] = bench(lambda: dst.copy_(buf))
        del buf, dst
    return _copy_cache[nbytes]


def tune_workload(w: Workload, dtype: str, compiled: list[dict], deadline: float, log: Any) -> list[dict]:
    import torch

    from fuser.runtime import cuda_driver as drv
    from fuser.runtime.compile_fusion import (
        CompiledSegment,
        _scratch,
        kernel_signature,
        run_compiled,
    )

    torch.manual_seed(0)
    tdt = getattr(torch, dtype)
    inputs = [torch.randn(*s, device="cuda", dtype=tdt) for s in w.shapes]
    fd = build(w, dtype)
    outs0 = fd.execute(inputs)
    torch.cuda.synchronize()
    (seg0,) = fd._entry.last_run.compiled_segments()  # the one segment of the compiled program
    refs = torch_reference(w.torch_key)(*[t.double() for t in inputs])
    refs = refs if isinstance(refs, tuple) else (refs,)
    nbytes = sum(t.numel() * t.element_size() for t in inputs)
    nbytes += sum(o.numel() * o.element_size() for o in outs0)
    cp = copy_us(nbytes)
    head = {"workload": w.name, "dtype": dtype, "kind": seg0.lowered.scheduler, "bytes": nbytes, "copy_us": cp,
            "fd_execute_us": bench(lambda: fd.execute(inputs)),
            "eager_us": bench(lambda: torch_reference(w.torch_key)(*inputs)),
            "execute_rel_err": max(rel_error(o, r) for o, r in zip(outs0, refs, strict=True))}
    print(json.dumps(head), flush=True)
    log.write(json.dumps(head) + "\n")
    fusion = build(w, dtype).fusion()  # what compile_job lowered
    # The outputs as fd.execute made them: a layer-norm backward's dw and db are
    # float32 whatever its inputs are (buffers of the input dtype were half the bytes
    # the kernels wrote, and their comparison came out inf).
    outs = [torch.empty_like(o) for o in outs0]
    ptrs = [t.data_ptr() for t in inputs]
    optrs = [o.data_ptr() for o in outs]
    stream = torch.cuda.current_stream().cuda_stream
    rows = []
    for res in compiled:
        if time.time() > deadline:
            print(f"# budget spent: skipping the rest of {w.name} {dtype}", flush=True)
            break
        row: dict[str, Any] = {"workload": w.name, "dtype": dtype, "variant": res["variant"], "copy_us": cp,
                               "report": res.get("report", "")}
        try:
            if "error" in res:
                raise RuntimeError(res["error"])
            lowered = res["lowered"]
            module = drv.load_module(res["image"])
            kernels = [module.kernel(k.name, kernel_signature(fusion, k.args)) for k in lowered.kernels]
            seg = CompiledSegment(fusion, lowered, "", kernels, [s.numel * s.dtype.itemsize for s in lowered.scratch])
            row["kernels"] = [{"name": k.name, "block": list(lk.block), "grid": list(lk.grid), "regs": k.num_regs,
                               "local": k.local_bytes} for k, lk in zip(kernels, lowered.kernels, strict=True)]
            for o in outs:
                o.fill_(float("nan"))
            run_compiled(seg, ptrs, optrs, stream)
            torch.cuda.synchronize()
            row["rel_err"] = max(rel_error(o, r) for o, r in zip(outs, refs, strict=True))
            row["us"] = bench(lambda seg=seg: run_compiled(seg, ptrs, optrs, stream))
            row["ratio"] = cp / row["us"]
            if len(kernels) > 1:
                bufs = [_scratch.take(n, s.zero_init, stream) for n, s in zip(seg.scratch_bytes, lowered.scratch,
                                                                                strict=True)]
                sptrs = [b.ptr for b in bufs]
                for i, (k, lk) in enumerate(zip(kernels, lowered.kernels, strict=True)):
                    args = [ptrs[a.index] if a.kind == "input" else optrs[a.index] if a.kind == "output"
                            else a.value if a.kind == "extent" else sptrs[a.index] for a in lk.args]
                    row["kernels"][i]["us"] = bench(lambda k=k, lk=lk, args=args: k.launch(lk.grid, lk.block, args,
                                                                                          lk.shared_bytes, stream))
                for n, b in zip(seg.scratch_bytes, bufs, strict=True):
                    _scratch.give(n, b, stream)
        except Exception as e:  # noqa: BLE001 - report and go on with the next variant
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
        log.write(json.dumps(row) + "\n")
        log.flush()
        brief = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()
                 if k not in ("kernels", "report", "copy_us")}
        brief["k"] = [(k.get("regs"), k.get("local"), round(k.get("us", 0), 1)) for k in row.get("kernels", [])]
        print(json.dumps(brief), flush=True)
    return [head] + rows


def dry_run(cases: list[tuple[Workload, str]], procs: int) -> None:
    """No GPU: lower and compile every variant, print the ptxas report."""
    for (wname, dtype), results in compile_all(cases, procs).items():
        print(f"== {wname} {dtype}")
        for res in results:
            if "error" in res:
                print(f"  {res['variant']:28} ERROR {res['error'][:200]}")
                continue
            kern = " ".join(f"{k.block}x{k.grid}" for k in res["lowered"].kernels)
            mix = " ".join(f"{k} {v}" for k, v in res.get("ptx", {}).items())
            print(f"  {res['variant']:28} {kern:40} {res['report']}{f' | loop: {mix}' if mix else ''}")


def print_table(rows: list[dict]) -> None:
    print(f"{'workload':26} {'dtype':9} {'variant':26} {'us':>8} {'copy':>7} {'ratio':>6} {'rel_err':>8}  kernels (regs/local/us)")
    for r in rows:
        if "variant" not in r:
            print(f"{r['workload']:26} {r['dtype']:9} {'[fd.execute]':26} {r['fd_execute_us']:8.1f} {r['copy_us']:7.1f} "
                  f"{r['copy_us'] / r['fd_execute_us']:6.2f} {r['execute_rel_err']:8.1e}  eager {r['eager_us']:.1f}")
            continue
        if "error" in r:
            print(f"{r['workload']:26} {r['dtype']:9} {r['variant']:26} ERROR {r['error'][:90]}")
            continue
        ks = " ".join(f"{k['regs']}/{k['local']}" + (f"/{k['us']:.1f}" if "us" in k else "") for k in r["kernels"])
        print(f"{r['workload']:26} {r['dtype']:9} {r['variant']:26} {r['us']:8.1f} {r['copy_us']:7.1f} "
              f"{r['ratio']:6.2f} {r['rel_err']:8.1e}  {ks}")


def print_best(rows: list[dict]) -> None:
    print("\n# best correct variant per workload (bf16 rel_err < 1e-2, f32 < 1e-5)")
    best: dict[tuple[str, str], dict] = {}
    base: dict[tuple[str, str], dict] = {}
    for r in rows:
        if "us" not in r:
            continue
        tol = 1e-2 if r["dtype"] == "bfloat16" else 1e-5
        if not r["rel_err"] <= tol:
            continue
        key = (r["workload"], r["dtype"])
        if r["variant"] == "base":
            base[key] = r
        if key not in best or r["us"] < best[key]["us"]:
            best[key] = r
    for key, r in best.items():
        b = base.get(key)
        bs = f"base {b['us']:.1f} ({b['ratio']:.2f})" if b else "base ?"
        print(f"{key[0]:26} {key[1]:9} {bs:22} best {r['variant']:26} {r['us']:8.1f} ({r['ratio']:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of workload names")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--budget", type=float, default=300.0, help="seconds before no new variant starts")
    parser.add_argument("--json", default=os.path.join(os.environ.get("OUT", "."), "tune.jsonl"))
    parser.add_argument("--dry", action="store_true", help="no GPU: lower and compile only")
    parser.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--variants", default="", help="comma-separated substrings of variant labels")
    parser.add_argument("--ptx", action="store_true", help="with --dry: the PTX instruction mix of each main loop")
    parser.add_argument("--shapes", default="", help="comma-separated MxN: run the chosen workloads at these sizes instead")
    args = parser.parse_args()
    LABELS[:] = [s for s in args.variants.split(",") if s]
    PTX_MIX[:] = [True] if args.ptx else []
    by_name = {w.name: w for w in workloads()}
    only = [s for s in args.only.split(",") if s]
    dtypes = args.dtypes.split(",")
    cases = [(by_name[n], d) for n, ds in CASES for d in ds
             if d in dtypes and (not only or any(s in n for s in only))]
    if args.shapes:
        sizes = [tuple(int(x) for x in sz.split("x")) for sz in args.shapes.split(",")]
        cases = [(resized(w, m, n), d) for w, d in cases for m, n in sizes]
    if args.dry:
        dry_run(cases, args.procs)
        return
    compiled = compile_all(cases, args.procs)
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
                rows += tune_workload(w, dtype, compiled[(w.name, dtype)], deadline, log)
            except Exception as e:  # noqa: BLE001
                print(f"# {w.name} {dtype}: {type(e).__name__}: {e}", flush=True)
            torch.cuda.empty_cache()
    print_table(rows)
    print_best(rows)


if __name__ == "__main__":
    main()
