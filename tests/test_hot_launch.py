"""The cache-hit launcher of ``fd.execute`` (``fuser.runtime.hot_launch``), checked on
the CPU: the generated launcher packs, for every kernel, exactly the arguments the
replay (the full path's cache hit) hands ``Kernel.launch``, on the same stream, and
returns the same buffers and views; ``FusionDefinition.execute`` takes it only for
its own key (shape, strides, dtype, device, pointer-alignment class) with every
keyword at its default, and never for CPU inputs. The GPU side is
tests/gpu/test_gpu_hot_launch.py."""

from __future__ import annotations

import ctypes
import itertools
import struct
import types
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fuser import DataType, FusionDefinition  # noqa: E402
from fuser.codegen.lower import lower_segment  # noqa: E402
from fuser.codegen.lower.common import TensorLayout  # noqa: E402
from fuser.frontend import execution  # noqa: E402
from fuser.ir.dialects import hir as H  # noqa: E402
from fuser.runtime import compile_fusion, gpu_arrays, hot_launch  # noqa: E402
from fuser.runtime.compile_fusion import CompiledSegment, kernel_signature, pointer_alignment  # noqa: E402
from fuser.runtime.cuda_driver import arg_offsets  # noqa: E402
from fuser.runtime.driver import Signature  # noqa: E402
from fuser.runtime.driver import compile as compile_fusion_program  # noqa: E402
from fuser.runtime.gpu_arrays import DeviceArray  # noqa: E402
from fuser.runtime.gpu_evaluator import GpuEvaluator  # noqa: E402
from fuser.runtime.gpu_replay import _ALLOCATE, Place, Replay  # noqa: E402
from fuser.runtime.signature import kernel_layouts  # noqa: E402
from fuser.schedulers.target import DEFAULT_TARGET  # noqa: E402

STREAM = 0x7F00_0000_1234  # what the fake "current stream" accessor returns

pytestmark = pytest.mark.usefixtures("own_fusion_cache")


class FakeKernel:
    """A ``cuda_driver.Kernel`` stand-in: records the full path's launches."""

    def __init__(self, name: str, signature: str, handle: int, log: list[Any]) -> None:
        self.name = name
        self.signature = signature
        self.function = handle
        self._dynamic_limit = 48 * 1024
        self.dependent_launch = False  # launched with cuLaunchKernel (tests/test_dependent_launch.py)
        self.log = log

    def launch(self, grid: Any, block: Any, args: Any, shared: int = 0, stream: int = 0) -> None:
        fmt, _, _ = arg_offsets(self.signature)
        self.log.append((self.name, hot_launch._dims(grid), hot_launch._dims(block), shared, stream,
                         struct.unpack(fmt, struct.pack(fmt, *args))))


