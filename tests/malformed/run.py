"""Run malformed IR through ``fuser-opt`` (parse and verify; the full pipeline) and
``fuser-run``, in-process, and report every traceback, internal error and slow run.

::

    python -m tests.malformed.run --count 20000          # a long run
    python -m tests.malformed.run --start 517 --count 1 -v   # one mutant: its text and output

A run is good when the tool exits 0, or exits 1 with a ``fuser-...: error:`` diagnostic
that is not an "internal error", within ``LIMIT_S``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gc
import io
import math
import re
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from fuser.tools.fuser_opt import main as opt_main
from fuser.tools.fuser_run import main as run_main
from tests.malformed.mutate import Mutant, mutation

LIMIT_S = 1.0
"""No input may take longer than this to be accepted or rejected: CPU seconds of this
process, so that other work on a shared machine does not make a run look slow."""

FUSIONS_PER_LIMIT = 4
"""A module of more fusions gets ``LIMIT_S`` per this many: compiling eight fusions to
CUDA is twice the honest work of four, not a pathological input."""

OPS_PER_LIMIT = 40
"""... and ``LIMIT_S`` per this many ops: the largest seed (a 110-op GPT-2 fusion dump,
28 segments) is compiled to CUDA in 1.1-1.8 CPU seconds on a slow machine, linear
work for its size; the lit inputs have at most 44 ops."""
OP_NAME = re.compile(r"(?<![!\w.])fuser\.\w+")
"""An op's name (``fuser.add``), not a type's (``!fuser.tensor``)."""

HANG_S = 10.0
"""A run still going after this long is stopped and reported as a hang."""

MAX_RUN_ELEMENTS = 1 << 20
"""fuser-run computes on random data: inputs with larger tensors only go through fuser-opt."""

PIPELINE = ["--strip-bookend-views", "--segment", "-p",
            "select-schedulers,schedule-fusions,lower-to-kernels", "-t", "cuda"]

TENSOR = re.compile(r"tensor<([^>]*)>")


class _Hang(Exception):
    pass


@dataclass(frozen=True)
class Outcome:
    tool: str
    code: int | None
    seconds: float
    out: str
    err: str
    problem: str | None
    """None when the run was good, else a one-line description."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


@contextlib.contextmanager
def _hang_guard() -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def time_limit(text: str) -> float:
    """CPU seconds an input may take: ``LIMIT_S``, more for a module of many fusions
    or many ops."""
    return LIMIT_S * max(
        1.0, text.count("fuser.fusion @") / FUSIONS_PER_LIMIT, len(OP_NAME.findall(text)) / OPS_PER_LIMIT
    )


def call(tool: str, main: Callable[[Sequence[str]], None], argv: list[str],
         limit_s: float = LIMIT_S) -> Outcome:
    """Run ``main(argv)`` capturing its output, exit status and time (a run over
    ``limit_s`` CPU seconds is a problem)."""
    out, err = io.StringIO(), io.StringIO()
    code: int | None = 0
    problem: str | None = None
    # The cyclic collector stays off while one input runs: a collection of the heap
    # that earlier tests in the same process built is not this input's time.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    start = time.process_time()
    try:
        with _hang_guard(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) or e.code is None else 1
    except _Hang:
        problem = f"hang: still running after {HANG_S:.0f} s"
    except BaseException as e:  # noqa: BLE001 - every escape is the finding
        if isinstance(e, KeyboardInterrupt):
            raise
        frame = traceback.extract_tb(e.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        problem = f"traceback: {type(e).__name__} at {where}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    seconds = time.process_time() - start
    if gc_was_enabled:
        gc.enable()
    text = err.getvalue()
    if problem is None:
        if code not in (0, None, 1):
            problem = f"exit status {code}"
        elif "internal error" in text:
            problem = "internal error: " + _first_line(text, "internal error")
        elif "Traceback" in text or "Traceback" in out.getvalue():
            problem = "traceback printed"
        elif code == 1 and "error" not in text:
            problem = "exit 1 without a diagnostic"
        elif seconds > limit_s:
            problem = f"slow: {seconds:.2f} s"
    return Outcome(tool, code, seconds, out.getvalue(), text, problem)


def _first_line(text: str, needle: str) -> str:
    return next((ln for ln in text.splitlines() if needle in ln), "")[:200]


def _largest_tensor(text: str) -> float:
    largest = 0.0
    for m in TENSOR.finditer(text):
        dims = m.group(1).split(",")[0].split("x")[:-1]
        try:
            largest = max(largest, math.prod(float(d) for d in dims if d != "?"))
        except ValueError:
            continue
    return largest


def check(mutant: Mutant, workdir: Path) -> list[Outcome]:
    """All runs of one mutant."""
    path = workdir / f"m{mutant.index}.mlir"
    path.write_text(mutant.text)
    limit = time_limit(mutant.text)
    outcomes = [call("fuser-opt", opt_main, [str(path)], limit)]
    if outcomes[0].code in (0, None):
        outcomes.append(call("fuser-opt pipeline", opt_main, [str(path), *PIPELINE], limit))
    if _largest_tensor(mutant.text) <= MAX_RUN_ELEMENTS:
        outcomes.append(call("fuser-run", run_main, [str(path)], limit))
    path.unlink()
    return outcomes


@dataclass
class Report:
    runs: int = 0
    accepted: int = 0
    slowest: float = 0.0
    problems: list[tuple[Mutant, Outcome]] | None = None

    def summary(self) -> str:
        kinds = collections.Counter(
            re.sub(r"\d+\.\d+ s", "N s", o.problem or "") for _, o in self.problems or []
        )
        lines = [f"{self.runs} runs, {self.accepted} accepted, slowest {self.slowest:.2f} s, "
                 f"{len(self.problems or [])} problems"]
        lines += [f"  {n:5d}  {k}" for k, n in kinds.most_common()]
        return "\n".join(lines)


def run_corpus(start: int, count: int) -> Report:
    report = Report(problems=[])
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(start, start + count):
            mutant = mutation(index)
            for o in check(mutant, Path(tmp)):
                report.runs += 1
                report.accepted += o.code in (0, None)
                report.slowest = max(report.slowest, o.seconds)
                if o.problem is not None:
                    assert report.problems is not None
                    report.problems.append((mutant, o))
    return report


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--start", type=int, default=0, help="first mutant index")
    p.add_argument("--count", type=int, default=1000, help="number of mutants")
    p.add_argument("-v", "--verbose", action="store_true", help="print each problem's input")
    ns = p.parse_args(argv)
    report = run_corpus(ns.start, ns.count)
    for mutant, o in report.problems or []:
        print(f"mutant {mutant.index} (seed {mutant.seed}, {', '.join(mutant.edits)}) "
              f"{o.tool}: {o.problem}")
        if ns.verbose:
            print(mutant.text)
            print(o.err)
    print(report.summary())
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
