"""Unterminated string literals are rejected in linear time (xDSL 0.74.0's lexer
backtracks exponentially on them: ``fuser_ir/xdsl_fixes.py``)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from fuser import FusionDefinition
from fuser.ir.xdsl_fixes import LINEAR_PATTERN, UPSTREAM_PATTERN
from fuser.tools.fuser_opt import main as opt_main
from fuser.tools.fuser_run import main as run_main

# Under 1 KB each; with xDSL's own regex the first takes longer than the age of the
# universe.
INPUTS = [
    '"' + "a" * 900,
    'fuser.fusion @f() {\n  "fuser.output"() {note = "' + "x" * 800 + "} : () -> ()\n}\n",
    "fuser.fusion @\"" + "f" * 500 + "() {\n}\n",
    '"' + "ab\\n" * 200,
]


@pytest.mark.parametrize("text", INPUTS)
def test_unterminated_string_is_rejected_within_a_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    assert len(text.encode()) < 1024
    path = tmp_path / "in.mlir"
    path.write_text(text)
    for main in (opt_main, run_main):
        start = time.perf_counter()
        with pytest.raises(SystemExit) as exc:
            main([str(path)])
        assert time.perf_counter() - start < 1.0
        assert exc.value.code == 1
        err = capsys.readouterr().err
        assert "End of file reached before closing string literal" in err
        assert ":1:1" in err or ":2:" in err  # line:col of the literal's start
    start = time.perf_counter()
    with pytest.raises(ValueError, match="closing string literal"):
        FusionDefinition.from_mlir(text)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "text",
    ['"abc"', '""', r'"a\"b"', r'"a\0Fb"', r'"\\"', r'"x\\\"y"', r'"a\qb"', '"a\nb"', '"ab', r'"a\"'],
)
def test_linear_pattern_matches_what_xdsl_matches(text: str) -> None:
    upstream = re.compile(UPSTREAM_PATTERN).match(text)
    linear = re.compile(LINEAR_PATTERN).match(text)
    assert (upstream and upstream.group()) == (linear and linear.group())


def test_escaped_strings_still_parse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.mlir"
    path.write_text('"test.op"() {s = "a\\"b\\0A\\\\c"} : () -> ()\n')
    opt_main([str(path), "--allow-unregistered-dialect"])
    assert 's = "a\\22b\\0A\\\\c"' in capsys.readouterr().out


def test_fuser_opt_process_rejects_quickly_even_without_the_in_process_timer(
    tmp_path: Path,
) -> None:
    """The same in a separate process with a hard timeout, so a regression fails
    within seconds instead of hanging the test run (the in-process tests above
    would hang on xDSL's exponential regex)."""
    import subprocess
    import sys

    path = tmp_path / "in.mlir"
    path.write_text('"' + "a" * 60)  # 2^30 steps with the upstream regex
    script = "import sys; from fuser.tools.fuser_opt import main; main(sys.argv[1:])"
    try:
        p = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            capture_output=True, text=True, timeout=20, cwd=Path(__file__).parent.parent,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("fuser-opt hangs on an unterminated string literal")
    assert p.returncode == 1
    assert "closing string literal" in p.stderr and "Traceback" not in p.stderr
