"""Minimal reproducers found by the malformed-IR corpus: each is rejected with a
diagnostic (exit 1, no traceback, no "internal error") naming the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuser.tools.fuser_opt import main as opt_main
from fuser.tools.fuser_run import main as run_main
from tests.malformed.run import call

T4 = "!fuser.tensor<4xf32>"

CASES = {
    # Use before definition: accepted before, then a RecursionError in the lowering.
    "self_use": (
        f"fuser.fusion @f(%x : {T4}) -> {T4} {{\n"
        f"  %y = fuser.neg %y : ({T4}) -> {T4}\n"
        f"  fuser.output %y : {T4}\n}}\n",
        "fuser.neg operand #0 (%y, result #0 of a fuser.neg) is used before it is defined",
    ),
    "swapped_lines": (
        f"fuser.fusion @f(%a : {T4}) -> {T4} {{\n"
        f"  %1 = fuser.neg %0 : ({T4}) -> {T4}\n"
        f"  %0 = fuser.neg %a : ({T4}) -> {T4}\n"
        f"  fuser.output %1 : {T4}\n}}\n",
        "fuser.fusion @f: fuser.neg operand #0 (result #0 of a fuser.neg) is used before it is defined",
    ),
    # An attribute xDSL cannot print made every diagnostic about the op crash.
    "f80_attribute_in_a_diagnostic": (
        "fuser.fusion @f() -> f32 {\n  %c = fuser.constant {value = 1.0 : f80} : f32\n"
        "  fuser.output %c : f32\n}\n",
        "fuser.constant: expected a typed number, got {value = 1.0 : f80}",
    ),
    "f80_constant": (
        "fuser.fusion @f() -> f80 {\n  %c = fuser.constant 1.5 : f80\n  fuser.output %c : f80\n}\n",
        "fuser.constant: value 1.5 : f80 must be an integer or float literal of a fuser type",
    ),
    "f80_hex_literal": (
        "fuser.fusion @f() -> f80 {\n  %c = fuser.constant 0x7FC00000 : f80\n"
        "  fuser.output %c : f80\n}\n",
        "2:23",
    ),
    "hex_literal_too_wide": (
        "fuser.fusion @f() -> f32 {\n  %c = fuser.constant 0x7FC000000000 : f32\n"
        "  fuser.output %c : f32\n}\n",
        "hexadecimal literal does not fit its float type",
    ),
    "dense_array_of_i640": (
        f"fuser.fusion @f(%a : {T4}) -> {T4} {{\n"
        f"  fuser.output %a : {T4} {{alias_inputs = array<i640: 0>}}\n}}\n",
        "dense array of an element type without a packed encoding",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reproducer_is_a_diagnostic(tmp_path: Path, name: str) -> None:
    text, message = CASES[name]
    path = tmp_path / "in.mlir"
    path.write_text(text)
    for tool, main in (("fuser-opt", opt_main), ("fuser-run", run_main)):
        outcome = call(tool, main, [str(path)])
        assert outcome.problem is None, (tool, outcome.problem, outcome.err)
        assert outcome.code == 1, (tool, outcome.out)
        assert message in outcome.err, (tool, outcome.err)
