"""Kernels from the written schedule against the per-scheduler lowering, on the H100.

    python3 benchmarks/loop_nest.py [--json out.jsonl]

For the pointwise, row-sum and normalization (softmax, RMSNorm, layer norm, seed 000's sum +
broadcast + add) anchor workloads, the 2-D broadcast of docs/examples/scale_bias and two transposes
(``x.T + b``, a batched ``transpose(1, 2)``), column and middle-axis sums, the outer normalization,
layer-norm backward (inner-outer: a kernel group per reduction loop nest), ``fd.execute`` with the
driver's pipeline without ``schedule-fusions`` (``fuser.schedule`` lowered by the per-scheduler
lowerings ``codegen/lower/pointwise.py``, ``rows.py``, ...) and with ``schedule-fusions`` for every kind (the loop nest it writes lowered by ``codegen/lower/loop_nest.py``,
``loop_nest_reduction.py`` or, for tensors computed at a loop, ``loop_nest_compute_at.py``): the
outputs must agree, and each is timed with ``benchmarks.run.bench`` (device events, median).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.run import bench, kernel_only_us  # noqa: E402
from benchmarks.workloads import build, outer_norm, workloads  # noqa: E402


def scale_bias(fd, dtype) -> None:  # noqa: ANN001
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
    fd.add_output(fd.ops.add(fd.ops.mul(x, 2.0), fd.ops.broadcast(w, [True, False])))


def transpose_add(fd, dtype) -> None:  # noqa: ANN001
    """``x.T + b``: the transpose scheduler's two groups (x along one axis, b and the output along the other)."""
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    b = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    fd.add_output(fd.ops.add(fd.ops.permute(x, [1, 0]), b))


def batched_transpose(fd, dtype) -> None:  # noqa: ANN001
    """``x.transpose(1, 2)`` copied to a contiguous tensor."""
    x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=dtype)
    fd.add_output(fd.ops.set(fd.ops.permute(x, [0, 2, 1])))


def col_sum(fd, dtype) -> None:  # noqa: ANN001
    """A sum over the rows (an outer reduction)."""
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    fd.add_output(fd.ops.sum(x, [0]))


def middle_sum(fd, dtype) -> None:  # noqa: ANN001
    """A sum over the middle axis of a 3-D tensor."""
    x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=dtype)
    fd.add_output(fd.ops.sum(x, [1]))


def layernorm_backward(fd, dtype) -> None:  # noqa: ANN001
    """Layer-norm backward (dx, dw, db; the inner-outer persistent kind), every input in ``dtype``."""
    from fuser import DataType

    dy = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=dtype)
    mean = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=dtype)
    rstd = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=dtype)
    w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
    dyf, xf, wf, mf, rf = (fd.ops.cast(t, DataType.Float) for t in (dy, x, w, mean, rstd))
    xhat = fd.ops.mul(fd.ops.sub(xf, mf), rf)
    g = fd.ops.mul(dyf, fd.ops.broadcast(wf, [True, False]))
    a = fd.ops.sum(g, [1], keepdim=True)
    c = fd.ops.sum(fd.ops.mul(g, xhat), [1], keepdim=True)
    n = fd.ops.cast(fd.ops.size(x, 1), DataType.Float)
    t = fd.ops.sub(fd.ops.sub(fd.ops.mul(g, n), a), fd.ops.mul(xhat, c))
    fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.div(rf, n), t), dtype))
    fd.add_output(fd.ops.sum(fd.ops.mul(dyf, xhat), [0]))
    fd.add_output(fd.ops.sum(dyf, [0]))


def main() -> None:
    import torch

    from fuser import DataType, FusionDefinition
    from fuser.runtime.driver import PASSES

    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default="")
    parser.add_argument("--only", default="", help="comma-separated prefixes of the workload names to run")
    args = parser.parse_args()
    cases = []
    for dt in ("float32", "bfloat16"):
        for w in workloads():
            if w.name in ("gelu_bookend_views", "transpose_bookend_views", "sum_bcast_add_8192x3072") or w.name.startswith(
                ("row_sum", "col_sum", "outer_norm", "softmax", "rmsnorm", "layernorm")
            ):
                cases.append((w.name, dt, lambda w=w, dt=dt: build(w, dt), w.shapes))
        fdt = DataType.Float if dt == "float32" else DataType.BFloat16

        def make(fdt=fdt):  # noqa: ANN001, ANN202
            with FusionDefinition() as fd:
                scale_bias(fd, fdt)
            return fd

        cases.append(("scale_bias_8192x3072", dt, make, [[8192, 3072], [3072]]))
        for name, fn, shapes in (
            ("col_sum_16384x1024", col_sum, [[16384, 1024]]),
            ("middle_sum_64x1024x256", middle_sum, [[64, 1024, 256]]),
            ("transpose_add_4096x4096", transpose_add, [[4096, 4096], [4096, 4096]]),
            ("transpose_add_3000x5000", transpose_add, [[3000, 5000], [5000, 3000]]),
            ("batched_transpose_32x1024x1024", batched_transpose, [[32, 1024, 1024]]),
            ("outer_norm_4096x4096", outer_norm, [[4096, 4096]]),
            ("outer_norm_65536x256", outer_norm, [[65536, 256]]),
            ("layernorm_backward_16384x1024", layernorm_backward,
             [[16384, 1024], [16384, 1024], [16384, 1], [16384, 1], [1024]]),
            ("layernorm_backward_2048x4096", layernorm_backward,
             [[2048, 4096], [2048, 4096], [2048, 1], [2048, 1], [4096]]),
        ):
            def make_t(fn=fn, fdt=fdt):  # noqa: ANN001, ANN202
                with FusionDefinition() as fd:
                    fn(fd, fdt)
                return fd

            cases.append((name, dt, make_t, shapes))
    if args.only:
        cases = [c for c in cases if c[0].startswith(tuple(args.only.split(",")))]
    for name, dt, make, shapes in cases:
        torch.manual_seed(0)
        inputs = [torch.randn(*s, device="cuda", dtype=getattr(torch, dt)) for s in shapes]
        row = {"workload": name, "dtype": dt}
        template = tuple(p for p in PASSES if not p.startswith("schedule-fusions"))
        for label, passes in (("template", template), ("loop_nest", (*template, "schedule-fusions"))):
            fd = make()
            fd.pipeline = list(passes)
            try:
                out = torch.cat([o.float().flatten() for o in fd.execute(inputs)])
                row[f"{label}_us"] = round(bench(lambda fd=fd, inputs=inputs: fd.execute(inputs)), 2)
                row[f"{label}_kernel_us"] = kernel_only_us(fd, inputs)
                row[f"{label}_out"] = out
            except Exception as e:  # noqa: BLE001 - reported in the row
                row[f"{label}_error"] = f"{type(e).__name__}: {e}"[:300]
        if "template_out" in row and "loop_nest_out" in row:
            a, b = row.pop("template_out").float(), row.pop("loop_nest_out").float()
            row["max_abs_diff"] = float((a - b).abs().max())
        row.pop("template_out", None)
        row.pop("loop_nest_out", None)
        print(json.dumps(row), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
