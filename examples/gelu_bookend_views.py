"""Seed 002's GELU with bookend views, verbatim in nvFuser's legacy spelling.

The input is viewed as 64x128x3072 before the pointwise GELU and viewed back after:
the views are static reshapes (``#fuser.view<split [64, 128], keep>`` and
``<merge 2, keep>``) and the first one, returned as an output, is a view of the
input, not a copy.

    python examples/gelu_bookend_views.py          # the seed's 8192x3072 sizes
    python examples/gelu_bookend_views.py --small  # 8x6, viewed as 2x4x6
"""

from __future__ import annotations

import sys
from math import erf

import numpy as np

from fuser import DataType, FusionDefinition
from fuser.frontend import Fusion


def nvfuser_fusion_id10(fd: FusionDefinition, rows: int = 8192, b: int = 64, s: int = 128, h: int = 3072) -> None:
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True], dtype=DataType.Float)
    T1 = fd.ops.view(T0, original_shape=[rows, h], new_shape=[b, s, h])
    S2 = fd.define_constant(0.500000)
    T3 = fd.ops.mul(T1, S2)
    S4 = fd.define_constant(0.707107)
    T5 = fd.ops.mul(T1, S4)
    T6 = fd.ops.erf(T5)
    S7 = fd.define_constant(1.00000)
    T8 = fd.ops.add(T6, S7)
    T9 = fd.ops.mul(T3, T8)
    T10 = fd.ops.view(T9, original_shape=[b, s, h], new_shape=[rows, h])
    fd.add_output(T1)
    fd.add_output(T10)


def main() -> None:
    sizes = (8, 2, 4, 6) if "--small" in sys.argv else (8192, 64, 128, 3072)
    fs = Fusion()
    with FusionDefinition(fs) as fd:
        nvfuser_fusion_id10(fd, *sizes)
    print(fd)
    x = np.random.default_rng(0).standard_normal((sizes[0], sizes[3])).astype(np.float32)
    t1, t10 = fs.execute([x])
    want = x * 0.5 * (np.vectorize(erf, otypes=[np.float64])(x.astype(np.float64) * 0.707107) + 1)
    np.testing.assert_allclose(t10, want, rtol=1e-5, atol=1e-6)
    assert np.shares_memory(t1, x) and t1.shape == sizes[1:]
    runtime = next(iter(fd._entry.runtimes.values()))
    print(runtime.fusion)
    print(f"GELU of {x.shape} matches numpy; T1 {t1.shape} is a view of the input: {np.shares_memory(t1, x)}")


if __name__ == "__main__":
    main()
