"""A linear-time string-literal regex for xDSL 0.74.0's MLIR lexer.

xDSL's ``MLIRLexer._unescaped_characters_regex`` is
``"(?:[^"\\\\\\n\\v\\f]+|\\\\(?:["nt\\\\]|[0-9A-Fa-f]{2}))*"``: a ``+`` inside a ``*``. On a
string literal that is never closed, Python's backtracking ``re`` tries every way of
cutting the payload into runs, 2**n of them: 28 letters after a ``"`` take 14 s,
every two more letters double it (``docs/upstream/xdsl-lexer-string-backtracking.md``).

Without the inner ``+`` each payload character is matched by exactly one alternative
(plain characters exclude the backslash, so an escape cannot also be read as plain
characters), there is one way to match or fail, and the time is linear. The language
accepted is the same. ``install`` puts that regex on the lexer class; fuser's context
(``fuser_ir.context``), ``fuser-opt`` and the ``xdsl.universe`` entry point call it, so
every fuser tool, ``FusionDefinition.from_mlir`` and plain ``xdsl-opt`` with fuser
installed parse in linear time.
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

UPSTREAM_PATTERN = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
"""The pattern xDSL 0.74.0 ships (exponential on an unterminated literal)."""

LINEAR_PATTERN = r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
"""The same language, one way to match each character."""


def install() -> None:
    """Give xDSL's MLIR lexer the linear string-literal regex (idempotent).

    Only xDSL's known pattern is replaced: a different one (a fixed xDSL) is kept."""
    current = MLIRLexer._unescaped_characters_regex
    if current.pattern == UPSTREAM_PATTERN:
        MLIRLexer._unescaped_characters_regex = re.compile(LINEAR_PATTERN)
