"""fuser.uniform / fuser.normal: nvFuser's Philox4x32-10 random numbers.

* ``fuser_ir/philox.py`` against the Random123 known-answer vectors and against a
  scalar transcription of nvFuser's ``runtime/random_numbers.cu`` (one element at a
  time, the way a CUDA thread computes it);
* distribution checks (range, mean, standard deviation) and determinism;
* the frontend: ``fd.ops.uniform``/``normal`` with and without ``rng_seed``/``rng_offset``,
  the offset sequence after ``torch.manual_seed``, printing, ``from_mlir``, errors;
* the generated kernel: compiled with NVRTC, and run by the CPU kernel interpreter
  bit-identical to the reference.
"""

from __future__ import annotations

import math
import struct

import ml_dtypes
import numpy as np
import pytest

from fuser.ir.dialects import fuser as F
from fuser.ir.dtypes import DType
from fuser.ir.philox import normal_values, philox, philox4x32_10, uniform_values

torch = pytest.importorskip("torch")

from fuser.frontend import DataType, FusionDefinition  # noqa: E402

# ---- a scalar transcription of runtime/random_numbers.cu ---------------------------------

M32 = 0xFFFFFFFF


def _philox_scalar(seed: int, subseq: int, offset: int) -> list[int]:
    key = [seed & M32, (seed >> 32) & M32]
    ctr = [offset & M32, (offset >> 32) & M32, subseq & M32, (subseq >> 32) & M32]
    for i in range(10):
        if i:
            key = [(key[0] + 0x9E3779B9) & M32, (key[1] + 0xBB67AE85) & M32]
        p0 = 0xD2511F53 * ctr[0]
        p1 = 0xCD9E8D57 * ctr[2]
        ctr = [(p1 >> 32) ^ ctr[1] ^ key[0], p1 & M32, (p0 >> 32) ^ ctr[3] ^ key[1], p0 & M32]
    return ctr


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _uniform(x: int, y: int) -> float:
    scale = 1.0 / (1 << 53)
    r = float(x ^ (y << 21)) * scale + 0.5 * scale
    return 0.0 if r == 1.0 else r


def _raw_uniform_float(x: int) -> float:
    scale = _f32(1.0 / (1 << 32))
    return _f32(_f32(float(np.float32(x))) * scale + _f32(0.5 * scale))


def _uniformf(x: int) -> float:
    r = _raw_uniform_float(x)
    return 0.0 if r == 1.0 else r


def _scalar_uniform(dt: DType, seed: int, offset: int, i: int, lo: float, hi: float) -> float:
    m = 2 if dt == DType.float64 else 4
    r = _philox_scalar(seed, i // m, offset)
    c = i % m
    if dt == DType.float64:
        return lo + (hi - lo) * _uniform(r[2 * c], r[2 * c + 1])
    flo, fhi = _f32(lo), _f32(hi)
    rng = _f32(fhi - flo)
    if dt == DType.float32:
        return _f32(flo + _f32(rng * _uniformf(r[c])))
    t = np.float16 if dt == DType.float16 else ml_dtypes.bfloat16
    v = t(np.float32(_f32(flo + _f32(rng * _raw_uniform_float(r[c])))))
    return float(t(np.float32(flo)) if v == t(np.float32(fhi)) else v)


def test_philox_known_answers() -> None:
    """Random123's kat_vectors for philox4x32_10."""
    cases = [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((M32, M32, M32, M32), (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ]
    for ctr, key, want in cases:
        got = philox4x32_10(tuple(np.array([c], dtype=np.uint64) for c in ctr), key)  # type: ignore[arg-type]
        assert [int(w[0]) for w in got] == list(want)
        assert _philox_scalar(
            key[0] | key[1] << 32, ctr[2] | ctr[3] << 32, ctr[0] | ctr[1] << 32
        ) == list(want)


def test_philox_layout_seed_subsequence_offset() -> None:
    """nvFuser's ``philox(seed, subsequence, offset)``: key = seed, counter = (offset,
    subsequence), each split in 32-bit halves."""
    seed, offset = 0x0123456789ABCDEF, 0xFEDCBA9876543210
    subs = np.array([0, 1, 2**32 + 5], dtype=np.uint64)
    got = philox(seed, subs, offset)
    for k, s in enumerate(subs):
        assert [int(w) for w in got[:, k]] == _philox_scalar(seed, int(s), offset)


@pytest.mark.parametrize("dt", [DType.float64, DType.float32, DType.float16, DType.bfloat16])
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 1.0), (-1.5, 3.7), (1.8, 1223.5)])
def test_uniform_matches_the_scalar_cuda_transcription(dt: DType, lo: float, hi: float) -> None:
    seed, offset, n = 2**40 + 77, 13, 67
    full = uniform_values(dt, seed, offset, n, lo, hi)
    want = [_scalar_uniform(dt, seed, offset, i, lo, hi) for i in range(n)]
    np.testing.assert_array_equal(full.astype(np.float64), np.array(want))
    idx = np.array([66, 3, 0, 17])
    np.testing.assert_array_equal(uniform_values(dt, seed, offset, idx, lo, hi), full[idx])


