"""Module-level functions of nvFuser's Python API (``nvfuser.clone``, ``version``, ...).

- ``clone(src, dst)``: ``dst`` (a new, empty ``FusionDefinition``) gets ``src``'s
  records and, once ``src`` is defined, its cached fusion.
- ``version()``: fuser's version as an ``NvfuserVersion`` (a ``str`` comparing by release
  numbers with strings and ``Version``); ``Version`` parses ``"m.n.p"``.
- ``compute_contiguity(sizes, strides)`` and ``compute_tensor_descriptor(sizes, strides)``:
  nvFuser's rules (``python_bindings.cpp`` / ``python_utils.cpp``) for the contiguity of
  a strided tensor per logical axis, and for (contiguity in allocation order, stride
  order); broadcast axes (size 1 or stride 0) get ``None``.
- ``enable_automatic_serialization`` / ``disable_automatic_serialization``: fuser's cache
  lives in memory only, and its compiled kernels are cached on disk
  (``FUSER_CACHE_DIR``) whatever these say, so both only record the setting.
- ``torch_dtype_to_nvfuser_dtype``: ``DataType`` of a torch dtype or a Python scalar type.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from fuser.frontend.datatype import DataType, as_datatype

_SERIALIZATION = {"automatic": False}


class Version:
    """A release version ``m.n.p`` (a local part after ``+`` is ignored)."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise ValueError(f"Version: expected a string, got {text!r}")
        release = text.split("+", 1)[0].strip()
        if not re.fullmatch(r"\d+(\.\d+)*", release):
            raise ValueError(f"Version: {text!r} is not a version like '1.2.3'")
        parts = [int(p) for p in release.split(".")]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        self.release = tuple(parts)
        self.text = text

    def __repr__(self) -> str:
        return f"Version({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return self.release == _as_version(other).release

    def __hash__(self) -> int:
        return hash(self.release)

    def __lt__(self, other: object) -> bool:
        return self.release < _as_version(other).release

    def __le__(self, other: object) -> bool:
        return self.release <= _as_version(other).release

    def __gt__(self, other: object) -> bool:
        return self.release > _as_version(other).release

    def __ge__(self, other: object) -> bool:
        return self.release >= _as_version(other).release


def _as_version(value: object) -> Version:
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return Version(value)
    raise ValueError(f"cannot compare a version with {value!r}")


class NvfuserVersion(str):
    """The version string; compares as a ``Version`` with strings and ``Version``s."""

    def __eq__(self, other: object) -> bool:
        return Version(str(self)) == _as_version(other)

    def __hash__(self) -> int:
        return str.__hash__(self)

    def __lt__(self, other: object) -> bool:
        return Version(str(self)) < _as_version(other)

    def __le__(self, other: object) -> bool:
        return Version(str(self)) <= _as_version(other)

    def __gt__(self, other: object) -> bool:
        return Version(str(self)) > _as_version(other)

    def __ge__(self, other: object) -> bool:
        return Version(str(self)) >= _as_version(other)


def version() -> NvfuserVersion:
    """fuser's package version."""
    try:
        return NvfuserVersion(metadata.version("fuser"))
    except metadata.PackageNotFoundError:
        return NvfuserVersion("0.1.0")


def enable_automatic_serialization() -> None:
    _SERIALIZATION["automatic"] = True


def disable_automatic_serialization() -> None:
    _SERIALIZATION["automatic"] = False


def torch_dtype_to_nvfuser_dtype(dtype: Any) -> DataType:
    """The ``DataType`` of a torch dtype, or of ``bool``/``int``/``float`` (Python scalars)."""
    if dtype is bool:
        return DataType.Bool
    if dtype is int:
        return DataType.Int
    if dtype is float:
        return DataType.Double
    if dtype is complex:
        return DataType.ComplexDouble
    return as_datatype(dtype, "torch_dtype_to_nvfuser_dtype")


def _sizes_strides(sizes: Any, strides: Any, what: str) -> tuple[list[int], list[int]]:
    if not isinstance(sizes, Sequence) or not isinstance(strides, Sequence):
        raise ValueError(f"{what}: sizes and strides must be sequences of ints")
    szs, sts = list(sizes), list(strides)
    for v in szs + sts:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{what}: sizes and strides must be ints, got {v!r}")
    if len(szs) != len(sts):
        raise ValueError(
            f"{what}: Sizes and strides must have the same number of dimensions "
            f"({len(szs)} sizes, {len(sts)} strides)"
        )
    return szs, sts


def compute_contiguity(sizes: Sequence[int], strides: Sequence[int]) -> list[bool | None]:
    """Per logical axis: ``None`` for broadcast axes (size 1 or stride 0), else whether
    the axis's stride is the next non-broadcast axis's ``stride * size`` (1 innermost)."""
    szs, sts = _sizes_strides(sizes, strides, "compute_contiguity")
    rank = len(szs)
    contiguity: list[bool | None] = [None] * rank
    dense = [sts[i] != 0 and szs[i] != 1 for i in range(rank)]
    inner = [i for i in range(rank) if dense[i]]
    for k, i in enumerate(inner):
        expected = 1 if k + 1 == len(inner) else sts[inner[k + 1]] * szs[inner[k + 1]]
        contiguity[i] = sts[i] == expected
    return contiguity


def compute_tensor_descriptor(
    sizes: Sequence[int], strides: Sequence[int]
) -> tuple[list[bool | None], list[int]]:
    """(contiguity in allocation order, stride order per logical axis), as nvFuser: axes
    with a non-zero stride sorted by decreasing stride (stable), stride-0 axes kept at
    their logical position; ``None`` contiguity for broadcast axes."""
    szs, sts = _sizes_strides(sizes, strides, "compute_tensor_descriptor")
    rank = len(szs)
    for i, s in enumerate(sts):
        if s < 0:
            raise ValueError(
                f"compute_tensor_descriptor: negative stride on tensor is not supported: "
                f"strides[{i}]={s}"
            )
    order = sorted((i for i in range(rank) if sts[i] != 0), key=lambda i: -sts[i])
    for i in range(rank):
        if sts[i] == 0:
            order.insert(i, i)
    broadcast = [sts[i] == 0 or szs[i] == 1 for i in range(rank)]
    contiguity: list[bool | None] = [None] * rank
    dense = [p for p in range(rank) if not broadcast[order[p]]]
    for k, p in enumerate(dense):
        if k + 1 == len(dense):
            expected = 1
        else:
            q = order[dense[k + 1]]
            expected = sts[q] * szs[q]
        contiguity[p] = sts[order[p]] == expected
    stride_order = [0] * rank
    for p, i in enumerate(order):
        stride_order[i] = rank - 1 - p
    return contiguity, stride_order
