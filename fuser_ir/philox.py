"""nvFuser's random numbers: Philox4x32-10 keyed by (seed, offset), vectorized in numpy.

The semantics of ``fuser.uniform`` and ``fuser.normal`` (nvFuser's ``RNGOp``,
``runtime/random_numbers.cu``), shared by the reference interpreter and the CPU kernel
interpreter, and mirrored by the CUDA device functions of ``codegen/random.py``:

* element ``i`` of the row-major result draws from ``philox(seed, i // m, offset)``
  with ``m = 2`` for float64 results (two 32-bit words per value) and ``m = 4``
  otherwise; ``i % m`` picks the component. The Philox key is the 64-bit ``seed``, the
  counter is ``(offset lo, offset hi, subsequence lo, subsequence hi)``.
* uniform: float64 takes 53 bits of two words, ``(z + 0.5) * 2**-53``; the float types
  take one word, ``float(x) * 2**-32 + 2**-33`` in float32. Both lie in ``(0, 1]`` and 1
  becomes 0, so values lie in ``[0, 1)``. A range is ``low + (high - low) * u`` in the
  compute type (float64, else float32); half and bfloat16 round that to their type and
  a value equal to ``high`` becomes ``low``.
* normal: Box-Muller, ``sqrt(-2 log u) * sin(2 pi v)`` for even components and ``cos``
  for odd ones, from two uniforms (float64: the four words of the subsequence; the
  float types: the two words of the component's pair), then ``normal * std + mean``.

Every multiply-add is rounded twice (no fused multiply-add), here and in the CUDA
functions, so uniform values are bit-identical on the CPU and the GPU; normal values
use the math library's ``log``/``sin``/``cos``/``sqrt`` and agree to a few ulps.

When a definition gives no ``rng_seed``/``rng_offset`` the frontend draws them per
execution (``next_seed_and_offset``), as nvFuser does from torch's generator.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from fuser.ir.dtypes import DType

MASK32 = np.uint64(0xFFFFFFFF)
_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_U64 = (1 << 64) - 1

RANDOM_DTYPES: tuple[DType, ...] = (DType.float64, DType.float32, DType.float16, DType.bfloat16)

_NP: dict[DType, Any] = {
    DType.float64: np.float64,
    DType.float32: np.float32,
    DType.float16: np.float16,
    DType.bfloat16: ml_dtypes.bfloat16,
}


def philox4x32_10(
    counter: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], key: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Philox4x32-10 (Random123) on arrays of 32-bit counter words held in uint64 (scalars
    broadcast); the four output words, as uint64 arrays of 32-bit values. Each round
    works in place on preallocated arrays (about 3x faster than fresh temporaries)."""
    words = [np.asarray(c, dtype=np.uint64) for c in counter]
    shape = np.broadcast_shapes(*(w.shape for w in words))
    c0, c1, c2, c3 = (np.bitwise_and(w, MASK32, out=np.empty(shape, np.uint64)) for w in words)
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    p0 = np.empty(shape, np.uint64)
    p1 = np.empty(shape, np.uint64)
    s32 = np.uint64(32)
    for r in range(10):
        if r:
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
        np.multiply(c0, _M0, out=p0)
        np.multiply(c2, _M1, out=p1)
        # (c0, c1, c2, c3) <- (hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0))
        np.right_shift(p1, s32, out=c0)
        np.bitwise_xor(c0, c1, out=c0)
        np.bitwise_xor(c0, np.uint64(k0), out=c0)
        np.right_shift(p0, s32, out=c2)
        np.bitwise_xor(c2, c3, out=c2)
        np.bitwise_xor(c2, np.uint64(k1), out=c2)
        np.bitwise_and(p1, MASK32, out=c1)
        np.bitwise_and(p0, MASK32, out=c3)
    return c0, c1, c2, c3


def philox(seed: int, subsequence: np.ndarray, offset: int) -> np.ndarray:
    """nvFuser's ``philox(seed, subsequence, offset)``: a ``(4, n)`` uint64 array of
    32-bit words for each subsequence."""
    seed &= _U64
    offset &= _U64
    sub = np.asarray(subsequence, dtype=np.uint64)
    lo, hi = np.uint64(offset & 0xFFFFFFFF), np.uint64(offset >> 32)
    out = philox4x32_10(
        (lo, hi, sub & MASK32, sub >> np.uint64(32)), (seed & 0xFFFFFFFF, seed >> 32)
    )
    return np.stack(out)


def multiple(dtype: DType) -> int:
    """Values per Philox call: 2 for float64, 4 for the other float types."""
    return 2 if dtype == DType.float64 else 4


