"""The random-fusion property test (issue 10): on valid random fusions
(``tests/fuzz/fusion_gen.py``) ``fd.plan``, ``fd.segment``, ``fd.generate_cuda_code`` (every
accepted plan lowers and prints) and ``fd.execute`` never raise, and the outputs match
torch in dtype, shape and value (``fd.execute``, and again through ``fd.segment``'s
segments); ``plan.num_kernels`` is the number of kernels ``generate_cuda_code`` prints, and
every 10th seed's kernels compile with NVRTC for sm_90.

Stage ``kernels`` (issue 11) runs the generated kernels: the seed's small case
(``random_case(seed, small=True)``, the same draws with extents 64, 127, 128 and 256
replaced by 4, 9, 6 and 11: size-1 and odd extents stay) goes through the plan the GPU
would run (scheduler decision, segmentation, lowering of every segment for its inputs'
layouts), every kernel of every segment runs in the CPU kernel interpreter in segment
order with numpy intermediates (``fuser.frontend.execution.execute_kernels_on_cpu``),
and the outputs must match the reference interpreter and torch within the dtype-aware
tolerances of the other stages; every 50th seed's small-case kernels also compile with
NVRTC. The interpreter runs a Python generator per GPU thread: the 300 CI seeds of this
stage take about 60 s of one core. Stage ``kernels-4sm`` plans the same small case for
a GPU of 4 SMs (``triage.SMALL_GPU``), where small shapes take the decisions a real GPU
takes for large ones (the inner-outer kind from 4 rows on: seed 166's plan failed to
compile there, and so did its fusion at 140 rows on an H100); the plan must compile,
and where it differs from the default target's its kernels run in the interpreter.

CI runs seeds ``[0, 300)`` (about 270 s of one core for the six stages: the CI budget
is 20 minutes for everything); a longer run picks other seeds from the environment::

    FUSER_FUZZ_SEED_START=500 FUSER_FUZZ_COUNT=5000 pytest tests/fuzz -q

One test per seed and stage (``-k execute`` runs one stage); odd seeds run on torch CPU
tensors, even ones on numpy arrays (the kernels stage always on numpy arrays); a failure
prints the seed's reproducer script (the small case's for the kernels stage). ``python -m
tests.fuzz.triage START STOP`` groups the failures of a seed range by cause.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import Any

import pytest

from tests.fuzz.fusion_gen import Case, random_case
from tests.fuzz.triage import compile_with_nvrtc, kernel_stage, small_gpu_stage, stages

STAGES = ("plan", "segment", "cuda", "execute", "kernels", "kernels-4sm")
NVRTC_EVERY = 10  # every 10th seed's kernels are also compiled by NVRTC
KERNELS_NVRTC_EVERY = 50  # and every 50th seed's small-case kernels (about 0.2 s a kernel)
DEFAULT_COUNT = 300


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise pytest.UsageError(f"{name} must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise pytest.UsageError(f"{name} must be a non-negative integer, got {value}")
    return value


SEED_START = _env_int("FUSER_FUZZ_SEED_START", 0)
COUNT = _env_int("FUSER_FUZZ_COUNT", DEFAULT_COUNT)

# The case of the seed under test: the stages of one seed run one after the other, so
# one entry is enough (cases can hold large tensors).
_last: dict[int, tuple[Case, dict[str, Callable[[], Any]]]] = {}


def _case(seed: int) -> tuple[Case, dict[str, Callable[[], Any]]]:
    if seed not in _last:
        _last.clear()
        case = random_case(seed)
        # odd seeds run on torch CPU tensors, even ones on numpy arrays
        _last[seed] = (case, dict(stages(case, use_torch=seed % 2 == 1)))
    return _last[seed]


@pytest.mark.parametrize(
    "seed,stage",
    [(s, st) for s in range(SEED_START, SEED_START + COUNT) for st in STAGES],
    ids=lambda v: str(v),
)
def test_random_fusion(seed: int, stage: str) -> None:
    if stage in ("kernels", "kernels-4sm"):
        # the seed's small case, kernels in the CPU interpreter (and NVRTC every 50th
        # seed), planned for the default target or for a GPU of 4 SMs
        make = kernel_stage if stage == "kernels" else small_gpu_stage
        case, fn = make(seed, nvrtc=seed % KERNELS_NVRTC_EVERY == 0)
        flags = f" --stages {stage}"
    else:
        case, fns = _case(seed)
        fn = fns[stage]
        flags = " --torch" if seed % 2 else ""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - every failure is reported with its reproducer
        tb = "".join(traceback.format_exception(e, limit=-4))
        pytest.fail(
            f"seed {seed}, stage {stage}: {type(e).__name__}: {e}\n\n"
            f"# reproducer (python -m tests.fuzz.triage {seed} {seed + 1} -v{flags})\n"
            f"{case.source}\n\n{tb}",
            pytrace=False,
        )


@pytest.mark.parametrize(
    "seed", [s for s in range(SEED_START, SEED_START + COUNT) if s % NVRTC_EVERY == 0]
)
def test_random_fusion_kernels_compile(seed: int) -> None:
    case, _ = _case(seed)
    compile_with_nvrtc(case)


def test_cases_are_deterministic() -> None:
    """A seed always gives the same fusion, inputs and expected outputs (CI is
    reproducible, and a printed seed reproduces the failure)."""
    a, b = random_case(12345), random_case(12345)
    assert a.source == b.source
    assert all((x == y).all() for x, y in zip(a.inputs, b.inputs, strict=True))
    assert all(x.equal(y) for x, y in zip(a.expected, b.expected, strict=True))


def test_small_cases_are_the_seeds_fusions_at_small_extents() -> None:
    """The kernels stage's cases are deterministic too, and a seed whose fusion draws
    no extent above 33 gets the same fusion (the small extents replace only those)."""
    same = 0
    for seed in range(40):
        small = random_case(seed, small=True)
        assert small.source == random_case(seed, small=True).source
        assert max(max(t.shape, default=1) for t in small.inputs[:1]) <= 33
        same += small.source == random_case(seed).source
    assert 0 < same < 40
