"""Rows whose width no 16-byte vector divides (issue 15 item 3), through ``fd.execute``
on torch CUDA tensors: softmax and layer norm at several widths, both dtypes, against
a device copy of the same bytes. Run it on two trees in one call to compare them::

    PYTHONPATH=$PWD:/tmp/site python3 benchmarks/unaligned_rows.py [--json out.jsonl]

Each row: the kernel time of ``fd.execute`` (``triton.testing.do_bench``, median, L2
flushed), the copy time, their ratio, and the error against torch in float64.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SIZES = ((4096, 3001), (8192, 1023), (16384, 771), (2048, 5003))


def main() -> None:
    import torch
    from triton.testing import do_bench

    from benchmarks.workloads import DT, layernorm, softmax
    from fuser import FusionDefinition

    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for name, define in (("softmax", softmax), ("layernorm", layernorm)):
        for m, n in SIZES:
            for dtype, tdt in (("bfloat16", torch.bfloat16), ("float32", torch.float32)):
                x = torch.randn(m, n, device="cuda", dtype=tdt)
                ins = [x] + ([torch.randn(n, device="cuda", dtype=tdt) for _ in range(2)] if name == "layernorm" else [])
                with FusionDefinition() as fd:
                    define(fd, DT[dtype])
                out = fd.execute(ins)[0]
                xd = x.double()
                if name == "softmax":
                    ref = torch.softmax(xd, 1)
                else:
                    ref = torch.nn.functional.layer_norm(xd, (n,), ins[1].double(), ins[2].double(), 1e-5)
                err = float((out.double() - ref).norm() / ref.norm())
                us = do_bench(lambda fd=fd, ins=ins: fd.execute(ins), return_mode="median") * 1e3
                nbytes = sum(t.numel() * t.element_size() for t in ins) + out.numel() * out.element_size()
                src = torch.empty(nbytes // 8, device="cuda")
                dst = torch.empty_like(src)
                copy = do_bench(lambda src=src, dst=dst: dst.copy_(src), return_mode="median") * 1e3
                row = {"fusion": name, "shape": f"{m}x{n}", "dtype": dtype, "us": round(us, 2),
                       "copy_us": round(copy, 2), "copy_ratio": round(copy / us, 3), "rel_err": err}
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
