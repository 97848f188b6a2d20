"""tests/multidevice/harness.py: a failing rank's traceback reaches the test, and the
ranks left waiting for it in a collective are killed rather than waited for."""

from __future__ import annotations

import time

import pytest

from tests.multidevice.harness import run_ranks


def fail_on_rank_1(rank: int, size: int) -> int:
    import torch.distributed as dist

    if rank == 1:
        raise KeyError("rank 1 gives up")
    dist.barrier()  # never met: rank 1 is gone
    return rank


def test_a_failing_rank_reports_its_traceback_and_the_rest_are_killed() -> None:
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"(?s)rank 1 failed:.*KeyError: 'rank 1 gives up'"):
        run_ranks(2, fail_on_rank_1, timeout=60)
    assert time.monotonic() - start < 30  # not the 60 s timeout
