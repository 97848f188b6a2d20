"""Reshape as keep / merge / split of logical axes (seed 003).

nvFuser decides a reshape at definition time, from static sizes, as a list of
iter-domain transforms on the input's logical axes::

    original sizes = [2, 10, 40]      new sizes = [2, 10, 2, 20]
    transforms     = [keep I0, keep I1, split I2 by 2]

``analyze_reshape`` computes that decomposition. Each ``ReshapeStep`` consumes a
run of consecutive input axes and produces a run of consecutive output axes:

=============  ======  =======  ==============================================
kind           inputs  outputs  meaning
=============  ======  =======  ==============================================
``keep``       1       1        the axis is carried over unchanged
``merge``      k > 1   1        k axes are merged into one
``split``      1       m > 1    one axis is split (outer sizes first)
``merge_split``k > 1   m > 1    merge k axes, then split the result into m axes
``squeeze``    1       0        an input axis of extent 1 disappears
``broadcast``  0       1        an output axis of extent 1 appears
=============  ======  =======  ==============================================

Replaying the steps on the input shape always gives the output shape, and applied
to a row-major array they give exactly ``numpy.reshape`` (the property tests check
that).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from fuser.ir.shapes import DYN, ShapeError, fmt_shape

STEP_KINDS = ("keep", "merge", "split", "merge_split", "squeeze", "broadcast")


@dataclass(frozen=True)
class ReshapeStep:
    kind: str
    num_inputs: int
    out_sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"unknown reshape step '{self.kind}'")
        expected = {
            "keep": (self.num_inputs == 1 and len(self.out_sizes) == 1),
            "merge": (self.num_inputs > 1 and len(self.out_sizes) == 1),
            "split": (self.num_inputs == 1 and len(self.out_sizes) > 1),
            "merge_split": (self.num_inputs > 1 and len(self.out_sizes) > 1),
            "squeeze": (self.num_inputs == 1 and len(self.out_sizes) == 0),
            "broadcast": (self.num_inputs == 0 and self.out_sizes == (1,)),
        }[self.kind]
        if not expected:
            raise ValueError(
                f"reshape step '{self.kind}' cannot take {self.num_inputs} input axes "
                f"to sizes {list(self.out_sizes)}"
            )

    def __str__(self) -> str:
        if self.kind in ("keep", "squeeze", "broadcast"):
            return self.kind
        if self.kind == "merge":
            return f"merge {self.num_inputs}"
        if self.kind == "split":
            return f"split {list(self.out_sizes)}"
        return f"merge_split {self.num_inputs} {list(self.out_sizes)}"


def _classify(n_in: int, sizes: tuple[int, ...]) -> ReshapeStep:
    if n_in == 1 and len(sizes) == 1:
        return ReshapeStep("keep", 1, sizes)
    if len(sizes) == 1:
        return ReshapeStep("merge", n_in, sizes)
    if n_in == 1:
        return ReshapeStep("split", 1, sizes)
    return ReshapeStep("merge_split", n_in, sizes)


def infer_new_shape(in_shape: Sequence[int], new_shape: Sequence[int]) -> list[int]:
    """Resolve one ``-1`` entry of ``new_shape`` from a static ``in_shape``."""
    new = list(new_shape)
    holes = [i for i, d in enumerate(new) if d == -1]
    if len(holes) > 1:
        raise ShapeError(f"reshape: only one -1 is allowed in new shape {new}")
    if any(d < -1 for d in new):
        raise ShapeError(f"reshape: negative size in new shape {new}")
    if holes:
        if DYN in in_shape:
            return new
        known = prod(d for d in new if d != -1)
        total = prod(in_shape)
        if known == 0 or total % known:
            raise ShapeError(
                f"reshape: cannot infer -1 in {new} from input shape {fmt_shape(in_shape)}"
            )
        new[holes[0]] = total // known
    return new


def analyze_reshape(in_shape: Sequence[int], out_shape: Sequence[int]) -> list[ReshapeStep]:
    """Decompose a static reshape into keep/merge/split steps.

    Raises ShapeError when the sizes do not multiply out or an extent is symbolic.
    """
    if DYN in in_shape or DYN in out_shape:
        raise ShapeError(
            f"reshape {fmt_shape(in_shape)} -> {fmt_shape(out_shape)} has symbolic sizes"
        )
    if prod(in_shape) != prod(out_shape):
        raise ShapeError(
            f"reshape: sizes {fmt_shape(in_shape)} ({prod(in_shape)} elements) and "
            f"{fmt_shape(out_shape)} ({prod(out_shape)} elements) do not multiply out"
        )
    if prod(in_shape) == 0:
        # An empty tensor: one step takes every axis to every axis.
        n_in, n_out = len(in_shape), len(out_shape)
        if n_in == 0 or n_out == 0:  # pragma: no cover - prod([]) == 1
            return []
        return [_classify(n_in, tuple(out_shape))] if n_in else []
    steps: list[ReshapeStep] = []
    i = j = 0
    n, m = len(in_shape), len(out_shape)
    while i < n or j < m:
        if i < n and j < m and in_shape[i] == out_shape[j]:
            steps.append(ReshapeStep("keep", 1, (out_shape[j],)))
            i += 1
            j += 1
        elif i < n and in_shape[i] == 1:
            steps.append(ReshapeStep("squeeze", 1, ()))
            i += 1
        elif j < m and out_shape[j] == 1:
            steps.append(ReshapeStep("broadcast", 0, (1,)))
            j += 1
        else:
            p, q = in_shape[i], out_shape[j]
            i0, j0 = i, j
            i += 1
            j += 1
            while p != q:
                if p < q:
                    p *= in_shape[i]
                    i += 1
                else:
                    q *= out_shape[j]
                    j += 1
            steps.append(_classify(i - i0, tuple(out_shape[j0:j])))
    return steps


def apply_steps(in_shape: Sequence[int], steps: Sequence[ReshapeStep]) -> list[int]:
    """Replay ``steps`` on ``in_shape`` and return the output shape.

    Raises ShapeError when the steps do not fit the input (wrong number of axes,
    extents that do not agree through a merge or split).
    """
    out: list[int] = []
    i = 0
    for step in steps:
        axes = list(in_shape[i : i + step.num_inputs])
        if len(axes) != step.num_inputs:
            raise ShapeError(
                f"reshape step '{step}' needs {step.num_inputs} input axes, "
                f"only {len(axes)} remain of {fmt_shape(in_shape)}"
            )
        i += step.num_inputs
        if step.kind == "squeeze":
            if axes[0] not in (1, DYN):
                raise ShapeError(f"squeeze of axis {i - 1} with extent {axes[0]} != 1")
            continue
        if DYN not in axes and DYN not in step.out_sizes and prod(axes) != prod(step.out_sizes):
            raise ShapeError(
                f"reshape step '{step}': input extents {axes} ({prod(axes)}) do not "
                f"agree with output extents {list(step.out_sizes)} ({prod(step.out_sizes)})"
            )
        out.extend(step.out_sizes)
    if i != len(in_shape):
        raise ShapeError(
            f"reshape steps consume {i} axes but the input {fmt_shape(in_shape)} has "
            f"{len(in_shape)}"
        )
    return out
