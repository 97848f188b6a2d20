"""Executable documentation: the blocks of the docs that claim to be real are checked.

A fenced block is checked when an HTML comment (invisible once rendered) stands on the
line just before it:

- ``<!-- check: file PATH -->``: the block is the content of ``PATH`` (after its leading
  ``//`` comment lines);
- ``<!-- check: write PATH -->``: the block is written to ``PATH`` (in the scratch copy
  of the repository the checks run in), for tutorials that create files;
- ``<!-- check: run COMMAND -->``: the block is what ``COMMAND`` prints (stdout, then
  stderr) in the repository root;
- ``<!-- check: console -->``: a transcript; every ``$ COMMAND`` line runs in the
  repository root and the lines after it, up to the next ``$``, are what it prints
  (``$ echo $?`` prints the previous command's exit status);
- ``<!-- check: python -->``: the block runs as a Python script and must exit 0;
- ``<!-- check: parse -->``: the block is a whole module that ``fuser-opt`` parses and
  verifies (exit status 0).

Expected text may be trimmed: a line that is only ``...`` stands for any number of
lines, and ``...`` inside a line for any text on that line. Trailing blanks are
ignored. Every ``mlir`` or ``console`` block of a checked page must carry a marker,
``<!-- check: skip REASON -->`` included, so a new example cannot be added unchecked.

All checks of a page run, in order, in one scratch copy of the repository (git's
tracked and untracked-but-not-ignored files), so ``write`` markers see each other and
never touch the working tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- check: (\w+)(?: (.*?))? -->$")
FENCE = re.compile(r"^```(\w*)\s*$")
TIMEOUT_S = 120


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    kind: str | None  # the marker's kind, None when the block has no marker
    arg: str


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` with the check marker that precedes each."""
    lines = page.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        marker = MARKER.match(lines[start - 1].strip()) if start > 0 else None
        out.append(
            Block(
                page,
                start + 1,
                m.group(1),
                "\n".join(lines[start + 1 : j]) + "\n",
                marker.group(1) if marker else None,
                (marker.group(2) or "") if marker else "",
            )
        )
        i = j + 1
    return out


def _line_pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(p) for p in expected.split("...")) + r"\Z")


def matches(expected: str, actual: str) -> str | None:
    """None when ``actual`` is ``expected`` up to ``...`` trimming; else the first
    expected line that was not found, with context."""
    exp = [ln.rstrip() for ln in expected.rstrip("\n").splitlines()]
    act = [ln.rstrip() for ln in actual.rstrip("\n").splitlines()]
    pos = 0
    gap = False  # a "..." line allows skipping actual lines
    for k, e in enumerate(exp):
        if e.strip() == "...":
            gap = True
            continue
        pat = _line_pattern(e)
        if gap:
            while pos < len(act) and not pat.match(act[pos]):
                pos += 1
        if pos >= len(act) or not pat.match(act[pos]):
            got = act[pos] if pos < len(act) else "<end of output>"
            return f"expected line {k + 1}:\n  {e}\nbut got:\n  {got}"
        pos += 1
        gap = False
    if pos < len(act) and not gap:
        return f"unexpected extra output from line {pos + 1}:\n  {act[pos]}"
    return None


def _without_header(text: str) -> str:
    """``text`` without its leading ``//`` comment and blank lines (an example file's
    header says where it is used; the docs show the IR)."""
    lines = text.splitlines(keepends=True)
    k = 0
    while k < len(lines) and (not lines[k].strip() or lines[k].lstrip().startswith("//")):
        k += 1
    return "".join(lines[k:])


def scratch_copy(dest: Path) -> Path:
    """A copy of the repository's files (tracked and untracked-not-ignored) in ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def environment(repo: Path) -> dict[str, str]:
    """The environment commands run in: the scratch copy first on ``sys.path`` and
    this interpreter's scripts (``fuser-opt``, ``lit``, ...) first on ``PATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("FUSER_TRACEBACK", None)
    return env


def run_shell(command: str, repo: Path) -> tuple[str, int]:
    p = subprocess.run(
        ["bash", "-c", command],
        cwd=repo,
        env=environment(repo),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return p.stdout + p.stderr, p.returncode


def check_console(text: str, repo: Path) -> str | None:
    """Runs a ``$ command`` transcript; None when every output matches."""
    steps: list[tuple[str, list[str]]] = []
    for ln in text.splitlines():
        if ln.startswith("$ "):
            steps.append((ln[2:], []))
        elif steps:
            steps[-1][1].append(ln)
        elif ln.strip():
            return f"console block starts with output, not a '$ ' command: {ln!r}"
    status = 0
    for command, expected in steps:
        if command.strip() == "echo $?":
            out = f"{status}\n"
        else:
            out, status = run_shell(command, repo)
        err = matches("\n".join(expected), out)
        if err:
            return f"$ {command}\n{err}\n--- full output ---\n{out}"
    return None


def check_block(b: Block, repo: Path) -> str | None:
    """None when block ``b`` holds; otherwise what is wrong."""
    if b.kind in ("skip", None):
        return None
    if b.kind == "file":
        path = repo / b.arg
        if not path.is_file():
            return f"{b.arg} does not exist"
        return matches(b.text, _without_header(path.read_text()))
    if b.kind == "write":
        path = repo / b.arg
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(b.text)
        return None
    if b.kind == "run":
        out, status = run_shell(b.arg, repo)
        err = matches(b.text, out)
        return None if err is None else f"{err}\n--- full output (exit {status}) ---\n{out}"
    if b.kind == "console":
        return check_console(b.text, repo)
    if b.kind == "parse":
        path = repo / ".doc_block.mlir"
        path.write_text(b.text)
        out, status = run_shell(f"fuser-opt {path.name}", repo)
        return None if status == 0 else f"fuser-opt rejects the block (exit {status}):\n{out}"
    if b.kind == "python":
        script = repo / ".doc_block.py"
        script.write_text(b.text)
        out, status = run_shell(f"{sys.executable} {script.name}", repo)
        return None if status == 0 else f"the block exits {status}:\n{out}"
    return f"unknown check kind {b.kind!r}"


def unmarked(page: Path) -> list[Block]:
    """The ``mlir`` and ``console`` blocks of ``page`` without a check marker."""
    return [b for b in blocks(page) if b.kind is None and b.lang in ("mlir", "console")]
