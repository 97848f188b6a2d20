"""Caching, printing round trips, IR round trips, subclassing, input validation and
definition-time errors."""

from __future__ import annotations

import numpy as np
import pytest
from frontend_helpers import define, randn, rerun_printed

from fuser import DataType, FusionDefinition
from fuser.frontend import FusionCache

SEED_000 = '''
def nvfuser_fusion_id1(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)
    T3 = fd.ops.broadcast(T2, is_broadcast_dim=[False, True])
    T4 = fd.ops.add(T1, T3)
    fd.add_output(T4)
'''


def _add_const(c: float):
    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t0, c))

    return fn


def test_cache_hits_and_misses() -> None:
    n = FusionCache.get().num_fusions()
    a, b = define(_add_const(1.0)), define(_add_const(1.0))
    assert a.id() == b.id()
    c = define(_add_const(2.0))  # different constant
    assert c.id() != a.id()
    d = define(lambda fd: fd.add_output(fd.ops.exp(fd.define_tensor(shape=[-1, -1], contiguity=[True, True]))))
    assert d.id() not in (a.id(), c.id())
    assert FusionCache.get().num_fusions() - n <= 3
    reopened = FusionDefinition(a.id())
    assert repr(reopened) == repr(a)


def test_symbolic_size_change_reuses_fusion_and_runtime() -> None:
    pytest.importorskip("fuser.ir.reference")
    fd = define(_add_const(3.0))
    for shape in ((2, 3), (5, 7), (1, 9), (8, 8)):
        x = randn(*shape)
        (out,) = fd.execute([x])
        np.testing.assert_allclose(out, x + 3)
    assert fd.id() == define(_add_const(3.0)).id()
    # one runtime per broadcast pattern, not per size: (1, 9) has a size-1 axis
    assert fd.num_runtimes() == 2


def test_seed_000_definition_prints_back_verbatim() -> None:
    scope = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(SEED_000, scope)
    with FusionDefinition() as fd:
        scope["nvfuser_fusion_id1"](fd)
    body = SEED_000.strip().splitlines()[1:]
    assert repr(fd).strip().splitlines()[1:] == body
    assert repr(fd).startswith(f"\ndef nvfuser_fusion_id{fd.id()}(fd : FusionDefinition) -> None :\n")
    pytest.importorskip("fuser.ir.reference")
    x, y = randn(3, 4), randn(3, 4)
    (out,) = fd.execute([x, y])
    np.testing.assert_allclose(out, y + x.sum(1, keepdims=True), rtol=1e-5)
    fd2, (out2,) = rerun_printed(fd, [x, y])
    np.testing.assert_array_equal(out2, out)


def test_seed_000_segments_run() -> None:
    pytest.importorskip("fuser.ir.reference")
    x, y = randn(3, 4), randn(3, 4)

    def seg1(fd):
        T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
        T1 = fd.ops.sum(T0, dims=[1], keepdim=False, dtype=DataType.Float)
        T2 = fd.ops.broadcast(T1, is_broadcast_dim=[False, True])
        fd.add_output(T2)

    def seg2(fd):
        T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
        T1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False)
        T2 = fd.ops.add(T0, T1)
        fd.add_output(T2)

    (t3,) = define(seg1).execute([x])
    (t4,) = define(seg2).execute([y, t3])
    np.testing.assert_allclose(t4, y + x.sum(1, keepdims=True), rtol=1e-5)


def test_mlir_round_trip() -> None:
    fd = define(_add_const(5.0))
    text = fd.to_mlir()
    assert text.count("fuser.fusion") == 1 and "fuser.constant 5.0" in text
    back = FusionDefinition.from_mlir(text)
    assert back.id() == fd.id()
    with pytest.raises(ValueError, match="from_mlir"):
        FusionDefinition.from_mlir("builtin.module {")


def test_subclass_with_definition() -> None:
    pytest.importorskip("fuser.ir.reference")

    class Gelu(FusionDefinition):
        def definition(self) -> None:
            t0 = self.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
            self.add_output(t0 * 0.5 * (1.0 + self.ops.erf(t0 * 0.7071067811865476)))

    x = randn(16)
    fd = Gelu()
    (out,) = fd.execute([x])
    from math import erf

    want = x * 0.5 * (1 + np.vectorize(erf)(x * 0.7071067811865476))
    np.testing.assert_allclose(out, want, rtol=1e-5)
    assert "fd.ops.erf" in repr(fd)


def test_repro_script_runs() -> None:
    pytest.importorskip("fuser.ir.reference")
    fd = define(_add_const(1.5))
    x = randn(2, 3)
    script = fd.repro_script_for([x])
    assert script.startswith("import ml_dtypes") and "rng.standard_normal((2, 3))" in script
    scope: dict = {}
    exec(script, scope)
    assert scope["outputs"][0].shape == (2, 3)


