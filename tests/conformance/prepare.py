"""Write the runnable copy of nvFuser's frontend suite (``tests/conformance/upstream/``).

The upstream files stay byte-identical (``tests/conformance/UPSTREAM`` records their git
blob hashes). CPU mode needs a few mechanical rewrites, each a named regex substitution in
``RULES``; nothing here edits a single test or changes what a test checks. ``prepare``
writes the copies as the package ``python`` (the upstream suite imports
``python.utils``) under a folder outside the repository and returns how often each rule
fired per file; ``EXPECTED_COUNTS`` pins those numbers, so an upstream change that a rule
no longer matches is noticed rather than silently run on the GPU path.

Two modes, picked by ``FUSER_CONFORMANCE_DEVICE`` (``conformance_device``): ``cpu`` (the
default, CI) applies every rule; ``cuda`` (on a GPU machine) applies only the rules whose
``devices`` include it, none today: the device strings, ``.cuda()``, the CUDA rng state
and the capability probes stay as upstream wrote them, so the tests run on torch CUDA
tensors through fuser's GPU path and read the real GPU's compute capability.

    python -m tests.conformance.prepare OUT_DIR [cpu|cuda]   # writes OUT_DIR/python/..., prints counts
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "upstream"

# The environment variable that picks the mode, and the modes.
DEVICE_ENV = "FUSER_CONFORMANCE_DEVICE"
DEVICES: tuple[str, ...] = ("cpu", "cuda")

# upstream path (relative to upstream/) -> path inside the prepared folder
FILES: dict[str, str] = {
    "__init__.py": "python/__init__.py",
    "utils/__init__.py": "python/utils/__init__.py",
    "utils/utils.py": "python/utils/utils.py",
    "test_python_frontend.py": "python/test_python_frontend.py",
}


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str
    replacement: str
    why: str
    # the modes that apply the rule: every rule of today rewrites for the CPU only
    devices: frozenset[str] = frozenset({"cpu"})


RULES: tuple[Rule, ...] = (
    Rule(
        "device-string",
        r"""(["'])cuda(?::0)?\1""",
        r"\1cpu\1",
        'the literal device "cuda" / "cuda:0" (either quote) becomes "cpu": inputs are CPU '
        "tensors, which fuser runs with its reference interpreter; \"cuda:1\" (the "
        "multi-GPU test, issue 17) is left alone",
    ),
    Rule(
        "dot-cuda-call",
        r"\.cuda\(\)",
        ".cpu()",
        "tensor.cuda() moves a tensor to the GPU; on the CPU it stays put",
    ),
    Rule(
        "cuda-rng-state",
        r"torch\.cuda\.(get|set)_rng_state\(",
        r"torch.\1_rng_state(",
        "the CUDA generator's state becomes the CPU generator's (CPU tensors draw from it)",
    ),
    Rule(
        "device-properties",
        r"torch\.cuda\.get_device_properties\(torch\.cuda\.current_device\(\)\)",
        'type("CpuTargetProperties", (), {"major": 9, "minor": 0})',
        "the is_pre_volta/ampere/hopper/blackwell probes read the compute capability of "
        "the GPU fuser's CPU path targets by default, an H100 (9.0)",
    ),
)

# (rule, upstream file) -> how often the rule fires at the recorded upstream commit (CPU mode)
EXPECTED_COUNTS: dict[str, dict[str, int]] = {
    "device-string": {"test_python_frontend.py": 231, "utils/utils.py": 1},
    "dot-cuda-call": {"test_python_frontend.py": 1},
    "cuda-rng-state": {"test_python_frontend.py": 2},
    "device-properties": {"utils/utils.py": 4},
}

# mode -> the expected counts: in CUDA mode no rule fires, the copy is upstream verbatim
EXPECTED_COUNTS_BY_DEVICE: dict[str, dict[str, dict[str, int]]] = {
    "cpu": EXPECTED_COUNTS,
    "cuda": {},
}


def conformance_device(environ: dict[str, str] | None = None) -> str:
    """The mode ``FUSER_CONFORMANCE_DEVICE`` picks: ``cpu`` when unset or empty."""
    env = os.environ if environ is None else environ
    device = env.get(DEVICE_ENV, "").strip().lower() or "cpu"
    if device not in DEVICES:
        raise ValueError(f"{DEVICE_ENV}={env.get(DEVICE_ENV)!r}: expected one of {DEVICES}")
    return device


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise ValueError(f"unknown conformance device {device!r}: expected one of {DEVICES}")


def git_blob_sha1(data: bytes) -> str:
    """``git hash-object`` of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def rewrite(text: str, device: str = "cpu") -> tuple[str, dict[str, int]]:
    """Apply the rules of ``device``'s mode to ``text``; return it and ``{rule: count}``."""
    _check_device(device)
    counts: dict[str, int] = {}
    for rule in RULES:
        if device not in rule.devices:
            continue
        text, n = re.subn(rule.pattern, rule.replacement, text)
        if n:
            counts[rule.name] = n
    return text, counts


def prepare(out_dir: Path, device: str = "cpu") -> dict[str, dict[str, int]]:
    """Write the copies for ``device``'s mode under ``out_dir``; return ``{rule: {file: count}}``."""
    _check_device(device)
    expected = EXPECTED_COUNTS_BY_DEVICE[device]
    report: dict[str, dict[str, int]] = {}
    for src, dst in FILES.items():
        text, counts = rewrite((UPSTREAM / src).read_text(encoding="utf-8"), device)
        for rule, n in counts.items():
            report.setdefault(rule, {})[src] = n
        target = out_dir / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (out_dir / "REWRITES.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    if report != expected:
        raise RuntimeError(
            f"{device} rewrites of the upstream suite changed: expected {expected}, got {report}"
        )
    return report


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] not in DEVICES):
        print("usage: python -m tests.conformance.prepare OUT_DIR [cpu|cuda]", file=sys.stderr)
        return 2
    report = prepare(Path(argv[0]), argv[1] if len(argv) == 2 else "cpu")
    for rule in RULES:
        for src, n in sorted(report.get(rule.name, {}).items()):
            print(f"{rule.name}: {src}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