def _gather(
    seed: int, offset: int, index: np.ndarray | int, m: int, rows: list[list[int]]
) -> list[np.ndarray]:
    """Per element ``i``: for each ``rows[j]`` (one word row per component ``i % m``), the
    word ``rows[j][i % m]`` of ``philox(seed, i // m, offset)``. ``index`` is an array of
    linear indices, or ``n`` for ``0..n-1`` (each subsequence computed once)."""
    if isinstance(index, int):
        n = index
        words = philox(seed, np.arange((n + m - 1) // m, dtype=np.uint64), offset)
        return [words[r].T.reshape(-1)[:n] for r in rows]
    idx = np.asarray(index, dtype=np.uint64).reshape(-1)
    words = philox(seed, idx // np.uint64(m), offset)
    comp = (idx % np.uint64(m)).astype(np.int64)
    cols = np.arange(len(idx))
    return [words[np.asarray(r)[comp], cols] for r in rows]


def _uniform_double(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``uniform(x, y)``: 53 bits in ``(0, 1]``, 1 mapped to 0."""
    scale = 1.0 / float(1 << 53)
    z = x ^ (y << np.uint64(21))
    r = z.astype(np.float64) * scale + 0.5 * scale
    return np.where(r == 1.0, 0.0, r)


def _raw_uniform_float(x: np.ndarray) -> np.ndarray:
    """``raw_uniform_float(x)``: ``float(x) * 2**-32 + 2**-33`` in float32, in ``(0, 1]``."""
    scale = np.float32(1.0 / float(1 << 32))
    return x.astype(np.float32) * scale + np.float32(0.5) * scale


def _uniformf(x: np.ndarray) -> np.ndarray:
    r = _raw_uniform_float(x)
    return np.where(r == np.float32(1.0), np.float32(0.0), r).astype(np.float32)


def _param(v: Any, ct: Any) -> Any:
    """A scalar parameter in the compute type (one rounding from its own type)."""
    return np.asarray(v).astype(ct)[()]


def uniform_values(
    dtype: DType, seed: int, offset: int, index: np.ndarray | int, low: Any, high: Any
) -> np.ndarray:
    """``fuser.uniform``: 1-D values of ``dtype`` at the linear ``index``es (or
    ``0..index-1``), drawn in ``[low, high)``."""
    _check(dtype)
    with np.errstate(all="ignore"):
        if dtype == DType.float64:
            x, y = _gather(seed, offset, index, 2, [[0, 2], [1, 3]])
            u = _uniform_double(x, y)
            lo, hi = _param(low, np.float64), _param(high, np.float64)
            return (lo + (hi - lo) * u).astype(np.float64)
        (x,) = _gather(seed, offset, index, 4, [[0, 1, 2, 3]])
        lo, hi = _param(low, np.float32), _param(high, np.float32)
        rng = np.float32(hi - lo)
        if dtype == DType.float32:
            return (lo + rng * _uniformf(x)).astype(np.float32)
        t = _NP[dtype]
        v = (lo + rng * _raw_uniform_float(x)).astype(np.float32).astype(t)
        return np.where(v == np.float32(hi).astype(t), np.float32(lo).astype(t), v).astype(t)


def normal_values(
    dtype: DType, seed: int, offset: int, index: np.ndarray | int, mean: Any, std: Any
) -> np.ndarray:
    """``fuser.normal``: 1-D values of ``dtype`` at the linear ``index``es (or
    ``0..index-1``), normal with ``mean`` and ``std`` (Box-Muller)."""
    _check(dtype)
    # Elements 2p and 2p+1 share their two uniforms (sin for the even one, cos for the
    # odd one): compute them per pair.
    if isinstance(index, int):
        pairs: np.ndarray | int = (index + 1) // 2
        parity = None
    else:
        idx = np.asarray(index, dtype=np.uint64).reshape(-1)
        pairs, parity = idx // np.uint64(2), idx % np.uint64(2)
    with np.errstate(all="ignore"):
        if dtype == DType.float64:
            w0, w1, w2, w3 = _gather(seed, offset, pairs, 1, [[0], [1], [2], [3]])
            u = _uniform_double(w0, w1)
            v = _uniform_double(w2, w3) * 6.2831853071795860
            r = np.sqrt(-2.0 * np.log(u))
            ct: Any = np.float64
        else:
            x, y = _gather(seed, offset, pairs, 2, [[0, 2], [1, 3]])
            u = _uniformf(x)
            v = _uniformf(y) * np.float32(6.2831855)
            r = np.sqrt(np.float32(-2.0) * np.log(u))
            ct = np.float32
        if parity is None:
            n = np.empty(2 * len(r), dtype=ct)
            n[0::2] = r * np.sin(v)
            n[1::2] = r * np.cos(v)
            n = n[:index]
        else:
            n = np.where(parity == 0, r * np.sin(v), r * np.cos(v)).astype(ct)
        out = (n * _param(std, ct) + _param(mean, ct)).astype(ct)
        return out.astype(_NP[dtype])


def _check(dtype: DType) -> None:
    if dtype not in RANDOM_DTYPES:
        raise ValueError(
            f"random values must be a floating point type (float64, float32, float16, bfloat16), got {dtype}"
        )


def random_values(
    dist: str, dtype: DType, seed: int, offset: int, index: np.ndarray | int, a: Any, b: Any
) -> np.ndarray:
    """``uniform_values`` (``dist == "uniform"``) or ``normal_values`` (``"normal"``)."""
    if dist == "uniform":
        return uniform_values(dtype, seed, offset, index, a, b)
    if dist == "normal":
        return normal_values(dtype, seed, offset, index, a, b)
    raise ValueError(f"unknown distribution '{dist}' (uniform or normal)")


# ---- seed and offset of an execution without rng_seed/rng_offset ---------------------------


class _GeneratorState:
    """The Philox (seed, offset) that executions without ``rng_seed``/``rng_offset``
    take, tied to torch's default CPU generator as nvFuser ties them to the CUDA one.

    nvFuser reads the generator's seed and Philox offset and advances the offset by 4
    per random op (offsets are in units of four 32-bit words: ``offset / 4 + k`` for
    the ``k``-th op). torch's CPU generator (a Mersenne Twister) has no offset, so the
    offset is kept here with the generator state it belongs to:

    * right after ``torch.manual_seed(s)`` (the generator's state is the one seeding
      gives): seed ``s``, offset 0, so after seeding executions see offsets 0, 1, ...
      exactly as on the GPU (``test_deterministic_random``);
    * when the state is the one this module left after its last draw: continue;
    * otherwise (the generator was used by torch since): a fresh seed drawn from it.

    Each draw then advances torch's generator by one value, so re-seeding with the same
    seed is recognized again. Without torch a module-level numpy generator gives the
    seed, and offsets continue from it.
    """

    def __init__(self) -> None:
        self.state: Any = None
        self.seed = 0
        self.offset = 0
        self._fresh: dict[int, Any] = {}
        self._np = np.random.default_rng()

    def next(self, ops: int, advance: bool = True) -> tuple[int, int]:
        """(seed, offset) for an execution with ``ops`` random ops; ``advance=False``
        only peeks (planning, printing), nothing is consumed."""
        try:
            import torch
        except ImportError:
            return self._next_numpy(ops, advance)
        current = torch.get_rng_state()
        if self.state is not None and torch.equal(current, self.state):
            seed, offset = self.seed, self.offset
        else:
            initial = torch.initial_seed()
            fresh = self._fresh.get(initial)
            if fresh is None:
                fresh = self._fresh[initial] = torch.Generator().manual_seed(initial).get_state()
            if torch.equal(current, fresh):
                seed, offset = initial, 0
            elif not advance:
                seed, offset = initial, 0
            else:
                seed, offset = int(torch.randint(0, 2**62, (1,)).item()), 0
        if not advance:
            return _signed(seed), offset
        torch.randint(0, 2, (1,))  # move the generator on: a later re-seed is seen
        self.state = torch.get_rng_state()
        self.seed, self.offset = seed, offset + ops
        return _signed(seed), offset

    def _next_numpy(self, ops: int, advance: bool) -> tuple[int, int]:
        if self.state is None:
            self.state, self.seed, self.offset = "numpy", int(self._np.integers(0, 2**62)), 0
        seed, offset = self.seed, self.offset
        if advance:
            self.offset += ops
        return seed, offset


def _signed(v: int) -> int:
    """A 64-bit seed as the int64 a fusion input holds."""
    v &= _U64
    return v - (1 << 64) if v >= 1 << 63 else v


_GENERATOR = _GeneratorState()


def next_seed_and_offset(ops: int, advance: bool = True) -> tuple[int, int]:
    """The (seed, Philox offset) of the next execution of a fusion with ``ops`` random
    ops without ``rng_seed``/``rng_offset`` (see ``_GeneratorState``); the ``k``-th op
    uses ``offset + k``."""
    return _GENERATOR.next(ops, advance)
