"""The random-fusion property on the GPU (issue 10: every fusion that ``fd.plan``
accepts runs on the GPU): the CI fuzz cases (``tests/fuzz/fusion_gen.py``) run through
``fd.execute`` on torch CUDA tensors, and through ``fd.segment``'s segments, against
torch's outputs (dtype, shape, value). ``FUSER_FUZZ_SEED_START``/``FUSER_FUZZ_COUNT`` as
in ``tests/fuzz/test_random_fusions.py``."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

from tests.fuzz.fusion_gen import random_case  # noqa: E402
from tests.fuzz.triage import compare  # noqa: E402

pytestmark = pytest.mark.gpu

START = int(os.environ.get("FUSER_FUZZ_SEED_START", "0"))
COUNT = int(os.environ.get("FUSER_FUZZ_COUNT", "500"))


@pytest.mark.parametrize("chunk", range(10))
def test_random_fusions_on_the_gpu(chunk: int) -> None:
    failures = []
    for seed in range(START + chunk, START + COUNT, 10):
        case = random_case(seed)
        ins = [t.cuda() for t in case.inputs]
        try:
            msg = compare(case.fd.execute(ins), case)
            if msg is None:
                case.fd.segment(ins)
                try:
                    msg = compare(case.fd.execute(ins), case)
                finally:
                    case.fd.clear_segmentation()
                msg = msg and f"segmented: {msg}"
        except Exception as e:  # noqa: BLE001 - every failure is reported with its reproducer
            msg = f"{type(e).__name__}: {e}"
        if msg:
            failures.append(f"seed {seed}: {msg}\n{case.source}")
    assert not failures, f"{len(failures)} failing seeds:\n\n" + "\n\n".join(failures[:5])
