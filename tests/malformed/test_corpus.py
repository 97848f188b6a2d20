"""The malformed-IR corpus in CI: mutants of the lit inputs and the examples through
``fuser-opt`` (parse and verify; the full pipeline when that succeeds) and
``fuser-run``: no traceback, no internal error, no run over a second.

A longer run: ``python -m tests.malformed.run --count 20000``."""

from __future__ import annotations

from tests.malformed.mutate import mutation, seeds
from tests.malformed.run import LIMIT_S, run_corpus

COUNT = 1200


def test_mutations_are_deterministic_and_varied() -> None:
    assert len(seeds()) > 100
    assert mutation(17) == mutation(17)
    texts = {mutation(i).text for i in range(200)}
    assert len(texts) > 190


def test_corpus_has_no_traceback_internal_error_or_slow_run() -> None:
    report = run_corpus(0, COUNT)
    assert report.runs >= COUNT
    assert report.accepted > 100  # the pipeline and fuser-run are reached, not only the parser
    problems = [
        f"mutant {m.index} ({', '.join(m.edits)}) {o.tool}: {o.problem}"
        for m, o in report.problems or []
    ]
    assert not problems, "\n".join(problems[:20]) + "\n" + report.summary()
    assert report.slowest <= LIMIT_S
