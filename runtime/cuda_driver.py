"""A thin layer over the CUDA driver API (``cuda.bindings.driver``).

What the GPU runtime needs and nothing more: initialisation and the device's primary
context (the one torch uses too, so pointers and streams are shared), device
properties, modules and kernels, launches, dynamic shared memory, streams, events and
raw memory. Every driver call is checked; a failure raises :class:`CudaError` naming the
call and the CUDA error (``cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid
argument)``).

Launches are on the hot path of ``fd.execute``: a :class:`Kernel` is built once with its
parameter signature (``"ppi"``: two pointers and an int32; ``c``/``z`` are a complex64 /
complex128 passed by value, ``fuser_complex<T>``), which fixes a packed argument buffer
(8-byte slots, 16 for a complex128) and the array of pointers into it. A launch packs the values into that
buffer with one precompiled ``struct.Struct.pack_into`` and hands the pointer array's
address to ``cuLaunchKernel``::

    module = Module(compiled.image)
    add = module.kernel("vadd", "pppi")
    add.launch(grid=(n + 255) // 256, block=256, args=(a_ptr, b_ptr, out_ptr, n))

Signature characters: ``p`` pointer, ``i`` int32, ``I`` uint32, ``q`` int64, ``Q``
uint64, ``f`` float32, ``d`` float64, ``b`` bool.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from cuda.bindings import driver as cu

_SUCCESS = cu.CUresult.CUDA_SUCCESS
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024


class CudaError(RuntimeError):
    """A CUDA driver call failed."""

    def __init__(self, call: str, code: Any = None, detail: str = "") -> None:
        self.call = call
        self.code = code
        self.name = _error_name(code) if code is not None else ""
        text = f"{call} failed: {self.name}" if code is not None else f"{call} failed"
        super().__init__(text + (f" ({detail})" if detail else ""))


class DriverUnavailable(CudaError):
    """No CUDA driver (libcuda) or no device on this machine."""


def _error_name(code: Any) -> str:
    try:
        err, name = cu.cuGetErrorName(code)
        if err == _SUCCESS:
            _, desc = cu.cuGetErrorString(code)
            return f"{name.decode()} ({desc.decode()})"
    except Exception:
        pass
    return str(code)


def _call(fn: Any, *args: Any) -> Any:
    """Call a driver function; raise on error; return its result(s) after the code."""
    res = fn(*args)
    if res[0] != _SUCCESS:
        raise CudaError(fn.__name__, res[0])
    if len(res) == 1:
        return None
    return res[1] if len(res) == 2 else res[1:]


# ---- initialisation and contexts --------------------------------------------------

_init_lock = threading.Lock()
_initialized = False
_primary: dict[int, Any] = {}
_tls = threading.local()


def init() -> None:
    """``cuInit``; raises :class:`DriverUnavailable` when there is no driver."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _initialized:
            return
        try:
            (err,) = cu.cuInit(0)
        except RuntimeError as e:  # cuda-python could not dlopen libcuda.so.1
            raise DriverUnavailable("cuInit", detail=str(e)) from e
        if err != _SUCCESS:
            raise DriverUnavailable("cuInit", err)
        _initialized = True


def device_count() -> int:
    init()
    return int(_call(cu.cuDeviceGetCount))


def gpu_available() -> bool:
    """Whether a CUDA driver and at least one device are present."""
    try:
        return device_count() > 0
    except CudaError:
        return False


def primary_context(device: int = 0) -> Any:
    """The device's primary context, retained once (shared with torch)."""
    ctx = _primary.get(device)
    if ctx is None:
        init()
        with _init_lock:
            ctx = _primary.get(device)
            if ctx is None:
                dev = _call(cu.cuDeviceGet, device)
                ctx = _call(cu.cuDevicePrimaryCtxRetain, dev)
                _primary[device] = ctx
    return ctx


def ensure_context(device: int = 0) -> None:
    """Make the device's primary context current in this thread (cheap when it is)."""
    if getattr(_tls, "device", None) == device:
        return
    _call(cu.cuCtxSetCurrent, primary_context(device))
    _tls.device = device


