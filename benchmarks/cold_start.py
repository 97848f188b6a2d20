"""Cold first call of every benchmark fusion, and the same in a second process.

Run on the GPU machine (issue 15, item 5: a new fusion's first ``fd.execute``)::

    python3 benchmarks/cold_start.py [--dtypes float32] [--only softmax] [--json out.jsonl]

Two child processes share one fresh kernel cache directory (``FUSER_CACHE_DIR``):

* ``cold``: the cache is empty. The process first runs one unrelated fusion (imports,
  NVRTC and the CUDA context are warm, as in a program that has used fuser before),
  then for each workload times its first ``fd.execute`` (wall clock, synchronized),
  split into the driver's pipeline (``compile``), ``schedule-fusions`` (deferred to
  first use), the lowering (``lower_for_launch``), NVRTC (``compile_cached``: the disk
  cache misses) and the rest (printing, module load, allocation, launch).
* ``warm-disk``: a new process on the same cache: what a second run of a program
  pays (NVRTC hits the disk cache).

Prints one table per phase and the median total; ``--json`` appends one row per
workload and phase.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.jsonl import append_rows, child_rows  # noqa: E402
from benchmarks.stage_timer import stage_times  # noqa: E402

STAGES = ("driver", "schedule", "lower", "nvrtc")
"""The stages of ``benchmarks/stage_timer.py`` a plain ``fd.execute`` goes through."""


def child(phase: str, dtypes: list[str], only: list[str]) -> None:
    """One phase in this process: one JSON line per workload on stdout."""
    import torch

    from benchmarks.workloads import build, workloads
    from fuser import DataType, FusionDefinition

    with FusionDefinition() as warm:  # libraries, NVRTC, CUDA context: warm
        a = warm.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        warm.add_output(warm.ops.exp(a))
    warm.execute([torch.randn(8, device="cuda")])
    torch.cuda.synchronize()

    for dtype in dtypes:
        for w in workloads():
            if only and not any(s in w.name for s in only):
                continue
            tdt = getattr(torch, dtype)
            inputs = [torch.randn(*s, device="cuda", dtype=tdt) for s in w.shapes]
            fd = build(w, dtype)
            torch.cuda.synchronize()
            with stage_times(STAGES) as spent:
                t0 = time.perf_counter()
                fd.execute(inputs)
                torch.cuda.synchronize()
                total = (time.perf_counter() - t0) * 1e3
            row = {"phase": phase, "workload": w.name, "dtype": dtype, "total_ms": round(total, 1)}
            row.update({f"{s}_ms": round(spent[s] * 1e3, 1) for s in STAGES})
            row["rest_ms"] = round(total - sum(spent[s] for s in STAGES) * 1e3, 1)
            row["launches"] = fd._entry.last_run.num_kernels
            print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--only", default="", help="comma-separated substrings of workload names")
    parser.add_argument("--json", default="", help="append one JSON row per workload and phase here")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    dtypes = args.dtypes.split(",")
    only = [s for s in args.only.split(",") if s]
    if args.child:
        child(args.child, dtypes, only)
        return
    env = dict(os.environ, FUSER_CACHE_DIR=tempfile.mkdtemp(prefix="fuser-cold-"))
    for phase in ("cold", "warm-disk"):
        cmd = [sys.executable, __file__, "--child", phase, "--dtypes", args.dtypes, "--only", args.only]
        rows, _ = child_rows(cmd, env)
        print(f"\n## {phase}\n")
        print("| workload | dtype | launches | total ms | driver | schedule | lower | nvrtc | rest |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['workload']} | {r['dtype']} | {r['launches']} | {r['total_ms']} | {r['driver_ms']} | "
                  f"{r['schedule_ms']} | {r['lower_ms']} | {r['nvrtc_ms']} | {r['rest_ms']} |")
        totals = sorted(r["total_ms"] for r in rows)
        one = sorted(r["total_ms"] for r in rows if r["launches"] == 1)
        if totals:
            print(f"\nmedian total {totals[len(totals) // 2]} ms over {len(totals)} workloads; "
                  f"one-launch fusions: median {one[len(one) // 2] if one else '-'} ms over {len(one)}")
        append_rows(args.json, rows)


if __name__ == "__main__":
    main()
