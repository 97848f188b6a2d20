"""The GPU replay's build (``fuser.runtime.gpu_replay``), checked on the CPU: the
places it composes from host views are the views the CPU host evaluator makes, an
output that is a view of a whole allocation is allocated in its returned layout,
and programs it cannot model are refused (walked every time). ``view_strides``
agrees with numpy's no-copy reshape."""

from __future__ import annotations

import itertools
import types
from typing import Any

import numpy as np
import pytest

from fuser import DataType, FusionDefinition
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H
from fuser.runtime.driver import Executable, Signature, compile
from fuser.runtime.gpu_arrays import DeviceArray, view_strides
from fuser.runtime.gpu_evaluator import GpuEvaluator
from fuser.runtime.gpu_replay import Place, Replay
from fuser.schedulers.target import DEFAULT_TARGET


def _exe(fd: FusionDefinition, flat: list[Any]) -> Executable:
    fusion = fd.fusion()
    return compile(fusion, Signature.of(fusion, flat), DEFAULT_TARGET)


def _replay(exe: Executable, flat: list[Any]) -> Replay | None:
    ev = GpuEvaluator(exe.module, lambda *a: [], 1, 0)

    def view(op: H.HostViewOp, x: DeviceArray) -> DeviceArray:
        hook, args = ev._view_call(op, list(x.shape))  # noqa: SLF001
        return hook(x, *args)

    places = [
        Place(k, 0, x.shape, tuple(s // x.itemsize for s in x.strides)) if isinstance(x, np.ndarray) else None
        for k, x in enumerate(flat)
    ]
    # What the first run leaves: every launched segment compiled (its fusion is all
    # the build reads).
    launched = {
        f.sym_name.data: types.SimpleNamespace(fusion=f) for f in exe.module.ops if isinstance(f, F.FusionOp)
    }
    return Replay.build(exe.program, places, launched, view, "fuser", 0)


def _place_of(view: np.ndarray, base: np.ndarray, root: int) -> Place:
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return Place(root, offset // base.itemsize, view.shape, tuple(s // view.itemsize for s in view.strides))


def test_output_views_of_an_input_are_the_host_evaluators_views() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.permute(a, [2, 0, 1]))
        fd.add_output(fd.ops.slice(a, [1, 0, 2], [3, 5, 5]))
        fd.add_output(fd.ops.reshape(a, [4, 30]))
    x = np.random.default_rng(0).standard_normal((4, 5, 6)).astype(np.float32)
    exe = _exe(fd, [x])
    replay = _replay(exe, [x])
    assert replay is not None
    outs = exe.run_on_cpu([x])
    assert not replay.steps  # views only: nothing to launch or allocate
    for (root, place), out in zip(replay.returns, outs, strict=True):
        assert np.shares_memory(out, x)
        assert place == _place_of(out, x, 0)
        assert root == 0


def test_a_view_of_a_whole_kernel_output_is_allocated_as_returned() -> None:
    with FusionDefinition() as fd:  # benchmarks' transpose_bookend_views
        t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float)
        t1 = fd.ops.reshape(t0, [4, 3, 8, 2])
        t3 = fd.ops.set(fd.ops.permute(t1, [0, 2, 1, 3]))
        fd.add_output(fd.ops.reshape(t3, [32, 6]))
    x = np.random.default_rng(1).standard_normal((12, 8, 2)).astype(np.float32)
    exe = _exe(fd, [x])
    assert [type(op).__name__ for op in exe.program.body.block.ops] == [
        "ReshapeOp", "PermuteOp", "AllocateOp", "LaunchOp", "ReshapeOp", "ReturnOp",
    ]
    replay = _replay(exe, [x])
    assert replay is not None
    (alloc, launch) = replay.steps
    assert alloc[0:2] == (1, 1) and alloc[2].args == ([32, 6], alloc[2].args[1])
    # The kernel reads the input's own pointer (the views are strides in its layout)
    # and writes the returned [32, 6] buffer, which comes back as allocated.
    assert launch[2] == [(True, 0, 0)] and launch[3] == [(1, 0)]
    assert replay.returns == [(1, None)]
    assert replay.pointer_inputs == [0]


def test_a_sliced_input_is_a_pointer_offset() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.ops.slice(a, [2, 4], [6, 12], [1, 1])
        fd.add_output(fd.ops.exp(s))
    x = np.random.default_rng(2).standard_normal((8, 16)).astype(np.float32)
    exe = _exe(fd, [x])
    replay = _replay(exe, [x])
    assert replay is not None
    assert any(isinstance(op, H.SliceOp) for op in exe.program.walk())  # strip-bookend-views moved it
    (launch,) = [s for s in replay.steps if s[0] == 0]
    # The host slice is a pointer offset: the kernel reads from element 2 * 16 + 4.
    assert launch[2] == [(True, 0, (2 * 16 + 4) * 4)]


def test_in_place_outputs_and_segments_replay() -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        b = fd.ops.add(a, 1.0)
        fd.add_output(b, alias_input=a)
        fd.add_output(fd.ops.mul(b, 2.0))
    x = np.ones((4, 8), np.float32)
    exe = _exe(fd, [x])
    assert any(isinstance(op, H.AliasOp) for op in exe.program.walk())
    replay = _replay(exe, [x])
    assert replay is not None
    # b * 2 is returned beside the update: one kernel stores b into the input's
    # buffer (root 0) and b * 2 into a buffer of its own (root 1), both after loading
    # a (a store group: no copy kernel)
    launches = [step for step in replay.steps if step[0] == 0]
    assert [step[3] for step in launches] == [[(0, 0), (1, 0)]]

    with FusionDefinition() as fd:  # seed 000: two segments and an intermediate
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.sum(t0, [1])
        fd.add_output(fd.ops.add(t1, fd.ops.broadcast(t2, [False, True])))
    xs = [np.ones((64, 4096), np.float32), np.ones((64, 4096), np.float32)]
    exe = _exe(fd, xs)
    replay = _replay(exe, xs)
    assert replay is not None
    assert [s[0] for s in replay.steps].count(0) == len(exe.launches)
    frees = [s for s in replay.steps if s[0] == 2]
    assert len(frees) == sum(isinstance(op, H.DeallocateOp) for op in exe.program.walk())


def test_programs_with_stream_loops_are_walked() -> None:
    from fuser.ir.context import parse_module

    module = parse_module("""
    hir.program @main(%0: index) -> index {
      %1 = arith.constant 1 : index
      %2 = arith.addi %0, %1 : index
      hir.return %2 : index
    }
    """)
    program = next(op for op in module.ops if isinstance(op, H.ProgramOp))
    assert Replay.build(program, [None], {}, lambda op, x: x, "fuser", 0) is None


@pytest.mark.parametrize(
    "shape,perm,new",
    [
        ((4, 6), (0, 1), (24,)),
        ((4, 6), (1, 0), (24,)),
        ((4, 6), (1, 0), (3, 2, 4)),
        ((2, 3, 4), (0, 2, 1), (2, 12)),
        ((2, 3, 4), (0, 2, 1), (8, 3)),
        ((2, 1, 4), (2, 1, 0), (4, 2)),
        ((2, 1, 4), (0, 1, 2), (1, 8, 1)),
        ((5, 1, 1), (1, 0, 2), (5,)),
        ((3, 0, 4), (0, 1, 2), (12, 0)),
        ((6,), (0,), (1, 6, 1)),
    ],
)
def test_view_strides_is_numpys_no_copy_reshape(shape: tuple[int, ...], perm: tuple[int, ...], new: tuple[int, ...]) -> None:
    for step in (1, 2):
        base = np.zeros(tuple(e * step if k == 0 else e for k, e in enumerate(shape)), np.float32)[::step]
        a = base.transpose(perm)
        strides = tuple(s // 4 for s in a.strides)
        got = view_strides(a.shape, strides, new)
        try:
            expected = a.reshape(new, copy=False)
        except ValueError:
            assert got is None or 0 in new, (a.shape, strides, new)
            continue
        if a.size == 0:
            continue
        assert got is not None
        # Axes of extent 1 may take any stride: compare where the extent is not 1.
        assert [s for s, e in zip(got, new, strict=True) if e != 1] == [
            s // 4 for s, e in zip(expected.strides, new, strict=True) if e != 1
        ]


def test_view_strides_exhaustive_small_permutations() -> None:
    for shape in [(2, 3, 4), (1, 2, 3), (2, 2, 1)]:
        for perm in itertools.permutations(range(3)):
            a = np.zeros(shape, np.float32).transpose(perm)
            strides = tuple(s // 4 for s in a.strides)
            for new in [(a.size,), (a.shape[0], -1), (-1, a.shape[-1])]:
                new = tuple(a.size // -np.prod(new) if d == -1 else d for d in new)
                got = view_strides(a.shape, strides, new)
                try:
                    exp = a.reshape(new, copy=False)
                except ValueError:
                    assert got is None
                    continue
                assert got is not None
                assert [s for s, e in zip(got, new, strict=True) if e != 1] == [
                    s // 4 for s, e in zip(exp.strides, new, strict=True) if e != 1
                ]
