"""Matrix products through fuser's library segments, side by side with torch.

    python3 benchmarks/matmul.py [--json FILE]     # on the GPU machine

Per case, median microseconds (``benchmarks.run.bench``: CUDA events, L2 flushed) of
fuser's ``fd.execute`` (a cuBLAS segment through torch, then the generated kernel of
the epilogue), the plain GEMM of the same shapes (``torch.mm``: what issue 16's
acceptance compares with), eager torch and ``torch.compile`` of the same function,
the largest relative error against eager in float64, and the wall clock per call of
fuser and eager (50 back to back calls: host and device together).

* ``linear_bias_gelu``: ``gelu_tanh(x @ w.T + b)``, x [8192, 4096], w [4096, 4096], bf16.
* ``linear_bias``: ``x @ w.T + b`` (the bias rides in the GEMM's epilogue: addmm).
* ``bmm``: a batched matmul [32, 1024, 128] x [32, 128, 1024], bf16.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.run import bench  # noqa: E402


def _gelu_tanh(fd: Any, h: Any) -> Any:
    inner = fd.ops.mul(fd.ops.add(h, fd.ops.mul(fd.ops.mul(fd.ops.mul(h, h), h), 0.044715)), 0.7978845608028654)
    return fd.ops.mul(fd.ops.mul(h, 0.5), fd.ops.add(fd.ops.tanh(inner), 1.0))


def cases() -> list[dict[str, Any]]:
    import torch

    from fuser import DataType, FusionDefinition

    bf16 = DataType.BFloat16
    out: list[dict[str, Any]] = []

    def linear(gelu: bool) -> FusionDefinition:
        with FusionDefinition() as fd:
            x = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            w = fd.define_tensor([-1, -1], contiguity=[True, True], dtype=bf16)
            b = fd.define_tensor([-1], contiguity=[True], dtype=bf16)
            y = fd.ops.linear(x, w, b)
            if gelu:
                y = fd.ops.cast(_gelu_tanh(fd, fd.ops.cast(y, DataType.Float)), bf16)
            fd.add_output(y)
        return fd

    m, k, n = 8192, 4096, 4096
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    F = torch.nn.functional
    out.append({
        "name": "linear_bias_gelu_8192x4096x4096", "fd": linear(True), "inputs": [x, w, b],
        "torch": lambda x, w, b: F.gelu(F.linear(x, w, b), approximate="tanh"),
        "gemm": lambda: torch.mm(x, w.t()),
    })
    out.append({
        "name": "linear_bias_8192x4096x4096", "fd": linear(False), "inputs": [x, w, b],
        "torch": lambda x, w, b: F.linear(x, w, b), "gemm": lambda: torch.mm(x, w.t()),
    })
    with FusionDefinition() as fd:
        a = fd.define_tensor([-1, -1, -1], contiguity=[True] * 3, dtype=bf16)
        c = fd.define_tensor([-1, -1, -1], contiguity=[True] * 3, dtype=bf16)
        fd.add_output(fd.ops.matmul(a, c))
    a = torch.randn(32, 1024, 128, device="cuda", dtype=torch.bfloat16)
    c = torch.randn(32, 128, 1024, device="cuda", dtype=torch.bfloat16)
    out.append({
        "name": "bmm_32x1024x128x1024", "fd": fd, "inputs": [a, c],
        "torch": lambda a, c: torch.matmul(a, c), "gemm": lambda: torch.bmm(a, c),
    })
    return out


def wall_us(fn: Any, n: int = 50) -> float:
    """Wall-clock microseconds per call of ``n`` back to back calls (host and device
    together: what a caller waits for), after a warm-up."""
    import time

    import torch

    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    import torch

    rows = []
    for case in cases():
        fd, inputs, fn = case["fd"], case["inputs"], case["torch"]
        (got,) = fd.execute(inputs)
        ref = fn(*[t.double() for t in inputs])
        err = ((got.double() - ref).abs().max() / ref.abs().max()).item()
        compiled = torch.compile(fn)
        compiled(*inputs)
        row = {
            "case": case["name"],
            "fuser_us": round(bench(lambda fd=fd, inputs=inputs: fd.execute(inputs)), 1),
            "gemm_us": round(bench(case["gemm"]), 1),
            "eager_us": round(bench(lambda fn=fn, inputs=inputs: fn(*inputs)), 1),
            "compile_us": round(bench(lambda c=compiled, inputs=inputs: c(*inputs)), 1),
            "rel_err": float(f"{err:.1e}"),
        }
        row["fuser_wall_us"] = round(wall_us(lambda fd=fd, inputs=inputs: fd.execute(inputs)), 1)
        row["eager_wall_us"] = round(wall_us(lambda fn=fn, inputs=inputs: fn(*inputs)), 1)
        row["gemm_over_fuser"] = round(row["gemm_us"] / row["fuser_us"], 3)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("| case | fuser us | plain GEMM us | GEMM / fuser | eager us | torch.compile us | fuser wall us | eager wall us | rel err |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['fuser_us']} | {r['gemm_us']} | {r['gemm_over_fuser']} | {r['eager_us']} | "
              f"{r['compile_us']} | {r['fuser_wall_us']} | {r['eager_wall_us']} | {r['rel_err']:.1e} |")
    if args.json:
        Path(args.json).write_text("\n".join(json.dumps(r) for r in rows) + "\n")


if __name__ == "__main__":
    main()