@pytest.mark.parametrize("dt", [DType.float64, DType.float32, DType.float16, DType.bfloat16])
def test_normal_is_box_muller_of_the_uniforms(dt: DType) -> None:
    """Each pair of elements shares two uniforms: sin for the even one, cos for the odd."""
    seed, offset, n = 5, 2, 41
    full = normal_values(dt, seed, offset, n, 0.5, 2.0)
    m = 2 if dt == DType.float64 else 4
    for i in range(n):
        r = _philox_scalar(seed, i // m, offset)
        if dt == DType.float64:
            u, v = _uniform(r[0], r[1]), _uniform(r[2], r[3]) * 6.2831853071795860
        else:
            p = i % 4 // 2 * 2
            u, v = _uniformf(r[p]), _uniformf(r[p + 1]) * 6.2831855
        z = math.sqrt(-2 * math.log(u)) * (math.sin(v) if i % 2 == 0 else math.cos(v))
        tol = 1e-12 if dt == DType.float64 else (1e-5 if dt == DType.float32 else 2e-2)
        assert abs(float(full[i]) - (z * 2.0 + 0.5)) <= tol * (1 + abs(z * 2.0 + 0.5)), i
    idx = np.array([40, 1, 0, 7, 6])
    np.testing.assert_array_equal(normal_values(dt, seed, offset, idx, 0.5, 2.0), full[idx])


@pytest.mark.parametrize("dt", [DType.float64, DType.float32, DType.float16, DType.bfloat16])
def test_distributions(dt: DType) -> None:
    n = 1 << 20
    u = uniform_values(dt, 7, 0, n, -1.5, 3.7).astype(np.float64)
    assert u.min() >= -1.5 and u.max() < 3.7
    assert abs(u.mean() - 1.1) < 0.02 and abs(u.std() - 5.2 / math.sqrt(12)) < 0.02
    z = normal_values(dt, 7, 0, n, 3.7, 2.5).astype(np.float64)
    z = z[np.isfinite(z)]
    assert abs(z.mean() - 3.7) < 0.02 and abs(z.std() - 2.5) < 0.02
    # deterministic in (seed, offset); another offset or seed gives other values
    np.testing.assert_array_equal(
        uniform_values(dt, 7, 0, 64, 0, 1), uniform_values(dt, 7, 0, 64, 0, 1)
    )
    assert not np.array_equal(
        uniform_values(dt, 7, 1, 64, 0, 1), uniform_values(dt, 7, 0, 64, 0, 1)
    )
    assert not np.array_equal(
        uniform_values(dt, 8, 0, 64, 0, 1), uniform_values(dt, 7, 0, 64, 0, 1)
    )


def test_half_never_returns_high() -> None:
    """Half and bfloat16 values that round to ``high`` become ``low`` (nvFuser)."""
    for dt, t in ((DType.float16, np.float16), (DType.bfloat16, ml_dtypes.bfloat16)):
        v = uniform_values(dt, 3, 0, 1 << 18, 0.0, 1.0)
        assert v.dtype == t and float(v.max()) < 1.0 and float(v.min()) == 0.0


def test_float_uniform_edges() -> None:
    """The largest words map to 1.0 in float32, which becomes 0 (values in [0, 1))."""
    from fuser.ir.philox import _raw_uniform_float, _uniformf

    x = np.array([0, M32 - 128, M32 - 127, M32], dtype=np.uint64)
    assert _raw_uniform_float(x).tolist()[2:] == [1.0, 1.0]
    assert _uniformf(x).tolist() == [np.float32(2.0**-33), _raw_uniform_float(x)[1], 0.0, 0.0]


# ---- the reference interpreter on fuser IR -------------------------------------------------

_IR = """
fuser.fusion @random(%lo: f64, %hi: f64, %seed: i64, %off: i64, %n: i64) -> (!fuser.tensor<5x9xf32>, !fuser.tensor<?x3xf64>) {
  %0 = fuser.uniform %lo, %hi, %seed, %off {shape = array<i64: 5, 9>} : f64, f64, i64, i64 -> !fuser.tensor<5x9xf32>
  %1 = fuser.normal %lo, %hi, %seed, %off sizes(%n : i64) {shape = array<i64: -1, 3>} : f64, f64, i64, i64 -> !fuser.tensor<?x3xf64>
  fuser.output %0, %1 : !fuser.tensor<5x9xf32>, !fuser.tensor<?x3xf64>
}
"""


def test_reference_interpreter_runs_the_ops() -> None:
    from fuser.ir.context import parse_module
    from fuser.ir.reference import run_fusion

    (fusion,) = [op for op in parse_module(_IR).walk() if isinstance(op, F.FusionOp)]
    u, z = run_fusion(fusion, [-1.0, 2.0, -3, 2**40, 4])
    assert (
        u.shape == (5, 9) and u.dtype == np.float32 and z.shape == (4, 3) and z.dtype == np.float64
    )
    np.testing.assert_array_equal(
        u.ravel(), uniform_values(DType.float32, -3, 2**40, 45, -1.0, 2.0)
    )
    np.testing.assert_array_equal(z.ravel(), normal_values(DType.float64, -3, 2**40, 12, -1.0, 2.0))
    # a negative i64 seed is the same 64-bit key as its unsigned value
    np.testing.assert_array_equal(
        uniform_values(DType.float32, 2**64 - 3, 2**40, 45, -1.0, 2.0), u.ravel()
    )


# ---- the frontend ------------------------------------------------------------------------------


def _fusion(
    op: str, dtype: DataType = DataType.Float, deterministic: bool = False
) -> FusionDefinition:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        a = fd.define_scalar(0.3, DataType.Float)
        b = fd.define_scalar(1.7, DataType.Float)
        kw = {}
        if deterministic:
            kw = {
                "rng_seed": fd.define_scalar(DataType.Int),
                "rng_offset": fd.define_scalar(DataType.Int),
            }
        u = getattr(fd.ops, op)(a, b, shape=t0.shape(), dtype=dtype, **kw)
        fd.add_output(fd.ops.mul(t0, u))
    return fd


@pytest.mark.parametrize("op", ["uniform", "normal"])
def test_stochastic_runs_follow_torchs_seed(op: str) -> None:
    """Without rng_seed/rng_offset, the k-th execution after torch.manual_seed(s) is the
    deterministic one with seed s and offset k (nvFuser's offset advance); re-seeding
    repeats the sequence; planning and printing code do not move it."""
    x = torch.randn(5, 9)
    stoch, det = _fusion(op), _fusion(op, deterministic=True)
    assert "rng_seed" not in repr(stoch) and "rng_seed=S" in repr(det)
    torch.manual_seed(1234)
    stoch.plan([x])
    runs = [stoch.execute([x])[0] for _ in range(4)]
    for k, r in enumerate(runs):
        torch.testing.assert_close(r, det.execute([x, 1234, k])[0], rtol=0, atol=0)
    assert not torch.equal(runs[0], runs[1])
    torch.manual_seed(1234)
    torch.testing.assert_close(stoch.execute([x])[0], runs[0], rtol=0, atol=0)
    torch.rand(3)  # the generator moved on: a fresh seed, not a repeat
    assert not any(torch.equal(stoch.execute([x])[0], r) for r in runs)


def test_two_random_ops_take_consecutive_offsets() -> None:
    with FusionDefinition() as fd:
        u = fd.ops.uniform(0.0, 1.0, shape=[3, 4])
        z = fd.ops.normal(0.0, 1.0, shape=[3, 4], dtype=DataType.Double)
        fd.add_output(u)
        fd.add_output(z)
    torch.manual_seed(7)
    out_u, out_z = fd.execute([])
    assert out_u.dtype == torch.float32 and out_z.dtype == torch.float64
    np.testing.assert_array_equal(
        out_u.numpy().ravel(), uniform_values(DType.float32, 7, 0, 12, 0.0, 1.0)
    )
    np.testing.assert_array_equal(
        out_z.numpy().ravel(), normal_values(DType.float64, 7, 1, 12, 0.0, 1.0)
    )
    out_u2, _ = fd.execute([])
    np.testing.assert_array_equal(
        out_u2.numpy().ravel(), uniform_values(DType.float32, 7, 2, 12, 0.0, 1.0)
    )


def test_printed_definition_and_from_mlir_replay_the_values() -> None:
    fd = _fusion("uniform", DataType.Half)
    x = torch.randn(5, 9)
    torch.manual_seed(0)
    (want,) = fd.execute([x])
    scope: dict = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(repr(fd), scope)  # noqa: S102 - the printed definition re-executes
    with FusionDefinition() as fd2:
        next(v for k, v in scope.items() if k.startswith("nvfuser_fusion_id"))(fd2)
    torch.manual_seed(0)
    torch.testing.assert_close(fd2.execute([x])[0], want, rtol=0, atol=0)
    # the IR is explicit: the hidden seed/offset inputs are its last two i64 arguments
    fd3 = FusionDefinition.from_mlir(fd.fusion_ir())
    assert "rng_seed=S" in repr(fd3)
    torch.testing.assert_close(fd3.execute([x, 0, 0])[0], want, rtol=0, atol=0)


def test_segmented_run_gives_the_same_values() -> None:
    """The clone's segmented run (exec_nvfuser's check) draws the same seed/offset."""
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        u = fd.ops.uniform(0.0, 1.0, shape=t0.shape())
        s = fd.ops.sum(fd.ops.mul(t0, u), dims=[1])
        fd.add_output(fd.ops.segment_set(s) if hasattr(fd.ops, "segment_set") else s)
        fd.add_output(u)
    x = torch.randn(6, 8)
    torch.manual_seed(3)
    want = fd.execute([x])
    fd.segment([x])
    torch.manual_seed(3)
    got = fd.execute([x])
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w)


