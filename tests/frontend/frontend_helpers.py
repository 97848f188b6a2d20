"""Shared helpers of the frontend tests: run a definition, compare with numpy, and
check that its printed text rebuilds the same fusion with the same results.

With ``FUSER_TEST_DEVICE=cuda`` (on a GPU machine) every ``check`` runs the fusion on
torch CUDA tensors instead — generated kernels, NVRTC, launch — and compares the same
expected values (half and bfloat16 with their precision's tolerance)::

    FUSER_TEST_DEVICE=cuda pytest tests/frontend
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from fuser import DataType, FusionDefinition

ON_GPU = os.environ.get("FUSER_TEST_DEVICE") == "cuda"


def _to_cuda(x: Any) -> Any:
    import torch

    if not isinstance(x, np.ndarray):
        return x
    if x.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(torch.bfloat16).cuda()
    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


def _to_host(x: Any) -> Any:
    import torch

    if not isinstance(x, torch.Tensor):
        return x
    x = x.detach().cpu()
    if x.dtype == torch.bfloat16:
        return x.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return x.numpy()


def run(fd: Any, inputs: Sequence[Any]) -> list[Any]:
    """``fd.execute`` on the CPU, or on the GPU under ``FUSER_TEST_DEVICE=cuda``; outputs
    as numpy arrays (a fusion without tensor inputs returns torch tensors)."""
    if not ON_GPU:
        return [_to_host(o) for o in fd.execute(list(inputs))]
    return [_to_host(o) for o in fd.execute([_to_cuda(x) for x in inputs])]


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
    return fd2, run(fd2, [x.copy() if isinstance(x, np.ndarray) else x for x in inputs])


def assert_close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if ON_GPU and rtol:
        # CUDA's math library is not numpy's: a few ulps apart, so one ulp of the
        # output dtype apart after rounding.
        ulp = {np.dtype(np.float16): 1e-3, np.dtype(ml_dtypes.bfloat16): 8e-3}.get(got.dtype, 0)
        rtol, atol = max(rtol, ulp, 2e-6), max(atol, ulp, 1e-6)
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
    outs = run(fd, inputs)
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
