"""The cache-hit launcher of ``fd.execute`` on torch CUDA tensors: one generated
Python function per input signature that does only what must happen per call.

After the first run of a ``GpuProgram`` its ``Replay`` (``fuser.runtime.gpu_replay``)
knows every step of a call: which buffers to allocate, which compiled segment to
launch with which pointers, what to return. ``build(replay)`` turns those steps into
the source of one straight-line function, compiled once with ``exec``::

    def hot(inputs):
        p0 = inputs[0].data_ptr()
        s = _stream(0)
        cs = _cstreams[s]                     # the stream's c_void_p, made once
        b1 = _alloc1()                        # torch.empty_like of a cached template
        p1 = b1.data_ptr()
        _lock.acquire()
        try:
            _pack0(_buf0, 0, p0, p1, 4096)    # pointers, scalars; extents are literals
            e = _cu_launch(_fn0, 32, 1, 1, 128, 1, 1, 0, cs, _par0, None)
            if e:
                _fail(e, *_where0)           # a CudaError naming the kernel
        finally:
            _lock.release()
        return [b1]

so a call reads the inputs' pointers, allocates the outputs, packs one argument buffer
per kernel (preassembled: the pointer array into it is built once) and calls
``cuLaunchKernel`` of libcuda directly through ``ctypes`` on the caller's current torch
stream. The key of the cache (``key_of``) is ``CacheEntry.gpu_key``'s for these inputs:
per torch tensor its dtype, shape, strides, device and pointer-alignment class
(``data_ptr() % 16``: kernels are specialized for the alignment), per scalar its type.

Only programs whose inputs are torch CUDA tensors (at least one) and Python
``int``/``float``/``bool`` scalars, with a torch replay, are built (``build``
returns None otherwise); what decides whether a call may take this path at all is
the frontend's (``fuser.frontend.execution.hot_execute``). The argument buffers are
the launcher's own, so one lock (held across the pack and the launch) keeps two
threads from interleaving; ``cuLaunchKernel`` is called holding the GIL
(``ctypes.PyDLL``): it only queues the launch.

**CUDA graphs.** A program of two or more steps (kernel launches and library calls)
gets a launcher whose launches are one function ``_run``, and a ``Graphs``: the
second time a call brings the same pointers (inputs, returned buffers) and scalars,
``_run`` is captured into a CUDA graph, and from then on such a call is its
allocations plus one ``cuGraphLaunch``::

    def hot(inputs):
        p0 = inputs[0].data_ptr()
        p1 = inputs[1].data_ptr()
        s = _stream(0)
        cs = _cstreams[s]
        b3 = _alloc3()                        # the returned buffer, made first
        p3 = b3.data_ptr()
        k = (s, p0, p1, p3)                   # the stream: graphs share its pool
        g = _graph_get(k)
        if g is None:
            g = _graph_miss(k, _run, (inputs, p0, p1, p3, b3))   # maybe capture now
        if g is not None:
            e = _graph_launch(g, cs)
            if e:
                _graph_fail(e)
        else:
            _run(inputs, s, cs, _take0, _give0, p0, p1, p3, b3)  # the launches above
        return [b3]

A training loop's buffers come back at the same addresses every step, so its
partitions replay graphs from the third step on (GPT-2 small: 42 graphs for 12
launchers, then none new). ``FUSER_CUDA_GRAPHS=0`` turns graphs off.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from fuser.runtime import cuda_driver as drv
from fuser.runtime.compile_fusion import CompiledSegment, _scratch
from fuser.runtime.gpu_replay import _ALLOCATE, _FREE, _LAUNCH, _LIBRARY, Replay, _view

__all__ = ["HotLauncher", "build", "key_of", "takes"]

_SCALAR_TYPES = (int, float, bool)
_lock = threading.Lock()
_tensor_types: frozenset[type] = frozenset()
"""``torch.Tensor`` and ``torch.nn.Parameter`` (a model's weights reach a
``torch.compile`` partition as parameters: the same tensor, another type), once
``takes`` has seen torch loaded; no other subclass (one may override any method)."""


def key_of(inputs: Sequence[Any]) -> tuple:
    """The hot-cache key of ``inputs``: ``CacheEntry.gpu_key``'s (not by value) for
    torch tensors and scalars, computed without the per-input helpers."""
    t = _tensor_types
    return tuple([
        (x.dtype, x.shape, x.stride(), x.get_device(), x.data_ptr() & 15) if type(x) in t else type(x)
        for x in inputs
    ])


def takes(inputs: Sequence[Any]) -> bool:
    """Whether ``inputs`` are of the kinds a hot launcher takes: torch CUDA tensors
    (``torch.Tensor`` itself or ``torch.nn.Parameter``, at least one) and Python
    ``int``/``float``/``bool``."""
    global _tensor_types
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    if not _tensor_types:
        _tensor_types = frozenset((torch.Tensor, torch.nn.Parameter))
    tensors = [type(x) in _tensor_types and x.is_cuda for x in inputs]
    return any(tensors) and all(t or type(x) in _SCALAR_TYPES for t, x in zip(tensors, inputs, strict=True))


class NotHot(Exception):
    """The program has something the hot launcher does not model."""


class HotLauncher:
    """A generated launcher (``run``) and the program it replays (``plan``, for
    ``CacheEntry.last_run``). ``guard``, when set, says whether a call may take it
    (the frontend's: an in-place program's inputs must not overlap the memory it
    writes); a call it refuses takes the full path."""

    __slots__ = ("graphs", "guard", "plan", "run", "source")

    def __init__(
        self, plan: Any, run: Callable[[Sequence[Any]], list[Any]], source: str, graphs: Graphs | None = None
    ) -> None:
        self.plan = plan
        self.run = run
        self.source = source
        self.graphs = graphs
        """Its CUDA graphs (``Graphs``), or None when it launches every call."""
        self.guard: Callable[[Sequence[Any]], bool] | None = None


@functools.cache
def _cu_launch() -> Any:
    """libcuda's ``cuLaunchKernel`` through ctypes, called with the GIL held. Arguments
    are passed without ``argtypes``: handles and pointers as ``c_void_p`` objects made
    once, the grid, block and shared sizes as small ints."""
    lib = ctypes.PyDLL("libcuda.so.1")
    fn = lib.cuLaunchKernel
    fn.restype = ctypes.c_int
    return fn


class _LaunchAttributeValue(ctypes.Union):
    """``CUlaunchAttributeValue``: a 64-byte union; the member used here."""

    _fields_ = [("programmaticStreamSerializationAllowed", ctypes.c_int), ("pad", ctypes.c_char * 64)]


class _LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute``: an id, padding to 8 bytes, the value union."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _LaunchAttributeValue)]


class _LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig`` (cuda.h)."""

    _fields_ = [
        ("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
        ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
        ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(_LaunchAttribute)), ("numAttrs", ctypes.c_uint),
    ]


