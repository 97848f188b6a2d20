"""The malformed-IR corpus in CI: mutants of the lit inputs and the examples through
``fuser-opt`` (parse and verify; the full pipeline when that succeeds) and
``fuser-run``: no traceback, no internal error, no run over a second (per four fusions
or 40 ops).

A longer run: ``python -m tests.malformed.run --count 20000``."""

from __future__ import annotations

from tests.malformed.mutate import mutation, seeds
from tests.malformed.run import LIMIT_S, call, run_corpus, time_limit

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


def test_time_limit_grows_with_the_fusions_an_input_holds() -> None:
    one = "fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {}\n"
    assert time_limit(one) == LIMIT_S
    assert time_limit(one * 4) == LIMIT_S
    assert time_limit(one * 8) == 2 * LIMIT_S


def test_time_limit_grows_with_the_ops_an_input_holds() -> None:
    """A fusion of 120 ops (118 negations, the fusion and its output: a GPT-2 dump's
    size) gets three limits; its types (``!fuser.tensor``) are not ops."""
    head = "fuser.fusion @f(%x : !fuser.tensor<4xf32>) -> !fuser.tensor<4xf32> {\n"
    ops = "".join(f"  %{i} = fuser.neg %x : (!fuser.tensor<4xf32>) -> !fuser.tensor<4xf32>\n" for i in range(118))
    text = head + ops + "  fuser.output %117 : !fuser.tensor<4xf32>\n}\n"
    assert time_limit(text) == 3 * LIMIT_S
    assert time_limit(head + ops[: ops.index("%10 =")] + "}\n") == LIMIT_S


def test_a_slow_run_is_reported() -> None:
    def spin(argv: object) -> None:
        import time

        end = time.process_time() + 0.05
        while time.process_time() < end:
            pass

    assert (call("spin", spin, [], limit_s=0.01).problem or "").startswith("slow: ")
    assert call("spin", spin, [], limit_s=1.0).problem is None
