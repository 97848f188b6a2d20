"""Layer norm with the nvFuser-compatible frontend, checked against numpy.

    python examples/layer_norm.py
"""

from __future__ import annotations

import numpy as np

from fuser import DataType, FusionDefinition


def layer_norm(fd: FusionDefinition, eps: float = 1e-5) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half)
    w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)
    b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Half)
    x32 = fd.ops.cast(x, DataType.Float)
    var, mean = fd.ops.var_mean(x32, dims=[1], correction=0, keepdim=True)
    y = (x32 - mean) * fd.ops.rsqrt(var + eps)
    y = y * fd.ops.cast(w, DataType.Float) + fd.ops.cast(b, DataType.Float)
    fd.add_output(fd.ops.cast(y, DataType.Half))
    fd.add_output(mean)


def main() -> None:
    with FusionDefinition() as fd:
        layer_norm(fd)
    print(fd)
    rng = np.random.default_rng(0)
    for rows, cols in ((4, 64), (16, 256)):  # new sizes reuse the same fusion
        x = rng.standard_normal((rows, cols)).astype(np.float16)
        w = rng.standard_normal(cols).astype(np.float16)
        b = rng.standard_normal(cols).astype(np.float16)
        y, mean = fd.execute([x, w, b])
        x32 = x.astype(np.float32)
        m = x32.mean(1, keepdims=True)
        want = (x32 - m) / np.sqrt(x32.var(1, keepdims=True) + 1e-5) * w.astype(np.float32) + b.astype(np.float32)
        np.testing.assert_allclose(y.astype(np.float32), want, rtol=1e-2, atol=1e-2)
        np.testing.assert_allclose(mean, m, rtol=1e-5, atol=1e-6)
        print(f"fusion {fd.id()}: layer norm of {rows}x{cols} matches numpy (max |err| = "
              f"{np.abs(y.astype(np.float32) - want).max():.2e})")


if __name__ == "__main__":
    main()