class Program:
    """What a ``GpuProgram``'s first run leaves for CPU torch tensors standing in for
    CUDA ones: every launch's segment lowered for the inputs' layouts (kernels faked),
    the replay (``Replay.build``) with allocations of fixed buffers, so both paths see
    the same pointers."""

    def __init__(self, fd: FusionDefinition, inputs: list[Any]) -> None:
        fusion = fd.fusion()
        host = [tuple(x.shape) if isinstance(x, torch.Tensor) else x for x in inputs]
        self.exe = compile_fusion_program(fusion, Signature.of(fusion, host), DEFAULT_TARGET)
        layouts = [
            TensorLayout(tuple(x.shape), tuple(x.stride()), pointer_alignment(x.data_ptr(), x.element_size()))
            if isinstance(x, torch.Tensor) else None
            for x in inputs
        ]
        scalars = [None if isinstance(x, torch.Tensor) else x for x in inputs]
        self.log: list[Any] = []
        self.kernels: dict[int, FakeKernel] = {}
        launched: dict[str, CompiledSegment] = {}
        for seg, seg_layouts, seg_scalars in self.exe.launch_layouts(layouts, scalars):
            lowered = lower_segment(seg, kernel_layouts(seg_layouts), seg_scalars, None, self.exe.target)
            kernels = []
            for k in lowered.kernels:
                handle = 0x5000 + 16 * len(self.kernels)
                kernels.append(FakeKernel(k.name, kernel_signature(seg, k.args), handle, self.log))
                self.kernels[handle] = kernels[-1]
            scratch = [s.numel * s.dtype.itemsize for s in lowered.scratch]
            launched[seg.sym_name.data] = CompiledSegment(seg, lowered, "", kernels, scratch)
        ev = GpuEvaluator(self.exe.module, lambda *a: [], 1, 0)

        def view(op: H.HostViewOp, x: DeviceArray) -> DeviceArray:
            hook, args = ev._view_call(op, list(x.shape))  # noqa: SLF001
            return hook(x, *args)

        places = [
            Place(k, 0, tuple(x.shape), tuple(x.stride())) if isinstance(x, torch.Tensor) else None
            for k, x in enumerate(inputs)
        ]
        replay = Replay.build(self.exe.program, places, launched, view, "torch", 0)
        assert replay is not None
        self.buffers: dict[int, Any] = {}
        steps = []
        for step in replay.steps:
            if step[0] == _ALLOCATE:
                make = step[2]
                buf = torch.empty_strided(make.args[0], make.args[1] if len(make.args) > 1 else
                                          gpu_arrays.contiguous_strides(make.args[0]), dtype=make.keywords["dtype"])
                self.buffers[step[1]] = buf
                step = (step[0], step[1], (lambda b=buf: b), step[3])
            steps.append(step)
        replay.steps = steps
        self.replay = replay
        self.hot_log: list[Any] = []

    def cu_launch(self, fn: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                  stream: Any, params: Any, extra: Any) -> int:
        """libcuda's ``cuLaunchKernel`` faked: reads the packed arguments back."""
        assert extra is None
        kern = self.kernels[fn.value]
        fmt, offsets, words = arg_offsets(kern.signature)
        first = ctypes.cast(params.value, ctypes.POINTER(ctypes.c_void_p))[0]
        for k, off in enumerate(offsets):  # the pointer array points into the buffer
            assert ctypes.cast(params.value, ctypes.POINTER(ctypes.c_void_p))[k] == first + off
        args = struct.unpack(fmt, ctypes.string_at(first, words * 8))
        self.hot_log.append((kern.name, (gx, gy, gz), (bx, by, bz), shared, stream.value, args))
        return 0


def _both(fd: FusionDefinition, inputs: list[Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Program, list[Any], list[Any]]:
    """Run ``fd``'s replay and its hot launcher on the same inputs; both logs filled."""
    prog = Program(fd, inputs)
    monkeypatch.setattr(gpu_arrays, "_raw_stream", lambda d: STREAM)
    slow = prog.replay(list(inputs))
    tensors = [isinstance(x, torch.Tensor) for x in inputs]
    source, ns = hot_launch._generate(prog.replay, tensors, prog.cu_launch, lambda d: STREAM)
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    fast = ns["hot"](list(inputs))
    return prog, slow, fast


def _same_outputs(slow: list[Any], fast: list[Any]) -> None:
    assert len(slow) == len(fast)
    for a, b in zip(slow, fast, strict=True):
        assert (a.data_ptr(), tuple(a.shape), a.stride(), a.dtype) == (b.data_ptr(), tuple(b.shape), b.stride(), b.dtype)


def test_pointwise_launch_packs_the_replays_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(fd.ops.add(a, 1.0), 2.0))
    x = torch.randn(1, 4096)
    prog, slow, fast = _both(fd, [x], monkeypatch)
    assert prog.log and prog.hot_log == prog.log
    assert prog.log[0][4] == STREAM
    _same_outputs(slow, fast)
    assert x.data_ptr() in prog.log[0][5]


def _sum_then_add(monkeypatch: pytest.MonkeyPatch) -> tuple[Program, list[Any], list[Any]]:
    """A row sum, then an add after a segment boundary (two launches): its program,
    inputs and replayed outputs."""
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
        fd.add_output(fd.ops.add(t1, fd.ops.segment_set(fd.ops.broadcast(t2, is_broadcast_dim=[False, True]))))
    inputs = [torch.randn(64, 256), torch.randn(64, 256)]
    prog = Program(fd, inputs)
    monkeypatch.setattr(gpu_arrays, "_raw_stream", lambda d: STREAM)
    return prog, inputs, prog.replay(list(inputs))


def test_cuda_python_launches_pack_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LAUNCH = "cuda-python"``: ``cuda.bindings``' ``cuLaunchKernel`` with the
    function object, the stream and the pointer array's address as ints."""
    prog, inputs, slow = _sum_then_add(monkeypatch)

    def cu_launch(fn: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                  stream: int, params: int, extra: int) -> tuple[int]:
        assert isinstance(stream, int) and isinstance(params, int) and extra == 0
        prog.cu_launch(ctypes.c_void_p(fn), gx, gy, gz, bx, by, bz, shared, ctypes.c_void_p(stream),
                       ctypes.c_void_p(params), None)
        return (0,)

    source, ns = hot_launch._generate(prog.replay, [True, True], cu_launch, lambda d: STREAM, "cuda-python")
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    _same_outputs(slow, ns["hot"](list(inputs)))
    assert len(prog.log) == 2 and prog.hot_log == prog.log


