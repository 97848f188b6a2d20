"""An input updated in place (``fd.add_output(out, alias_input=x)``) that shares its
memory with another argument of the kernel writing it: the program cuts the update
behind a temporary when the program itself passes a view of ``x`` (``mark-aliases``),
and ``fd.execute`` raises a ``ValueError`` when the caller does
(``fuser.runtime.overlap``). The GPU side is tests/gpu/test_gpu_in_place_inputs.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.frontend import execution
from fuser.ir.dialects import hir as H
from fuser.runtime.overlap import byte_span, in_place_conflict
from fuser.schedulers.target import DEFAULT_TARGET


def _plus_own_transpose(fd: FusionDefinition) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.add(x, fd.ops.permute(x, [1, 0])), alias_input=x)


def _plus_transpose(fd: FusionDefinition, elementwise: bool = False) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    y = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    z = fd.ops.mul(x, y) if elementwise else fd.ops.add(x, fd.ops.permute(y, [1, 0]))
    fd.add_output(z, alias_input=x)


def _root(v: Any) -> Any:
    while isinstance(v.owner, H.HostViewOp):
        v = v.owner.view_input()
    return v


def test_a_view_of_the_updated_input_is_not_read_by_the_kernel_writing_it() -> None:
    """``x + x.T`` into ``x``: strip-bookend-views passes ``hir.permute %x`` beside
    ``%x``; no launch may write ``%x`` while it reads that view (it did, on the GPU a
    race between the blocks)."""
    with FusionDefinition() as fd:
        _plus_own_transpose(fd)
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    entry = fd._ensure_defined()  # noqa: SLF001
    exe = execution.executable_for(entry, execution.runtime_for(entry, [a]), [a], 0, DEFAULT_TARGET)
    launches = [op for op in exe.module.walk() if isinstance(op, H.LaunchOp)]
    assert len(launches) == 2  # the sum into a temporary, then the copy into x
    for launch in launches:
        written = {_root(o) for o in launch.outs}
        for arg in launch.args:
            assert _root(arg) not in written or any(arg is o for o in launch.outs), launch
    b = a.copy()
    fd.execute([b])
    np.testing.assert_allclose(b, a + a.T, rtol=1e-6)
    c = a.copy()
    execution.execute_kernels_on_cpu(entry, [c], nvrtc=False)
    np.testing.assert_allclose(c, a + a.T, rtol=1e-6)


@pytest.mark.parametrize(
    "case,elementwise,ok",
    [("same", False, False), ("same", True, True), ("copy", False, True), ("overlapping rows", True, False)],
)
def test_an_input_sharing_the_updated_inputs_memory(case: str, elementwise: bool, ok: bool) -> None:
    with FusionDefinition() as fd:
        _plus_transpose(fd, elementwise)
    base = np.random.default_rng(1).standard_normal((9, 8)).astype(np.float32)
    b = base.copy()
    x, y = {
        "same": (b[:8], b[:8]),
        "copy": (b[:8], b[:8].copy()),
        "overlapping rows": (b[:8], b[1:]),
    }[case]
    want = x * y if elementwise else x + y.T
    if ok:
        fd.execute([x, y])
        np.testing.assert_allclose(x, want, rtol=1e-6)
        return
    with pytest.raises(ValueError, match=r"input #1 shares memory with input #0, which output #0 updates in place"):
        fd.execute([x, y])
    np.testing.assert_array_equal(b, base)  # nothing was written


def test_byte_spans() -> None:
    a = np.zeros((4, 6), np.float32)
    start = a.__array_interface__["data"][0]
    assert byte_span(a)[:3] == ("host", start, start + 96)
    assert byte_span(a.T)[:3] == ("host", start, start + 96)
    assert byte_span(a[1:, ::2])[:3] == ("host", start + 24, start + 96 - 4)
    assert byte_span(a[::-1])[:3] == ("host", start, start + 96)  # negative strides
    assert byte_span(a[:0]) is None and byte_span(3.0) is None
    assert byte_span(a)[3] != byte_span(a.T)[3]  # another view of the same bytes


def test_in_place_conflict_names_the_inputs() -> None:
    a = np.zeros((4, 4), np.float32)
    other = np.zeros((4, 4), np.float32)
    assert in_place_conflict([-1], [a, a], lambda j: False) is None  # nothing in place
    assert in_place_conflict([0], [a, other], lambda j: False) is None
    assert in_place_conflict([0], [a, a], lambda j: True) is None  # the same view, read aligned
    assert "input #1 shares memory with input #0" in in_place_conflict([0], [a, a], lambda j: False)
    assert "input #1 shares memory with input #0" in in_place_conflict([0], [a, a.T], lambda j: True)
    assert "output #1 updates" in in_place_conflict([-1, 0], [a, 2.0, a[1:]], lambda j: True)
