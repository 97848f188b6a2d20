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


def test_cuda_python_launches_pack_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LAUNCH = "cuda-python"``: ``cuda.bindings``' ``cuLaunchKernel`` with the
    function object, the stream and the pointer array's address as ints."""
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Float)
        fd.add_output(fd.ops.add(t1, fd.ops.segment_set(fd.ops.broadcast(t2, is_broadcast_dim=[False, True]))))
    inputs = [torch.randn(64, 256), torch.randn(64, 256)]
    prog = Program(fd, inputs)
    monkeypatch.setattr(gpu_arrays, "_raw_stream", lambda d: STREAM)
    slow = prog.replay(list(inputs))

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


def test_in_place_random_vector_and_value_keyed_fusions_are_not_hot(monkeypatch: pytest.MonkeyPatch) -> None:
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
    assert not attempt(in_place=True)  # an output written in place into an input
    assert not attempt(key=(("scalar", 2.0),))  # the plans are keyed by scalar values
    assert not attempt(flat=[x, 1, 2])  # the hidden Philox seed and offset
    assert not attempt(flat=[x.clone()])  # flattened inputs are not the caller's
    assert not attempt(replay=None)  # walked every time