def test_frontend_errors() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        s = fd.define_scalar(DataType.Int)
        f = fd.define_scalar(DataType.Double)
        with pytest.raises(
            ValueError,
            match="uniform: random distributions only create floating point types, got DataType.Int",
        ):
            fd.ops.uniform(0.0, 1.0, shape=[2], dtype=DataType.Int)
        with pytest.raises(ValueError, match="normal: mean must be a scalar, got tensor T0"):
            fd.ops.normal(t0, 1.0, shape=[2])
        with pytest.raises(
            ValueError, match="uniform: rng_seed and rng_offset must be provided together"
        ):
            fd.ops.uniform(0.0, 1.0, shape=[2], rng_seed=s)
        with pytest.raises(
            ValueError, match="uniform: rng_offset must be an Int scalar, got S2 of DataType.Double"
        ):
            fd.ops.uniform(0.0, 1.0, shape=[2], rng_seed=s, rng_offset=f)
        with pytest.raises(ValueError, match="uniform: minval must be a real number scalar"):
            fd.ops.uniform(True, 1.0, shape=[2])
        with pytest.raises(ValueError, match="normal: negative extent in shape"):
            fd.ops.normal(0.0, 1.0, shape=[2, -3])
        with pytest.raises(ValueError, match="uniform: shape must be a list"):
            fd.ops.uniform(0.0, 1.0, shape=t0)


