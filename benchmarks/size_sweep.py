"""A batch-size sweep of one fusion: how many kernels it compiles and what each new
size costs, against ``torch.compile(dynamic=True)`` (issue 15, item 5).

Run on the GPU machine::

    python3 benchmarks/size_sweep.py [--width 768] [--dtype float32] [--json out.jsonl]

For each fusion (softmax, layer norm), one fresh process with an empty kernel cache
(``FUSER_CACHE_DIR``, after one unrelated fusion has warmed imports, NVRTC and the
CUDA context) calls ``fd.execute`` on 12 batch sizes in turn and records each first
call's wall time (synchronized) and the NVRTC compiles (kernel cache misses); then
``torch.compile(dynamic=True)`` on the same sizes in a fresh process. Every output
is checked against eager torch in float64. With ``FUSER_STATIC_EXTENTS=1`` fuser
bakes the batch into its kernels, as before symbolic extents.
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

SIZES = [1, 2, 3, 8, 17, 64, 100, 255, 256, 1000, 2047, 4096]
FUSIONS = ("softmax", "layernorm")


def _define(name: str, width: int, dtype: str):  # noqa: ANN202 - the frontend's object
    from fuser import DataType, FusionDefinition

    dt = DataType.BFloat16 if dtype == "bfloat16" else DataType.Float
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, width], contiguity=[True, True], dtype=dt)
        xf = fd.ops.cast(x, DataType.Float) if dt != DataType.Float else x
        if name == "softmax":
            m = fd.ops.max(xf, dims=[1], keepdim=True)
            e = fd.ops.exp(xf - m)
            y = e / fd.ops.sum(e, dims=[1], keepdim=True)
        else:
            mean = fd.ops.mul(fd.ops.sum(xf, dims=[1], keepdim=True), 1.0 / width)
            xc = fd.ops.sub(xf, mean)
            var = fd.ops.mul(fd.ops.sum(fd.ops.mul(xc, xc), dims=[1], keepdim=True), 1.0 / width)
            y = xc * fd.ops.rsqrt(var + 1e-5)
        fd.add_output(fd.ops.cast(y, dt) if dt != DataType.Float else y)
    return fd


def _torch_fn(name: str, width: int):  # noqa: ANN202
    import torch

    def softmax(x):  # noqa: ANN001, ANN202
        return torch.softmax(x.float(), dim=1).to(x.dtype)

    def layernorm(x):  # noqa: ANN001, ANN202
        return torch.nn.functional.layer_norm(x.float(), (width,), eps=1e-5).to(x.dtype)

    return softmax if name == "softmax" else layernorm


def child(engine: str, name: str, width: int, dtype: str) -> None:
    import torch

    tdt = getattr(torch, dtype)
    ref_fn = _torch_fn(name, width)
    warm = torch.randn(4, 64, device="cuda")
    if engine == "fuser":
        from fuser.codegen.kernel_cache import default_cache

        _define("softmax", 64, "float32").execute([warm])  # imports, NVRTC, context
        torch.cuda.synchronize()
        fd = _define(name, width, dtype)
        cache = default_cache()
        base = cache.stats.misses

        def run(x):  # noqa: ANN001, ANN202
            return fd.execute([x])[0]
    else:
        torch.compile(lambda t: t * 2, dynamic=True)(warm)
        torch.cuda.synchronize()
        run = torch.compile(ref_fn, dynamic=True)
    for n in SIZES:
        x = torch.randn(n, width, device="cuda", dtype=tdt)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = run(x)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        ref = ref_fn(x.double()).double()
        err = float((out.double() - ref).abs().max())
        row = {"engine": engine, "fusion": name, "dtype": dtype, "width": width, "n": n,
               "first_call_s": round(first, 4), "max_err": err}
        if engine == "fuser":
            row["nvrtc_compiles"] = cache.stats.misses - base
        print(json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--json", default="")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.width, args.dtype)
        return
    rows = []
    for name in FUSIONS:
        for engine in ("fuser", "torch.compile"):
            with tempfile.TemporaryDirectory() as cache_dir:
                env = {**os.environ, "FUSER_CACHE_DIR": cache_dir}
                got, status = child_rows([sys.executable, __file__, "--child", engine, name, "--width",
                                          str(args.width), "--dtype", args.dtype], env)
                if status:
                    raise SystemExit(f"{engine} {name}: child failed")
                rows += got
    print(f"{'fusion':10s} {'engine':14s} " + " ".join(f"{n:>6d}" for n in SIZES) + "   total_s  kernels")
    for name in FUSIONS:
        for engine in ("fuser", "torch.compile"):
            rs = [r for r in rows if r["fusion"] == name and r["engine"] == engine]
            firsts = " ".join(f"{r['first_call_s'] * 1e3:6.0f}" for r in rs)
            kernels = rs[-1].get("nvrtc_compiles", "")
            worst = max(r["max_err"] for r in rs)
            print(f"{name:10s} {engine:14s} {firsts}   {sum(r['first_call_s'] for r in rs):7.2f}  {kernels}"
                  f"   (ms per first call; max err {worst:.1e})")
    append_rows(args.json, rows)


if __name__ == "__main__":
    main()
