"""The README's GPU snippet runs as written on a machine with an NVIDIA GPU (its CPU
twin is checked in CI by tests/test_docs.py)."""

from __future__ import annotations

import contextlib
import io

import pytest

from tests.docs_check import ROOT, blocks

pytestmark = pytest.mark.gpu


def test_readme_gpu_snippet_runs() -> None:
    pytest.importorskip("torch")
    gpu = [b for b in blocks(ROOT / "README.md") if b.lang == "python" and "device=\"cuda\"" in b.text]
    assert len(gpu) == 1, "README.md should hold exactly one GPU snippet"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(gpu[0].text, "README.md:gpu-snippet", "exec"), {})  # noqa: S102
    printed = out.getvalue()
    assert printed.startswith("inner_persistent\n")
    assert "__global__" in printed  # fd.last_cuda_code() returned the launched kernel
