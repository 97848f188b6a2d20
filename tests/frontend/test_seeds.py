"""The Python definitions of seed 002 (legacy spellings: ``symbolic_sizes=``,
``contiguous=``, ``define_constant``, ``ops.view``, ``fd.permute``) run."""

from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import define, randn, rerun_printed

from fuser import DataType, FusionDefinition
from fuser.frontend import Fusion

pytest.importorskip("fuser.ir.reference")


def transpose_fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1, -1], contiguous=[True, True, True], dtype=DataType.Float)
    T1 = fd.ops.view(T0, original_shape=[768, 128, 64], new_shape=[64, 12, 128, 64])
    T2 = fd.ops.permute(T1, dims=[0, 2, 1, 3])
    T3 = fd.ops.set(T2)
    T4 = fd.ops.view(T3, original_shape=[64, 128, 12, 64], new_shape=[64, 128, 768])
    T5 = fd.ops.view(T4, original_shape=[64, 128, 768], new_shape=[8192, 768])
    fd.add_output(T5)


def gelu_fusion(fd: FusionDefinition, rows: int = 8192, b: int = 64, s: int = 128, h: int = 3072) -> None:
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


def test_seed_002_transpose_with_bookend_views() -> None:
    fs = Fusion()
    with FusionDefinition(fs) as fd:
        transpose_fusion(fd)
    x = randn(768, 128, 64)
    (out,) = fs.execute([x])
    np.testing.assert_array_equal(out, x.reshape(64, 12, 128, 64).transpose(0, 2, 1, 3).reshape(8192, 768))
    assert "#fuser.view<" in str(fd._entry.runtimes[next(iter(fd._entry.runtimes))].fusion)


def test_seed_002_legacy_permute_without_dims() -> None:
    with FusionDefinition() as fd:
        T0 = fd.define_tensor(symbolic_sizes=[-1, -1, -1], contiguous=[True, True, True], dtype=DataType.Float)
        T1 = fd.ops.view(T0, original_shape=[768, 128, 64], new_shape=[64, 12, 128, 64])
        T2 = fd.permute(T1)
        T4 = fd.ops.view(fd.ops.set(T2), original_shape=[64, 128, 12, 64], new_shape=[64, 128, 768])
        fd.add_output(T4)
    assert "fd.ops.permute(T1, dims=[3, 2, 1, 0])" in repr(fd)


def test_seed_002_gelu_definition_and_small_run() -> None:
    big = define(gelu_fusion)  # the seed's sizes: define, print, concretize lazily
    assert "T1 = fd.ops.reshape(T0, new_shape=[64, 128, 3072])" in repr(big)
    assert "S2 = fd.define_scalar(0.5, dtype=DataType.Double)" in repr(big)

    fd = define(lambda fd: gelu_fusion(fd, rows=8, b=2, s=4, h=6))
    x = randn(8, 6)
    t1, t10 = fd.execute([x])
    from math import erf

    want = x * 0.5 * (np.vectorize(erf)(x * 0.707107) + 1)
    np.testing.assert_allclose(t10, want, rtol=1e-5)
    assert np.shares_memory(t1, x) and t1.shape == (2, 4, 6)
    _, (r1, r10) = rerun_printed(fd, [x])
    np.testing.assert_array_equal(r10, t10)


def test_seed_002_simple_fusion_swapping_views() -> None:
    def simple_fusion(fd: FusionDefinition) -> None:
        T = fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True], dtype=DataType.Float)
        current_shape = [16, 12]
        other_shape = [4, 4, 12]

        def insert_view(_T):
            nonlocal current_shape, other_shape
            new_shape = other_shape
            out = fd.ops.view(_T, original_shape=current_shape, new_shape=new_shape)
            other_shape, current_shape = current_shape, other_shape
            return out

        T = insert_view(T)
        T = fd.ops.add(T, T)
        T = insert_view(T)
        T = fd.ops.mul(T, T)
        T = insert_view(T)
        fd.add_output(T)

    x = randn(16, 12)
    (out,) = define(simple_fusion).execute([x])
    np.testing.assert_allclose(out, ((x + x) * (x + x)).reshape(4, 4, 12), rtol=1e-6)


def test_plan_hook() -> None:
    pytest.importorskip("fuser.runtime.plan")
    fd = define(lambda fd: fd.add_output(fd.ops.exp(fd.define_tensor(shape=[-1, -1], contiguity=[True, True]))))
    assert fd.plan([randn(4, 8)]) is not None
