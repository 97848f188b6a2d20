"""The benchmarks' JSON lines: rows from a child process, rows appended to a file."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def child_rows(cmd: Sequence[str], env: Mapping[str, str]) -> tuple[list[dict[str, Any]], int]:
    """Run ``cmd``; (the JSON rows it printed, its exit status). Its stderr's tail is
    printed when it fails."""
    out = subprocess.run(list(cmd), env=dict(env), capture_output=True, text=True, check=False)
    if out.returncode:
        print(out.stderr[-3000:], file=sys.stderr)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")], out.returncode


def append_rows(path: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append ``rows`` to ``path`` (nothing when ``path`` is empty)."""
    if not path:
        return
    with open(path, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