_PROGRAMMATIC_STREAM_SERIALIZATION = 6
"""``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION``."""


def _dependent_config(grid: tuple[int, int, int], block: tuple[int, int, int], shared: int) -> _LaunchConfig:
    """The ``CUlaunchConfig`` of a programmatic dependent launch (``cuda_driver.
    Kernel.dependent_launch``): its stream is set at each call."""
    attr = _LaunchAttribute()
    attr.id = _PROGRAMMATIC_STREAM_SERIALIZATION
    attr.value.programmaticStreamSerializationAllowed = 1
    cfg = _LaunchConfig(*grid, *block, shared, None, ctypes.pointer(attr), 1)
    cfg._attr = attr  # type: ignore[attr-defined]  # keeps the attribute alive
    return cfg


@functools.cache
def _cu_launch_ex() -> Any:
    """libcuda's ``cuLaunchKernelEx(config, f, params, extra)`` (``_cu_launch``'s way)."""
    fn = ctypes.PyDLL("libcuda.so.1").cuLaunchKernelEx
    fn.restype = ctypes.c_int
    return fn


@functools.cache
def _cu_graph_launch() -> Any:
    """libcuda's ``cuGraphLaunch(exec, stream)`` through ctypes (``_cu_launch``'s way)."""
    fn = ctypes.PyDLL("libcuda.so.1").cuGraphLaunch
    fn.restype = ctypes.c_int
    return fn


def _graph_fail(err: Any) -> None:
    raise _cuda_error("cuGraphLaunch", err, "a fusion's captured launches")


