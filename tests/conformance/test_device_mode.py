"""The GPU mode of the conformance suite (``FUSER_CONFORMANCE_DEVICE=cuda``), checked on
the CPU: upstream is copied verbatim (zero device rewrites, the capability probes stay
real), the CPU mode is unchanged, and the CPU-measured xfails are strict only on the CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance.known import CPU_SKIPS, CPU_XFAILS, SKIPS, XFAILS
from tests.conformance.marking import markers_for
from tests.conformance.prepare import (
    DEVICE_ENV,
    EXPECTED_COUNTS,
    FILES,
    UPSTREAM,
    conformance_device,
    prepare,
    rewrite,
)

REPO = Path(__file__).resolve().parents[2]


def test_device_from_environment() -> None:
    assert conformance_device({}) == "cpu"
    assert conformance_device({DEVICE_ENV: ""}) == "cpu"
    assert conformance_device({DEVICE_ENV: "cpu"}) == "cpu"
    assert conformance_device({DEVICE_ENV: "cuda"}) == "cuda"
    assert conformance_device({DEVICE_ENV: " CUDA "}) == "cuda"
    with pytest.raises(ValueError, match=DEVICE_ENV):
        conformance_device({DEVICE_ENV: "cuda:1"})


def test_cuda_mode_copies_upstream_verbatim(tmp_path: Path) -> None:
    assert prepare(tmp_path, "cuda") == {}
    for src, dst in FILES.items():
        assert (tmp_path / dst).read_bytes() == (UPSTREAM / src).read_bytes(), src
    tests = (tmp_path / FILES["test_python_frontend.py"]).read_text()
    utils = (tmp_path / FILES["utils/utils.py"]).read_text()
    assert 'device="cuda"' in tests and ".cuda()" in tests and "torch.cuda.get_rng_state(" in tests
    assert "torch.cuda.get_device_properties(torch.cuda.current_device())" in utils
    assert "CpuTargetProperties" not in utils


def test_cpu_mode_is_unchanged(tmp_path: Path) -> None:
    assert prepare(tmp_path) == EXPECTED_COUNTS
    assert prepare(tmp_path / "explicit", "cpu") == EXPECTED_COUNTS
    text, counts = rewrite('x.cuda(); t = torch.ones(2, device="cuda:0")')
    assert text == 'x.cpu(); t = torch.ones(2, device="cpu")'
    assert counts == {"device-string": 1, "dot-cuda-call": 1}
    assert rewrite('x.cuda(); t = torch.ones(2, device="cuda:0")', "cuda") == (
        'x.cuda(); t = torch.ones(2, device="cuda:0")',
        {},
    )
    assert "CpuTargetProperties" in (tmp_path / FILES["utils/utils.py"]).read_text()


def test_unknown_device_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rocm"):
        prepare(tmp_path, "rocm")
    with pytest.raises(ValueError, match="rocm"):
        rewrite("", "rocm")


def test_xfails_are_strict_only_on_the_cpu() -> None:
    name = sorted(XFAILS)[0]
    (cpu,) = markers_for(name, "cpu")
    (cuda,) = markers_for(name, "cuda")
    assert cpu.name == cuda.name == "xfail"
    assert cpu.kwargs["strict"] is True
    assert cuda.kwargs["strict"] is False
    assert XFAILS[name] in cuda.kwargs["reason"]


def test_skips_apply_in_both_modes() -> None:
    name = sorted(SKIPS)[0]
    for device in ("cpu", "cuda"):
        (mark,) = markers_for(name, device)
        assert mark.name == "skip" and mark.kwargs["reason"] == SKIPS[name]
    assert markers_for("test_not_a_listed_test", "cuda") == []


def test_cpu_skips_apply_only_on_the_cpu() -> None:
    assert CPU_SKIPS and not set(CPU_SKIPS) & (set(SKIPS) | set(XFAILS))
    for name, reason in CPU_SKIPS.items():
        (mark,) = markers_for(name, "cpu")
        assert mark.name == "skip" and mark.kwargs["reason"] == reason
        assert markers_for(name, "cuda") == []


def _torch_has_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.skipif(_torch_has_cuda(), reason="checks the message of a machine without a GPU")
def test_cuda_mode_without_a_gpu_fails_loudly() -> None:
    env = {**os.environ, DEVICE_ENV: "cuda"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "tests/conformance/test_conformance.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode != 0
    assert f"{DEVICE_ENV}=cuda needs a CUDA device" in proc.stdout + proc.stderr


def test_cpu_xfails_are_strict_on_the_cpu_and_unmarked_on_the_gpu() -> None:
    assert CPU_XFAILS and not set(CPU_XFAILS) & (set(XFAILS) | set(SKIPS) | set(CPU_SKIPS))
    for name in CPU_XFAILS:
        (cpu,) = markers_for(name, "cpu")
        assert cpu.name == "xfail" and cpu.kwargs["strict"] is True
        assert cpu.kwargs["reason"] == CPU_XFAILS[name]
        assert markers_for(name, "cuda") == []
