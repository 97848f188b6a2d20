"""Shape helpers shared by the dialects, the frontend and the interpreter.

An extent is an ``int``: a static size (``>= 0``) or ``DYN`` (``-1``), a size only
known at run time. Broadcasting follows numpy: shapes are aligned on the right, an
extent of 1 stretches, ``DYN`` against a static size takes the static size.
"""

from __future__ import annotations

from collections.abc import Sequence

DYN = -1
"""A symbolic (run-time) extent."""


class ShapeError(ValueError):
    """Raised when shapes cannot be combined."""


def fmt_shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYN else str(d) for d in shape) + "]"


def broadcast_shapes(*shapes: Sequence[int]) -> list[int]:
    """numpy broadcasting of shapes with possibly symbolic extents."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(rank):
        ext = 1
        for s in shapes:
            i = axis - (rank - len(s))
            if i < 0:
                continue
            d = s[i]
            if d == 1:
                continue
            if ext == 1:
                ext = d
            elif ext == DYN:
                ext = d
            elif d != DYN and d != ext:
                raise ShapeError(
                    "shapes " + ", ".join(fmt_shape(x) for x in shapes) + " do not broadcast"
                )
        out.append(ext)
    return out


def normalize_dim(dim: int, rank: int, what: str = "dim") -> int:
    """Wrap a negative dim; raise ShapeError when it is out of range."""
    if not -rank <= dim < max(rank, 1) or (rank == 0 and dim not in (0, -1)):
        raise ShapeError(f"{what} {dim} is out of range for rank {rank}")
    return dim % rank if rank else 0


def numel(shape: Sequence[int]) -> int | None:
    """The number of elements, or None when an extent is symbolic."""
    n = 1
    for d in shape:
        if d == DYN:
            return None
        n *= d
    return n
