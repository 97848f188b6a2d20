"""Cache-hit host time of ``fd.execute`` on three small fusions (one pointwise kernel,
a transpose with bookend views, two segments): 7 blocks of 2000 calls after 50
warm-up calls; the median and the fastest block, in microseconds per call.

    python3 benchmarks/host_cases.py LABEL      # on the GPU machine; prints LABEL {json}

The kernels are tiny, so the time per call is the host's (the GPU waits for it).
``benchmarks/side_by_side.sh`` runs it on two trees alternately.
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


def per_call_us(define: Callable[[Any], None], inputs: list[Any], n: int = 2000, blocks: int = 7) -> tuple[float, float]:
    import torch

    from fuser import FusionDefinition

    with FusionDefinition() as fd:
        define(fd)
    for _ in range(50):
        fd.execute(inputs)
    torch.cuda.synchronize()
    per: list[float] = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(n):
            fd.execute(inputs)
        torch.cuda.synchronize()
        per.append((time.perf_counter() - start) / n * 1e6)
    return round(statistics.median(per), 1), round(min(per), 1)


def pointwise(fd: Any) -> None:
    from fuser import DataType

    a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.mul(fd.ops.add(a, 1.0), 2.0))


def transpose_bookend(fd: Any) -> None:
    from fuser import DataType

    t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
    t1 = fd.ops.reshape(t0, [4, 12, 8, 64])
    t3 = fd.ops.set(fd.ops.permute(t1, [0, 2, 1, 3]))
    fd.add_output(fd.ops.reshape(t3, [32, 768]))


def two_segments(fd: Any) -> None:
    from fuser import DataType

    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
    t3 = fd.ops.segment_set(fd.ops.broadcast(t2, is_broadcast_dim=[False, True]))
    fd.add_output(fd.ops.add(t1, t3))


def linear_gelu(fd: Any) -> None:
    """A cuBLAS segment (the linear, bias in its epilogue) and a kernel (the GELU)."""
    from fuser import DataType

    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    w = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
    y = fd.ops.cast(fd.ops.linear(x, w, b), DataType.Float)
    fd.add_output(fd.ops.cast(fd.ops.mul(y, fd.ops.sigmoid(y)), DataType.BFloat16))


def main() -> None:
    import torch

    def randn(*shape: int) -> Any:
        return torch.randn(*shape, device="cuda")

    res = {
        "pointwise_1k": per_call_us(pointwise, [randn(1024)]),
        "transpose_bookend_small": per_call_us(transpose_bookend, [randn(48, 8, 64)]),
        "two_segments_small": per_call_us(two_segments, [randn(64, 256), randn(64, 256)]),
    }
    print(sys.argv[1] if len(sys.argv) > 1 else "this", json.dumps(res))


if __name__ == "__main__":
    main()
