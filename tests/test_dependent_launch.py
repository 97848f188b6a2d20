"""Programmatic dependent launch: kernels of at most two waves of blocks on an sm_90
target are marked (``codegen/dependent_launch.py``) and start with
``fuser_dependent_launch()`` (``griddepcontrol.wait``, then
``griddepcontrol.launch_dependents``, on sm_90 and later; nothing before), so the runtime may launch
them with programmatic stream serialization; kernels of many waves and other targets
are not; the hot launcher's ctypes launch config has ``cuda.h``'s layout. The GPU
side is ``tests/gpu/test_gpu_dependent_launch.py``."""

from __future__ import annotations

import ctypes
import re

import pytest

from fuser import DataType, FusionDefinition
from fuser.codegen.nvrtc import CompileOptions, compile_cuda
from fuser.runtime.hot_launch import _dependent_config, _LaunchAttribute, _LaunchConfig


def _outer_norm_source() -> tuple[str, list[str]]:
    import numpy as np

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd.ops.var_mean(t0, [0], correction=0, keepdim=True)
        fd.add_output(fd.ops.mul(fd.ops.sub(t0, mean), fd.ops.rsqrt(fd.ops.add(var, 1e-5))))
    src = fd.generate_cuda_code([np.zeros((4096, 256), np.float32)])
    return src, re.findall(r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(", src)


def _bodies(src: str) -> list[str]:
    return re.split(r'extern "C" __global__', src)[1:]


def test_kernels_of_few_waves_wait_for_the_one_before_them_first() -> None:
    src, names = _outer_norm_source()
    assert len(names) == 3  # statistics, finish, apply: each at most two waves
    for body in _bodies(src):
        statements = [line.strip() for line in body.split("\n")[1:] if line.strip()]
        first = [s for s in statements if not s.startswith("__shared__")][0]
        assert first == "fuser_dependent_launch();"


def test_kernels_of_many_waves_and_older_targets_are_not_marked() -> None:
    """A row sum of 65536 rows is 65536 blocks (31 waves on 132 SMs): the prologue's
    cost per block would outweigh the launch it hides."""
    import numpy as np

    from fuser.codegen.cuda_printer import kernels_of
    from fuser.codegen.dependent_launch import mark_dependent_launches, waves
    from fuser.frontend import execution
    from fuser.frontend.kernel_strings import defined_entry
    from fuser.schedulers.target import H100

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sum(t0, [1]))
    src = fd.generate_cuda_code([np.zeros((65536, 1024), np.float32)])
    assert len(_bodies(src)) == 1 and "fuser_dependent_launch();" not in _bodies(src)[0]
    with FusionDefinition() as fd2:
        t0 = fd2.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        var, mean = fd2.ops.var_mean(t0, [0], correction=0, keepdim=True)
        fd2.add_output(fd2.ops.sub(t0, mean))
    ampere = H100.with_(compute_capability=(8, 0))
    ((_, lowered),) = execution.lowered_segments(defined_entry(fd2), [np.zeros((4096, 256), np.float32)], ampere)
    funcs = [f for k in lowered.kernels for f in kernels_of(k.module)]
    assert len(funcs) == 3 and not any(f.is_dependent_launch() for f in funcs)
    assert all(waves(k, H100) <= 2 for k in lowered.kernels)
    mark_dependent_launches(lowered, H100)
    assert all(f.is_dependent_launch() for f in funcs)


@pytest.mark.parametrize(("arch", "expected"), [("sm_90", True), ("sm_80", False)])
def test_griddepcontrol_only_from_sm_90(arch: str, expected: bool) -> None:
    src, names = _outer_norm_source()
    head = src.split("\n", 1)[0]  # each kernel comes after its own copy of the preamble
    first = head + src.split(head)[1]
    ptx = compile_cuda(first, name=names[0], options=CompileOptions(arch=arch), ptx=True).image
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    assert ("griddepcontrol.wait" in text) is expected
    assert ("griddepcontrol.launch_dependents" in text) is expected
    if expected:
        # Wait for the kernel before, then let the next launch: the other order let a
        # third kernel start beside the one two back and read stale lines
        # (tests/gpu/test_gpu_dependent_launch.py). And no global load before the wait.
        wait = text.index("griddepcontrol.wait")
        assert wait < text.index("griddepcontrol.launch_dependents")
        assert wait < text.index("ld.global")


def test_the_ctypes_launch_config_has_cuda_h_layout() -> None:
    # cuda.h: CUlaunchAttribute {id; pad[4]; union (64 bytes)} and CUlaunchConfig
    # {6 dims, sharedMemBytes, hStream, attrs, numAttrs}.
    assert ctypes.sizeof(_LaunchAttribute) == 72
    assert ctypes.sizeof(_LaunchConfig) == 56
    assert (_LaunchConfig.hStream.offset, _LaunchConfig.attrs.offset, _LaunchConfig.numAttrs.offset) == (32, 40, 48)
    cfg = _dependent_config((3, 2, 1), (128, 4, 1), 1024)
    assert (cfg.gridDimX, cfg.gridDimY, cfg.blockDimY, cfg.sharedMemBytes, cfg.numAttrs) == (3, 2, 4, 1024, 1)
    raw = bytes(cfg.attrs[0])
    assert raw[:4] == (6).to_bytes(4, "little")  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert raw[8:12] == (1).to_bytes(4, "little")  # programmaticStreamSerializationAllowed
    cfg.hStream = 0x1234
    assert cfg.hStream == 0x1234


def test_cluster_kernels_are_not_marked() -> None:
    """A few-rows softmax over thread-block clusters (8 rows of 32000) stays a plain
    launch: as a dependent launch it was slower with nothing before it to overlap."""
    import numpy as np

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        m = fd.ops.max(t0, [1], keepdim=True)
        e = fd.ops.exp(fd.ops.sub(t0, m))
        fd.add_output(fd.ops.div(e, fd.ops.sum(e, [1], keepdim=True)))
    src = fd.generate_cuda_code([np.zeros((8, 32000), np.float32)])
    (body,) = _bodies(src)
    assert "__cluster_dims__" in body.split("\n")[0]
    assert "fuser_dependent_launch();" not in body
