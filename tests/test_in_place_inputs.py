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


def _outputs_beside_the_update(fd: FusionDefinition) -> None:
    """``x + 1`` into ``x``, and ``(x + 1) * 2`` returned: the pointwise kernel
    evaluated each output from its loads, so it loaded ``x`` for the second output
    after it had stored the update (an Adam step's shape: the new moments are written
    in place and the parameter update is computed from them). Now one kernel that
    stores both after its loads (``loop_nest.pointwise_kernel``'s store groups)."""
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    v = fd.ops.add(x, 1.0)
    fd.add_output(v, alias_input=x)
    fd.add_output(fd.ops.mul(v, 2.0))


def _readers_after_the_update(fd: FusionDefinition) -> None:
    """Random seed 22, cut down: ``x`` ([1, 1]) updated in place by a sum of another
    input, whose segment also computes a variance of it; two more segments read ``x``
    (a comparison, the ``cat`` of a permute). Segmentation put the update first and
    they read the updated ``x``."""
    x = fd.define_tensor(shape=[1, 1], contiguity=[None, None], dtype=DataType.Float)
    y = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float)
    t7 = fd.ops.strided_slice(fd.ops.broadcast_in_dim(y, shape=[3, 3], broadcast_dims=[0, 1]), [2, 1], [3, 2], [2, 3])
    t15 = fd.ops.sum(t7, dims=[0], keepdim=True)
    fd.add_output(fd.ops.var(t15, dims=[0, 1], correction=0, keepdim=True))
    fd.add_output(fd.ops.sum(fd.ops.cast(fd.ops.le(x, fd.define_scalar(0.0)), DataType.Int32), dims=[1]))
    xt = fd.ops.permute(x, [1, 0])
    fd.add_output(fd.ops.cat([fd.ops.exp(xt), xt], 1))
    fd.add_output(t15, alias_input=x)


@pytest.mark.parametrize("path", ["reference", "kernels"])
def test_readers_of_the_updated_input_run_before_the_update(path: str) -> None:
    with FusionDefinition() as fd:
        _readers_after_the_update(fd)
    x, y = np.array([[-0.5]], np.float32), np.array([[1.0], [2.0], [3.0]], np.float32)
    if path == "reference":
        outs = fd.execute([x, y])
    else:
        outs = execution.execute_kernels_on_cpu(fd._ensure_defined(), [x, y], nvrtc=False)  # noqa: SLF001
    assert x.ravel().tolist() == [3.0]  # the update: y[2]
    assert np.asarray(outs[1]).tolist() == [1]  # -0.5 <= 0: the old x
    np.testing.assert_allclose(outs[2], [[np.exp(-0.5), -0.5]], rtol=1e-6)


def _returned_view_of_the_updated(fd: FusionDefinition) -> None:
    """A returned reshape of ``x`` beside ``x``'s update is a host view of ``x``'s
    storage, so it shows the update, as nvFuser's aliased outputs do (its
    test_returning_aliased_outputs returns the input itself after the update)."""
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.reshape(fd.ops.slice(x, [1, 0], [5, 8]), [32]))
    fd.add_output(fd.ops.mul(x, x), alias_input=x)


def _transposed_into_itself(fd: FusionDefinition) -> None:
    """``x.T`` into ``x``: the copy kernel read ``x`` transposed while writing it."""
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.permute(x, [1, 0]), alias_input=x)


CASES = {
    "outputs beside the update": (_outputs_beside_the_update, lambda a: ([a + 1], [(a + 1) * 2])),
    "returned view of the updated": (_returned_view_of_the_updated, lambda a: ([a * a], [(a * a)[1:5].reshape(32)])),
    "transposed into itself": (_transposed_into_itself, lambda a: ([a.T], [])),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("path", ["reference", "kernels"])
def test_outputs_see_the_input_before_its_update(case: str, path: str) -> None:
    """Every computed output is computed from the inputs as they were when the call
    began (a returned view of the updated input is its storage); the updated input
    holds the update. ``kernels``: the generated kernels in the
    CPU kernel interpreter, writing in place as on the GPU (they gave the updated
    input's values to the other outputs)."""
    define, want = CASES[case]
    with FusionDefinition() as fd:
        define(fd)
    a = np.random.default_rng(2).standard_normal((8, 8)).astype(np.float32)
    (want_x,), want_outs = want(a)
    x = a.copy()
    if path == "reference":
        outs = fd.execute([x])
    else:
        outs = execution.execute_kernels_on_cpu(fd._ensure_defined(), [x], nvrtc=False)  # noqa: SLF001
    np.testing.assert_allclose(x, want_x, rtol=1e-5, atol=1e-5)
    assert len(outs) == len(want_outs)
    for got, w in zip(outs, want_outs, strict=True):
        np.testing.assert_allclose(np.asarray(got, np.float64), w, rtol=1e-5, atol=1e-5)


def test_the_update_runs_after_every_reader() -> None:
    """The segment writing ``x`` in place is the last launch that touches ``x``."""
    with FusionDefinition() as fd:
        _readers_after_the_update(fd)
    ins = [np.zeros((1, 1), np.float32), np.zeros((3, 1), np.float32)]
    entry = fd._ensure_defined()  # noqa: SLF001
    exe = execution.executable_for(entry, execution.runtime_for(entry, ins), ins, 0, DEFAULT_TARGET)
    program = next(op for op in exe.module.ops if isinstance(op, H.ProgramOp))
    x = program.inputs[0]
    launches = [op for op in program.body.block.ops if isinstance(op, H.LaunchOp)]
    writes = [i for i, la in enumerate(launches) if any(_root(o) is x for o in la.outs)]
    reads = [i for i, la in enumerate(launches) if any(_root(v) is x for v in la.args)]
    assert len(writes) == 1 and reads and max(reads) < writes[0]


def test_an_adam_step_is_one_kernel_that_reads_the_old_moments() -> None:
    """The step of benchmarks/adam_step.py writes ``m``, ``v`` and ``p`` in place, and
    ``p``'s update is computed from the new moments: one kernel (before store groups,
    a kernel into temporaries and two copy kernels), whose results, run in place by
    the CPU kernel interpreter, are the float64 formulas'."""
    from benchmarks.adam_step import adam_fusion, reference, scalars

    rng = np.random.default_rng(5)
    for n in (1000, 1003):  # 1003: a partial last vector, stored by a lane-by-lane branch
        p, g, m = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        v = rng.random(n).astype(np.float32)
        want_m, want_v, want_p = reference(*(t.astype(np.float64) for t in (p, g, m, v)))
        counts = {}
        for cut in (False, True):
            fd = adam_fusion(cut)
            entry = fd._ensure_defined()  # noqa: SLF001
            args = [t.copy() for t in (p, g, m, v)]
            counts[cut] = sum(
                len(lowered.kernels) for _, lowered in execution.lowered_segments(entry, [*args, *scalars()])
            )
            execution.execute_kernels_on_cpu(entry, [*args, *scalars()], nvrtc=False)
            for got, want in zip(args[2:] + args[:1], (want_m, want_v, want_p), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert counts == {False: 1, True: 3}
