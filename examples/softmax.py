"""Softmax with a causal mask with the nvFuser-compatible frontend, checked against
numpy.

    python examples/softmax.py
"""

from __future__ import annotations

import numpy as np

from fuser import DataType, FusionDefinition


class CausalSoftmax(FusionDefinition):
    """Subclassing style: the definition runs on first use."""

    def __init__(self, seq: int) -> None:
        super().__init__()
        self.seq = seq

    def definition(self) -> None:
        fd = self
        x = fd.define_tensor(shape=[-1, -1, self.seq, self.seq], contiguity=[True] * 4, dtype=DataType.Float)
        row = fd.ops.broadcast(fd.ops.iota(self.seq, 0, 1, DataType.Int), [False, True])
        col = fd.ops.broadcast(fd.ops.iota(self.seq, 0, 1, DataType.Int), [True, False])
        x = fd.ops.where(col > row, float("-inf"), x)
        m = fd.ops.max(x, dims=[3], keepdim=True)
        e = fd.ops.exp(x - m)
        fd.add_output(e / fd.ops.sum(e, dims=[3], keepdim=True))


def main() -> None:
    seq = 6
    fd = CausalSoftmax(seq)
    x = np.random.default_rng(0).standard_normal((2, 3, seq, seq)).astype(np.float32)
    (y,) = fd.execute([x])
    print(fd)
    mask = np.triu(np.ones((seq, seq), bool), 1)
    xm = np.where(mask, -np.inf, x)
    e = np.exp(xm - xm.max(3, keepdims=True))
    want = e / e.sum(3, keepdims=True)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-7)
    print(y[0, 0])
    print(f"fusion {fd.id()}: causal softmax matches numpy; rows sum to 1: {np.allclose(y.sum(3), 1)}")


if __name__ == "__main__":
    main()
