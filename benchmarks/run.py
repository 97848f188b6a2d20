"""Benchmark every anchor workload through fuser, torch eager, torch.compile and a copy.

Run on the GPU machine (one process, one GPU):

    python benchmarks/run.py [--dtypes float32,bfloat16] [--only softmax] [--json out.jsonl]

For each workload and dtype it checks fuser's output against torch (float64
reference, relative error), then times fuser, eager, torch.compile and a plain copy
of the same number of bytes with CUDA events (median of many runs after warm-up, on
random data), and prints a table: microseconds, GB/s, copy_us / fuser_us (1.0 is the
speed of light for a memory-bound kernel) and fuser's speed-up over the faster of
eager and torch.compile.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.workloads import build, torch_reference, workloads  # noqa: E402


def bench(fn, reps: int = 200, warmup: int = 25) -> float:
    """Median microseconds of ``fn()``: ``triton.testing.do_bench`` (what the anchors
    used: CUDA events, L2 flushed before each run, median), else events here."""
    try:
        from triton.testing import do_bench

        return do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e3
    except ImportError:
        pass
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2]


def rel_error(ours, ref) -> float:
    ours = ours.double()
    ref = ref.double()
    if not torch_isfinite(ours):
        return math.inf
    return float((ours - ref).norm() / max(ref.norm(), 1e-30))


def torch_isfinite(t) -> bool:
    import torch

    return bool(torch.isfinite(t).all())


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--only", default="", help="comma-separated substrings of workload names")
    parser.add_argument("--json", default="", help="append one JSON row per measurement here")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = parser.parse_args()

    props = torch.cuda.get_device_properties(0)
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}", flush=True)
    rows = []
    only = [s for s in args.only.split(",") if s]
    for dtype_name in args.dtypes.split(","):
        for w in workloads():
            if only and not any(s in w.name for s in only):
                continue
            row = measure(w, dtype_name, compile_=not args.no_compile)
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
            torch.cuda.empty_cache()
    print_table(rows)


def measure(w, dtype_name: str, compile_: bool = True) -> dict:
    """Check and time one workload in one dtype (see the module docstring)."""
    import torch

    torch.manual_seed(0)
    tdt = getattr(torch, dtype_name)
    inputs = [torch.randn(*s, device="cuda", dtype=tdt) for s in w.shapes]
    ref_fn = torch_reference(w.torch_key)
    row: dict = {"workload": w.name, "dtype": dtype_name, "shapes": w.shapes}
    moved = sum(t.numel() * t.element_size() for t in inputs)
    moved += sum(math.prod(s) * inputs[0].element_size() for s in w.out_shapes)
    row["bytes"] = moved
    try:
        fd = build(w, dtype_name)
        t0 = time.perf_counter()
        outs = fd.execute(inputs)
        torch.cuda.synchronize()
        row["first_call_s"] = round(time.perf_counter() - t0, 3)
        ref64 = ref_fn(*[t.double() for t in inputs])
        refs = ref64 if isinstance(ref64, tuple) else (ref64,)
        if len(outs) != len(refs):
            raise ValueError(f"{len(outs)} outputs, the reference has {len(refs)}")
        row["rel_err"] = max(rel_error(o, r) for o, r in zip(outs, refs, strict=True))
        row["fuser_us"] = bench(lambda: fd.execute(inputs))
        row["kernel_us"] = kernel_only_us(fd, inputs)
    except Exception as e:  # noqa: BLE001 - report and keep going
        row["fuser_error"] = f"{type(e).__name__}: {e}"[:300]
    row["eager_us"] = bench(lambda: ref_fn(*inputs))
    if compile_:
        try:
            compiled = torch.compile(ref_fn)
            compiled(*inputs)
            row["compile_us"] = bench(lambda: compiled(*inputs))
        except Exception as e:  # noqa: BLE001
            row["compile_error"] = str(e)[:200]
    buf = torch.empty(moved // 8 + 1, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(buf)
    row["copy_us"] = bench(lambda: dst.copy_(buf))
    return row


def kernel_only_us(fd, inputs) -> float | None:
    """The GPU time of the kernels of a one-launch program, launched directly on the
    same buffers (no frontend, plan lookup or host views): the kernels' own speed.
    None when the program launches other than one segment, or a launch argument is a
    host view that moves the data pointer (a slice)."""
    import torch

    from fuser.ir.dialects import hir as H
    from fuser.runtime.compile_fusion import run_compiled

    outs = fd.execute(inputs)
    program = fd._entry.last_run
    segs = program.compiled_segments() if hasattr(program, "compiled_segments") else []
    if len(segs) != 1 or len(program.exe.launches) != 1:
        return None
    (launch,) = program.exe.launches

    def pointer(v):  # noqa: ANN001, ANN202 - a launch argument's data pointer
        while isinstance(v.owner, H.HostViewOp) and not isinstance(v.owner, H.SliceOp | H.AliasSelectOp):
            v = v.owner.view_input()
        if v.owner is program.exe.program.body.block:
            x = inputs[v.index]
            return x.data_ptr() if hasattr(x, "data_ptr") else x
        return None

    ptrs = [pointer(a) for a in launch.args]
    if None in ptrs or len(launch.outs) != len(outs):
        return None
    seg = segs[0]
    stream = torch.cuda.current_stream().cuda_stream
    us = bench(lambda: run_compiled(seg, ptrs, [o.data_ptr() for o in outs], stream))
    return round(us, 2) if seg.kernels else None


def print_table(rows: list[dict]) -> None:
    hdr = f"{'workload':28} {'dtype':9} {'fuser_us':>9} {'kernel':>8} {'eager_us':>9} {'compile':>9} {'copy_us':>8} {'GB/s':>7} {'copy/ours':>9} {'vs best':>8} {'rel_err':>8}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        ours = r.get("fuser_us")
        best = min(v for v in (r.get("eager_us"), r.get("compile_us")) if v is not None)
        if ours is None:
            print(f"{r['workload']:28} {r['dtype']:9} {'ERROR':>9} {r['eager_us']:9.1f}  {r.get('fuser_error', '')[:80]}")
            continue
        gbs = r["bytes"] / ours / 1e3
        print(
            f"{r['workload']:28} {r['dtype']:9} {ours:9.1f} {r.get('kernel_us') or float('nan'):8.1f} {r['eager_us']:9.1f} "
            f"{r.get('compile_us', float('nan')):9.1f} {r['copy_us']:8.1f} {gbs:7.0f} "
            f"{r['copy_us'] / ours:9.2f} {best / ours:8.2f} {r.get('rel_err', float('nan')):8.1e}"
        )


if __name__ == "__main__":
    main()
