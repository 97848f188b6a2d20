"""``tools/gpu_check.sh``: it parses, the conformance and sanitizer stages run what issue
11 asks, the sanitizers stay out of the default stages, and a stage's summary line
carries the pytest counts and the sanitizer's error summary."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "gpu_check.sh"
SANITIZE = SCRIPT.parent / "sanitize.sh"


def _text() -> str:
    return SCRIPT.read_text()


def test_script_parses() -> None:
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)


def test_stages_and_defaults() -> None:
    text = _text()
    (default,) = re.findall(r'^DEFAULT_STAGES="([^"]*)"', text, re.M)
    assert "conformance-on-gpu" in default.split()
    assert not {"memcheck", "racecheck"} & set(default.split())
    conformance = text[text.index("stage conformance-on-gpu") :].split("\n\n")[0]
    assert "GPU_CHECK_CONFORMANCE_TIMEOUT:-300" in conformance
    assert "$OUT/conformance_gpu.log" in conformance
    assert "FUSER_CONFORMANCE_DEVICE=cuda" in conformance and "-rsxX" in conformance
    for name, tools in (
        ("sanitizers", "memcheck racecheck"),
        ("memcheck", "memcheck"),
        ("racecheck", "racecheck"),
    ):
        block = text[text.index(f"stage {name} ") :].split("\n")[:2]
        assert f"GPU_CHECK_{name.upper()}_TIMEOUT:-560" in block[0]
        assert f"$OUT/{name}.log" in block[0]
        assert block[1].strip() == f'bash tools/sanitize.sh "$OUT/sanitize" {tools}'
    sanitize = SANITIZE.read_text()
    assert "--tool memcheck --report-api-errors no)" in sanitize
    assert "--tool racecheck --racecheck-report all)" in sanitize
    assert "--error-exitcode 1" in sanitize
    assert (
        '-k "$DESELECT" --collect-only -o addopts=""' in sanitize
        and "collect -m gpu tests" in sanitize
    )
    assert 'DESELECT="not overhead and not memory_is_freed"' in sanitize


def _fake_env(tmp_path: Path, *, fail_id: str = "") -> dict[str, str]:
    """A fake python (collects 7 GPU test ids; a run prints pytest's counts line and
    fails when it is given ``fail_id``) and a fake compute-sanitizer (logs its tool,
    runs the rest, prints an error summary)."""
    ids = "\n".join(f"tests/gpu/test_x.py::test_{i}" for i in range(7))
    py = tmp_path / "python"
    py.write_text(
        "#!/bin/bash\n"
        'case "$*" in *--collect-only*) printf "%s\\n" "$IDS"; echo "7 tests collected";'
        " exit 0;; esac\n"
        'echo "ran: $*" >&2\n'
        'n=0; for a in "$@"; do case $a in *::*) n=$((n+1));; esac; done\n'
        'case " $* " in *" $FAIL_ID "*) echo "1 failed, $((n-1)) passed in 0.1s"; exit 1;; esac\n'
        'echo "$n passed in 0.1s"\n'
    )
    san = tmp_path / "compute-sanitizer"
    san.write_text(
        "#!/bin/bash\n"
        'echo "tool: $2" >&2\n'
        'while [ "$1" != --error-exitcode ]; do shift; done; shift 2\n'
        '"$@"; rc=$?\n'
        'echo "========= ERROR SUMMARY: 0 errors"; exit $rc\n'
    )
    for f in (py, san):
        f.chmod(0o755)
    return {
        "PATH": "/usr/bin:/bin",
        "PYTHON": str(py),
        "COMPUTE_SANITIZER": str(san),
        "SANITIZE_SHARDS": "3",
        "IDS": ids,
        "FAIL_ID": fail_id or "none",
    }


def test_sanitize_runs_every_gpu_test_once_per_tool(tmp_path: Path) -> None:
    env = _fake_env(tmp_path)
    run = subprocess.run(
        ["bash", str(SANITIZE), str(tmp_path / "out"), "memcheck", "racecheck"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "out"
    for tool in ("memcheck", "racecheck"):
        ran = []
        for shard in range(3):
            log = (out / f"{tool}.{shard}.log").read_text()
            assert f"tool: {tool}" in log and "ERROR SUMMARY: 0 errors" in log
            ran += [w for line in log.splitlines() if line.startswith("ran:") for w in line.split()]
        ran_ids = sorted(w for w in ran if "::" in w)
        assert ran_ids == sorted(env["IDS"].split("\n"))
    summary = (out / "sanitize.txt").read_text().splitlines()
    assert summary[0] == "7 tests in 3 shards; tools: memcheck racecheck"
    assert len(summary) == 7 and all("rc=0" in line for line in summary[1:])


def test_sanitize_fails_when_one_shard_fails(tmp_path: Path) -> None:
    env = _fake_env(tmp_path, fail_id="tests/gpu/test_x.py::test_4")
    run = subprocess.run(
        ["bash", str(SANITIZE), str(tmp_path / "out"), "memcheck"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 1
    summary = (tmp_path / "out" / "sanitize.txt").read_text()
    assert "memcheck.1: rc=1 1 failed, 1 passed" in summary


def test_summary_line_has_counts_and_sanitizer_summary(tmp_path: Path) -> None:
    text = _text()
    stage_fn = text[text.index("stage() {") :]
    stage_fn = stage_fn[: stage_fn.index("\n}\n") + 3]
    fake = tmp_path / "fake"
    fake.write_text(
        "#!/bin/sh\n"
        'echo "5 passed, 2 xfailed, 1 xpassed in 4.20s"\n'
        'echo "========= ERROR SUMMARY: 3 errors"\n'
        "exit 1\n"
    )
    fake.chmod(0o755)
    summary = tmp_path / "summary.txt"
    driver = (
        f'STAGES="memcheck"; summary={summary}; status=0\n{stage_fn}'
        f"stage memcheck 20 {tmp_path}/m.log {fake}\n"
        f"stage racecheck 20 {tmp_path}/r.log {fake}\n"
        'echo "status=$status"\n'
    )
    out = subprocess.run(["bash", "-c", driver], capture_output=True, text=True, check=True).stdout
    assert "status=1" in out
    assert "racecheck: skipped" in out
    (line,) = summary.read_text().splitlines()
    assert line.startswith("memcheck: rc=1 ")
    assert "5 passed, 2 xfailed, 1 xpassed in 4.20s" in line
    assert "ERROR SUMMARY: 3 errors" in line
