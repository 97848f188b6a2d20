"""The copy of an unaligned matrix into a 16-byte aligned buffer, as
``runtime.library_ops.padded`` makes it for cuBLAS (GPT-2 small's logits gradient:
4096 x 50257 bf16 into 4096 x 50264), against torch's strided ``copy_`` and a plain
copy of the same bytes (device events, median of 50).

    python3 benchmarks/pad_copy.py [--rows 4096] [--cols 50257]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def timed(fn, reps: int = 50) -> float:  # noqa: ANN001
    import torch

    fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def main() -> None:
    import torch

    from fuser.runtime.library_ops import _copy_rows

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=50257)
    args = ap.parse_args()
    r, c = args.rows, args.cols
    cp = -(-c // 8) * 8
    src = torch.randn(r, c, device="cuda", dtype=torch.bfloat16)
    buf = torch.zeros(r, cp, device="cuda", dtype=torch.bfloat16)
    flat = torch.empty(r * c, device="cuda", dtype=torch.bfloat16)
    rows = {
        "torch copy_ (strided)": timed(lambda: buf[:, :c].copy_(src)),
        "driver pitched copy": timed(lambda: _copy_rows(torch, buf[:, :c], src)),
        "torch copy_ column-major": timed(lambda: buf[:, :c].t().copy_(src.t())),
        "driver pitched copy, column-major": timed(lambda: _copy_rows(torch, buf[:, :c].t(), src.t())),
        "plain copy of the bytes": timed(lambda: flat.copy_(src.view(-1))),
    }
    _copy_rows(torch, buf[:, :c], src)
    assert torch.equal(buf[:, :c], src)
    for name, us in rows.items():
        print(f"| {r}x{c} bf16 | {name} | {us:.1f} us | {2 * r * c * 2 / us / 1e6:.2f} TB/s |")


if __name__ == "__main__":
    main()