def test_dependent_kernels_launch_through_cu_launch_kernel_ex(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels that wait for the kernel before them (``Kernel.dependent_launch``) are
    launched through ``cuLaunchKernelEx`` with a config made once (programmatic stream
    serialization, the step's grid, block and shared bytes) whose stream is set at
    each call; the packed arguments are the plain launches' (the replay's)."""
    prog, inputs, slow = _sum_then_add(monkeypatch)
    for k in prog.kernels.values():
        k.dependent_launch = True
    configs: list[tuple[Any, ...]] = []

    def cu_launch_ex(config: Any, fn: Any, params: Any, extra: Any) -> int:
        c = config._obj  # noqa: SLF001 - the CUlaunchConfig behind ctypes.byref
        attr = c.attrs[0]
        configs.append((attr.id, attr.value.programmaticStreamSerializationAllowed, c.numAttrs))
        return prog.cu_launch(fn, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ,
                              c.sharedMemBytes, ctypes.c_void_p(c.hStream), params, extra)

    monkeypatch.setattr(hot_launch, "_cu_launch_ex", lambda: cu_launch_ex)
    source, ns = hot_launch._generate(prog.replay, [True, True], prog.cu_launch, lambda d: STREAM, dependent=True)
    assert "_cu_launch_ex(" in source and "_cu_launch(" not in source
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    fast = ns["hot"](list(inputs))
    assert len(prog.log) == 2 and prog.hot_log == prog.log
    assert configs == [(6, 1, 1)] * 2  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    _same_outputs(slow, fast)


def test_extents_scalars_and_bf16(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch extent taken as a kernel parameter (``ArgRef`` kind ``extent``) is
    packed as the value the segment was compiled for; a float scalar input is packed
    from the call's value."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.cast(a, DataType.Float), s), DataType.BFloat16))
    x = torch.randn(96, 130).to(torch.bfloat16)
    prog, slow, fast = _both(fd, [x, 0.75], monkeypatch)
    assert prog.hot_log == prog.log
    _same_outputs(slow, fast)
    assert 0.75 in prog.log[0][5]
    # the same launcher with another scalar value packs that value
    source, ns = hot_launch._generate(prog.replay, [True, False], prog.cu_launch, lambda d: STREAM)
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    ns["hot"]([x, -3.5])
    assert -3.5 in prog.hot_log[-1][5]


@pytest.mark.parametrize("case", ["row_sum", "two_segments", "transpose_bookend", "sliced_input"])
def test_reductions_segments_and_views(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FusionDefinition() as fd:
        if case == "row_sum":
            a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            fd.add_output(fd.ops.sum(a, dims=[1], keepdim=False, dtype=DataType.Float))
            inputs = [torch.randn(64, 1024)]
        elif case == "two_segments":
            t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
            t3 = fd.ops.segment_set(fd.ops.broadcast(t2, is_broadcast_dim=[False, True]))
            fd.add_output(fd.ops.add(t1, t3))
            inputs = [torch.randn(64, 256), torch.randn(64, 256)]
        elif case == "transpose_bookend":
            t0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
            t1 = fd.ops.reshape(t0, [4, 12, 8, 64])
            t3 = fd.ops.set(fd.ops.permute(t1, [0, 2, 1, 3]))
            fd.add_output(fd.ops.reshape(t3, [32, 768]))
            inputs = [torch.randn(48, 8, 64)]
        else:
            a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            fd.add_output(fd.ops.exp(fd.ops.slice(a, [2, 4], [6, 12], [1, 1])))
            inputs = [torch.randn(8, 16)]
    prog, slow, fast = _both(fd, inputs, monkeypatch)
    assert prog.log and prog.hot_log == prog.log
    _same_outputs(slow, fast)
    if case == "two_segments":
        assert len({entry[0] for entry in prog.log}) >= 2
    if case == "sliced_input":
        assert inputs[0].data_ptr() + (2 * 16 + 4) * 4 in prog.log[0][5]


def test_scratch_buffers_come_from_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel with scratch (a grid reduction's work buffer) gets the pool's buffer,
    taken on the call's stream and given back after the launch, as ``run_compiled``."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(a, dims=[0], keepdim=False, dtype=DataType.Float))
    x = torch.randn(1 << 22)
    prog = Program(fd, [x])
    if not any(seg.scratch_bytes for s in prog.replay.steps if s[0] == 0 for seg in [s[1]]):
        pytest.skip("this size's reduction has no scratch buffer")

    class Pool:
        def __init__(self) -> None:
            self.events: list[Any] = []
            self.bufs: dict[int, Any] = {}

        def take(self, n: int, zero: bool, stream: int, device: int) -> Any:
            self.events.append(("take", n, zero, stream, device))
            return self.bufs.setdefault(n, types.SimpleNamespace(ptr=0x9000 + n))

        def give(self, n: int, buf: Any, stream: int, device: int) -> None:
            self.events.append(("give", n, stream, device))

    pool = Pool()
    monkeypatch.setattr(compile_fusion, "_scratch", pool)
    monkeypatch.setattr(hot_launch, "_scratch", pool)
    monkeypatch.setattr(gpu_arrays, "_raw_stream", lambda d: STREAM)
    prog.replay([x])
    slow_events = list(pool.events)
    pool.events.clear()
    source, ns = hot_launch._generate(prog.replay, [True], prog.cu_launch, lambda d: STREAM)
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    ns["hot"]([x])
    assert prog.hot_log == prog.log
    assert pool.events == slow_events


def test_key_is_the_gpu_plans_key() -> None:
    """``key_of`` is ``CacheEntry.gpu_key`` for torch tensors and Python scalars: the
    pointer-alignment class and the strides are part of it."""
    from fuser.runtime.gpu_executor import fast_key

    assert not hot_launch.takes([torch.empty(4)])  # (CPU tensors: no; it learns the tensor types)
    base = torch.empty(4096 + 8)
    x = base[:4096]
    inputs = [x, 2.0, 3, True]
    assert hot_launch.key_of(inputs) == tuple(fast_key(v) for v in inputs)
    misaligned = base[1:4097]
    strided = base[: 2 * 2048].view(2048, 2)[:, 0]
    assert hot_launch.key_of([misaligned]) != hot_launch.key_of([x])
    assert hot_launch.key_of([strided]) != hot_launch.key_of([base[:2048]])
    assert hot_launch.key_of([base[4:4100]]) == hot_launch.key_of([x])  # 16 bytes on: same class
    # A model's weights (nn.Parameter) are keyed as the tensors they are; another
    # subclass (it may override any method) is keyed by its type: never hot.
    w = torch.nn.Parameter(torch.empty(64, 32), requires_grad=False)
    assert hot_launch.key_of([w]) == (fast_key(w.data),)

    class Other(torch.Tensor):
        pass

    assert hot_launch.key_of([x.as_subclass(Other)]) == (Other,)


# ---- FusionDefinition.execute's dispatch ------------------------------------------------

_fresh = itertools.count(1000)


def _fd_with_fake_launcher(monkeypatch: pytest.MonkeyPatch) -> tuple[FusionDefinition, Any, list[Any], Any]:
    scale = float(next(_fresh))  # a definition of its own: cache entries are process-wide
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[False], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(fd.ops.add(a, 1.0), scale))
    base = torch.randn(4096 + 8)
    x = base[:4096]
    (ref,) = fd.execute([x])  # the CPU path: builds no launcher
    entry = fd._entry  # noqa: SLF001
    assert entry is not None and not entry.hot
    calls: list[Any] = []
    sentinel = torch.full((4096,), 7.0)

    def run(inputs: Any) -> list[Any]:
        calls.append(inputs)
        return [sentinel]

    monkeypatch.setattr(hot_launch, "_tensor_types", frozenset((torch.Tensor, torch.nn.Parameter)))
    monkeypatch.setattr(execution, "_hot_key", hot_launch.key_of)
    plan = object()
    entry.hot[hot_launch.key_of([x])] = hot_launch.HotLauncher(plan, run, "")
    return fd, x, calls, (ref, sentinel, plan, base, scale)


def test_execute_takes_the_launcher_of_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    fd, x, calls, (ref, sentinel, plan, base, scale) = _fd_with_fake_launcher(monkeypatch)
    fd.profiled = True
    fd.__dict__["_debug_output"] = "old"
    (out,) = fd.execute([x])
    assert out is sentinel and len(calls) == 1
    assert fd._entry.last_run is plan  # noqa: SLF001
    assert fd.profiled is False and fd.debug_output() is None
    (out,) = fd.execute((x,))
    assert out is sentinel and len(calls) == 2
    # another alignment class, other strides, another shape: the full path
    for other in (base[1:4097], base[: 2 * 2048].view(2048, 2)[:, 0], base[:4095]):
        (out,) = fd.execute([other])
        torch.testing.assert_close(out, (other + 1.0) * scale)
    assert len(calls) == 2
    torch.testing.assert_close(ref, (x + 1.0) * scale)


@pytest.mark.parametrize("keyword", [
    {"profile": True}, {"capture_debug_output": True}, {"executor": execution.reference_executor},
    {"num_streams": 2}, {"device": "cpu"}, {"print_repro": True}, {"save_repro_inputs": True},
    {"override_user_schedule": True}, {"_enable_options": ["kernel_profile"]},
    {"_disable_options": ["parallel_compile"]},
])
def test_keywords_take_the_full_path(keyword: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    fd, x, calls, (ref, sentinel, _, _, _) = _fd_with_fake_launcher(monkeypatch)
    (out,) = fd.execute([x], **keyword)
    capsys.readouterr()
    assert not calls and out is not sentinel
    torch.testing.assert_close(out, ref)


def test_definition_state_takes_the_full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    fd, x, calls, (ref, sentinel, _, _, _) = _fd_with_fake_launcher(monkeypatch)
    entry = fd._entry  # noqa: SLF001
    with pytest.raises(ValueError, match="list or tuple"):
        fd.execute(iter([x]))
    entry.user_schedules[("not", "this", "layout")] = object()
    (out,) = fd.execute([x])
    assert out is not sentinel
    entry.user_schedules.clear()
    fd.__dict__[execution._STREAM_AXES] = {0: 0}
    assert fd.execute.__func__ is FusionDefinition.execute
    assert execution.hot_execute(fd, entry, [x]) is None
    del fd.__dict__[execution._STREAM_AXES]
    fd.__dict__["_segmentation"] = object()
    assert execution.hot_execute(fd, entry, [x]) is None
    del fd.__dict__["_segmentation"]
    assert not calls
    (out,) = fd.execute([x])
    assert out is sentinel
    fd.pipeline = list(fd.pipeline)  # a new pipeline drops the compiled programs and launchers
    assert not entry.hot


def test_launchers_are_built_only_for_torch_cuda_inputs() -> None:
    """CPU runs build none; ``takes`` wants torch CUDA tensors and Python scalars."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(a, s))
    for inputs in ([torch.randn(8), 2.0], [np.ones(8, np.float32), 2.0]):
        for _ in range(3):
            fd.execute(inputs)
        assert not fd._entry.hot  # noqa: SLF001
        assert not hot_launch.takes(inputs)
    assert not hot_launch.takes([2.0])
    assert not hot_launch.takes([torch.nn.Parameter(torch.randn(3)), 1])


def test_random_vector_and_value_keyed_fusions_are_not_hot(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``_remember_hot`` refuses before building (checked with stand-ins: the CPU
    has no GPU programs; ``takes`` made to accept CPU tensors)."""
    built: list[Any] = []
    monkeypatch.setattr(hot_launch, "takes", lambda inputs: True)
    monkeypatch.setattr(hot_launch, "_tensor_types", frozenset((torch.Tensor, torch.nn.Parameter)))
    monkeypatch.setattr(hot_launch, "build", lambda replay, plan, inputs: built.append(plan))
    x = torch.randn(4)

    def attempt(aliased: Any = (), in_place: bool = False, key: Any = None, flat: Any = None,
                replay: Any = "replay") -> bool:
        plan = types.SimpleNamespace(hot_checked=False, replay=replay)
        entry = types.SimpleNamespace(hot={})
        term = types.SimpleNamespace(get_alias_inputs=lambda: [0 if in_place else -1])
        rt = types.SimpleNamespace(aliased=list(aliased), fusion=types.SimpleNamespace(output_op=term))
        key = hot_launch.key_of([x]) if key is None else key
        execution._remember_hot(entry, key, plan, rt, [x], [x] if flat is None else flat)
        return bool(built) and built.pop() is plan

    assert attempt()
    assert not attempt(aliased=[(0, 0)])  # a returned output that is an input, updated in place
    assert attempt(in_place=True)  # an output written in place: built (guarded, below)
    assert not attempt(key=(("scalar", 2.0),))  # the plans are keyed by scalar values
    assert not attempt(flat=[x, 1, 2])  # the hidden Philox seed and offset
    assert not attempt(flat=[x.clone()])  # flattened inputs are not the caller's
    assert not attempt(replay=None)  # walked every time


CAPTURE_STREAM = 0x7F00_0000_5678


class FakeCapture:
    """``Graphs``' capture faked: runs ``_run`` on a side stream (its launches land in
    the program's log) with the graph's own scratch, and hands out one handle per
    capture; ``launches`` records ``cuGraphLaunch``."""

    def __init__(self) -> None:
        self.captures = 0
        self.launches: list[tuple[int, int]] = []
        self.scratch_taken: list[tuple[int, bool, int]] = []
        self.streams: list[int] = []  # the caller's stream of each capture

    def capture(self, run: Any, args: tuple, device: int, stream: int) -> tuple[Any, Any]:
        self.streams.append(stream)
        def take(n: int, zero: bool, s: int, d: int) -> Any:
            self.scratch_taken.append((n, zero, s))
            return types.SimpleNamespace(ptr=0xA000 + 0x100 * len(self.scratch_taken))

        run(args[0], CAPTURE_STREAM, ctypes.c_void_p(CAPTURE_STREAM), take, lambda *a: None, *args[1:])
        self.captures += 1
        return ctypes.c_void_p(0xC0DE + self.captures), ("owned", self.captures)

    def launch(self, handle: Any, stream: Any) -> int:
        self.launches.append((handle.value, stream.value))
        return 0


def _graph_launcher(fd: FusionDefinition, inputs: list[Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Program, Any, FakeCapture, hot_launch.Graphs]:
    prog = Program(fd, inputs)
    monkeypatch.setattr(gpu_arrays, "_raw_stream", lambda d: STREAM)
    fake = FakeCapture()
    graphs = hot_launch.Graphs(0, capture=fake.capture)
    tensors = [isinstance(x, torch.Tensor) for x in inputs]
    source, ns = hot_launch._generate(prog.replay, tensors, prog.cu_launch, lambda d: STREAM, "ctypes",
                                      graphs, fake.launch)
    exec(compile(source, "<test>", "exec"), ns)  # noqa: S102
    return prog, ns["hot"], fake, graphs


def _two_segments() -> tuple[FusionDefinition, list[Any]]:
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
        t3 = fd.ops.segment_set(fd.ops.broadcast(t2, is_broadcast_dim=[False, True]))
        fd.add_output(fd.ops.add(t1, t3))
    return fd, [torch.randn(64, 256), torch.randn(64, 256)]


def test_graph_is_captured_on_the_second_sighting_of_its_pointers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first call launches as the replay does; the second, with the same pointers,
    captures the same launches on the side stream and replays the graph on the
    caller's stream; the third only replays it."""
    fd, inputs = _two_segments()
    prog, hot, fake, graphs = _graph_launcher(fd, inputs, monkeypatch)
    slow = prog.replay(list(inputs))
    want = list(prog.log)
    assert len({e[0] for e in want}) >= 2
    fast = hot(list(inputs))
    _same_outputs(slow, fast)
    assert prog.hot_log == want and fake.launches == [] and fake.captures == 0
    prog.hot_log.clear()
    hot(list(inputs))
    captured = [(*e[:4], STREAM, *e[5:]) for e in prog.hot_log]
    assert [e[4] for e in prog.hot_log] == [CAPTURE_STREAM] * len(want)
    assert captured == want  # the same kernels, arguments and pointers, on the side stream
    assert fake.captures == 1 and fake.launches == [(0xC0DF, STREAM)]
    prog.hot_log.clear()
    out = hot(list(inputs))
    _same_outputs(slow, out)
    assert prog.hot_log == [] and fake.launches == [(0xC0DF, STREAM)] * 2
    assert len(graphs.execs) == 1 and graphs.kept == [("owned", 1)]
    # the key: the caller's stream (whose pool the graph's buffers are in), the two
    # inputs' pointers and the output's; the intermediate between the segments is the
    # graph's own
    (key,) = graphs.execs
    assert key == (STREAM, inputs[0].data_ptr(), inputs[1].data_ptr(), out[0].data_ptr())
    assert fake.streams == [STREAM]


def test_new_pointers_launch_plainly_then_get_their_own_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """An input at another address is another key: plain launches (with its pointer),
    then its own graph; the first graph is still replayed for the first pointers."""
    fd, inputs = _two_segments()
    prog, hot, fake, graphs = _graph_launcher(fd, inputs, monkeypatch)
    hot(list(inputs))
    hot(list(inputs))
    other = [inputs[0].clone(), inputs[1]]
    prog.hot_log.clear()
    hot(other)
    assert prog.hot_log and other[0].data_ptr() in prog.hot_log[0][5]
    assert all(e[4] == STREAM for e in prog.hot_log) and fake.captures == 1
    hot(other)
    assert fake.captures == 2 and len(graphs.execs) == 2
    hot(list(inputs))
    assert fake.launches[-1] == (0xC0DF, STREAM) and fake.launches[-2] == (0xC0E0, STREAM)


def test_at_most_max_graphs_then_plain_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    fd, inputs = _two_segments()
    prog, hot, fake, graphs = _graph_launcher(fd, inputs, monkeypatch)
    monkeypatch.setattr(hot_launch, "MAX_GRAPHS", 2)
    keep = []
    for _ in range(4):
        x = [inputs[0].clone(), inputs[1]]
        keep.append(x)
        hot(x)
        hot(x)
    assert fake.captures == 2 and len(graphs.execs) == 2
    prog.hot_log.clear()
    hot(keep[-1])  # no graph for it: launched
    assert prog.hot_log and len(fake.launches) == 2


def test_a_program_that_cannot_be_captured_turns_graphs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    fd, inputs = _two_segments()
    prog, hot, fake, graphs = _graph_launcher(fd, inputs, monkeypatch)

    def refuse(*args: Any) -> Any:
        raise RuntimeError("operation not permitted when stream is capturing")

    graphs._capture = refuse  # noqa: SLF001
    hot(list(inputs))
    prog.hot_log.clear()
    out = hot(list(inputs))
    assert graphs.off and "not permitted" in graphs.why
    assert len(prog.hot_log) >= 2 and all(e[4] == STREAM for e in prog.hot_log)  # launched plainly
    assert out[0].shape == (64, 256)


def test_graph_scratch_is_the_graphs_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel's scratch buffer (a grid reduction's) is taken from the pool on plain
    calls and from the graph's own buffers (zeroed in the graph) in the capture."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        s = fd.ops.sum(a, dims=[0], keepdim=False, dtype=DataType.Float)
        fd.add_output(fd.ops.add(fd.ops.segment_set(fd.ops.broadcast(s, [True])), a))
    x = torch.randn(1 << 22)
    pool = types.SimpleNamespace(take=lambda n, zero, s, d: types.SimpleNamespace(ptr=0x9000 + n),
                                 give=lambda *a: None)
    monkeypatch.setattr(hot_launch, "_scratch", pool)
    prog, hot, fake, graphs = _graph_launcher(fd, [x], monkeypatch)
    hot([x])
    if not any(0x9000 < a < 0xA000 for e in prog.hot_log for a in e[5]):
        pytest.skip("this size's reduction has no scratch buffer")
    hot([x])
    assert fake.scratch_taken and all(s == CAPTURE_STREAM for _, _, s in fake.scratch_taken)
    assert any(0xA100 in e[5] for e in prog.hot_log if e[4] == CAPTURE_STREAM)


def test_built_launchers_graph_only_programs_of_two_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    fd, inputs = _two_segments()
    prog = Program(fd, inputs)
    assert hot_launch._steps(prog.replay) >= 2  # noqa: SLF001
    with FusionDefinition() as one:
        a = one.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        one.add_output(one.ops.exp(a))
    assert hot_launch._steps(Program(one, [torch.randn(1024)]).replay) == 1  # noqa: SLF001


def test_scalar_values_key_the_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scalar is baked into the captured launch: another value (-0.0 is not 0.0)
    is another key, launched plainly with its own value."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.div(fd.ops.exp(a), s))
    x = torch.randn(8, 128)
    prog, hot, fake, graphs = _graph_launcher(fd, [x, 0.0], monkeypatch)
    hot([x, 0.0])
    hot([x, 0.0])
    assert fake.captures == 1
    prog.hot_log.clear()
    hot([x, -0.0])
    assert len(prog.hot_log) == 1 and fake.launches == [(0xC0DF, STREAM)]
    packed = prog.hot_log[0][5]
    assert any(isinstance(v, float) and v == 0.0 and np.copysign(1.0, v) < 0 for v in packed)
    hot([x, 0.0])
    assert len(fake.launches) == 2


def test_graphs_own_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each graph keeps its intermediates: a launcher may keep as many graphs as fit in
    its budget (at least one), then new pointers launch plainly."""
    fd, inputs = _two_segments()
    prog, hot, fake, graphs = _graph_launcher(fd, inputs, monkeypatch)
    assert graphs.owned == 64 * 4  # the row sums between the two segments, float32
    assert graphs.limit() == hot_launch.MAX_GRAPHS
    graphs.budget = 3 * 64 * 4
    assert graphs.limit() == 3
    graphs.budget = 1
    assert graphs.limit() == 1
    hot(list(inputs))
    hot(list(inputs))
    other = [inputs[0].clone(), inputs[1]]
    hot(other)
    prog.hot_log.clear()
    hot(other)
    assert fake.captures == 1 and prog.hot_log  # the second pointers launch plainly


@pytest.mark.parametrize("graphs_on", [True, False])
def test_build_gives_multi_step_programs_graphs(graphs_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``build`` (libcuda's launches faked) gives a two-segment program a ``Graphs``
    with 1/8 of the device's memory as its budget, a one-kernel program none, and
    none at all with graphs off; the launcher runs as the replay does."""
    fd, inputs = _two_segments()
    prog = Program(fd, inputs)
    monkeypatch.setattr(gpu_arrays, "_raw_stream", lambda d: STREAM)
    monkeypatch.setattr(hot_launch, "takes", lambda xs: True)
    monkeypatch.setattr(hot_launch, "_tensor_types", frozenset({torch.Tensor}))
    monkeypatch.setattr(hot_launch, "_cu_launch", lambda: prog.cu_launch)
    monkeypatch.setattr(hot_launch, "_cu_graph_launch", lambda: None)
    monkeypatch.setattr(hot_launch, "GRAPHS", graphs_on)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: types.SimpleNamespace(total_memory=80 << 30))
    launcher = hot_launch.build(prog.replay, None, inputs, stream=lambda d: STREAM)
    assert launcher is not None
    if graphs_on:
        assert launcher.graphs is not None and launcher.graphs.budget == 10 << 30
        assert "_graph_get(k)" in launcher.source
    else:
        assert launcher.graphs is None and "_graph_get" not in launcher.source
    prog.replay(list(inputs))
    want = list(prog.log)
    launcher.run(list(inputs))
    assert prog.hot_log == want
    with FusionDefinition() as one:
        a = one.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        one.add_output(one.ops.exp(a))
    single = Program(one, [torch.randn(1024)])
    monkeypatch.setattr(hot_launch, "_cu_launch", lambda: single.cu_launch)
    assert hot_launch.build(single.replay, None, [torch.randn(1024)], stream=lambda d: STREAM).graphs is None