GRAPHS = os.environ.get("FUSER_CUDA_GRAPHS", "1") != "0"
"""Whether launchers of programs of two or more steps (kernel launches and library
calls) replay them as CUDA graphs (``Graphs``); ``FUSER_CUDA_GRAPHS=0`` turns it off.
Read when a launcher is built."""
CAPTURE_AFTER = 2
"""A graph is captured on the call that sees its pointers for the second time: a
training loop's buffers come back at the same addresses every step, one-off pointers
do not pay for a capture."""
MAX_GRAPHS = 64
"""Graphs kept per launcher. One launcher serves every call of its fusion and input
signature: GPT-2's 12 layers call the same partition with 12 sets of weights, so 12
graphs (more while the allocator settles). After that many, pointers that keep
changing take the plain launches (the graphs captured so far are still replayed)."""


def shared_pools() -> bool:
    """Whether the graphs replayed on one stream share one memory pool (``_torch_capture``):
    the default. ``FUSER_GRAPH_POOL=private`` gives each graph its own pool, which keeps
    its intermediates for good (the sum of all graphs' instead of the largest one's).
    Read when a graph is captured."""
    return os.environ.get("FUSER_GRAPH_POOL", "shared") != "private"


GRAPH_MEMORY_FRACTION = 8
"""The graphs of one launcher may own at most 1/8 of the device's memory (``Graphs.
budget``; 10 GB on an H100). Each graph's intermediates and scratch buffers
(``Graphs.owned``) count against it, so a program of large intermediates gets fewer
graphs (at least one); with pools shared per stream (``shared_pools``) that is an
upper bound, as the graphs reuse one pool's memory. The temporaries of library calls (padded GEMM copies) are not counted:
their size is known only inside torch. With private pools (``shared_pools()`` false)
GPT-2 small's 42 graphs hold 2.8 GB in all."""
_capture_lock = threading.Lock()


