"""Array interop: the parts that need no GPU (DLPack parsing, predicates) run in CI."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fuser.ir.dtypes import DType
from fuser.runtime.gpu_arrays import (
    ArrayError,
    array_info,
    contiguous_strides,
    dlpack_info,
    is_gpu_array,
)


def test_contiguous_strides() -> None:
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides(()) == ()
    assert contiguous_strides((0, 5)) == (5, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int32, np.float64,
                                   np.bool_])
def test_dlpack_capsule_of_numpy(dtype: type) -> None:
    x = np.arange(24).astype(dtype).reshape(2, 3, 4)[:, ::2, 1:]
    view = dlpack_info(x.__dlpack__())
    assert view.device_type == 1  # kDLCPU
    assert view.shape == (2, 2, 3)
    assert view.strides == tuple(s // x.itemsize for s in x.strides) == (12, 8, 1)
    assert view.dtype is DType.from_numpy(np.dtype(dtype))
    assert view.ptr == x.ctypes.data


def test_dlpack_versioned_capsule() -> None:
    x = np.ones((3, 5), np.float32)
    try:
        capsule = x.__dlpack__(max_version=(1, 0))
    except TypeError:
        pytest.skip("numpy without versioned DLPack")
    view = dlpack_info(capsule)
    assert view.shape == (3, 5) and view.strides == (5, 1) and view.dtype is DType.float32


def test_bfloat16_dlpack_unsupported_by_numpy_is_rejected_cleanly() -> None:
    x = np.zeros(4, ml_dtypes.bfloat16)
    with pytest.raises((ArrayError, BufferError, TypeError)):
        dlpack_info(x.__dlpack__())


def test_host_arrays_are_not_gpu_arrays() -> None:
    x = np.zeros(3, np.float32)
    assert not is_gpu_array(x) and not is_gpu_array(3.0) and not is_gpu_array([1, 2])
    with pytest.raises(ArrayError, match="device type 1, not CUDA"):
        array_info(x)
    with pytest.raises(ArrayError, match="expected a GPU array"):
        array_info([1, 2])


def test_cuda_array_interface_object_is_read_without_a_gpu() -> None:
    class Fake:
        __cuda_array_interface__ = {"shape": (4, 6), "typestr": "<f2", "data": (0, False),
                                    "strides": (24, 2), "version": 3}

    info = array_info(Fake())
    assert is_gpu_array(Fake())
    assert (info.shape, info.strides, info.dtype, info.kind) == ((4, 6), (12, 1),
                                                                  DType.float16, "cai")
    assert not info.is_contiguous

    class Odd:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0, False),
                                    "strides": (6,), "version": 3}

    with pytest.raises(ArrayError, match="not multiples of the element size 4"):
        array_info(Odd())

    class Unsigned:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<u4", "data": (0, False),
                                    "version": 3}

    with pytest.raises(ArrayError, match="unsupported array element type '<u4'"):
        array_info(Unsigned())

    class Complex:  # complex64 is an element type
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<c8", "data": (0, False),
                                    "version": 3}

    assert array_info(Complex()).dtype is DType.complex64
