"""Symbolic extents: an integer that is a concrete size *and* a formula over kernel
parameters, so one compiled kernel serves every size of a class.

A lowering runs at the concrete sizes of one launch (every decision it makes, such
as whether a predicate is needed, reads them), but the extents that vary between
launches of a fusion (a batch axis) are ``SymInt``s: ints whose value is the launch's
size (the *hint*) and that also carry an ``Expr`` over named extents (``n0``,
``n1``, ...). Arithmetic on them builds the formula alongside the value::

    n = SymInt(4096, Var("n0"))
    m = (n * 1024 + 511) // 512          # SymInt(8192, ((n0 * 1024) + 511) / 512)
    int(m), m.expr                       # 8192, the formula

Comparisons, ``range``, ``int()``, formatting and hashing see only the value: they
are the lowering's decisions at this size. The kernel builder emits a ``SymInt``
that reaches the kernel as its formula over the kernel's extent parameters (checked
against the values it was given), so the kernel text does not depend on the value;
an extent that reaches the text any other way is printed as its value. Either way
the kernel is exact for the launch it was lowered for, and two launches whose
lowerings print the same text share one compiled binary (the kernel cache is keyed
by the text): that sharing is what makes one kernel serve many sizes, and it can
never be wrong, because each launch's text was derived from its own sizes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fuser.ir.schedule import BinOp, Const, Expr, Var, ceil_div_expr, fold_op

__all__ = ["SymInt", "as_expr", "evaluate", "symbols_of"]


class SymInt(int):
    """An int (the value at this launch) with its formula ``expr`` over named
    extents. See the module docstring."""

    expr: Expr

    def __new__(cls, value: int, expr: Expr) -> SymInt:
        obj = super().__new__(cls, int(value))
        obj.expr = expr
        return obj

    def __repr__(self) -> str:
        return f"SymInt({int(self)}, {self.expr})"

    def __str__(self) -> str:  # the value, as an int prints (diagnostics, literals)
        return int.__repr__(self)

    def __format__(self, spec: str) -> str:
        return format(int(self), spec)

    # ---- arithmetic builds the formula ----------------------------------------------
    def _op(self, other: Any, op: str, reflected: bool = False) -> Any:
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        value = fold_op(op, int(a), int(b))
        ea, eb = as_expr(a), as_expr(b)
        if op == "ceilDiv":
            return SymInt(value, ceil_div_expr(ea, eb))
        return SymInt(value, {"+": ea.__add__, "-": ea.__sub__, "*": ea.__mul__, "/": ea.__floordiv__,
                              "%": ea.__mod__}[op](eb))

    def __add__(self, o: Any) -> Any:
        return self._op(o, "+")

    def __radd__(self, o: Any) -> Any:
        return self._op(o, "+", True)

    def __sub__(self, o: Any) -> Any:
        return self._op(o, "-")

    def __rsub__(self, o: Any) -> Any:
        return self._op(o, "-", True)

    def __mul__(self, o: Any) -> Any:
        return self._op(o, "*")

    def __rmul__(self, o: Any) -> Any:
        return self._op(o, "*", True)

    def __floordiv__(self, o: Any) -> Any:
        if isinstance(o, int) and int(o) < 0 or int(self) < 0:
            return int(self) // o  # C division truncates: only non-negative formulas
        return self._op(o, "/")

    def __rfloordiv__(self, o: Any) -> Any:
        if isinstance(o, int) and int(o) < 0:
            return o // int(self)
        return self._op(o, "/", True)

    def __mod__(self, o: Any) -> Any:
        if isinstance(o, int) and int(o) < 0 or int(self) < 0:
            return int(self) % o
        return self._op(o, "%")

    def __rmod__(self, o: Any) -> Any:
        if isinstance(o, int) and int(o) < 0:
            return o % int(self)
        return self._op(o, "%", True)

    def __neg__(self) -> Any:
        return self._op(0, "-", True)

    def __pos__(self) -> SymInt:
        return self

    def __abs__(self) -> Any:
        return self if int(self) >= 0 else -self

    def ceil_div(self, o: int) -> Any:
        return self._op(o, "ceilDiv")


def as_expr(x: int) -> Expr:
    """The formula of ``x``: its ``expr`` for a ``SymInt``, the constant otherwise."""
    return x.expr if isinstance(x, SymInt) else Const(int(x))


def evaluate(e: Expr, values: Mapping[str, int]) -> int:
    """``e`` at the named extents ``values`` (plain ints)."""
    return int(e.evaluate({k: int(v) for k, v in values.items()}))


def symbols_of(e: Expr) -> set[str]:
    """The variables ``e`` reads (named extents, or loop indices ``i<k>``)."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, BinOp):
        return symbols_of(e.lhs) | symbols_of(e.rhs)
    return set()