def test_generator_without_torch_continues_offsets() -> None:
    from fuser.ir.philox import _GeneratorState

    g = _GeneratorState()
    seed, off = g._next_numpy(2, True)  # two random ops: offsets 0 and 1
    assert off == 0
    assert g._next_numpy(1, False) == (seed, 2)  # peeking consumes nothing
    assert g._next_numpy(1, True) == (seed, 2)
    assert g._next_numpy(1, True) == (seed, 3)


# ---- the generated kernel ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [DataType.Double, DataType.Float, DataType.Half, DataType.BFloat16]
)
def test_kernel_interpreter_is_bit_identical_and_nvrtc_compiles(dtype: DataType) -> None:
    """The lowered kernel (one kernel.rng per element: the Philox device function of
    codegen/random_cuda.py) run by the CPU kernel interpreter equals the reference bit
    for bit; views of the random tensor (permute, slice, broadcast) keep each element's
    linear index. The CUDA compiles with NVRTC."""
    from fuser.runtime.cpu_runner import compile_with_nvrtc, run_segment_on_cpu

    def define(fd: FusionDefinition, which: int) -> None:
        t0 = fd.define_tensor(
            shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float
        )
        s = fd.define_scalar(DataType.Int)
        o = fd.define_scalar(DataType.Int)
        u = fd.ops.uniform(-1.5, 3.7, shape=[3, 7], rng_seed=s, rng_offset=o, dtype=dtype)
        z = fd.ops.normal(
            0.5, 2.0, shape=[7, 3], rng_seed=s, rng_offset=fd.ops.add(o, 1), dtype=dtype
        )
        if which == 0:
            both = fd.ops.add(fd.ops.permute(u, [1, 0]), z)
            fd.add_output(fd.ops.mul(t0, fd.ops.broadcast(both, [True, False, False])))
        elif which == 1:
            fd.add_output(u)
        else:
            fd.add_output(fd.ops.neg(fd.ops.slice(z, [1, 1], [6, 3], [1, 1])))

    x = torch.randn(2, 7, 3)
    for which in range(3):
        with FusionDefinition() as fd:
            define(fd, which)
        ref = fd.execute([x, -5, 11])
        outs, lowered = run_segment_on_cpu(fd.fusion(), [x.numpy(), -5, 11])
        for got, want in zip(outs, ref, strict=True):
            w = want.float().numpy() if dtype == DataType.BFloat16 else want.numpy()
            g = (
                np.asarray(got).astype(np.float32)
                if dtype == DataType.BFloat16
                else np.asarray(got)
            )
            np.testing.assert_array_equal(g, w)
    compile_with_nvrtc(lowered, fd.fusion())
    from fuser.codegen.cuda_printer import print_cuda

    assert all("fuser_philox(" in print_cuda(m) for m in lowered.modules())


