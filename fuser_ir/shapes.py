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


def same_elements(shape: Sequence[int], ref: Sequence[int]) -> bool:
    """``shape`` is ``ref`` with axes of extent 1 added or removed (a broadcast of a
    reduction back to its input's rank, ``keepdim``)."""
    return [d for d in shape if d != 1] == [d for d in ref if d != 1]


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


def run_time_extent_mismatch(
    op_name: str, declared: Sequence[Sequence[int] | None], actual: Sequence[Sequence[int] | None]
) -> str | None:
    """Why the operands of an elementwise op disagree on a run-time extent (None when
    they agree): ``declared[k]`` is operand ``k``'s type's shape, ``actual[k]`` its
    run-time shape (None for scalars). Only an axis of static extent 1 broadcasts: a
    symbolic axis that is 1 at run time (a slice's result) does not, as the kernel
    indexes every operand alike."""
    tensors = [(k, d, a) for k, (d, a) in enumerate(zip(declared, actual, strict=True))
               if d is not None and a is not None and len(d) > 0]
    if len(tensors) < 2:
        return None
    rank = max(len(d) for _, d, _ in tensors)
    for axis in range(rank):
        seen: tuple[int, int] | None = None
        for k, d, a in tensors:
            i = axis - (rank - len(d))
            if i < 0 or d[i] == 1:
                continue
            if seen is None:
                seen = (k, int(a[i]))
            elif seen[1] != a[i]:
                return (
                    f"{op_name}: operand #{seen[0]} has extent {seen[1]} and operand #{k} "
                    f"extent {a[i]} in axis {axis} at run time; only an axis of static "
                    "extent 1 broadcasts"
                )
    return None


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