def synchronize(device: int = 0) -> None:
    ensure_context(device)
    _call(cu.cuCtxSynchronize)


# ---- device properties ------------------------------------------------------------


@dataclass(frozen=True)
class DeviceProperties:
    """What the schedulers and the launcher need to know about a GPU."""

    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    warp_size: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_sm: int
    registers_per_block: int
    registers_per_sm: int
    l2_cache_bytes: int
    total_memory_bytes: int
    max_grid: tuple[int, int, int]
    clock_rate_khz: int
    memory_clock_rate_khz: int
    memory_bus_width_bits: int

    @property
    def arch(self) -> str:
        """``sm_90`` for compute capability 9.0."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


_properties: dict[int, DeviceProperties] = {}


def properties(device: int = 0) -> DeviceProperties:
    """The device's properties (read once, then cached)."""
    props = _properties.get(device)
    if props is not None:
        return props
    init()
    dev = _call(cu.cuDeviceGet, device)
    A = cu.CUdevice_attribute

    def attr(name: str) -> int:
        return int(_call(cu.cuDeviceGetAttribute, getattr(A, "CU_DEVICE_ATTRIBUTE_" + name), dev))

    raw_name = _call(cu.cuDeviceGetName, 256, dev)
    props = DeviceProperties(
        name=raw_name.split(b"\x00", 1)[0].decode(errors="replace"),
        compute_capability=(attr("COMPUTE_CAPABILITY_MAJOR"), attr("COMPUTE_CAPABILITY_MINOR")),
        sm_count=attr("MULTIPROCESSOR_COUNT"),
        max_threads_per_block=attr("MAX_THREADS_PER_BLOCK"),
        max_threads_per_sm=attr("MAX_THREADS_PER_MULTIPROCESSOR"),
        max_blocks_per_sm=attr("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        warp_size=attr("WARP_SIZE"),
        shared_memory_per_block=attr("MAX_SHARED_MEMORY_PER_BLOCK"),
        shared_memory_per_block_optin=attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        shared_memory_per_sm=attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        registers_per_block=attr("MAX_REGISTERS_PER_BLOCK"),
        registers_per_sm=attr("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        l2_cache_bytes=attr("L2_CACHE_SIZE"),
        total_memory_bytes=int(_call(cu.cuDeviceTotalMem, dev)),
        max_grid=(attr("MAX_GRID_DIM_X"), attr("MAX_GRID_DIM_Y"), attr("MAX_GRID_DIM_Z")),
        clock_rate_khz=attr("CLOCK_RATE"),
        memory_clock_rate_khz=attr("MEMORY_CLOCK_RATE"),
        memory_bus_width_bits=attr("GLOBAL_MEMORY_BUS_WIDTH"),
    )
    _properties[device] = props
    return props


# ---- streams and events -----------------------------------------------------------


def _handle(stream: Stream | int | None) -> int:
    if stream is None:
        return 0
    if isinstance(stream, Stream):
        return stream.ptr
    return int(stream)


class Stream:
    """A CUDA stream we created (``owned``) or wrap (torch's, the default stream 0)."""

    __slots__ = ("handle", "ptr", "device", "_owned")

    def __init__(self, handle: Any = None, *, device: int = 0,
                 non_blocking: bool = True) -> None:
        self.device = device
        if handle is None:
            ensure_context(device)
            flags = (cu.CUstream_flags.CU_STREAM_NON_BLOCKING if non_blocking
                     else cu.CUstream_flags.CU_STREAM_DEFAULT)
            self.handle = _call(cu.cuStreamCreate, flags)
            self._owned = True
        else:
            self.handle = handle if isinstance(handle, cu.CUstream) else cu.CUstream(int(handle))
            self._owned = False
        self.ptr = int(self.handle)

    def synchronize(self) -> None:
        _call(cu.cuStreamSynchronize, self.handle)

    def wait(self, event: Event) -> None:
        """Make work queued later on this stream wait for ``event``."""
        _call(cu.cuStreamWaitEvent, self.handle, event.handle, 0)

    def record(self, event: Event | None = None) -> Event:
        event = event or Event(device=self.device)
        event.record(self)
        return event

    def __int__(self) -> int:
        return self.ptr

    def __del__(self) -> None:
        if getattr(self, "_owned", False):
            try:
                cu.cuStreamDestroy(self.handle)
            except Exception:
                pass

    def __repr__(self) -> str:
        return f"Stream(0x{self.ptr:x}, device={self.device})"


class StreamPool:
    """A fixed set of non-blocking streams handed out round-robin (created lazily)."""

    def __init__(self, size: int = 4, device: int = 0) -> None:
        if size < 1:
            raise ValueError(f"StreamPool size must be positive, got {size}")
        self.size = size
        self.device = device
        self._streams: list[Stream] = []
        self._next = 0

    def get(self) -> Stream:
        if len(self._streams) < self.size:
            s = Stream(device=self.device)
            self._streams.append(s)
            return s
        s = self._streams[self._next]
        self._next = (self._next + 1) % self.size
        return s

    def synchronize(self) -> None:
        for s in self._streams:
            s.synchronize()


def current_stream(device: int = 0) -> int:
    """The stream new work should go to: the one set by :func:`use_stream`, else torch's
    current stream when torch is loaded and has initialised CUDA, else the default 0."""
    stack = getattr(_tls, "streams", None)
    if stack:
        return stack[-1]
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return int(torch.cuda.current_stream(device).cuda_stream)
    return 0


class use_stream:  # noqa: N801 - used like a function, as torch.cuda.stream
    """``with use_stream(s):`` makes ``s`` the current stream of this thread."""

    def __init__(self, stream: Stream | int) -> None:
        self.ptr = _handle(stream)

    def __enter__(self) -> int:
        if not hasattr(_tls, "streams"):
            _tls.streams = []
        _tls.streams.append(self.ptr)
        return self.ptr

    def __exit__(self, *exc: object) -> None:
        _tls.streams.pop()


class Event:
    """A CUDA event (timing enabled unless ``timing=False``)."""

    __slots__ = ("handle", "device")

    def __init__(self, *, timing: bool = True, device: int = 0) -> None:
        ensure_context(device)
        flags = (cu.CUevent_flags.CU_EVENT_DEFAULT if timing
                 else cu.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        self.handle = _call(cu.cuEventCreate, flags)
        self.device = device

    def record(self, stream: Stream | int | None = None) -> Event:
        _call(cu.cuEventRecord, self.handle, _handle(stream))
        return self

    def wait(self, stream: Stream | int | None = None) -> None:
        """Make ``stream`` wait for this event."""
        _call(cu.cuStreamWaitEvent, _handle(stream), self.handle, 0)

    def synchronize(self) -> None:
        _call(cu.cuEventSynchronize, self.handle)

    def query(self) -> bool:
        """Whether the work before the event has completed."""
        (err,) = cu.cuEventQuery(self.handle)
        if err == _SUCCESS:
            return True
        if err == cu.CUresult.CUDA_ERROR_NOT_READY:
            return False
        raise CudaError("cuEventQuery", err)

    def elapsed_ms(self, end: Event) -> float:
        """Milliseconds from this event to ``end`` (both recorded and complete)."""
        return float(_call(cu.cuEventElapsedTime, self.handle, end.handle))

    def __del__(self) -> None:
        try:
            cu.cuEventDestroy(self.handle)
        except Exception:
            pass


# ---- memory -----------------------------------------------------------------------


def mem_alloc(nbytes: int, device: int = 0) -> int:
    """Device memory of ``nbytes`` (0 for an empty allocation)."""
    if nbytes < 0:
        raise ValueError(f"mem_alloc: negative size {nbytes}")
    if nbytes == 0:
        return 0
    ensure_context(device)
    return int(_call(cu.cuMemAlloc, nbytes))


def mem_free(ptr: int) -> None:
    if ptr:
        _call(cu.cuMemFree, ptr)


def memset_d8(ptr: int, value: int, nbytes: int, stream: Stream | int | None = None) -> None:
    if nbytes:
        _call(cu.cuMemsetD8Async, ptr, value & 0xFF, nbytes, _handle(stream))


def memset_d32(ptr: int, value: int, count: int, stream: Stream | int | None = None) -> None:
    """Fill ``count`` 32-bit words (e.g. a float32 poison pattern)."""
    if count:
        _call(cu.cuMemsetD32Async, ptr, value & 0xFFFFFFFF, count, _handle(stream))


def memcpy_htod(dst: int, src: np.ndarray, stream: Stream | int | None = None) -> None:
    """Copy a C-contiguous host array to device memory; waits for the copy when
    ``stream`` is None (the host array may be freed right after)."""
    src = np.ascontiguousarray(src)
    if not src.nbytes:
        return
    if stream is None:
        _call(cu.cuMemcpyHtoD, dst, src.ctypes.data, src.nbytes)
    else:
        _call(cu.cuMemcpyHtoDAsync, dst, src.ctypes.data, src.nbytes, _handle(stream))


def memcpy_dtoh(dst: np.ndarray, src: int, stream: Stream | int | None = None) -> None:
    """Copy device memory into a C-contiguous, writable host array."""
    if not (dst.flags.c_contiguous and dst.flags.writeable):
        raise ValueError("memcpy_dtoh needs a C-contiguous writable destination")
    if not dst.nbytes:
        return
    if stream is None:
        _call(cu.cuMemcpyDtoH, dst.ctypes.data, src, dst.nbytes)
    else:
        _call(cu.cuMemcpyDtoHAsync, dst.ctypes.data, src, dst.nbytes, _handle(stream))


def memcpy_dtod(dst: int, src: int, nbytes: int, stream: Stream | int | None = None) -> None:
    if nbytes:
        _call(cu.cuMemcpyDtoDAsync, dst, src, nbytes, _handle(stream))


def memcpy_2d_dtod(
    dst: int, dst_pitch: int, src: int, src_pitch: int, width: int, height: int, stream: Stream | int | None = None
) -> None:
    """Copy ``height`` rows of ``width`` bytes between device buffers whose rows are
    ``src_pitch`` and ``dst_pitch`` bytes apart (``cuMemcpy2DAsync``): the driver's
    pitched copy, which needs no alignment of the rows."""
    if not (width and height):
        return
    p = cu.CUDA_MEMCPY2D()
    p.srcMemoryType = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
    p.srcDevice = src
    p.srcPitch = src_pitch
    p.dstMemoryType = cu.CUmemorytype.CU_MEMORYTYPE_DEVICE
    p.dstDevice = dst
    p.dstPitch = dst_pitch
    p.WidthInBytes = width
    p.Height = height
    _call(cu.cuMemcpy2DAsync, p, _handle(stream))


def mem_info() -> tuple[int, int]:
    """(free, total) bytes on the current device."""
    free, total = _call(cu.cuMemGetInfo)
    return int(free), int(total)


# ---- modules and kernels ----------------------------------------------------------

_SLOT = {
    "p": "Q", "Q": "Q", "q": "q", "d": "d",
    "i": "i4x", "I": "I4x", "f": "f4x", "b": "?7x",
    "c": "ff", "z": "dd",  # complex64 / complex128 by value: (re, im), 8 / 16 bytes
}
_COMPLEX_SLOTS = frozenset("cz")


def arg_offsets(signature: str) -> tuple[str, list[int], int]:
    """The packing of a launch's arguments: the struct format, each argument's byte
    offset in the buffer (8-byte slots; a complex128 takes two) and the number of
    8-byte words."""
    fmt = "<" + "".join(_SLOT[c] for c in signature)
    offsets, off = [], 0
    for c in signature:
        offsets.append(off)
        off += struct.calcsize("<" + _SLOT[c])
    return fmt, offsets, off // 8


def flatten_complex_args(signature: str, args: Sequence[Any]) -> list[Any]:
    """``args`` with each complex argument (slot ``c``/``z``) as its real and imaginary
    parts, the values ``struct`` packs for ``ff``/``dd``."""
    out: list[Any] = []
    for c, a in zip(signature, args, strict=True):
        if c in _COMPLEX_SLOTS:
            z = complex(a)
            out += [z.real, z.imag]
        else:
            out.append(a)
    return out


class Module:
    """A loaded cubin (or PTX, JIT-compiled by the driver) in the device's primary
    context."""

    def __init__(self, image: bytes, *, device: int = 0) -> None:
        ensure_context(device)
        if not image.startswith(b"\x7fELF") and not image.endswith(b"\x00"):
            image = image + b"\x00"  # PTX must be NUL-terminated
        self._image = image  # the driver reads it during the call only; keep for repr
        self.device = device
        self.handle = _call(cu.cuModuleLoadData, image)
        self._kernels: dict[tuple[str, bool], Kernel] = {}

    def kernel(self, name: str, signature: str, dependent_launch: bool = False) -> Kernel:
        """The ``extern "C"`` kernel ``name`` with parameter ``signature``.
        ``dependent_launch``: the kernel waits for the kernel before it itself
        (``griddepcontrol.wait`` first: fuser's printer's ``fuser_dependent_launch``),
        so it may be launched with programmatic stream serialization
        (``DEPENDENT_LAUNCH``)."""
        k = self._kernels.get((name, dependent_launch))
        if k is None or k.signature != signature:
            try:
                fn = _call(cu.cuModuleGetFunction, self.handle, name.encode())
            except CudaError as e:
                raise CudaError("cuModuleGetFunction", e.code,
                                f"no kernel named '{name}' in the module") from None
            k = Kernel(self, name, fn, signature, dependent_launch)
            self._kernels[(name, dependent_launch)] = k
        return k

    def __del__(self) -> None:
        try:
            if self.handle is not None:
                cu.cuModuleUnload(self.handle)
        except Exception:
            pass


class Kernel:
    """A kernel function with a precomputed argument buffer for fast launches."""

    def __init__(self, module: Module, name: str, function: Any, signature: str,
                 dependent_launch: bool = False) -> None:
        bad = [c for c in signature if c not in _SLOT]
        if bad:
            raise ValueError(f"kernel '{name}': unknown signature characters {bad!r} in "
                             f"'{signature}' (use {''.join(_SLOT)})")
        self.module = module  # keeps the module loaded
        self.name = name
        self.function = function
        self.signature = signature
        n = len(signature)
        fmt, offsets, words = arg_offsets(signature)
        self._struct = struct.Struct(fmt)
        self._has_complex = any(c in _COMPLEX_SLOTS for c in signature)
        self._buffer = (ctypes.c_uint64 * max(words, 1))()
        base = ctypes.addressof(self._buffer)
        self._pointers = (ctypes.c_void_p * max(n, 1))(*[base + o for o in offsets])
        self._params = ctypes.addressof(self._pointers) if n else 0
        self._lock = threading.Lock()
        self.static_shared_bytes = self.attribute("SHARED_SIZE_BYTES")
        self._dynamic_limit = DEFAULT_DYNAMIC_SHARED_LIMIT - self.static_shared_bytes
        self.dependent_launch = dependent_launch and dependent_launch_supported(module.device)
        """Whether launches set programmatic stream serialization (the kernel waits
        for the one before it itself; an sm_90 or later device; ``DEPENDENT_LAUNCH``)."""
        self._config: Any = None

    # attributes
    def attribute(self, name: str) -> int:
        a = getattr(cu.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + name)
        return int(_call(cu.cuFuncGetAttribute, a, self.function))

    @property
    def num_regs(self) -> int:
        return self.attribute("NUM_REGS")

    @property
    def local_bytes(self) -> int:
        """Stack frame / spill bytes per thread."""
        return self.attribute("LOCAL_SIZE_BYTES")

    @property
    def max_threads_per_block(self) -> int:
        return self.attribute("MAX_THREADS_PER_BLOCK")

    def set_max_dynamic_shared_memory(self, nbytes: int) -> None:
        """Opt in to more than 48 KiB of dynamic shared memory for this kernel."""
        limit = properties(self.module.device).shared_memory_per_block_optin
        if nbytes + self.static_shared_bytes > limit:
            raise CudaError(
                "cuFuncSetAttribute", detail=f"kernel '{self.name}' asks for {nbytes} bytes of "
                f"dynamic shared memory (+{self.static_shared_bytes} static); the device "
                f"allows {limit}")
        _call(cu.cuFuncSetAttribute, self.function,
              cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)
        self._dynamic_limit = max(self._dynamic_limit, nbytes)

    # launching
    def launch(self, grid: int | Sequence[int], block: int | Sequence[int],
               args: Sequence[Any], shared_mem: int = 0, stream: Stream | int = 0) -> None:
        """Launch on ``stream`` (a handle or :class:`Stream`). ``args`` follow the
        signature: ints for pointers (``data_ptr()``), Python numbers for scalars."""
        if type(grid) is int:
            gx, gy, gz = grid, 1, 1
        else:
            gx, gy, gz = (*grid, 1, 1)[:3]
        if type(block) is int:
            bx, by, bz = block, 1, 1
        else:
            bx, by, bz = (*block, 1, 1)[:3]
        ensure_context(self.module.device)  # another GPU's allocation may have switched it
        if shared_mem > self._dynamic_limit:
            self.set_max_dynamic_shared_memory(shared_mem)
        if type(stream) is not int:
            stream = _handle(stream)
        if self._has_complex:
            args = flatten_complex_args(self.signature, args)
        with self._lock:
            try:
                self._struct.pack_into(self._buffer, 0, *args)
            except struct.error as e:
                raise TypeError(f"kernel '{self.name}' ({self.signature}): bad arguments "
                                f"{tuple(args)!r}: {e}") from None
            if self.dependent_launch:
                c = self._config or self._dependent_config()
                c.gridDimX, c.gridDimY, c.gridDimZ = gx, gy, gz
                c.blockDimX, c.blockDimY, c.blockDimZ = bx, by, bz
                c.sharedMemBytes, c.hStream = shared_mem, stream
                (err,) = cu.cuLaunchKernelEx(c, self.function, self._params, 0)
            else:
                (err,) = cu.cuLaunchKernel(self.function, gx, gy, gz, bx, by, bz, shared_mem,
                                           stream, self._params, 0)
        if err != _SUCCESS:
            raise CudaError("cuLaunchKernelEx" if self.dependent_launch else "cuLaunchKernel", err,
                            f"kernel '{self.name}' grid=({gx}, {gy}, {gz}) "
                            f"block=({bx}, {by}, {bz}) shared={shared_mem}")

    def _dependent_config(self) -> Any:
        """The ``CUlaunchConfig`` of this kernel's launches: programmatic stream
        serialization (grid, block, shared bytes and stream set at each launch)."""
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        c = self._config = cu.CUlaunchConfig()
        c.attrs = [attr]
        c.numAttrs = 1
        return c

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, signature={self.signature!r})"


DEPENDENT_LAUNCH = os.environ.get("FUSER_DEPENDENT_LAUNCH", "1") != "0"
"""Whether fuser's kernels are launched with programmatic stream serialization on sm_90
and later (programmatic dependent launch: a kernel's blocks may start while the kernel
before it in the stream finishes; each waits for it in ``fuser_dependent_launch``);
``FUSER_DEPENDENT_LAUNCH=0`` turns it off. Read when a kernel is loaded."""


def dependent_launch_supported(device: int = 0) -> bool:
    """``DEPENDENT_LAUNCH`` on a device that has programmatic dependent launch (sm_90+)."""
    return DEPENDENT_LAUNCH and properties(device).compute_capability >= (9, 0)


_modules: dict[tuple[int, bytes], Module] = {}


def load_module(image: bytes, device: int = 0) -> Module:
    """The loaded module for ``image`` (each distinct image is loaded once per device)."""
    key = (device, image)
    m = _modules.get(key)
    if m is None:
        m = _modules[key] = Module(image, device=device)
    return m
