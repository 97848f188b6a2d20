"""The random-fusion property on the GPU (issue 10: every fusion that ``fd.plan``
accepts runs on the GPU): the CI fuzz cases (``tests/fuzz/fusion_gen.py``) run through
``fd.execute`` on torch CUDA tensors, through ``fd.segment``'s segments, and, after
each, the seed's small case through the same definition (kernels compiled for one size
meet another), then both sizes in turn while their launchers replay CUDA graphs
(``replay``), against torch's outputs (dtype, shape, value). The seeds run in worker
processes (``tests.fuzz.triage.run_in_workers``): in one process they did not fit the
150 s a GPU test call gives them. ``FUSER_FUZZ_SEED_START``/``FUSER_FUZZ_COUNT``
as in ``tests/fuzz/test_random_fusions.py``; ``FUSER_FUZZ_WORKERS`` (default: the CPU
count, at most 12) the processes."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from tests.fuzz.triage import run_in_workers  # noqa: E402

pytestmark = pytest.mark.gpu

START = int(os.environ.get("FUSER_FUZZ_SEED_START", "0"))
COUNT = int(os.environ.get("FUSER_FUZZ_COUNT", "500"))
WORKERS = int(os.environ.get("FUSER_FUZZ_WORKERS", str(min(os.cpu_count() or 1, 12))))


def test_random_fusions_on_the_gpu() -> None:
    failures = run_in_workers(
        range(START, START + COUNT), WORKERS, False, frozenset({"execute", "segment", "resize", "replay"}), "cuda"
    )
    lines = [f"{len(seeds)} x {key}: seeds {sorted(seeds)[:6]}" for key, seeds in failures.items()]
    assert not failures, (
        f"{sum(len(s) for s in failures.values())} failures of {COUNT} seeds (reproduce one with "
        "`python -m tests.fuzz.triage SEED SEED+1 -v --cuda`):\n" + "\n".join(lines)
    )
