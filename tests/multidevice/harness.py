"""Run a function in several processes joined by a ``torch.distributed`` group.

``run_ranks(n, fn, *args)`` spawns ``n`` processes (``multiprocessing``'s ``spawn``
context: nothing of the test process is inherited but ``sys.path`` and the
environment); process ``r`` joins a gloo group of ``n`` through a ``file://``
rendezvous in a fresh temporary folder (no fixed network port, so parallel test
workers never collide), runs ``fn(r, n, *args)`` and sends its result back. With
``backend="nccl"`` process ``r`` takes GPU ``r`` and the group is NCCL's. ``fn`` must
be a module-level function (it is pickled by name) and its results picklable. When a
rank raises, the others are killed (they would wait forever in a collective) and
``AssertionError`` carries that rank's traceback; after ``timeout`` seconds every rank
is killed.

Each process imports torch (about 2 s), so group the checks of one test into one
``run_ranks`` call.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import queue
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from multiprocessing.process import BaseProcess
from typing import Any

__all__ = ["run_ranks"]


def _rank_main(
    rank: int,
    size: int,
    init_method: str,
    backend: str,
    timeout: float,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    results: Any,
) -> None:
    """A spawned process: joins the group, runs ``fn``, puts ``(rank, ok, payload)``."""
    if sys.platform.startswith("linux"):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # one host: loopback
    try:
        import torch
        import torch.distributed as dist

        if backend == "nccl":
            torch.cuda.set_device(rank)
        dist.init_process_group(
            backend,
            init_method=init_method,
            rank=rank,
            world_size=size,
            timeout=timedelta(seconds=timeout),
        )
        payload = pickle.dumps(fn(rank, size, *args))
    except BaseException:
        # reported without leaving the group: the parent kills the other ranks
        results.put((rank, False, traceback.format_exc()))
        return
    dist.destroy_process_group()
    results.put((rank, True, payload))


def _kill(procs: list[BaseProcess]) -> None:
    for p in procs:
        if p.is_alive():
            p.kill()
    for p in procs:
        p.join(5)


def run_ranks(
    n: int, fn: Callable[..., Any], *args: Any, timeout: float = 120, backend: str = "gloo"
) -> list[Any]:
    """``[fn(0, n, *args), ..., fn(n - 1, n, *args)]``, each run in its own process of
    a ``backend`` group of ``n``; see the module docstring."""
    if n <= 0:
        raise ValueError(f"run_ranks needs at least one rank, got {n}")
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="fuser-ranks-") as tmp:
        init_method = "file://" + os.path.join(tmp, "rendezvous")
        results = ctx.Queue()
        procs: list[BaseProcess] = [
            ctx.Process(
                target=_rank_main,
                args=(r, n, init_method, backend, timeout, fn, args, results),
                name=f"rank-{r}",
                daemon=True,
            )
            for r in range(n)
        ]
        out: dict[int, Any] = {}
        try:
            for p in procs:
                p.start()
            deadline = time.monotonic() + timeout
            while len(out) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [r for r in range(n) if r not in out]
                    raise AssertionError(
                        f"run_ranks({n}, {fn.__name__}): ranks {missing} did not finish in "
                        f"{timeout} s"
                    )
                try:
                    rank, ok, payload = results.get(timeout=min(left, 0.2))
                except queue.Empty:
                    for r, p in enumerate(procs):
                        if r not in out and p.exitcode not in (None, 0):
                            raise AssertionError(
                                f"run_ranks({n}, {fn.__name__}): rank {r} died with exit "
                                f"code {p.exitcode}"
                            ) from None
                    continue
                if not ok:
                    raise AssertionError(
                        f"run_ranks({n}, {fn.__name__}): rank {rank} failed:\n{payload}"
                    )
                out[rank] = pickle.loads(payload)
            for p in procs:
                p.join(timeout=max(deadline - time.monotonic(), 1.0))
        finally:
            _kill(procs)
            results.close()
            results.join_thread()
    return [out[r] for r in range(n)]
