"""Tiles of a tensor staged in shared memory (``memory = "shared"``): which elements
one iteration of the shared loops writes, where each lives in the tile, and the
proof that a consumer reads only elements of its own iteration's tile.

A tensor computed at loop ``q`` writes, in one iteration of loops ``0..q-1``, the
elements its inner loops ``q..`` reach. Each axis index of a scheduled tensor is an
``Expr`` of loop indices; written as a sum of terms, a term reads either only loops
before ``q`` (the tile's corner, the same for every element of the iteration) or
only loops from ``q`` (the element's place in the tile)::

    axis 0: i0 * 32 + (i2 * 8 + i3)      corner i0 * 32, place i2 * 8 + i3 in [0, 32)
    axis 1: i1 * 32 + i4                 corner i1 * 32, place i4 in [0, 32)

so the tile of a ``[BIDy, BIDx, unroll 4, TIDy 8, TIDx 32]`` schedule computed at 2 is
32 x 32, indexed by the places. A consumer of the tile (a transposed output, its own
loops bound the other way) reads it at its own index of each axis, split the same
way: its corner must be the same expression as the producer's (it reads in the same
iteration of the same loops), and every combination of its places must be one the
producer writes (checked by enumerating both, tiles are small). Then the consumer
reads the element at ``place - min(place)``. An index whose term mixes loops before
and after ``q`` (a merge across the position) has no corner: a diagnostic.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from fuser.codegen.lower.loop_index import vars_of
from fuser.ir.dialects.kernel import STATIC_SHARED_LIMIT
from fuser.ir.schedule import BinOp, Const, Expr, Var

__all__ = ["MAX_TILE_ELEMENTS", "SHARED_LIMIT", "Split", "places", "split_at"]

SHARED_LIMIT = STATIC_SHARED_LIMIT
"""Static ``__shared__`` memory a kernel may declare (bytes; the kernel dialect's limit)."""
MAX_TILE_ELEMENTS = SHARED_LIMIT
"""Most combinations of inner loop indices enumerated for one tile (a tile of more
elements than this does not fit shared memory in any dtype)."""

Terms = dict[Expr, int]
"""A linear form: atom -> coefficient; the atom ``Const(1)`` holds the constant."""

ONE = Const(1)


def _linear(e: Expr) -> Terms:
    """``e`` as a sum of coefficient x atom, where an atom is a loop index or a
    ``/``, ``%`` or ``ceilDiv`` subexpression (not linear)."""
    if isinstance(e, Const):
        return {ONE: e.value} if e.value else {}
    if isinstance(e, Var):
        return {e: 1}
    assert isinstance(e, BinOp)
    if e.op in ("+", "-"):
        out = dict(_linear(e.lhs))
        sign = 1 if e.op == "+" else -1
        for atom, c in _linear(e.rhs).items():
            out[atom] = out.get(atom, 0) + sign * c
        return {a: c for a, c in out.items() if c}
    if e.op == "*":
        lhs, rhs = _linear(e.lhs), _linear(e.rhs)
        for x, y in ((lhs, rhs), (rhs, lhs)):
            if set(y) <= {ONE}:
                k = y.get(ONE, 0)
                return {a: c * k for a, c in x.items() if c * k}
    return {e: 1}


def _loop(name: str) -> int:
    """The loop position of index variable ``i<k>``; -1 for a symbolic extent."""
    return int(name[1:]) if name.startswith("i") else -1


@dataclass(frozen=True)
class Split:
    """An axis index split at a compute-at position: ``corner + place``."""

    corner: frozenset[tuple[Expr, int]]
    """The terms reading only loops before the position (and constants)."""
    place: Expr
    """The sum of the terms reading only loops from the position."""


def split_at(e: Expr, q: int) -> Split | None:
    """``e`` split into the terms before loop ``q`` and from it; None when a term
    reads loops on both sides (or a symbolic extent and an inner loop)."""
    corner: list[tuple[Expr, int]] = []
    place: Expr = Const(0)
    for atom, c in _linear(e).items():
        loops = {_loop(v) for v in vars_of(atom)}
        if all(k < q for k in loops):
            corner.append((atom, c))
        elif all(k >= q for k in loops):
            place = place + atom * c
        else:
            return None
    return Split(frozenset(corner), place)


def places(exprs: Sequence[Expr], extents: Sequence[int]) -> set[tuple[int, ...]] | None:
    """Every combination of the values of ``exprs`` (places of the axes of one tile)
    over the loop indices they read, each in ``[0, extents[k])``; None when there are
    more than ``MAX_TILE_ELEMENTS`` combinations."""
    names = sorted(set().union(*(vars_of(e) for e in exprs)) if exprs else set(), key=_loop)
    ranges = [range(extents[_loop(n)]) for n in names]
    if math.prod(len(r) for r in ranges) > MAX_TILE_ELEMENTS:
        return None
    out = set()
    for point in itertools.product(*ranges):
        env = dict(zip(names, point, strict=True))
        out.add(tuple(e.evaluate(env) for e in exprs))
    return out
