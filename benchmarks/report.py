"""Markdown table from ``benchmarks/run.py --json`` output, next to the anchors.

    python benchmarks/report.py bench.jsonl [more.jsonl] > table.md

Columns: fuser end to end (``fd.execute``: host work and launch included, measured
like the anchors with ``triton.testing.do_bench``), fuser kernels alone (the compiled
segment launched on the same buffers), torch eager, torch.compile and the copy of the
same bytes measured in the same run (torch.compile falls back to the anchor figure,
marked ``*``, when the run skipped it), the copy ratio ``copy_us / kernel_us`` and the
speed-up over the faster of eager and torch.compile (end to end).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ANCHORS = Path(__file__).resolve().parent.parent.parent / "shared" / "anchors" / "h100-peers.jsonl"


def load_anchors() -> dict[tuple[str, str], dict]:
    out: dict[tuple[str, str], dict] = {}
    if not ANCHORS.exists():
        return out
    for line in ANCHORS.read_text().splitlines():
        row = json.loads(line)
        if "workload" in row:
            out[(row["workload"], row["dtype"].replace("torch.", ""))] = row
    return out


def main(paths: list[str]) -> None:
    anchors = load_anchors()
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    print("| workload | dtype | fuser e2e us | fuser kernels us | eager us | torch.compile us | copy us "
          "| copy/kernels | e2e vs best torch | rel err |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        a = anchors.get((r["workload"], r["dtype"]), {})
        comp = r.get("compile_us")
        comp_txt = f"{comp:.1f}" if comp else (f"{a['compile_us']:.1f}*" if a.get("compile_us") else "-")
        comp_val = comp or a.get("compile_us")
        if "fuser_us" not in r:
            print(f"| {r['workload']} | {r['dtype']} | error: {r.get('fuser_error', '?')[:60]} | | "
                  f"{r['eager_us']:.1f} | {comp_txt} | {r['copy_us']:.1f} | | | |")
            continue
        kern = r.get("kernel_us") or r["fuser_us"]
        best = min(v for v in (r["eager_us"], comp_val) if v)
        print(f"| {r['workload']} | {r['dtype']} | {r['fuser_us']:.1f} | {kern:.1f} | {r['eager_us']:.1f} | "
              f"{comp_txt} | {r['copy_us']:.1f} | {r['copy_us'] / kern:.2f} | {best / r['fuser_us']:.2f} | "
              f"{r.get('rel_err', float('nan')):.1e} |")


if __name__ == "__main__":
    main(sys.argv[1:])
