"""Run many random fusions through the frontend and group the failures by cause.

    python -m tests.fuzz.triage 0 2000            # seeds [0, 2000), numpy inputs
    python -m tests.fuzz.triage 0 2000 --torch    # torch CPU tensors as inputs
    python -m tests.fuzz.triage 17 18 -v          # one seed: its source and the traceback

Stages per fusion: ``fd.plan``, ``fd.cuda_code_for``, ``fd.execute`` (outputs against
torch: dtype and values), ``fd.segment`` then ``fd.execute`` of the segments.
"""

from __future__ import annotations

import argparse
import collections
import re
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from tests.fuzz.fusion_gen import TOL, Case, random_case

KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)')


def as_torch(x: Any) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.cpu()
    import ml_dtypes

    a = np.asarray(x)
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    # np.ascontiguousarray would turn a 0-dim array into shape (1,)
    return torch.from_numpy(a.copy(order="C"))


def compare(outs: list[Any], case: Case) -> str | None:
    """None when ``outs`` match torch's outputs in dtype, shape and value."""
    if len(outs) != len(case.expected):
        return f"{len(outs)} outputs, torch has {len(case.expected)}"
    tols = case.tolerances or [TOL.get(e.dtype, 1e-4) for e in case.expected]
    for i, (o, e, tol) in enumerate(zip(outs, case.expected, tols, strict=True)):
        t = as_torch(o)
        if t.dtype != e.dtype:
            return f"output #{i} is {t.dtype}, torch gives {e.dtype}"
        if tuple(t.shape) != tuple(e.shape):
            return f"output #{i} has shape {tuple(t.shape)}, torch gives {tuple(e.shape)}"
        if not torch.allclose(t.double(), e.double(), rtol=tol, atol=tol, equal_nan=True):
            err = (t.double() - e.double()).abs().nan_to_num(float("inf")).max().item()
            return f"output #{i} differs from torch (max |err| {err:.3g})"
    return None


def stages(case: Case, use_torch: bool) -> list[tuple[str, Callable[[], Any]]]:
    ins: list[Any] = [t.clone() for t in case.inputs] if use_torch else case.numpy_inputs()
    fd = case.fd

    def execute() -> None:
        msg = compare(fd.execute(ins), case)
        if msg:
            raise AssertionError(msg)

    def segmented() -> None:
        fd.segment(ins)
        try:
            msg = compare(fd.execute(ins), case)
        finally:
            fd.clear_segmentation()
        if msg:
            raise AssertionError(msg)

    state: dict[str, Any] = {}

    def plan() -> None:
        p = state["plan"] = fd.plan(ins)
        if not p.is_complete:
            raise AssertionError(f"a segment has no scheduler:\n{p}")

    def cuda() -> None:
        code = fd.cuda_code_for(ins)
        p = state.get("plan") or fd.plan(ins)
        kernels = KERNEL.findall(code)
        if (p.segmented or p.segments[0].launches_kernel) and len(kernels) != p.num_kernels:
            raise AssertionError(
                f"cuda_code_for prints {len(kernels)} kernels, the plan counts {p.num_kernels}"
            )

    return [
        ("plan", plan),
        ("cuda", cuda),
        ("execute", execute),
        ("segment", segmented),
    ]


def compile_with_nvrtc(case: Case) -> None:
    """Every kernel of ``case`` compiled by NVRTC for sm_90 (no GPU needed)."""
    from codegen.cuda_printer import print_cuda
    from codegen.nvrtc import compile_cuda
    from fuser_ir.frontend.execution import lowered_segments

    entry = case.fd._ensure_defined()
    for _, lowered in lowered_segments(entry, case.numpy_inputs()):
        for k in lowered.kernels:
            compile_cuda(print_cuda(k.module), name=k.name)


def failure_key(stage: str, e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f"{tb[-1].filename.split('/')[-1]}:{tb[-1].lineno}" if tb else "?"
    msg = re.sub(r"\d+", "N", str(e).splitlines()[0] if str(e) else "")[:100]
    return f"{stage} {type(e).__name__} {where}: {msg}"


def run(
    seeds: range, use_torch: bool = False, only: frozenset[str] | None = None
) -> dict[str, list[int]]:
    """Failures grouped by key, each with the seeds that hit it (``only``: these stages)."""
    failures: dict[str, list[int]] = collections.defaultdict(list)
    for seed in seeds:
        case = random_case(seed)
        for stage, fn in stages(case, use_torch):
            if only is not None and stage not in only:
                continue
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - grouping every failure is the point
                failures[failure_key(stage, e)].append(seed)
    return failures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("start", type=int)
    p.add_argument("stop", type=int)
    p.add_argument("--torch", action="store_true", help="torch CPU tensors as inputs")
    p.add_argument("-v", action="store_true", help="print each failing seed's source and traceback")
    p.add_argument("--stages", help="comma-separated stages to run (default: all)")
    a = p.parse_args()
    only = frozenset(a.stages.split(",")) if a.stages else None
    if a.v:
        for seed in range(a.start, a.stop):
            case = random_case(seed)
            print(f"# seed {seed}\n{case.source}")
            for stage, fn in stages(case, a.torch):
                if only is not None and stage not in only:
                    continue
                try:
                    fn()
                except Exception:  # noqa: BLE001
                    print(f"## {stage}")
                    traceback.print_exc()
        return
    failures = run(range(a.start, a.stop), a.torch, only)
    total = sum(len(v) for v in failures.values())
    print(f"{a.stop - a.start} fusions, {total} failures")
    for key, seeds in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(seeds):5d}  {key}  seeds {seeds[:6]}")


if __name__ == "__main__":
    main()
