"""Shared helpers of the frontend tests: run a definition, compare with numpy, and
check that its printed text rebuilds the same fusion with the same results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fuser_ir import DataType, FusionDefinition


def define(fn: Callable[[FusionDefinition], None]) -> FusionDefinition:
    with FusionDefinition() as fd:
        fn(fd)
    return fd


def rerun_printed(fd: FusionDefinition, inputs: Sequence[Any]) -> tuple[FusionDefinition, list[Any]]:
    """Execute ``repr(fd)`` as Python, define a new fusion with it and run it."""
    text = repr(fd)
    scope: dict[str, Any] = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, scope)  # noqa: S102 - the printed definition is the thing under test
    fn = scope[f"nvfuser_fusion_id{fd.id()}"]
    with FusionDefinition() as fd2:
        fn(fd2)
    return fd2, fd2.execute([x.copy() if isinstance(x, np.ndarray) else x for x in inputs])


def assert_close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "biu" or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def check(
    fn: Callable[[FusionDefinition], None],
    inputs: Sequence[Any],
    expected: Sequence[Any],
    dtypes: Sequence[Any] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> FusionDefinition:
    """Define with ``fn``, execute, compare with ``expected``; then rebuild from the
    printed text, check it is the same cached fusion and gives the same results."""
    fd = define(fn)
    outs = fd.execute(list(inputs))
    assert len(outs) == len(expected)
    for i, (o, e) in enumerate(zip(outs, expected, strict=True)):
        assert_close(o, e, rtol, atol)
        if dtypes is not None:
            assert o.dtype == np.dtype(dtypes[i]), (o.dtype, dtypes[i])
    fd2, outs2 = rerun_printed(fd, inputs)
    assert fd2.id() == fd.id()
    assert repr(fd2) == repr(fd)
    for o, o2 in zip(outs, outs2, strict=True):
        assert_close(o2, o, 0, 0)
    return fd


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def randn(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return rng().standard_normal(shape).astype(dtype)
