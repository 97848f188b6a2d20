"""Every workload of ``benchmarks/workloads.py`` computes its torch reference: each
definition, at small shapes of the same rank and class, run with its generated kernels
in the CPU kernel interpreter (``execute_kernels_on_cpu``: the driver's segments, their
loop nests), against the workload's torch reference in float64. The GPU benchmark
(``benchmarks/run.py``) checks the same at full size."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from benchmarks.workloads import build, torch_reference, workloads  # noqa: E402
from fuser.frontend.execution import execute_kernels_on_cpu  # noqa: E402

SMALL = {
    "gelu_bookend_views": None,  # fixed-shape reshapes: run at full size on the GPU only
    "transpose_bookend_views": None,
    "layernorm_backward_16384x1024": [[40, 24], [40, 24], [40, 1], [40, 1], [24]],
    "layernorm_backward_32768x768": [[300, 24], [300, 24], [300, 1], [300, 1], [24]],
    "layernorm_backward_4096x4096": [[7, 40], [7, 40], [7, 1], [7, 1], [40]],
    "middle_sum_64x1024x256": [[3, 20, 8]],
    "softmax_unaligned_4096x3001": [[3, 301]],
    "softmax_unaligned_8192x1023": [[4, 103]],
    "layernorm_unaligned_16384x771": [[5, 77], [77], [77]],
    "vocab_softmax_32x50257": [[2, 1001]],
    "few_rows_softmax_8x32000": [[2, 1001]],
    "col_sum_32768x2048": [[50, 24]],
    "outer_norm_16384x1024": [[50, 24]],
    "sum_bcast_add_8192x3072": [[6, 40], [6, 40]],
}


def _small(name: str, shapes: list[list[int]]) -> list[list[int]] | None:
    if name in SMALL:
        return SMALL[name]
    # softmax / layernorm / rmsnorm / row_sum_<n>: [m, n] (and [n] weights) -> 5 rows of 72
    return [[5, 72] if len(s) == 2 else [72] for s in shapes]


CASES = [w for w in workloads() if _small(w.name, w.shapes) is not None and not w.name.endswith(("_4096", "_16384"))]


@pytest.mark.parametrize("w", CASES, ids=[w.name for w in CASES])
def test_workload_matches_its_torch_reference(w) -> None:  # noqa: ANN001
    shapes = _small(w.name, w.shapes)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    if w.name.startswith("layernorm_backward"):  # a real mean and rstd of x
        x = xs[1].astype(np.float64)
        xs[2] = x.mean(1, keepdims=True).astype(np.float32)
        xs[3] = (1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)).astype(np.float32)
    fd = build(w, "float32")
    got = execute_kernels_on_cpu(fd._ensure_defined(), xs)
    want = torch_reference(w.torch_key)(*[torch.from_numpy(x).double() for x in xs])
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, r in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g, np.float64), r.numpy(), rtol=1e-4, atol=1e-4)