class FakeDeviceArray:
    """A CUDA array interface at a made-up address (``byte_span`` reads it), with a
    torch-like ``data_ptr``."""

    def __init__(self, ptr: int, shape: tuple[int, ...], strides: tuple[int, ...] | None = None) -> None:
        self.ptr = ptr
        self.__cuda_array_interface__ = {
            "shape": shape, "strides": strides, "typestr": "<f4", "data": (ptr, False), "version": 3,
        }

    def data_ptr(self) -> int:
        return self.ptr


def test_an_in_place_launcher_is_guarded_against_overlapping_inputs() -> None:
    """``_overlap_guard``: calls whose tensors stay clear of the inputs written in
    place take the hot launcher; any overlap (another view of the written input, the
    same array passed twice) takes the full path, whose ``check_in_place_inputs``
    decides."""
    first = [FakeDeviceArray(0x10000, (64,)), FakeDeviceArray(0x20000, (64,)), 2.0, FakeDeviceArray(0x30000, (8, 8))]
    assert execution._overlap_guard([-1, -1], first) is None  # nothing written in place
    guard = execution._overlap_guard([-1, 0], first)  # output 1 is written into input 0
    assert guard is not None and guard(first)
    assert guard([FakeDeviceArray(0x50000, (64,)), FakeDeviceArray(0x50000 + 256, (64,)), 3.0, first[3]])  # adjacent
    assert not guard([FakeDeviceArray(0x50000, (64,)), FakeDeviceArray(0x50000 + 252, (64,)), 3.0, first[3]])
    assert not guard([first[0], first[0], 3.0, first[3]])  # the same array twice
    # Input 3's span is 8 rows of 32 bytes: an input written at its last element overlaps.
    assert not guard([FakeDeviceArray(0x30000 + 255 - 3, (64,)), first[1], 3.0, first[3]])
    # Two written inputs are checked against each other too.
    both = execution._overlap_guard([3, 0], first)
    assert both is not None and both(first)
    assert not both([FakeDeviceArray(0x30000, (64,)), first[1], 2.0, first[3]])