def test_default_device_is_checked() -> None:
    """``set_default_device``: where fusions without tensor inputs run (the CPU unless a
    GPU is picked; nvFuser's is cuda:0). Without a GPU only the CPU settings are run."""
    from fuser.frontend.execute_options import default_device, set_default_device

    assert default_device() is None
    try:
        set_default_device("cuda:0")
        assert default_device() == ("cuda", 0)
        set_default_device("cpu")
        assert default_device() is None
        with pytest.raises(ValueError, match="unknown device"):
            set_default_device("tpu")
    finally:
        set_default_device(None)


@pytest.mark.parametrize("name", ["rand_like", "randn_like"])
def test_rand_like(name: str) -> None:
    """nvFuser's rand_like/randn_like: uniform(0, 1)/normal(0, 1) of the input's shape
    and dtype, printed as one op, with or without rng_seed/rng_offset."""
    x = torch.randn(3, 5, dtype=torch.float16)
    with FusionDefinition() as fd:
        t0 = fd.from_pytorch(x)
        s = fd.define_scalar(DataType.Int)
        o = fd.define_scalar(DataType.Int)
        fd.add_output(getattr(fd.ops, name)(t0))
        fd.add_output(getattr(fd.ops, name)(t0, rng_seed=s, rng_offset=o))
    text = repr(fd)
    assert f"T3 = fd.ops.{name}(T0)" in text
    assert f"T4 = fd.ops.{name}(T0, rng_seed=S1, rng_offset=S2)" in text
    torch.manual_seed(5)
    a, b = fd.execute([x, 5, 0])
    assert a.dtype == b.dtype == torch.float16 and a.shape == b.shape == (3, 5)
    fn = uniform_values if name == "rand_like" else normal_values
    np.testing.assert_array_equal(b.numpy().ravel(), fn(DType.float16, 5, 0, 15, 0.0, 1.0))
    torch.testing.assert_close(a, b, rtol=0, atol=0)  # after manual_seed(5): seed 5, offset 0
    scope: dict = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(text, scope)  # noqa: S102 - the printed definition re-executes
    with FusionDefinition() as fd2:
        next(v for k, v in scope.items() if k.startswith("nvfuser_fusion_id"))(fd2)
    torch.manual_seed(5)
    for got, want in zip(fd2.execute([x, 5, 0]), (a, b), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    with FusionDefinition() as fd3:
        i = fd3.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int)
        with pytest.raises(
            ValueError, match=f"{name}: input must have floating point type, but got DataType.Int"
        ):
            getattr(fd3.ops, name)(i)
