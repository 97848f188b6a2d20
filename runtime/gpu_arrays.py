"""GPU array interop: what the runtime accepts as inputs and returns as outputs.

Inputs may be torch CUDA tensors, our :class:`DeviceArray`, any object with
``__cuda_array_interface__`` (CuPy, Numba, ...) or with ``__dlpack__`` on a CUDA device
(JAX, ...). :func:`array_info` turns each into an :class:`ArrayInfo`: data pointer,
shape, strides in elements, :class:`~fuser.ir.dtypes.DType` and device ordinal.

Outputs are allocated as the caller's array type (:func:`empty`): torch tensors when the
inputs were torch tensors, else :class:`DeviceArray`, a minimal device buffer that
implements ``__cuda_array_interface__`` and ``to_numpy()`` and frees its memory when it
is garbage collected.

torch is optional and never imported here: a tensor is recognised through
``sys.modules``.
"""

from __future__ import annotations

import ctypes
import math
import sys
import weakref
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from fuser.ir.dtypes import DType
from fuser.ir.fp8 import as_strided
from fuser.runtime import cuda_driver as drv

KDL_CUDA = 2
KDL_CUDA_MANAGED = 13
_CUDA_DEVICE_TYPES = (KDL_CUDA, KDL_CUDA_MANAGED)


class ArrayError(TypeError):
    """An input that is not a usable GPU array (wrong device, dtype, protocol)."""