class Graphs:
    """The CUDA graphs of one launcher: its launches and library calls captured once
    per set of pointers, replayed by one ``cuGraphLaunch`` on the caller's stream.

    A captured graph bakes in every pointer the launches read or write. Its key is
    the caller's stream and the pointers a call brings: the inputs', the buffers the
    call returns (made before the launches: ``_Source.hoist``) and the scalar inputs'
    values (by ``repr``: -0.0 and 0.0 are two keys). A key seen again means the same
    addresses, so the replay reads and writes this call's tensors (a graph reads
    memory when it runs, not when it was captured). The rest is the graph's: the
    intermediate buffers between its kernels, the scratch buffers (zeroed inside the
    graph where a kernel asks) and the temporaries of library calls (cuBLAS through
    torch), made in the memory pool of the ``torch.cuda.CUDAGraph`` it was captured
    with. Nothing a capture makes lands in the caller's pool, so capturing does not
    move the addresses later calls get.

    The graphs replayed on one stream share one pool (``shared_pools``), of every
    launcher: a graph's buffers are dead when it ends (what outlives it is the
    caller's), and graphs on one stream never run at once, so the next capture may
    reuse them. The stream is in the key for that: a graph is never replayed on a
    stream other than its pool's.

    Capture runs ``_run`` on a side stream under ``capture_begin`` (thread-local mode:
    other threads keep launching); a program that cannot be captured turns graphs off
    for this launcher (``why``) and runs its plain launches, as does a call made while
    the caller's own stream is being captured (torch's ``CUDAGraph`` around
    ``fd.execute``: the plain launches join that graph)."""

    __slots__ = ("_capture", "budget", "device", "execs", "kept", "off", "owned", "seen", "why")

    def __init__(self, device: int, capture: Callable[..., tuple[Any, Any]] | None = None, budget: int = 1 << 33) -> None:
        self.device = device
        self.budget = budget
        """Bytes the graphs may own in all (``GRAPH_MEMORY_FRACTION`` of the device's)."""
        self.owned = 0
        """Bytes of intermediates and scratch each graph keeps (set by ``_generate``)."""
        self.execs: dict[tuple, Any] = {}
        """key -> the graph's exec handle (a ``c_void_p`` for ``cuGraphLaunch``)."""
        self.seen: dict[tuple, int] = {}
        self.kept: list[Any] = []  # what each graph owns (its torch graph, scratch)
        self.off = False
        self.why = ""
        self._capture = capture or _torch_capture

    def miss(self, key: tuple, run: Callable[..., None], args: tuple) -> Any:
        """The graph of ``key`` when this call captures it (``CAPTURE_AFTER``), else
        None (the caller runs the plain launches). ``args`` are ``_run``'s after its
        stream and scratch parameters."""
        if self.off:
            return None
        seen = self.seen.get(key, 0) + 1
        if seen < CAPTURE_AFTER:
            if len(self.seen) >= 16 * MAX_GRAPHS:
                self.seen.clear()
            self.seen[key] = seen
            return None
        if len(self.execs) >= self.limit():
            return None
        with _capture_lock:
            if key in self.execs:
                return self.execs[key]
            try:
                handle, owned = self._capture(run, args, self.device, key[0])
            except _NotNow:
                return None
            except Exception as e:  # noqa: BLE001 - not capturable: plain launches from now on
                self.off = True
                self.why = f"{type(e).__name__}: {e}"
                return None
            self.seen.pop(key, None)
            self.kept.append(owned)
            self.execs[key] = handle
        return handle

    def limit(self) -> int:
        """How many graphs this launcher may keep: ``MAX_GRAPHS``, fewer when their
        owned buffers would pass ``budget``."""
        return max(1, min(MAX_GRAPHS, self.budget // max(self.owned, 1)))


class _NotNow(Exception):
    """Not the moment to capture (the caller's stream is capturing)."""


_side_streams: dict[int, Any] = {}
_pools: dict[tuple[int, int], _Pool] = {}
"""(device, caller's stream) -> the memory pool its graphs share (``shared_pools``)."""


class _Pool:
    """A memory pool that the graphs replayed on one stream share: torch's handle, and
    how many graphs captured into it are alive."""

    __slots__ = ("handle", "key", "live")

    def __init__(self, key: tuple[int, int], handle: Any) -> None:
        self.key = key
        self.handle = handle
        self.live = 0


class _PoolHold:
    """What each graph captured into a shared pool keeps of it. The last one let go
    forgets the pool: torch may free a pool that no graph uses, and its handle is not
    to be used again, so the next capture on that stream starts a new pool."""

    __slots__ = ("pool",)

    def __init__(self, pool: _Pool) -> None:
        pool.live += 1
        self.pool = pool

    def __del__(self) -> None:
        pool = self.pool
        pool.live -= 1
        if pool.live == 0 and _pools.get(pool.key) is pool:
            del _pools[pool.key]


def _torch_capture(run: Callable[..., None], args: tuple, device: int, stream: int) -> tuple[Any, Any]:
    """Capture ``run(inputs, s, cs, take, give, *rest)`` (``args`` = ``(inputs,
    *rest)``) as a CUDA graph on this device's side stream, for replays on ``stream``
    (the caller's): (its exec handle, what it keeps)."""
    torch = sys.modules["torch"]
    if torch.cuda.is_current_stream_capturing():
        raise _NotNow
    side = _side_streams.get(device)
    if side is None:
        side = _side_streams[device] = torch.cuda.Stream(device=device)
    raw = side.cuda_stream
    bufs: list[Any] = []

    def take(nbytes: int, zero: bool, stream: int, dev: int = 0) -> Any:
        # Made inside the capture: from the graphs' pool, not the caller's, so that
        # capturing does not move what the caller's allocations get next (their
        # addresses key the graphs: buffers kept in the caller's pool shifted every
        # later step's).
        buf = torch.empty(max(nbytes, 1), dtype=torch.uint8, device=f"cuda:{device}")
        bufs.append(buf)
        if zero and nbytes:
            drv.memset_d8(buf.data_ptr(), 0, nbytes, stream)  # a memset node: every replay zeroes it
        return _Ptr(buf.data_ptr())

    def give(nbytes: int, buf: Any, stream: int, dev: int = 0) -> None:
        pass  # the graph keeps its scratch

    hold = None
    if shared_pools():
        pool = _pools.get((device, stream))
        if pool is None:
            pool = _pools[device, stream] = _Pool((device, stream), torch.cuda.graph_pool_handle())
        hold = _PoolHold(pool)  # made first: a failed capture lets it go with the graph
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side):
        graph.capture_begin(pool=hold.pool.handle if hold else None, capture_error_mode="thread_local")
        try:
            run(args[0], raw, ctypes.c_void_p(raw), take, give, *args[1:])
        except BaseException:
            with contextlib.suppress(Exception):
                graph.capture_end()
            raise
        graph.capture_end()
    if hold is not None:
        # The buffers go back to the shared pool, for the next capture on this stream
        # to reuse; the graph still reads and writes them on every replay. The hold is
        # last: a tuple lets go of its last item first, so the pool is forgotten before
        # the graph goes.
        return ctypes.c_void_p(graph.raw_cuda_graph_exec()), (graph, hold)
    return ctypes.c_void_p(graph.raw_cuda_graph_exec()), (graph, bufs)


class _Ptr:
    """A scratch buffer as ``_run`` reads it (``.ptr``)."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


LAUNCH = "ctypes"
"""How launchers call ``cuLaunchKernel``: ``"ctypes"`` (libcuda's, GIL held) or
``"cuda-python"`` (``cuda.bindings.driver.cuLaunchKernel``); read when one is built."""


class _Streams(dict):
    """Stream handle (int) -> its ``c_void_p`` (made once per stream)."""

    def __missing__(self, s: int) -> ctypes.c_void_p:
        c = self[s] = ctypes.c_void_p(s)
        return c


def _fail(err: Any, kernel: str, grid: tuple, block: tuple, shared: int) -> None:
    raise _cuda_error("cuLaunchKernel", err, f"kernel '{kernel}' grid={grid} block={block} shared={shared}")


def _cuda_error(api: str, err: Any, detail: str) -> drv.CudaError:
    """The ``CudaError`` of libcuda's ``api`` returning ``err`` (an int from ctypes)."""
    from cuda.bindings import driver as cu

    try:
        code: Any = cu.CUresult(int(err))
    except ValueError:
        code = err
    return drv.CudaError(api, code, detail)


def _faster_allocator(make: Any) -> Any:
    """``make`` (``gpu_replay``'s allocator: ``functools.partial`` of ``torch.empty``)
    as ``torch.empty_like`` of a one-element template expanded to the shape, when that
    gives the same strides, dtype and device (parsing ``torch.empty``'s arguments costs
    about as much again as the allocation); else ``make`` itself."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(make, functools.partial) or make.func is not torch.empty:
        return make
    try:
        want = make()
        template = torch.empty((), dtype=want.dtype, device=want.device).expand(want.shape)
        got = torch.empty_like(template)
    except Exception:  # noqa: BLE001 - keep the allocator the replay uses
        return make
    if (got.shape, got.stride(), got.dtype, got.device) != (want.shape, want.stride(), want.dtype, want.device):
        return make
    return functools.partial(torch.empty_like, template)


def _nbytes(shape: Sequence[int], strides: Sequence[int], dtype: Any) -> int:
    """Bytes a buffer of ``shape``/``strides`` (elements) of ``dtype`` spans."""
    if any(e == 0 for e in shape):
        return 0
    return (1 + sum((e - 1) * s for e, s in zip(shape, strides, strict=True))) * dtype.itemsize


def _dims(d: int | Sequence[int]) -> tuple[int, int, int]:
    if isinstance(d, int):
        return (d, 1, 1)
    x, y, z = (*d, 1, 1)[:3]
    return (int(x), int(y), int(z))


def build(
    replay: Replay, plan: Any, inputs: Sequence[Any], *, launch: Any = None, stream: Any = None
) -> HotLauncher | None:
    """The hot launcher of ``replay`` (built by ``plan``'s first run) for inputs like
    ``inputs`` (used for their kinds only), or None when the program is not one the
    launcher models. ``launch`` and ``stream`` replace libcuda's ``cuLaunchKernel``
    and torch's current raw stream accessor (tests)."""
    torch = sys.modules.get("torch")
    if torch is None or replay.kind != "torch" or len(inputs) != replay.num_inputs or not takes(inputs):
        return None
    tensors = [type(x) in _tensor_types for x in inputs]
    if any(tensors[k] for k in replay.scalar_inputs) or not all(tensors[k] for k in replay.pointer_inputs):
        return None
    if stream is None:
        stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (  # noqa: SLF001
            lambda d: torch.cuda.current_stream(d).cuda_stream
        )
    mode = "ctypes" if launch is not None else LAUNCH
    graphed = GRAPHS and launch is None
    dependent = launch is None  # libcuda's own launch, not a test's
    if launch is None:
        launch = _cu_launch() if mode == "ctypes" else _cuda_python_launch()
    graphs = None
    if graphed and mode == "ctypes" and _steps(replay) >= 2:
        total = torch.cuda.get_device_properties(int(replay.device)).total_memory
        graphs = Graphs(int(replay.device), budget=total // GRAPH_MEMORY_FRACTION)
    try:
        source, namespace = _generate(replay, tensors, launch, stream, mode, graphs, dependent=dependent)
    except NotHot:
        return None
    exec(compile(source, "<fuser hot launcher>", "exec"), namespace)  # noqa: S102 - our own source
    return HotLauncher(plan, namespace["hot"], source, graphs)


def _steps(replay: Replay) -> int:
    """Kernel launches and library calls of one call of ``replay``."""
    n = 0
    for step in replay.steps:
        if step[0] == _LAUNCH:
            n += len(step[1].launch_table())
        elif step[0] == _LIBRARY:
            n += 1
    return n


def _cuda_python_launch() -> Any:
    from cuda.bindings import driver as cu

    return cu.cuLaunchKernel


class _Source:
    """The body of the generated function being written, and the names it reads."""

    def __init__(
        self, launch: Any, stream: Any, mode: str, hoist: frozenset[int] = frozenset(), dependent: bool = False
    ) -> None:
        self.lines: list[str] = []
        self.pending: list[str] = []  # launch lines not yet written (written under the lock)
        self.hoist = hoist
        """Graph mode: the roots returned. Their allocations go to ``allocs``: the call
        makes them before its launches, and their pointers key the graph. The other
        buffers (a call's intermediates) are made inside ``_run``: a capture takes them
        from the graphs' pool (``_torch_capture``), and the graph uses them on every
        replay."""
        self.allocs: list[str] = []
        self.owned = 0  # bytes of the buffers made inside ``_run`` (graph mode)
        self.ns: dict[str, Any] = {
            "_lock": _lock, "_cu_launch": launch, "_stream": stream, "_fail": _fail, "_cstreams": _Streams(),
        }
        self.mode = mode
        self.dependent = dependent
        """Whether launches may be programmatic dependent ones (``_generate``)."""
        self.kernels = 0
        self.libraries = 0

    def flush(self, after: Sequence[str] = ()) -> None:
        """Write the pending launches in one locked block (then ``after``, still in
        its ``finally``)."""
        if not self.pending:
            return
        self.lines += ["_lock.acquire()", "try:", *("    " + x for x in self.pending)]
        self.lines += ["finally:", "    _lock.release()", *("    " + x for x in after)]
        self.pending = []


def _generate(
    replay: Replay, tensors: Sequence[bool], launch: Any, stream: Any, mode: str = "ctypes",
    graphs: Graphs | None = None, graph_launch: Any = None, dependent: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The launcher's source and the names it reads (module docstring). With
    ``graphs`` (ctypes launches only) the launches and library calls are one function
    ``_run`` that a call either runs or replays as the CUDA graph captured from it for
    these pointers (``Graphs``); ``graph_launch`` replaces libcuda's ``cuGraphLaunch``
    (tests). ``dependent``: ``launch`` is libcuda's own ``cuLaunchKernel`` (ctypes), so
    kernels that allow it (``Kernel.dependent_launch``) are launched through
    ``cuLaunchKernelEx`` with programmatic stream serialization instead."""
    if graphs is not None and mode != "ctypes":
        raise ValueError("hot launchers capture CUDA graphs of ctypes launches only")
    returned = frozenset(r for r, _ in replay.returns)
    src = _Source(launch, stream, mode, hoist=returned if graphs is not None else frozenset(),
                  dependent=dependent and mode == "ctypes")
    n_in = replay.num_inputs
    head = [f"p{k} = inputs[{k}].data_ptr()" for k in replay.pointer_inputs]
    head += [f"v{k} = inputs[{k}]" for k in replay.scalar_inputs]
    head.append(f"s = _stream({int(replay.device)})")
    if mode == "ctypes":
        head.append("cs = _cstreams[s]")
    roots: list[int] = []  # allocated roots made before the launches (graph mode)
    for step in replay.steps:
        tag = step[0]
        if tag == _ALLOCATE:
            src.flush()
            _, r, make, zero = step
            src.ns[f"_alloc{r}"] = _faster_allocator(make)
            lines = [f"b{r} = _alloc{r}()", f"p{r} = b{r}.data_ptr()"] + ([f"b{r}.zero_()"] if zero else [])
            if r in src.hoist:
                roots.append(r)
                src.allocs += lines
            else:
                src.lines += lines
                src.owned += _nbytes(*replay.buffers[r]) if r in replay.buffers else 0
        elif tag == _LAUNCH:
            _launch_lines(src, *step[1:])
        elif tag == _FREE:
            src.flush()
            if step[1] not in src.hoist:
                src.lines.append(f"b{step[1]} = None")
        elif tag == _LIBRARY:
            src.flush()
            _library_line(src, n_in, tensors, *step[1:])
        else:  # streams and communications: the replay runs those programs
            raise NotHot
    src.flush()
    rets: list[str] = []
    for j, (r, place) in enumerate(replay.returns):
        if r < n_in and not tensors[r]:
            raise NotHot
        root = f"inputs[{r}]" if r < n_in else f"b{r}"
        if place is None:
            rets.append(root)
        else:
            src.ns[f"_view{j}"] = functools.partial(_view, place=place)
            rets.append(f"_view{j}({root})")
    ret = f"return [{', '.join(rets)}]"
    if graphs is None:
        return "def hot(inputs):\n" + "".join(f"    {x}\n" for x in [*head, *src.lines, ret]), src.ns
    graphs.owned = src.owned
    # Graph mode: the key is every pointer the launches bake in that a call brings
    # (inputs, then the buffers it returns) and every scalar input's value.
    pointers = [f"p{k}" for k in [*replay.pointer_inputs, *roots]]
    scalars = [f"v{k}" for k in replay.scalar_inputs]
    key = ["s", *pointers, *(f"repr({v})" for v in scalars)]  # -0.0 is not 0.0 to a kernel
    names = ", ".join([*pointers, *scalars, *(f"b{r}" for r in roots)])
    params = f"inputs, s, cs, _take, _give{', ' if names else ''}{names}"
    src.ns.update({
        "_graph_get": graphs.execs.get, "_graph_miss": graphs.miss, "_graph_launch": graph_launch or _cu_graph_launch(),
        "_graph_fail": _graph_fail, "_take0": _scratch.take, "_give0": _scratch.give,
    })
    body = src.lines or ["pass"]
    hot = [
        *head, *src.allocs,
        f"k = ({', '.join(key)}{',' if len(key) == 1 else ''})",
        "g = _graph_get(k)",
        "if g is None:",
        f"    g = _graph_miss(k, _run, (inputs{', ' if names else ''}{names}))",
        "if g is not None:",
        "    e = _graph_launch(g, cs)",
        "    if e:",
        "        _graph_fail(e)",
        "else:",
        f"    _run(inputs, s, cs, _take0, _give0{', ' if names else ''}{names})",
        ret,
    ]
    source = f"def _run({params}):\n" + "".join(f"    {x}\n" for x in body)
    source += "def hot(inputs):\n" + "".join(f"    {x}\n" for x in hot)
    return source, src.ns


def _library_line(
    src: _Source,
    n_in: int,
    tensors: Sequence[bool],
    call: Any,
    args: Sequence[tuple[int, Any]],
    out: tuple[int, Any],
) -> None:
    """One library call (a matrix product, ``fuser.runtime.library_ops``): its operands
    and output are torch tensors (an input, an allocation, or a view of one)."""
    j = src.libraries
    src.libraries += 1
    src.ns[f"_lib{j}"] = call

    def ref(r: int, place: Any, k: int) -> str:
        if r < n_in and not tensors[r]:
            raise NotHot
        root = f"inputs[{r}]" if r < n_in else f"b{r}"
        if place is None:
            return root
        src.ns[f"_lib{j}_view{k}"] = functools.partial(_view, place=place)
        return f"_lib{j}_view{k}({root})"

    operands = ", ".join(ref(r, p, k) for k, (r, p) in enumerate(args))
    src.lines.append(f"_lib{j}([{operands}], {ref(*out, len(args))}, s)")


def _launch_lines(
    src: _Source, seg: CompiledSegment, args: Sequence[tuple[bool, int, int]], outs: Sequence[tuple[int, int]]
) -> None:
    """The lines of one ``hir.launch`` of ``seg`` (each of its kernels): every
    argument where ``CompiledSegment.launch`` takes it from (``[*inputs, *outputs,
    *scratch, *extents]``), extents as literals."""
    if len(args) != len(seg.fusion.inputs) or len(outs) != len(seg.fusion.output_op.values):
        raise NotHot
    first = src.kernels
    values = [(f"p{r} + {off}" if off else f"p{r}") if is_ptr else f"v{r}" for is_ptr, r, off in args]
    values += [f"p{r} + {off}" if off else f"p{r}" for r, off in outs]
    scratch = list(zip(seg.scratch_bytes, seg.lowered.scratch, strict=True))
    values += [f"sc{first}_{j}.ptr" for j in range(len(scratch))]
    values += [repr(int(v)) for v in seg.extent_values]
    lines: list[str] = []
    for kern, grid, block, shared, gather in seg.launch_table():
        if any(c not in "pqQiIfdb" for c in kern.signature):
            raise NotHot  # complex scalars take two slots each
        if shared > kern._dynamic_limit:  # noqa: SLF001 - the first run set it; make sure
            kern.set_max_dynamic_shared_memory(shared)
        k = src.kernels
        src.kernels += 1
        fmt, offsets, words = drv.arg_offsets(kern.signature)
        buf = (ctypes.c_uint64 * max(words, 1))()
        pointers = (ctypes.c_void_p * max(len(offsets), 1))(*[ctypes.addressof(buf) + o for o in offsets])
        g, b = _dims(grid), _dims(block)
        src.ns.update({
            f"_buf{k}": buf,
            f"_ptrs{k}": pointers,  # keeps the pointer array alive
            f"_pack{k}": struct.Struct(fmt).pack_into,
            f"_where{k}": (kern.name, g, b, int(shared)),
        })
        dims = f"{g[0]}, {g[1]}, {g[2]}, {b[0]}, {b[1]}, {b[2]}, {int(shared)}"
        if src.dependent and kern.dependent_launch:
            # A programmatic dependent launch: its config made once, the stream set per call.
            src.ns[f"_fn{k}"] = ctypes.c_void_p(int(kern.function))
            src.ns[f"_par{k}"] = ctypes.c_void_p(ctypes.addressof(pointers)) if offsets else None
            src.ns[f"_cfg{k}"] = cfg = _dependent_config(g, b, int(shared))
            src.ns[f"_pcfg{k}"] = ctypes.byref(cfg)
            src.ns["_cu_launch_ex"] = _cu_launch_ex()
            call = f"_cfg{k}.hStream = s\ne = _cu_launch_ex(_pcfg{k}, _fn{k}, _par{k}, None)"
        elif src.mode == "ctypes":
            src.ns[f"_fn{k}"] = ctypes.c_void_p(int(kern.function))
            src.ns[f"_par{k}"] = ctypes.c_void_p(ctypes.addressof(pointers)) if offsets else None
            call = f"e = _cu_launch(_fn{k}, {dims}, cs, _par{k}, None)"
        else:
            src.ns[f"_fn{k}"] = kern.function
            src.ns[f"_par{k}"] = ctypes.addressof(pointers) if offsets else 0
            call = f"e = _cu_launch(_fn{k}, {dims}, s, _par{k}, 0)[0]"
        packed = "".join(", " + values[i] for i in gather)
        lines += [
            f"_pack{k}(_buf{k}, 0{packed})",
            *call.split("\n"),
            "if e:",
            f"    _fail(e, *_where{k})",
        ]
    if not scratch:
        src.pending += lines
        return
    # Scratch buffers from the launch path's pool (zeroed on the stream when asked),
    # handed back once the launches are queued, as ``run_compiled`` does.
    src.flush()
    src.ns["_take"], src.ns["_give"] = _scratch.take, _scratch.give
    dev = seg.device
    src.lines += [f"sc{first}_{j} = _take({n}, {bool(z.zero_init)}, s, {dev})" for j, (n, z) in enumerate(scratch)]
    src.owned += sum(n for n, _ in scratch)
    src.pending += lines
    src.flush(after=[f"_give({n}, sc{first}_{j}, s, {dev})" for j, (n, _) in enumerate(scratch)])
