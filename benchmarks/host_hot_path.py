"""Cache-hit host time of ``fd.execute`` with and without the hot launcher
(``fuser.runtime.hot_launch``; multi-step programs also without its CUDA graphs), beside what bounds it: one launch of the same kernel
through cuda-python (``cuLaunchKernel`` and fuser's ``Kernel.launch``) and through
ctypes, ``torch.empty`` of the output, one eager torch op. Blocks of 2000 back to back
calls after a warm-up; per case the median and the fastest block, in microseconds per
call (wall clock, a device synchronization closing each block).

    python3 benchmarks/host_hot_path.py [--profile]     # on the GPU machine; prints JSON

The pointwise kernel on a 1x4096 float32 input takes a few microseconds of GPU time,
so the loop is host-bound. ``--profile`` adds cProfile's top entries of 3000 hot calls.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def per_call_us(fn: Callable[[], Any], n: int = 2000, blocks: int = 7) -> tuple[float, float]:
    import torch

    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    per: list[float] = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        per.append((time.perf_counter() - start) / n * 1e6)
    return round(statistics.median(per), 2), round(min(per), 2)


def main() -> None:
    import ctypes

    import torch
    from cuda.bindings import driver as cu

    from benchmarks.host_cases import linear_gelu, pointwise, transpose_bookend, two_segments
    from fuser import FusionDefinition
    from fuser.frontend import execution
    from fuser.runtime import hot_launch

    def define(body: Callable[[Any], None]) -> Any:
        with FusionDefinition() as fd:
            body(fd)
        return fd

    def randn(*shape: int) -> Any:
        return torch.randn(*shape, device="cuda")

    res: dict[str, Any] = {"device": torch.cuda.get_device_name()}
    cases = {
        "pointwise_1x4096": (pointwise, [randn(4096)]),
        "pointwise_1k": (pointwise, [randn(1024)]),
        "transpose_bookend_small": (transpose_bookend, [randn(48, 8, 64)]),
        "two_segments_small": (two_segments, [randn(64, 256), randn(64, 256)]),
        "linear_bias_gelu_small": (linear_gelu, [randn(64, 128).bfloat16(), randn(256, 128).bfloat16(),
                                                 randn(256).bfloat16()]),
    }
    for name, (body, inputs) in cases.items():
        fd = define(body)
        entry = fd._ensure_defined()  # noqa: SLF001
        for _ in range(3):
            outs = fd.execute(inputs)
        hot = bool(entry.hot)
        slow_outs = execution.execute(entry, inputs)
        same = all(torch.equal(a, b) for a, b in zip(outs, slow_outs, strict=True))
        res[name] = {"hot_launcher": hot, "same_as_full_path": same}
        res[name]["hot"] = per_call_us(lambda fd=fd, inputs=inputs: fd.execute(inputs))
        graphs = [x.graphs for x in entry.hot.values() if x.graphs is not None]
        if graphs:  # the same launcher without its CUDA graphs
            res[name]["graphs"] = sum(len(g.execs) for g in graphs)
            for launcher in entry.hot.values():
                launcher.plan.hot_checked = False
            entry.hot.clear()
            hot_launch.GRAPHS = False
            fd.execute(inputs)
            hot_launch.GRAPHS = True
            res[name]["hot_without_graphs"] = per_call_us(lambda fd=fd, inputs=inputs: fd.execute(inputs))
            for launcher in entry.hot.values():
                launcher.plan.hot_checked = False
            entry.hot.clear()
            for _ in range(3):
                fd.execute(inputs)
        saved = dict(entry.hot)
        entry.hot.clear()
        res[name]["full_path"] = per_call_us(lambda fd=fd, inputs=inputs: fd.execute(inputs))
        if hot:  # the other way to call cuLaunchKernel
            plan = next(iter(saved.values())).plan
            plan.hot_checked = False
            other = "cuda-python" if hot_launch.LAUNCH == "ctypes" else "ctypes"
            mode, hot_launch.LAUNCH = hot_launch.LAUNCH, other
            fd.execute(inputs)
            hot_launch.LAUNCH = mode
            res[name][f"hot_{other}"] = per_call_us(lambda fd=fd, inputs=inputs: fd.execute(inputs))
            launcher = next(iter(saved.values()))
            res[name]["launcher_alone"] = per_call_us(lambda f=launcher.run, inputs=inputs: f(inputs))
        entry.hot.clear()
        entry.hot.update(saved)

    # What bounds the one-kernel case: its kernel launched alone, the output's
    # allocation, one eager torch op.
    fd = define(pointwise)
    entry = fd._ensure_defined()  # noqa: SLF001
    x = randn(4096)
    (out,) = fd.execute([x])
    fd.execute([x])
    plan = entry.last_run
    (seg,) = plan.compiled_segments()
    ((kern, grid, block, shared, gather),) = seg.launch_table()
    stream = torch.cuda.current_stream().cuda_stream
    values = [x.data_ptr(), out.data_ptr(), *seg.extent_values]
    args = [values[i] for i in gather]
    g = hot_launch._dims(grid)  # noqa: SLF001
    b = hot_launch._dims(block)  # noqa: SLF001
    kern.launch(grid, block, args, shared, stream)
    params = kern._params  # noqa: SLF001
    res["bare_cuLaunchKernel_cuda_python"] = per_call_us(
        lambda: cu.cuLaunchKernel(kern.function, *g, *b, shared, stream, params, 0)
    )
    res["Kernel.launch"] = per_call_us(lambda: kern.launch(grid, block, args, shared, stream))
    launch = hot_launch._cu_launch()  # noqa: SLF001
    fn, cs, cp = ctypes.c_void_p(int(kern.function)), ctypes.c_void_p(stream), ctypes.c_void_p(params)
    res["bare_cuLaunchKernel_ctypes"] = per_call_us(lambda: launch(fn, *g, *b, shared, cs, cp, None))
    dev = torch.device("cuda", 0)
    res["torch.empty"] = per_call_us(lambda: torch.empty([4096], dtype=torch.float32, device=dev))
    res["torch.empty_like"] = per_call_us(lambda: torch.empty_like(x))
    template = torch.empty((), device=dev).expand(4096)
    res["torch.empty_like_expanded"] = per_call_us(lambda: torch.empty_like(template))
    res["x.new_empty"] = per_call_us(lambda: x.new_empty((4096,)))
    res["torch_eager_mul"] = per_call_us(lambda: torch.mul(x, 2.0))
    res["key_of"] = per_call_us(lambda: hot_launch.key_of([x]))
    print(json.dumps(res))

    if "--profile" in sys.argv:
        from benchmarks.host_overhead import profile_calls

        profile_calls(lambda: fd.execute([x]), 3000, 12)


if __name__ == "__main__":
    main()
