"""Compile generated CUDA C with NVRTC (``cuda.bindings.nvrtc``) to a cubin.

NVRTC needs no GPU: the test suite compiles every generated kernel for ``sm_90`` on
machines without one. ``libnvrtc`` comes from the ``nvidia-cuda-nvrtc`` wheel (found by
``cuda.bindings`` through ``cuda.pathfinder``); the half/bfloat16 headers
(``cuda_fp16.h``, ``cuda_bf16.h``) are not in that wheel but in ``nvidia-cuda-runtime``,
whose include directory is located at run time (see :func:`cuda_include_dirs`).

Usage::

    compiled = compile_cuda(source, name="fusion0_kernel0", fusion="gelu")
    compiled.image   # cubin bytes for sm_90, or for the device's architecture

A failed compilation raises :class:`CompileError`, whose message names the kernel and
the fusion it came from, and shows NVRTC's log with each offending source line and two
lines of context on either side::

    NVRTC failed to compile kernel 'k0' of fusion 'gelu' for sm_90:
    k0.cu(3): error: identifier "y" is undefined
    k0.cu:3:
          1 | extern "C" __global__ void k0(float* x) {
          2 |   int i = threadIdx.x;
    >     3 |   x[i] = y;
          4 | }
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_ARCH = "sm_90"
CONTEXT_LINES = 2
MINIMAL = "-minimal"
_minimal_supported = True
"""False once this process's NVRTC has rejected ``-minimal`` (it then compiles
without it)."""


class CompileError(Exception):
    """NVRTC rejected a generated kernel, or NVRTC could not be used at all."""

    def __init__(self, message: str, *, log: str = "", source: str = "",
                 kernel: str = "", fusion: str | None = None) -> None:
        super().__init__(message)
        self.log = log
        self.source = source
        self.kernel = kernel
        self.fusion = fusion


@dataclass(frozen=True)
class CompileOptions:
    """The user-visible NVRTC options. ``arch`` None means the device's architecture when
    a GPU is present, else ``sm_90``."""

    arch: str | None = None
    std: str = "c++17"
    fast_math: bool = False
    lineinfo: bool = False
    max_registers: int | None = None
    defines: tuple[tuple[str, str], ...] = ()
    extra: tuple[str, ...] = ()
    minimal: bool = True
    """NVRTC's ``-minimal``: the headers it includes by default are left out (generated
    kernels include what they use). It changes no cubin (checked byte for byte on the
    66 translation units of the 54 benchmark workloads and 369 random-fusion kernels)
    and takes about 5% off NVRTC's time; an NVRTC that does not know the option
    compiles without it."""

    def resolved_arch(self) -> str:
        return self.arch if self.arch is not None else default_arch()

    def to_args(self, arch: str) -> list[str]:
        args = [f"--gpu-architecture={arch}", f"-std={self.std}"]
        if self.minimal and _minimal_supported and MINIMAL not in self.extra:
            args.append(MINIMAL)
        if self.fast_math:
            args.append("--use_fast_math")
        if self.lineinfo:
            args.append("-lineinfo")
        if self.max_registers is not None:
            args.append(f"--maxrregcount={self.max_registers}")
        args += [f"-D{k}={v}" for k, v in self.defines]
        args += list(self.extra)
        return args


@dataclass(frozen=True)
class CompiledKernel:
    """The result of one compilation: a cubin (or PTX when the architecture is newer than
    NVRTC's cubin targets) plus NVRTC's log (warnings)."""

    image: bytes
    kind: str  # "cubin" or "ptx"
    arch: str
    name: str
    """The kernel name the source was compiled with (the image's kernels carry it)."""
    log: str = ""
    options: tuple[str, ...] = field(default=(), compare=False)
    asked: str = ""
    """The name a cache lookup asked for, when it differs (``KernelCache``: a source
    that is another one with its kernel name changed gets that one's image)."""

    def symbol(self, kernel: str) -> str:
        """The name in the image of ``kernel``, a kernel of the source asked for (its
        names contain the name asked for, as ``<name>`` and ``<name>_finish``)."""
        return kernel.replace(self.asked, self.name) if self.asked and self.asked != self.name else kernel


# ---- environment -------------------------------------------------------------------


@functools.cache
def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - dependency missing
        raise CompileError(f"cuda-bindings is not installed: {e}") from e
    try:
        err, _, _ = nvrtc.nvrtcVersion()
    except Exception as e:  # libnvrtc could not be loaded
        raise CompileError(
            f"libnvrtc could not be loaded ({e}); install the nvidia-cuda-nvrtc wheel"
        ) from e
    _check(nvrtc, err, "nvrtcVersion")
    return nvrtc


def _check(nvrtc: Any, err: Any, what: str) -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, msg = nvrtc.nvrtcGetErrorString(err)
        raise CompileError(f"{what} failed: {msg.decode(errors='replace')}")


@functools.cache
def nvrtc_version() -> tuple[int, int]:
    nvrtc = _nvrtc()
    err, major, minor = nvrtc.nvrtcVersion()
    _check(nvrtc, err, "nvrtcVersion")
    return (major, minor)


@functools.cache
def supported_archs() -> tuple[int, ...]:
    """The SM numbers (75, 80, 90, ...) NVRTC can emit cubins for."""
    nvrtc = _nvrtc()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    _check(nvrtc, err, "nvrtcGetSupportedArchs")
    return tuple(int(a) for a in archs)


@functools.cache
def default_arch() -> str:
    """``sm_XY`` of device 0 when a driver and a device are present, else sm_90 (the
    compute capability ``schedulers.target.from_device`` reads; its fallback, the H100,
    is sm_90)."""
    from fuser.schedulers.target import from_device

    major, minor = from_device().compute_capability
    return f"sm_{major}{minor}"


def _header_dir_candidates() -> list[Path]:
    dirs: list[Path] = []
    try:
        from cuda import pathfinder

        found = pathfinder.locate_nvidia_header_directory("cudart")
        if found is not None:
            dirs.append(Path(found.abs_path))
    except Exception:  # older cuda-pathfinder without header lookup
        pass
    try:
        import nvidia

        for root in nvidia.__path__:
            dirs += sorted(Path(root).glob("*/include"))
            dirs.append(Path(root) / "cuda_runtime" / "include")
    except ImportError:
        pass
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "include")
    dirs.append(Path("/usr/local/cuda/include"))
    return dirs


@functools.cache
def cuda_include_dirs() -> tuple[str, ...]:
    """Directories holding ``cuda_fp16.h``/``cuda_bf16.h`` (from the nvidia-cuda-runtime
    wheel, a conda env or a CUDA toolkit), first match only; empty when none is found."""
    for d in _header_dir_candidates():
        if (d / "cuda_fp16.h").is_file() and (d / "cuda_bf16.h").is_file():
            return (str(d),)
    return ()


# ---- compilation -------------------------------------------------------------------

_LOG_LINE = re.compile(r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<kind>[a-z ]*error|warning)")


def _excerpt(source_lines: Sequence[str], line: int) -> str:
    lo = max(1, line - CONTEXT_LINES)
    hi = min(len(source_lines), line + CONTEXT_LINES)
    out = []
    for n in range(lo, hi + 1):
        mark = ">" if n == line else " "
        out.append(f"{mark} {n:5d} | {source_lines[n - 1]}")
    return "\n".join(out)


def format_compile_error(log: str, source: str, program: str, kernel: str,
                         fusion: str | None, arch: str) -> str:
    """NVRTC's log with, after each error line, the generated source around it."""
    where = f"kernel '{kernel}'" + (f" of fusion '{fusion}'" if fusion else "")
    lines = [f"NVRTC failed to compile {where} for {arch}:"]
    source_lines = source.splitlines()
    shown: set[int] = set()
    for entry in log.splitlines():
        lines.append(entry)
        m = _LOG_LINE.match(entry)
        if m and m.group("file") == program and "error" in m.group("kind"):
            n = int(m.group("line"))
            if 1 <= n <= len(source_lines) and n not in shown:
                shown.add(n)
                lines.append(f"{program}:{n}:")
                lines.append(_excerpt(source_lines, n))
    return "\n".join(lines).rstrip()


def _program_log(nvrtc: Any, prog: Any) -> str:
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    _check(nvrtc, err, "nvrtcGetProgramLogSize")
    buf = bytearray(size)  # never ``b" " * size``: NVRTC would write into a shared object
    (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
    _check(nvrtc, err, "nvrtcGetProgramLog")
    return bytes(buf).rstrip(b"\x00").decode(errors="replace").strip()


def _target(arch: str) -> tuple[str, str]:
    """(NVRTC --gpu-architecture value, output kind) for ``sm_XY``: a cubin when NVRTC
    can emit one, else PTX for the newest virtual architecture it knows (the driver
    JIT-compiles it at load)."""
    m = re.fullmatch(r"sm_(\d+)([af]?)", arch)
    if not m:
        raise CompileError(f"invalid GPU architecture '{arch}' (expected e.g. sm_90)")
    number = int(m.group(1))
    archs = supported_archs()
    if number in archs:
        return arch, "cubin"
    if number > max(archs):
        return f"compute_{max(archs)}", "ptx"
    raise CompileError(f"NVRTC {nvrtc_version()} cannot compile for {arch}; it supports "
                       + ", ".join(f"sm_{a}" for a in archs))


def compile_cuda(source: str, *, name: str = "kernel", fusion: str | None = None,
                 options: CompileOptions | None = None, ptx: bool = False) -> CompiledKernel:
    """Compile ``source`` (one translation unit with ``extern "C"`` kernels) to a cubin.

    ``name`` is the kernel (also the program's file name in NVRTC's log), ``fusion`` the
    fusion it was generated from; both appear in a :class:`CompileError`. ``ptx``: PTX
    for the architecture's virtual one instead of a cubin (to read, not to load).
    """
    nvrtc = _nvrtc()
    options = options or CompileOptions()
    arch = options.resolved_arch()
    target, kind = _target(arch)
    if ptx and kind == "cubin":
        target, kind = target.replace("sm_", "compute_", 1), "ptx"
    args = options.to_args(target) + [f"-I{d}" for d in cuda_include_dirs()]
    program = f"{name}.cu"
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), program.encode(), 0, [], [])
    _check(nvrtc, err, "nvrtcCreateProgram")
    try:
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(args), [a.encode() for a in args])
        log = _program_log(nvrtc, prog)
        if (err == nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_OPTION and MINIMAL in log and MINIMAL in args
                and MINIMAL not in options.extra):
            # An NVRTC older than the option ("unrecognized option -minimal"): compile
            # without it from now on.
            global _minimal_supported
            _minimal_supported = False
            return compile_cuda(source, name=name, fusion=fusion, options=options, ptx=ptx)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            if err == nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_OPTION:
                raise CompileError(f"NVRTC rejected the options {args}: {log}", log=log,
                                   source=source, kernel=name, fusion=fusion)
            raise CompileError(
                format_compile_error(log, source, program, name, fusion, arch),
                log=log, source=source, kernel=name, fusion=fusion)
        if kind == "cubin":
            err, size = nvrtc.nvrtcGetCUBINSize(prog)
            _check(nvrtc, err, "nvrtcGetCUBINSize")
            buf = bytearray(size)
            (err,) = nvrtc.nvrtcGetCUBIN(prog, buf)
            _check(nvrtc, err, "nvrtcGetCUBIN")
        else:
            err, size = nvrtc.nvrtcGetPTXSize(prog)
            _check(nvrtc, err, "nvrtcGetPTXSize")
            buf = bytearray(size)
            (err,) = nvrtc.nvrtcGetPTX(prog, buf)
            _check(nvrtc, err, "nvrtcGetPTX")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return CompiledKernel(image=bytes(buf), kind=kind, arch=arch, name=name, log=log,
                          options=tuple(args))
