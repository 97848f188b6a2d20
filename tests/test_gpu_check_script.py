"""``tools/gpu_check.sh``: it parses, the conformance and sanitizer stages run what issue
11 asks, the sanitizers stay out of the default stages, and a stage's summary line
carries the pytest counts and the sanitizer's error summary."""

from __future__ import annotations

import re
import subprocess
import sys
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
    assert "fuzz-on-gpu" in default.split()
    fuzz = text[text.index("stage fuzz-on-gpu") :].split("\n\n")[0]
    assert '"$OUT/fuzz_gpu.log"' in fuzz and "-m tests.fuzz.triage ${GPU_CHECK_FUZZ_SEEDS:-0 2000} --cuda" in fuzz
    assert "--stages execute,segment,resize" in fuzz
    assert "model-families" in default.split()
    families = text[text.index("stage model-families") :].split("\n")[:2]
    assert '"${GPU_CHECK_FAMILIES_TIMEOUT:-300}" "$OUT/families.log"' in families[0]
    assert families[1].strip() == '"$PY" benchmarks/model_families.py --device cuda --json "$OUT/families.jsonl"'
    assert "adam" in default.split()
    adam = text[text.index("stage adam") :].split("\n")[:2]
    assert '"${GPU_CHECK_ADAM_TIMEOUT:-120}" "$OUT/adam.log"' in adam[0]
    assert adam[1].strip() == '"$PY" benchmarks/adam_step.py --clip 1.0 --json "$OUT/adam.json"'
    sanitize = SANITIZE.read_text()
    assert "--tool memcheck --report-api-errors no)" in sanitize
    assert "--tool racecheck --racecheck-report all)" in sanitize
    assert "limit=(--print-limit 0)" in sanitize and "tools/sanitizer_log.py" in sanitize
    assert (
        '-k "$DESELECT" --collect-only -o addopts=""' in sanitize
        and "collect -m gpu tests" in sanitize
    )
    assert 'DESELECT="not overhead and not memory_is_freed and not uniform_range and not overlap_on_the_timeline and not test_gpu_cuda_graphs"' in sanitize


FUSER_REPORT = """\
========= Invalid __global__ read of size 4 bytes
=========     at fuser_pointwise+0x70
=========     by thread (0,0,0) in block (0,0,0)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x1234] in cydriver.cpython-312.so
=========
"""
TORCH_REPORT = """\
========= Error: Potential RAW hazard detected at __shared__ 0x1210 in block (2,4,0) :
=========     Write Thread (96,1,0) at void at::native::reduce_kernel<(int)256>(T3)+0xe800
=========     Read Thread (96,0,0) at void at::native::reduce_kernel<(int)256>(T3)+0xe740
=========     Current Value : 0
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame:  [0x1376c] in libcudart.so.13
=========         Host Frame: cudaLaunchKernel [0x745b7] in libcudart.so.13
=========         Host Frame: at::native::gpu_reduce_kernel [0x2693377] in libtorch_cuda.so
=========
"""


def _fake_env(tmp_path: Path, *, fail_id: str = "", report: str = "") -> dict[str, str]:
    """A fake python (collects 6 GPU test ids for ``-m gpu``, 2 more for the frontend
    and 3 conformance ids; a run prints pytest's counts line and fails when it is given
    ``fail_id``; ``tools/sanitizer_log.py`` runs for real) and a fake compute-sanitizer
    (logs its tool and flags, runs the rest, prints ``report`` and an error summary)."""
    gpu = "\n".join(f"tests/gpu/test_x.py::test_{i}" for i in range(6))
    frontend = "tests/frontend/test_y.py::test_a\ntests/gpu/test_x.py::test_0"
    conformance = "\n".join(
        f"tests/conformance/test_conformance.py::TestNvFuserFrontend::test_{i}" for i in range(3)
    )
    py = tmp_path / "python"
    py.write_text(
        "#!/bin/bash\n"
        'case "$1" in tools/sanitizer_log.py) exec "$REAL_PY" "$@";; esac\n'
        'case "$*" in *--collect-only*tests/conformance*) printf "%s\\n" "$CONF";;'
        ' *--collect-only*tests/frontend*) printf "%s\\n" "$FRONTEND";;'
        ' *--collect-only*) printf "%s\\n" "$GPU";; esac\n'
        'case "$*" in *--collect-only*) echo "n tests collected"; exit 0;; esac\n'
        'echo "ran: $*" >&2\n'
        'n=0; for a in "$@"; do case $a in *::*) n=$((n+1));; esac; done\n'
        'case " $* " in *" $FAIL_ID "*) echo "1 failed, $((n-1)) passed in 0.1s"; exit 1;; esac\n'
        'echo "$n passed in 0.1s"\n'
    )
    san = tmp_path / "compute-sanitizer"
    san.write_text(
        "#!/bin/bash\n"
        'case "$1" in --help) echo "  --print-limit arg   Maximum number of errors"; exit 0;; esac\n'
        'echo "tool: $2 flags: $*" >&2\n'
        'while [ "$1" != "$PYTHON" ]; do shift; done\n'
        '"$@"; rc=$?\n'
        'printf "%s" "$REPORT"\n'
        'echo "========= ERROR SUMMARY: $N_ERRORS errors"; exit $rc\n'
    )
    for f in (py, san):
        f.chmod(0o755)
    return {
        "PATH": "/usr/bin:/bin",
        "PYTHON": str(py),
        "REAL_PY": sys.executable,
        "COMPUTE_SANITIZER": str(san),
        "SANITIZE_SHARDS": "3",
        "SANITIZE_CONFORMANCE_SHARDS": "2",
        "GPU": gpu,
        "FRONTEND": frontend,
        "CONF": conformance,
        "FAIL_ID": fail_id or "none",
        "REPORT": report,
        "N_ERRORS": str(report.count("=========     Saved host")),
    }


