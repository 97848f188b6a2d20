"""``tools/gpu_check.sh``: it parses, the conformance and sanitizer stages run what issue
11 asks, the sanitizers stay out of the default stages, and a stage's summary line
carries the pytest counts and the sanitizer's error summary."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "gpu_check.sh"


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
    memcheck = text[text.index("stage memcheck") : text.index("stage racecheck")]
    assert "--tool memcheck --report-api-errors no --error-exitcode 1" in memcheck
    assert "GPU_CHECK_MEMCHECK_TIMEOUT:-300" in memcheck and "$OUT/memcheck.log" in memcheck
    racecheck = text[text.index("stage racecheck") :].split("\nif ")[0]
    assert "--tool racecheck --racecheck-report all --error-exitcode 1" in racecheck
    assert "GPU_CHECK_RACECHECK_TIMEOUT:-300" in racecheck and "$OUT/racecheck.log" in racecheck
    assert "-m gpu" in memcheck and "-m gpu" in racecheck


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
