"""Symbolic extents on the H100: a 12-size batch sweep of one fusion through
``fd.execute`` compiles at most 3 kernels with NVRTC (issue 15's acceptance), and
every size matches torch, including the sizes whose kernel was compiled for
another batch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.codegen.kernel_cache import KernelCache, default_cache  # noqa: E402

pytestmark = pytest.mark.gpu

SIZES = [1, 2, 3, 8, 17, 64, 100, 255, 256, 1000, 2047, 4096]


def _softmax(width: int, dtype: DataType) -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, width], contiguity=[True, True], dtype=dtype)
        if dtype != DataType.Float:
            x = fd.ops.cast(x, DataType.Float)
        m = fd.ops.max(x, dims=[1], keepdim=True)
        e = fd.ops.exp(x - m)
        y = e / fd.ops.sum(e, dims=[1], keepdim=True)
        if dtype != DataType.Float:
            y = fd.ops.cast(y, dtype)
        fd.add_output(y)
    return fd


def _layernorm(width: int) -> FusionDefinition:
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, width], contiguity=[True, True], dtype=DataType.Float)
        g = fd.define_tensor(shape=[width], contiguity=[True], dtype=DataType.Float)
        mean = fd.ops.mul(fd.ops.sum(x, dims=[1], keepdim=True), 1.0 / width)
        xc = fd.ops.sub(x, mean)
        var = fd.ops.mul(fd.ops.sum(fd.ops.mul(xc, xc), dims=[1], keepdim=True), 1.0 / width)
        fd.add_output(xc * fd.ops.rsqrt(var + 1e-5) * fd.ops.broadcast(g, [True, False]))
    return fd


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path) -> KernelCache:  # noqa: ANN001
    """An empty kernel cache (memory and disk) for the duration of a test."""
    from fuser.codegen import kernel_cache

    cache = KernelCache(directory=tmp_path)
    monkeypatch.setattr(kernel_cache, "_default", cache)
    assert default_cache() is cache
    return cache


@pytest.mark.parametrize(("name", "dtype"), [("softmax", "float32"), ("softmax", "bfloat16"), ("layernorm", "float32")])
def test_twelve_batch_sizes_compile_at_most_three_kernels(name: str, dtype: str, fresh_cache: KernelCache) -> None:
    width = 768
    tdt = getattr(torch, dtype)
    fd = _softmax(width, DataType.BFloat16 if dtype == "bfloat16" else DataType.Float) if name == "softmax" \
        else _layernorm(width)
    g = torch.randn(width, device="cuda")
    for n in SIZES:
        x = torch.randn(n, width, device="cuda", dtype=tdt)
        if name == "softmax":
            (out,) = fd.execute([x])
            ref = torch.softmax(x.double(), dim=1)
        else:
            (out,) = fd.execute([x, g])
            ref = torch.nn.functional.layer_norm(x.double(), (width,), eps=1e-5) * g.double()
        tol = 2e-2 if dtype == "bfloat16" else 1e-5
        torch.testing.assert_close(out.double(), ref, rtol=tol, atol=tol)
    assert fresh_cache.stats.misses <= 3, fresh_cache.stats
    assert fresh_cache.stats.memory_hits >= len(SIZES) - 3