def test_input_validation() -> None:
    pytest.importorskip("fuser.ir.reference")

    def fn(fd):
        t0 = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(t0 + t1 + s)

    fd = define(fn)
    x, y = randn(3, 4), randn(3, 4)
    with pytest.raises(ValueError, match=r"expected 3 inputs \(T0, T1, S2\), got 2"):
        fd.execute([x, y])
    with pytest.raises(ValueError, match=r"input 1 \(T1\): expected dtype float32, got float64"):
        fd.execute([x, y.astype(np.float64), 1])
    with pytest.raises(ValueError, match=r"input 0 \(T0\): expected rank 2, got rank 1"):
        fd.execute([x[0], y, 1])
    with pytest.raises(ValueError, match=r"input 0 \(T0\): static axis 1 must have size 4"):
        fd.execute([randn(3, 5), y, 1])
    with pytest.raises(ValueError, match=r"input 1 \(T1\): axis 1 is declared contiguous"):
        fd.execute([x, randn(3, 8)[:, ::2], 1])
    with pytest.raises(ValueError, match=r"input 2 \(S2\): expected a scalar of dtype int64"):
        fd.execute([x, y, 1.5])


def test_definition_time_errors() -> None:
    with pytest.raises(ValueError, match=r"reshape: sizes \[8, 4\] \(32 elements\) and \[5, 7\] \(35 elements\) do not multiply out"):
        with FusionDefinition() as fd:
            fd.ops.reshape(fd.define_tensor(shape=[8, 4], contiguity=[True, True]), [5, 7])
    with pytest.raises(ValueError, match=r"sum: dim 3 is out of range for rank 2"):
        with FusionDefinition() as fd:
            fd.ops.sum(fd.define_tensor(shape=[-1, -1], contiguity=[True, True]), [3])
    with pytest.raises(ValueError, match=r"add: shapes \[2, 3\], \[4\] do not broadcast"):
        with FusionDefinition() as fd:
            fd.ops.add(fd.define_tensor(shape=[2, 3], contiguity=[True, True]), fd.define_tensor(shape=[4], contiguity=[True]))
    with pytest.raises(ValueError, match=r"lt: operand #0 is complex \(complex64\)"):
        with FusionDefinition() as fd:
            c = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.ComplexFloat)
            fd.ops.lt(c, c)
    with pytest.raises(ValueError, match="permute: dims"):
        with FusionDefinition() as fd:
            fd.ops.permute(fd.define_tensor(shape=[-1, -1], contiguity=[True, True]), [0, 0])
    with pytest.raises(ValueError, match="contiguity has 1 entries"):
        with FusionDefinition() as fd:
            fd.define_tensor(shape=[-1, -1], contiguity=[True])


def test_define_tensor_from_sizes_strides_and_from_pytorch() -> None:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(sizes=[2, 1, 3], strides=[3, 3, 1], dtype=DataType.Half)
        t1 = fd.from_pytorch(np.zeros((4, 5), np.float32).T)
        fd.add_output(t0)
        fd.add_output(t1)
    text = repr(fd)
    # nvFuser records the stride order that sizes and strides give, row-major included
    assert "T0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])" in text
    assert "T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[0, 1])" in text


def test_torch_inputs_return_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("fuser.ir.reference")
    fd = define(_add_const(1.0))
    x = torch.randn(2, 3)
    (out,) = fd.execute([x])
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, x + 1)


def test_expanded_broadcast_input() -> None:
    """Issue 11: contiguity None on an axis that is not size 1 is an expanded
    (stride-0) axis; define_tensor and from_pytorch accept it and it runs as is."""
    import torch

    x = torch.randn(5).expand(4, 5)
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[None, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t0, dims=[0]))
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x.sum(0))
    with FusionDefinition() as fd2:
        t1 = fd2.from_pytorch(x)
        fd2.add_output(fd2.ops.mul(t1, 2.0))
    assert "contiguity=[None, True]" in str(fd2)
    (out2,) = fd2.execute([x])
    torch.testing.assert_close(out2, x * 2.0)
    # The expanded axis must have stride 0, and a contiguous axis cannot be expanded.
    with pytest.raises(ValueError, match=r"input 0 \(T0\): axis 0 is declared an expanded broadcast"):
        fd.execute([torch.randn(4, 5)])
    with FusionDefinition() as fd3:
        t2 = fd3.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd3.add_output(fd3.ops.neg(t2))
    with pytest.raises(ValueError, match=r"input 0 \(T0\): axis 0 is declared contiguous"):
        fd3.execute([x])