def _run(tmp_path: Path, env: dict[str, str], *tools: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SANITIZE), str(tmp_path / "out"), *tools],
        capture_output=True,
        text=True,
        env=env,
    )


def test_sanitize_runs_every_gpu_test_once_per_tool(tmp_path: Path) -> None:
    env = _fake_env(tmp_path)
    run = _run(tmp_path, env, "memcheck", "racecheck")
    assert run.returncode == 0, run.stdout + run.stderr
    out = tmp_path / "out"
    expected = sorted(set((env["GPU"] + "\n" + env["FRONTEND"] + "\n" + env["CONF"]).split("\n")))
    for tool in ("memcheck", "racecheck"):
        ran = []
        for shard in ("0", "1", "2", "c0", "c1"):
            log = (out / f"{tool}.{shard}.log").read_text()
            assert f"tool: {tool}" in log and "--print-limit 0" in log
            assert "ERROR SUMMARY: 0 errors" in log
            ids = [w for line in log.splitlines() if line.startswith("ran:") for w in line.split()]
            ids = [w for w in ids if "::" in w]
            # the conformance suite (nvFuser's device model) never shares a process
            assert len({w.startswith("tests/conformance/") for w in ids}) == 1
            assert all(w.startswith("tests/conformance/") for w in ids) == shard.startswith("c")
            ran += ids
        assert sorted(ran) == expected
    summary = (out / "sanitize.txt").read_text().splitlines()
    assert summary[0] == "10 tests in 5 shards; tools: memcheck racecheck; --print-limit 0"
    assert len(summary) == 11 and all("rc=0" in line for line in summary[1:])
    assert all("fuser kernels: 0 errors" in line for line in summary[1:])


def test_sanitize_fails_when_one_shard_fails(tmp_path: Path) -> None:
    env = _fake_env(tmp_path, fail_id="tests/gpu/test_x.py::test_4")
    run = _run(tmp_path, env, "memcheck")
    assert run.returncode == 1
    summary = (tmp_path / "out" / "sanitize.txt").read_text()
    assert "memcheck.2: rc=1 1 failed, 1 passed" in summary


def test_sanitize_fails_on_a_report_in_a_fuser_kernel(tmp_path: Path) -> None:
    run = _run(tmp_path, _fake_env(tmp_path, report=FUSER_REPORT), "memcheck")
    assert run.returncode == 1
    summary = (tmp_path / "out" / "sanitize.txt").read_text()
    assert "memcheck.0: rc=1 " in summary
    assert "fuser kernels: 1 errors (fuser_pointwise x1)" in summary


def test_sanitize_passes_over_reports_in_torchs_kernels(tmp_path: Path) -> None:
    run = _run(tmp_path, _fake_env(tmp_path, report=TORCH_REPORT), "racecheck")
    assert run.returncode == 0, run.stdout
    summary = (tmp_path / "out" / "sanitize.txt").read_text()
    assert "racecheck.0: rc=0 " in summary
    assert "fuser kernels: 0 errors; other libraries' kernels: 1 errors" in summary
    assert "void at::native::reduce_kernel<(int)256>(T3) x1" in summary


def test_sanitizer_log_attribution() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from sanitizer_log import attribute
    finally:
        sys.path.remove(str(SCRIPT.parent))
    # pytest's progress dots may precede the sanitizer's first line
    text = "..F.." + TORCH_REPORT + FUSER_REPORT + "========= ERROR SUMMARY: 2 errors\n"
    result = attribute(text)
    assert dict(result.fuser) == {"fuser_pointwise": 1}
    assert dict(result.other) == {"void at::native::reduce_kernel<(int)256>(T3)": 1}
    assert not result.ok
    # a summary that counts more errors than the log shows cannot be attributed
    hidden = attribute(
        TORCH_REPORT + "========= RACECHECK SUMMARY: 1 hazards displayed (7 errors, 0 warnings)\n"
    )
    assert not hidden.ok and "6 counted but not shown" in hidden.line()
    assert attribute(TORCH_REPORT + "========= ERROR SUMMARY: 1 errors\n").ok


def _without_backtrace(report: str) -> str:
    return "".join(line for line in report.splitlines(keepends=True) if "backtrace" not in line and "Host Frame" not in line)


def test_sanitizer_log_attributes_a_report_without_backtrace_by_its_kernel() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from sanitizer_log import attribute
    finally:
        sys.path.remove(str(SCRIPT.parent))
    torch_bare, fuser_bare = _without_backtrace(TORCH_REPORT), _without_backtrace(FUSER_REPORT)
    assert "Host Frame" not in torch_bare + fuser_bare and "reduce_kernel" in torch_bare
    # a torch kernel's report without a backtrace beside one with: torch's
    both = attribute(TORCH_REPORT + torch_bare + "========= ERROR SUMMARY: 2 errors\n")
    assert both.ok and dict(both.other) == {"void at::native::reduce_kernel<(int)256>(T3)": 2}
    # a kernel seen only without a backtrace, or also launched by fuser: fuser's
    alone = attribute(torch_bare + "========= ERROR SUMMARY: 1 errors\n")
    assert not alone.ok and dict(alone.fuser) == {"void at::native::reduce_kernel<(int)256>(T3)": 1}
    mixed = attribute(FUSER_REPORT + fuser_bare + TORCH_REPORT + "========= ERROR SUMMARY: 3 errors\n")
    assert dict(mixed.fuser) == {"fuser_pointwise": 2} and not mixed.ok
