"""``tests.fuzz.triage``'s runner: seeds split over worker processes find what one
process finds, a failure is grouped with its seed, and the exit status says so."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fuzz import triage
from tests.fuzz.fusion_gen import random_case

ROOT = Path(__file__).resolve().parents[2]


def test_workers_find_what_one_process_finds() -> None:
    seeds = range(3, 9)
    only = frozenset({"execute", "resize"})
    assert triage.run(seeds, only=only) == {}
    assert triage.run_in_workers(seeds, 2, False, only, None) == {}


def test_a_failing_stage_is_grouped_with_its_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(case, use_torch, device=None):  # noqa: ANN001, ANN202 - the stages' signature
        def fail() -> None:
            raise AssertionError(f"output #0 differs from torch (max |err| {case.seed}.5)")

        return [("execute", fail)]

    monkeypatch.setattr(triage, "stages", broken)
    got = triage.run([4, 7], only=frozenset({"execute"}))
    ((key, seeds),) = got.items()
    assert seeds == [4, 7]
    assert re.fullmatch(r"execute AssertionError test_triage\.py:\d+: output #N differs from torch \(max \|err\| N\.N\)", key)


def test_the_resize_stage_runs_the_small_case_after_the_seed() -> None:
    case = random_case(5)
    (resize,) = [fn for name, fn in triage.stages(case, use_torch=False) if name == "resize"]
    resize()  # the small case through the same definition, against torch


def test_exit_status_is_0_when_every_seed_passes() -> None:
    ok = subprocess.run([sys.executable, "-m", "tests.fuzz.triage", "0", "2", "--stages", "plan"],
                        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and "2 fusions, 0 failures" in ok.stdout


def test_exit_status_is_1_when_a_seed_fails(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(triage, "run", lambda *a: {"execute AssertionError x.py:1: wrong": [3]})
    monkeypatch.setattr(sys, "argv", ["triage", "3", "4"])
    with pytest.raises(SystemExit) as exit_:
        triage.main()
    assert exit_.value.code == 1
    assert "1 fusions, 1 failures" in capsys.readouterr().out
