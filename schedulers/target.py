"""Target GPUs as data.

The schedulers never ask the device directly: every number that drives a decision
(SM count, register file, shared memory, L2, bandwidth) comes from a ``GpuTarget``.
``H100`` and ``H200`` are presets (SXM parts, 132 SMs each); ``from_device`` reads the
properties of the local GPU through cuda-python and falls back to a preset when
there is no GPU (or no driver).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fuser.ir.dialects.fuser import TARGET_FIELDS, TargetAttr


@dataclass(frozen=True)
class GpuTarget:
    """The properties of one GPU that scheduling depends on."""

    name: str
    sm_count: int
    regs_per_sm: int = 65536
    """32-bit registers per SM (also the most one block may use)."""
    max_regs_per_thread: int = 255
    smem_per_block_optin: int = 232448
    """Opt-in maximum of shared memory per block, bytes (227 KiB on Hopper)."""
    smem_per_sm: int = 233472
    """Shared memory per SM, bytes (228 KiB on Hopper)."""
    l2_bytes: int = 50 * 1024 * 1024
    memory_bandwidth_gbs: float = 3350.0
    """DRAM bandwidth in GB/s (1e9 bytes per second)."""
    max_threads_per_block: int = 1024
    warp_size: int = 32
    max_threads_per_sm: int = 2048
    max_blocks_per_sm: int = 32
    compute_capability: tuple[int, int] = (9, 0)

    @property
    def register_file_bytes(self) -> int:
        """Bytes of register file per SM (64K x 4 B = 256 KiB)."""
        return self.regs_per_sm * 4

    @property
    def max_access_bytes(self) -> int:
        """The widest global memory access of one thread: 128 bits."""
        return 16

    def with_(self, **changes: object) -> GpuTarget:
        """A copy with some properties changed (for what-if tests)."""
        return replace(self, **changes)  # type: ignore[arg-type]


H100 = GpuTarget(
    name="h100",
    sm_count=132,
    l2_bytes=50 * 1024 * 1024,
    memory_bandwidth_gbs=3350.0,
)
"""NVIDIA H100 SXM5 80GB: 132 SMs, 50 MiB L2, HBM3 at ~3.35 TB/s."""

H200 = GpuTarget(
    name="h200",
    sm_count=132,
    l2_bytes=60 * 1024 * 1024,
    memory_bandwidth_gbs=4800.0,
)
"""NVIDIA H200 SXM 141GB: 132 SMs, 60 MiB L2, HBM3e at ~4.8 TB/s."""

PRESETS: dict[str, GpuTarget] = {"h100": H100, "h200": H200}
DEFAULT_TARGET = H100


class UnknownTargetError(ValueError):
    """Raised for a target name that is not a preset."""


def get_target(name: str) -> GpuTarget:
    """The preset called ``name`` (``h100``, ``h200``), or ``device`` for the local GPU."""
    key = name.strip().lower()
    if key == "device":
        return from_device()
    if key not in PRESETS:
        raise UnknownTargetError(
            f"unknown GPU target '{name}'; expected one of {', '.join(sorted(PRESETS))} or device"
        )
    return PRESETS[key]


def from_device(ordinal: int = 0, fallback: GpuTarget = DEFAULT_TARGET) -> GpuTarget:
    """Read the properties of GPU ``ordinal`` through cuda-python's driver API.

    Returns ``fallback`` when cuda-python, the driver or the device is missing.
    """
    try:
        from cuda.bindings import driver  # lazy: importing needs no GPU, calling does
    except ImportError:
        return fallback
    try:
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return fallback
        err, dev = driver.cuDeviceGet(ordinal)
        if err != driver.CUresult.CUDA_SUCCESS:
            return fallback
        A = driver.CUdevice_attribute

        def attr(a: object) -> int:
            e, v = driver.cuDeviceGetAttribute(a, dev)
            if e != driver.CUresult.CUDA_SUCCESS:
                raise RuntimeError(str(e))
            return int(v)

        err, raw_name = driver.cuDeviceGetName(128, dev)
        name = (
            raw_name.split(b"\0", 1)[0].decode() if err == driver.CUresult.CUDA_SUCCESS else "gpu"
        )
        clock_khz = attr(A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        bus_bits = attr(A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        # Double data rate: two transfers per clock.
        bandwidth = 2.0 * clock_khz * 1e3 * bus_bits / 8 / 1e9
        if bandwidth <= 0:
            bandwidth = (
                H200.memory_bandwidth_gbs if "H200" in name else fallback.memory_bandwidth_gbs
            )
        return GpuTarget(
            name=name,
            sm_count=attr(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            regs_per_sm=attr(A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
            smem_per_block_optin=attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            smem_per_sm=attr(A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
            l2_bytes=attr(A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
            memory_bandwidth_gbs=bandwidth,
            max_threads_per_block=attr(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            warp_size=attr(A.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
            max_threads_per_sm=attr(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
            max_blocks_per_sm=attr(A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR),
            compute_capability=(
                attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attr(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
            ),
        )
    except Exception:  # noqa: BLE001 - any driver failure means "no usable device"
        return fallback


def to_attr(target: GpuTarget) -> TargetAttr:
    """``target`` as the IR fact ``#fuser.target<...>`` (``set-target``)."""
    return TargetAttr(
        target.name, target.compute_capability, [getattr(target, f) for f in TARGET_FIELDS]
    )


def from_attr(attr: TargetAttr) -> GpuTarget:
    """The ``GpuTarget`` a ``#fuser.target`` attribute describes."""
    return GpuTarget(
        name=attr.gpu.data, compute_capability=attr.compute_capability, **attr.properties()
    )  # type: ignore[arg-type]
