"""Workarounds for xDSL 0.74.0 bugs that malformed input reaches.

1. **Exponential string-literal lexing.** ``MLIRLexer._unescaped_characters_regex`` is
   ``"(?:[^"\\\\\\n\\v\\f]+|\\\\(?:["nt\\\\]|[0-9A-Fa-f]{2}))*"``: a ``+`` inside a ``*``.
   On a string literal that is never closed, Python's backtracking ``re`` tries every
   way of cutting the payload into runs, 2**n of them: 28 letters after a ``"`` take
   14 s, every two more letters double it
   (``docs/upstream/xdsl-lexer-string-backtracking.md``). Without the inner ``+`` each
   payload character is matched by exactly one alternative (plain characters exclude
   the backslash), there is one way to match or fail, and the time is linear; the
   language accepted is the same.

2. **Printing an ``f80``/``f128`` float attribute raises ``NotImplementedError``**
   (``Float80Type.format``: no ``struct`` format to round-trip the value through).
   Any diagnostic that prints such an attribute (``{dim = 1 : f80}`` in an op with an
   error elsewhere) then crashed instead of reporting. The parser stores these values
   as Python floats, so they are printed with 17 significant digits, which is exact
   for what was stored. fuser's verifiers reject these types in fuser IR.

3. **Literals that ``struct`` cannot pack** (``0x7FC000000000 : f32``, ``0x1 : f80``,
   ``array<i640: 0>``, ``dense<1.0> : tensor<4xf80>``) raise ``OverflowError`` or
   ``NotImplementedError`` in the attribute parser; they become a parse error at the
   literal.

``install`` applies them all; fuser's context (``fuser.ir.context``), ``fuser-opt`` and the
``xdsl.universe`` entry point call it, so every fuser tool,
``FusionDefinition.from_mlir`` and plain ``xdsl-opt`` with fuser installed get them.
"""

from __future__ import annotations

import math
import re
from typing import Any

from xdsl.dialects.builtin import Float80Type, Float128Type
from xdsl.parser.attribute_parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.mlir_lexer import MLIRLexer

UPSTREAM_PATTERN = r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
"""The pattern xDSL 0.74.0 ships (exponential on an unterminated literal)."""

LINEAR_PATTERN = r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
"""The same language, one way to match each character."""

_UNPACKABLE_FLOATS = (Float80Type, Float128Type)


def _install_linear_string_regex() -> None:
    """Only xDSL's known pattern is replaced: a different one (a fixed xDSL) is kept."""
    if MLIRLexer._unescaped_characters_regex.pattern == UPSTREAM_PATTERN:
        MLIRLexer._unescaped_characters_regex = re.compile(LINEAR_PATTERN)


def _install_wide_float_printing() -> None:
    upstream = Printer.print_float
    if getattr(upstream, "_fuser_fix", False):
        return

    def print_float(self: Printer, value: float, type: Any) -> None:
        if isinstance(type, _UNPACKABLE_FLOATS):
            text = f"{value:.17g}" if math.isfinite(value) else repr(value)
            if math.isfinite(value) and not any(c in text for c in ".en"):
                text += ".0"
            self.print_string(text)
            return
        upstream(self, value, type)

    print_float._fuser_fix = True  # type: ignore[attr-defined]
    Printer.print_float = print_float  # type: ignore[method-assign]


_UNENCODABLE = {
    "parse_optional_builtin_int_or_float_attr": "hexadecimal literal does not fit its float type",
    "_parse_builtin_densearray_attr": "dense array of an element type without a packed encoding",
    "_parse_builtin_dense_attr": "dense elements of an element type without a packed encoding",
}
"""Attribute parser methods that pack values with ``struct``, and what they cannot pack."""


def _install_unencodable_literal_checks() -> None:
    for method, message in _UNENCODABLE.items():
        upstream = getattr(AttrParser, method)
        if getattr(upstream, "_fuser_fix", False):
            continue

        def checked(self: AttrParser, *args: Any, _up: Any = upstream, _msg: str = message) -> Any:
            start = self._current_token.span.start
            try:
                return _up(self, *args)
            except (OverflowError, NotImplementedError) as e:
                detail = f" ({e})" if str(e) else ""
                self.raise_error(f"{_msg}{detail}", start, max(self.pos, start + 1))

        checked._fuser_fix = True  # type: ignore[attr-defined]
        setattr(AttrParser, method, checked)


def _install_memref_index_count_check() -> None:
    """xDSL 0.74's ``memref.load``/``memref.store`` verifiers raise a bare
    ``Exception`` for a wrong number of indices (malformed input then crashes as an
    internal error); make it a ``VerifyException`` naming the op."""
    from xdsl.dialects import memref
    from xdsl.utils.exceptions import VerifyException

    for cls in (memref.LoadOp, memref.StoreOp):
        upstream = cls.verify_
        if getattr(upstream, "_fuser_fix", False):
            continue

        def verify_(self: Any, _up: Any = upstream) -> None:
            try:
                _up(self)
            except VerifyException:
                raise
            except Exception as e:  # noqa: BLE001 - the upstream verifier's bare Exception
                raise VerifyException(f"{self.name}: {e}") from None

        verify_._fuser_fix = True  # type: ignore[attr-defined]
        cls.verify_ = verify_  # type: ignore[method-assign]


def install() -> None:
    """Apply the workarounds (idempotent)."""
    _install_memref_index_count_check()
    _install_linear_string_regex()
    _install_wide_float_printing()
    _install_unencodable_literal_checks()
