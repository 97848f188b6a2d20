"""Host time of fd.execute on a cache hit, and where it goes (cProfile).

    python benchmarks/host_overhead.py      # on the GPU machine
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    import torch

    from fuser import DataType, FusionDefinition

    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(fd.ops.add(a, 1.0), 2.0))
    x = torch.randn(1024, device="cuda")
    for _ in range(50):
        fd.execute([x])
    torch.cuda.synchronize()
    n = 3000
    t0 = time.perf_counter()
    for _ in range(n):
        fd.execute([x])
    torch.cuda.synchronize()
    print(f"fd.execute, cache hit, one kernel: {(time.perf_counter() - t0) / n * 1e6:.1f} us per call")
    t0 = time.perf_counter()
    for _ in range(n):
        torch.mul(x, 2.0)
    torch.cuda.synchronize()
    print(f"torch.mul (one eager op) for scale:  {(time.perf_counter() - t0) / n * 1e6:.1f} us per call")
    profile_calls(lambda: fd.execute([x]), n, 18)


def profile_calls(fn: Callable[[], object], n: int, top: int) -> None:
    """cProfile of ``n`` calls of ``fn`` (then a device synchronize): the ``top``
    functions by own time."""
    import torch

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


if __name__ == "__main__":
    main()