@dataclass(frozen=True)
class ArrayInfo:
    """A GPU array seen by the runtime. ``owner`` keeps the memory alive."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: DType
    device: int
    kind: str  # "torch", "fuser", "cai" or "dlpack"
    owner: Any = None

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return self.strides == contiguous_strides(self.shape) or self.numel <= 1


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides = []
    acc = 1
    for extent in reversed(shape):
        strides.append(acc)
        acc *= max(extent, 1)
    return tuple(reversed(strides))


def view_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """The strides of ``new_shape`` viewing the elements of a ``shape``/``strides``
    array in the same row-major order without a copy, or None when no strides can
    (torch's ``view`` rule: each run of axes that ``new_shape`` splits or merges must
    be contiguous within itself). The element counts must be equal."""
    if math.prod(shape) == 0 or not shape:
        return contiguous_strides(new_shape)
    out = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_stride = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        # The end of a run: the next-outer axis does not continue this one.
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                out[view_d] = view_numel * chunk_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_stride = strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(out) if view_d == -1 else None


# ---- dtypes -----------------------------------------------------------------------

_TORCH_DTYPES: dict[Any, DType] | None = None


def _torch_dtypes(torch: Any) -> dict[Any, DType]:
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        _TORCH_DTYPES = {
            torch.bool: DType.bool, torch.int32: DType.int32, torch.int64: DType.int64,
            torch.float16: DType.float16, torch.bfloat16: DType.bfloat16,
            torch.float32: DType.float32, torch.float64: DType.float64,
            torch.float8_e4m3fn: DType.float8_e4m3fn, torch.float8_e5m2: DType.float8_e5m2,
            torch.complex64: DType.complex64, torch.complex128: DType.complex128,
        }
    return _TORCH_DTYPES


def torch_dtype(dtype: DType) -> Any:
    import torch

    for theirs, ours in _torch_dtypes(torch).items():
        if ours is dtype:
            return theirs
    raise AssertionError(dtype)  # every DType has a torch counterpart


def _dtype_from_typestr(typestr: str, descr: Any = None) -> DType:
    if typestr[1:] == "V2" and descr and "bfloat16" in str(descr):
        return DType.bfloat16
    try:
        return DType.from_numpy(np.dtype(typestr))
    except (TypeError, ValueError) as e:
        raise ArrayError(f"unsupported array element type '{typestr}'") from e


# (type code, bits) of DLPack's DLDataType
_DLPACK_DTYPES = {
    (1, 1): DType.bool, (6, 8): DType.bool,
    (0, 32): DType.int32, (0, 64): DType.int64,
    (2, 16): DType.float16, (2, 32): DType.float32, (2, 64): DType.float64,
    (4, 16): DType.bfloat16,
    (10, 8): DType.float8_e4m3fn, (12, 8): DType.float8_e5m2,  # DLPack 1.1 kDLFloat8_*
    (5, 64): DType.complex64, (5, 128): DType.complex128,  # kDLComplex
}


# ---- recognising arrays -----------------------------------------------------------


def _torch_tensor(x: Any) -> Any:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return torch
    return None


def is_gpu_array(x: Any) -> bool:
    """Whether ``x`` is an array in CUDA device memory that :func:`array_info` accepts."""
    if isinstance(x, DeviceArray):
        return True
    if _torch_tensor(x) is not None:
        return bool(x.is_cuda)
    if hasattr(x, "__cuda_array_interface__"):
        return True
    dev = getattr(x, "__dlpack_device__", None)
    if dev is not None and hasattr(x, "__dlpack__"):
        try:
            return int(dev()[0]) in _CUDA_DEVICE_TYPES
        except Exception:
            return False
    return False


def array_info(x: Any, stream: int | None = None) -> ArrayInfo:
    """Pointer, shape, element strides, dtype and device of a GPU array; raises
    :class:`ArrayError` for anything else."""
    if isinstance(x, DeviceArray):
        return ArrayInfo(x.ptr, x.shape, x.strides_elements, x.dtype, x.device, "fuser", x)
    torch = _torch_tensor(x)
    if torch is not None:
        if not x.is_cuda:
            raise ArrayError(f"expected a CUDA tensor, got a tensor on {x.device}")
        dtype = _torch_dtypes(torch).get(x.dtype)
        if dtype is None:
            raise ArrayError(f"unsupported tensor dtype {x.dtype}")
        return ArrayInfo(x.data_ptr(), tuple(x.shape), tuple(x.stride()), dtype,
                         x.device.index or 0, "torch", x)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _cai_info(x, cai)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        dev_type, dev_id = x.__dlpack_device__()
        if int(dev_type) not in _CUDA_DEVICE_TYPES:
            raise ArrayError(f"DLPack array is on device type {int(dev_type)}, not CUDA")
        try:
            capsule = x.__dlpack__(stream=stream)
        except TypeError:
            capsule = x.__dlpack__()
        info = dlpack_info(capsule)
        return ArrayInfo(info.ptr, info.shape, info.strides, info.dtype, int(dev_id),
                         "dlpack", (x, capsule))
    raise ArrayError(f"expected a GPU array (torch CUDA tensor, __cuda_array_interface__ "
                     f"or __dlpack__), got {type(x).__name__}")


def _cai_info(x: Any, cai: dict[str, Any]) -> ArrayInfo:
    shape = tuple(int(s) for s in cai["shape"])
    dtype = _dtype_from_typestr(cai["typestr"], cai.get("descr"))
    ptr = int(cai["data"][0] or 0)
    if cai.get("strides") is None:
        strides = contiguous_strides(shape)
    else:
        size = dtype.itemsize
        if any(s % size for s in cai["strides"]):
            raise ArrayError(f"array strides {cai['strides']} are not multiples of the "
                             f"element size {size}")
        strides = tuple(int(s) // size for s in cai["strides"])
    device = _device_of_pointer(ptr) if ptr else 0
    return ArrayInfo(ptr, shape, strides, dtype, device, "cai", x)


def _device_of_pointer(ptr: int) -> int:
    try:
        drv.init()
        attr = drv.cu.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        return int(drv._call(drv.cu.cuPointerGetAttribute, attr, ptr))
    except Exception:  # not a device pointer the driver knows: assume device 0
        return 0


# ---- DLPack capsules --------------------------------------------------------------


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor),
    ]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@dataclass(frozen=True)
class DLPackView:
    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: DType
    device_type: int
    device_id: int


def dlpack_info(capsule: Any) -> DLPackView:
    """Read a DLPack capsule (legacy ``dltensor`` or ``dltensor_versioned``) without
    consuming it: the capsule keeps the producer's memory alive and frees it when it
    is collected."""
    name = _capsule_name(capsule)
    if name == b"dltensor":
        tensor = _DLTensor.from_address(_capsule_pointer(capsule, name))
    elif name == b"dltensor_versioned":
        managed = _DLManagedTensorVersioned.from_address(_capsule_pointer(capsule, name))
        tensor = managed.dl_tensor
    else:
        raise ArrayError(f"not an unconsumed DLPack capsule (name {name!r})")
    key = (tensor.dtype.code, tensor.dtype.bits)
    if tensor.dtype.lanes != 1 or key not in _DLPACK_DTYPES:
        raise ArrayError(f"unsupported DLPack dtype (code {key[0]}, bits {key[1]}, "
                         f"lanes {tensor.dtype.lanes})")
    dtype = _DLPACK_DTYPES[key]
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] for i in range(ndim))
    else:
        strides = contiguous_strides(shape)
    ptr = (tensor.data or 0) + tensor.byte_offset
    return DLPackView(ptr, shape, strides, dtype, tensor.device.device_type,
                      tensor.device.device_id)


# ---- our own device array ---------------------------------------------------------


def _typestr(dtype: DType) -> str:
    if dtype is DType.bfloat16:
        return "<V2"
    return dtype.to_numpy().str


class DeviceArray:
    """A strided array in device memory, owned by this object (freed on collection) or
    a view of another's memory (``base``)."""

    __array_priority__ = 0

    def __init__(self, shape: Sequence[int], dtype: DType, *, device: int = 0,
                 strides: Sequence[int] | None = None, ptr: int | None = None,
                 base: Any = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"DeviceArray: negative extent in shape {self.shape}")
        self.dtype = dtype
        self.device = device
        self.strides_elements = (tuple(int(s) for s in strides) if strides is not None
                                 else contiguous_strides(self.shape))
        self.base = base
        if ptr is None:
            self.ptr = drv.mem_alloc(self.nbytes, device)
            self._finalizer = weakref.finalize(self, _free, self.ptr)
        else:
            self.ptr = ptr

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def strided_view(self, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> DeviceArray:
        """A view of this array's memory: ``shape``/``strides`` (elements) starting
        ``offset`` elements in (nothing is checked or copied)."""
        return DeviceArray(
            shape, self.dtype, device=self.device, strides=strides,
            ptr=self.ptr + offset * self.dtype.itemsize, base=self if self.base is None else self.base,
        )

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes spanned by the elements (the allocation size for a new array)."""
        if self.size == 0:
            return 0
        span = 1 + sum((e - 1) * abs(s) for e, s in zip(self.shape, self.strides_elements,
                                                       strict=True))
        return span * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        contiguous = self.strides_elements == contiguous_strides(self.shape)
        cai: dict[str, Any] = {
            "shape": self.shape,
            "typestr": _typestr(self.dtype),
            "data": (self.ptr, False),
            "version": 3,
            "strides": None if contiguous else tuple(
                s * self.dtype.itemsize for s in self.strides_elements),
        }
        if self.dtype is DType.bfloat16:
            cai["descr"] = [("bfloat16", "<V2")]
        return cai

    @classmethod
    def from_numpy(cls, array: np.ndarray, device: int = 0,
                   stream: drv.Stream | int | None = None) -> DeviceArray:
        array = np.ascontiguousarray(array)
        out = cls(array.shape, DType.from_numpy(array.dtype), device=device)
        drv.memcpy_htod(out.ptr, array, stream)
        return out

    def to_numpy(self, stream: drv.Stream | int | None = None) -> np.ndarray:
        """A host copy (waits for ``stream``, or the whole device when it is None)."""
        np_dtype = self.dtype.to_numpy()
        if self.size == 0:
            return np.empty(self.shape, np_dtype)
        if stream is None:
            drv.synchronize(self.device)
        else:
            drv.Stream(drv._handle(stream)).synchronize()
        flat = np.empty(self.nbytes // self.dtype.itemsize, np_dtype)
        drv.memcpy_dtoh(flat, self.ptr)
        itemsize = self.dtype.itemsize
        return as_strided(flat, self.shape, tuple(s * itemsize for s in self.strides_elements)).copy()

    def __repr__(self) -> str:
        return (f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device}, "
                f"ptr=0x{self.ptr:x})")


def _free(ptr: int) -> None:
    try:
        drv.mem_free(ptr)
    except Exception:  # context already torn down at interpreter exit
        pass


# ---- allocating outputs -----------------------------------------------------------


def empty(shape: Sequence[int], dtype: DType, *, like: str = "fuser",
          device: int = 0, strides: Sequence[int] | None = None) -> Any:
    """An uninitialised array of the caller's type: ``like="torch"`` gives a torch tensor,
    anything else a :class:`DeviceArray`."""
    if like == "torch":
        import torch

        td = torch_dtype(dtype)
        if strides is None:
            return torch.empty(tuple(shape), dtype=td, device=f"cuda:{device}")
        return torch.empty_strided(tuple(shape), tuple(strides), dtype=td,
                                   device=f"cuda:{device}")
    return DeviceArray(shape, dtype, device=device, strides=strides)


def data_ptr(x: Any) -> int:
    """The data pointer of a GPU array of any kind the runtime takes, without building
    its ``ArrayInfo`` for the common kinds (a ``DeviceArray``, a torch tensor)."""
    if isinstance(x, DeviceArray):
        return x.ptr
    method = getattr(x, "data_ptr", None)
    if method is not None:
        return method()
    return array_info(x).ptr


def output_kind(infos: Sequence[ArrayInfo]) -> str:
    """The array type outputs should take: torch when any input was a torch tensor."""
    return "torch" if any(i.kind == "torch" for i in infos) else "fuser"


__all__ = [
    "ArrayError", "ArrayInfo", "DeviceArray", "array_info", "contiguous_strides", "data_ptr",
    "current_stream", "dlpack_info", "empty", "is_gpu_array", "output_kind", "torch_dtype",
    "on_torch_stream", "torch_stream", "view_strides",
]


_raw_stream: Any = None


def current_stream(kind: str, device: int = 0) -> int:
    """The caller's current stream handle: torch's for torch tensors (through its raw
    C accessor: ``torch.cuda.current_stream()`` builds a Python object, ~25 us)."""
    global _raw_stream
    if kind == "torch":
        if _raw_stream is None:
            import torch

            _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
                lambda d: torch.cuda.current_stream(d).cuda_stream
            )
        return _raw_stream(device)
    return drv.current_stream()


_torch_streams: dict[tuple[int, int], Any] = {}


def torch_stream(handle: int, device: int) -> Any:
    """A ``torch.cuda.ExternalStream`` of the raw stream ``handle`` on ``device`` (one
    object per handle: building one costs about 25 us, and a replay switches torch to
    the same few streams on every call)."""
    s = _torch_streams.get((handle, device))
    if s is None:
        import torch

        # (handle 0: the legacy default stream, torch's own object for it)
        s = torch.cuda.default_stream(device) if handle == 0 else torch.cuda.ExternalStream(handle, device=device)
        _torch_streams[(handle, device)] = s
    return s


def on_torch_stream(handle: int, device: int) -> AbstractContextManager[Any]:
    """A context in which torch's current stream is the raw stream ``handle`` on
    ``device`` (a null context when it already is: no stream switch)."""
    import torch

    if torch.cuda.current_device() == device and current_stream("torch", device) == handle:
        return nullcontext()
    return torch.cuda.stream(torch_stream(handle, device))

