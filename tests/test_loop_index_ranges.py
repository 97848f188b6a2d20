"""``codegen.lower.loop_index``: index ranges with constant loop indices. An unrolled
persistent batch substitutes its step for its loop index, so of a 50257-wide row on
1024 threads only the last of 50 steps needs a bounds predicate."""

from __future__ import annotations

from typing import Any

from fuser.codegen.lower.loop_index import bounded_index, value_range
from fuser.ir.schedule import Const, Var

ROW = Var("i0") * Const(1024) + Var("i1")  # persistent step i0 (50 of them), thread i1


def test_value_range_of_a_fixed_step() -> None:
    assert value_range(ROW, [50, 1024]) == (0, 51199)
    assert value_range(ROW, [50, 1024], {"i0": 48}) == (49152, 50175)
    assert value_range(ROW, [50, 1024], {"i0": 49}) == (50176, 51199)
    # a loop index bound to a kernel value (a thread index) still spans its extent
    assert value_range(ROW, [50, 1024], {"i0": 3, "i1": object()}) == (3072, 4095)  # type: ignore[dict-item]


class _Builder:
    """Index arithmetic as strings; ``cmp`` records the predicates asked for."""

    def __init__(self) -> None:
        self.cmps: list[tuple[str, Any, Any]] = []

    def add(self, a: Any, b: Any) -> Any:
        return a + b if isinstance(a, int) and isinstance(b, int) else f"({a} + {b})"

    def mul(self, a: Any, b: Any) -> Any:
        return a * b if isinstance(a, int) and isinstance(b, int) else f"({a} * {b})"

    sub = div = rem = ceil_div = None  # not used by these indices

    def cmp(self, pred: str, a: Any, b: Any) -> str:
        self.cmps.append((pred, a, b))
        return f"{a} {pred} {b}"


def test_only_the_last_step_of_a_row_is_predicated() -> None:
    for step, predicated in [(0, False), (48, False), (49, True)]:
        b = _Builder()
        values, conds = bounded_index(b, [(ROW, 50257)], {"i0": step, "i1": "tid"}, [50, 1024])
        assert values == [f"({step * 1024} + tid)"]
        assert (conds == [f"({step * 1024} + tid) slt 50257"]) is predicated, (step, conds)
