"""The xDSL context with every dialect fuser reads and writes."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects

from fuser.ir import xdsl_fixes
from fuser.ir.dialects import available_dialects

xdsl_fixes.install()

# Upstream dialects that fuser's IR may contain (kernel lowering uses some of them).
_UPSTREAM = ("builtin", "func", "arith", "math", "complex", "scf", "memref", "gpu", "vector", "test")


def make_context() -> Context:
    ctx = Context()
    upstream = get_all_dialects()
    for name in _UPSTREAM:
        ctx.register_dialect(name, upstream[name])
    for name, factory in available_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_module(text: str, ctx: Context | None = None):
    """Parse (and verify) a module from text."""
    from xdsl.parser import Parser

    module = Parser(ctx or make_context(), text).parse_module()
    module.verify()
    return module
