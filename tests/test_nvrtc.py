"""NVRTC compilation and the kernel cache; runs without a GPU (CI compiles for sm_90)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fuser.codegen import nvrtc
from fuser.codegen.kernel_cache import MAGIC, KernelCache
from fuser.codegen.nvrtc import (
    CompileError,
    CompileOptions,
    compile_cuda,
    cuda_include_dirs,
    format_compile_error,
    nvrtc_version,
)

SM90 = CompileOptions(arch="sm_90")

VADD = """\
extern "C" __global__ void vadd(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
"""

HALF = """\
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void mixed(const __half* a, const __nv_bfloat16* b, __nv_bfloat16* out,
                                 int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = __half2float(a[i]);
    float y = __bfloat162float(b[i]);
    out[i] = __float2bfloat16(x * y + 1.0f);
  }
}
"""

BROKEN = """\
extern "C" __global__ void k0(float* x) {
  int i = threadIdx.x;
  float a = 1.0f;
  x[i] = a + undefined_value;
  x[i] += 2.0f;
  x[i] += 3.0f;
}
"""


def _elf_for_sm90(image: bytes) -> bool:
    # An ELF cubin whose e_flags (offset 48) hold the SM version in bits 8..15.
    return image[:4] == b"\x7fELF" and image[49] == 90


def test_compile_float_kernel_to_sm90_cubin() -> None:
    k = compile_cuda(VADD, name="vadd", options=SM90)
    assert k.kind == "cubin" and k.arch == "sm_90" and k.name == "vadd"
    assert _elf_for_sm90(k.image)
    assert b"vadd" in k.image
    assert "--gpu-architecture=sm_90" in k.options and "-std=c++17" in k.options
    assert "--use_fast_math" not in k.options


def test_compile_fp16_bf16_kernel_finds_headers() -> None:
    assert cuda_include_dirs(), "cuda_fp16.h not found (install nvidia-cuda-runtime)"
    k = compile_cuda(HALF, name="mixed", fusion="f", options=SM90)
    assert _elf_for_sm90(k.image) and b"mixed" in k.image


def test_fast_math_and_lineinfo_are_opt_in() -> None:
    opts = CompileOptions(arch="sm_90", fast_math=True, lineinfo=True, max_registers=64,
                          defines=(("N", "4"),))
    args = opts.to_args("sm_90")
    assert {"--use_fast_math", "-lineinfo", "--maxrregcount=64", "-DN=4"} <= set(args)
    k = compile_cuda(VADD, name="vadd", options=opts)
    assert k.kind == "cubin"


def test_compile_error_names_line_kernel_and_fusion() -> None:
    with pytest.raises(CompileError) as info:
        compile_cuda(BROKEN, name="k0", fusion="gelu_fusion", options=SM90)
    msg = str(info.value)
    first = "NVRTC failed to compile kernel 'k0' of fusion 'gelu_fusion' for sm_90:"
    assert msg.splitlines()[0] == first
    assert 'k0.cu(4): error: identifier "undefined_value" is undefined' in msg
    # The offending line, marked, with two lines of context on both sides.
    assert ">     4 |   x[i] = a + undefined_value;" in msg
    for n, text in [(2, "  int i = threadIdx.x;"), (3, "  float a = 1.0f;"),
                    (5, "  x[i] += 2.0f;"), (6, "  x[i] += 3.0f;")]:
        assert f"  {n:5d} | {text}" in msg
    assert "|   x[i] += 3.0f;\n" not in msg.split(">     4")[0]  # context follows the error
    assert "      1 |" not in msg and "      7 |" not in msg
    assert info.value.kernel == "k0" and info.value.fusion == "gelu_fusion"
    assert "undefined_value" in info.value.log


def test_format_compile_error_ignores_other_files_and_bad_lines() -> None:
    log = ("other.h(2): error: something\nk.cu(99): error: out of range\n"
           "k.cu(1): warning: unused\n")
    msg = format_compile_error(log, "line one\nline two\n", "k.cu", "k", None, "sm_90")
    assert msg.startswith("NVRTC failed to compile kernel 'k' for sm_90:")
    assert "|" not in msg  # no excerpt: other file, line past the end, warning only


def test_invalid_option_and_arch() -> None:
    with pytest.raises(CompileError, match="rejected the options"):
        compile_cuda(VADD, name="vadd", options=CompileOptions(arch="sm_90", extra=("--bogus",)))
    with pytest.raises(CompileError, match="invalid GPU architecture 'ampere'"):
        compile_cuda(VADD, options=CompileOptions(arch="ampere"))
    with pytest.raises(CompileError, match="cannot compile for sm_20"):
        compile_cuda(VADD, options=CompileOptions(arch="sm_20"))


def test_minimal_headers_by_default_and_the_same_cubin() -> None:
    assert "-minimal" in SM90.to_args("sm_90")
    assert "-minimal" not in CompileOptions(arch="sm_90", minimal=False).to_args("sm_90")
    with_it = compile_cuda(HALF, name="mixed", options=SM90)
    without = compile_cuda(HALF, name="mixed", options=CompileOptions(arch="sm_90", minimal=False))
    assert "-minimal" in with_it.options and "-minimal" not in without.options
    assert with_it.image == without.image  # the option changes NVRTC's time, not the code


def test_an_nvrtc_without_minimal_compiles_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # An option this NVRTC does not know stands for an NVRTC older than -minimal.
    monkeypatch.setattr(nvrtc, "MINIMAL", "-minimal-not-an-option")
    monkeypatch.setattr(nvrtc, "_minimal_supported", True)
    k = compile_cuda(VADD, name="vadd", options=SM90)
    assert k.kind == "cubin" and "-minimal-not-an-option" not in k.options
    assert nvrtc._minimal_supported is False
    assert "-minimal-not-an-option" not in SM90.to_args("sm_90")


def test_another_bad_option_keeps_minimal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvrtc, "_minimal_supported", True)
    with pytest.raises(CompileError, match="unrecognized option --bogus"):
        compile_cuda(VADD, name="vadd", options=CompileOptions(arch="sm_90", extra=("--bogus",)))
    assert nvrtc._minimal_supported is True


def test_newer_arch_than_nvrtc_gives_ptx() -> None:
    k = compile_cuda(VADD, name="vadd", options=CompileOptions(arch="sm_990"))
    assert k.kind == "ptx" and b".entry vadd" in k.image and b".target sm_" in k.image


def test_ptx_on_request_is_for_the_virtual_architecture() -> None:
    k = compile_cuda(VADD, name="vadd", options=SM90, ptx=True)
    assert k.kind == "ptx" and b".entry vadd" in k.image and b".target sm_90" in k.image
    assert "--gpu-architecture=compute_90" in k.options


def test_default_arch_without_gpu_is_sm90() -> None:
    from fuser.codegen.nvrtc import default_arch
    from fuser.runtime.cuda_driver import gpu_available

    if not gpu_available():
        assert default_arch() == "sm_90"
    assert nvrtc_version() >= (12, 0)


# ---- kernel cache -------------------------------------------------------------------


def test_cache_memory_and_disk_hits(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    a = cache.get(VADD, name="vadd", options=SM90)
    assert (cache.stats.misses, cache.stats.memory_hits, cache.stats.disk_hits) == (1, 0, 0)
    assert cache.get(VADD, name="vadd", options=SM90) is a
    assert cache.stats.memory_hits == 1
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].read_bytes().startswith(MAGIC)

    # A new process-level cache on the same directory reads the file.
    other = KernelCache(tmp_path)
    b = other.get(VADD, name="vadd", options=SM90)
    assert (other.stats.misses, other.stats.disk_hits) == (0, 1)
    assert b.image == a.image and b.kind == "cubin" and b.arch == "sm_90"

    # Other options, name or source: separate entries.
    cache.get(VADD, name="vadd", options=CompileOptions(arch="sm_90", lineinfo=True))
    cache.get(VADD.replace("a[i] + b[i]", "a[i] - b[i]"), name="vadd", options=SM90)
    assert cache.stats.misses == 3 and len(list(tmp_path.iterdir())) == 3


def test_cache_shares_an_image_between_sources_that_differ_only_in_their_kernel_name(tmp_path: Path) -> None:
    """A transformer's layers give segments whose CUDA differs only in the segment's
    name: the second compiles nothing, and ``symbol`` maps its kernels' names
    (``<name>``, ``<name>_finish``) to the image's. Any other difference is a miss."""
    two = VADD + VADD.replace("vadd", "vadd_finish")
    cache = KernelCache(tmp_path)
    a = cache.get(two, name="vadd", options=SM90)
    b = cache.get(two.replace("vadd", "seg7"), name="seg7", options=SM90)
    assert (cache.stats.misses, cache.stats.memory_hits) == (1, 1)
    assert b.image == a.image and b.name == "vadd" and b.asked == "seg7"
    assert [b.symbol(k) for k in ("seg7", "seg7_finish")] == ["vadd", "vadd_finish"]
    assert a.symbol("vadd_finish") == "vadd_finish"
    # Another process: the disk file answers for the new name too.
    other = KernelCache(tmp_path)
    c = other.get(two.replace("vadd", "seg9"), name="seg9", options=SM90)
    assert (other.stats.misses, other.stats.disk_hits) == (0, 1) and c.symbol("seg9_finish") == "vadd_finish"
    # The name changed in only some places: another program, compiled.
    cache.get(two.replace("vadd_finish", "seg7_finish"), name="vadd_x", options=SM90)
    assert cache.stats.misses == 2


def test_threads_compiling_one_canonical_source_share_one_compile(tmp_path: Path) -> None:
    """``FusionCompiler.prepare`` compiles a program's segments in threads: segments
    that differ only in their names, compiled at once, wait for the first one's image
    instead of each running NVRTC; a source that fails still raises in every thread."""
    from concurrent.futures import ThreadPoolExecutor

    cache = KernelCache(tmp_path, disk=False)
    names = [f"seg{i}" for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda n: cache.get(VADD.replace("vadd", n), name=n, options=SM90), names))
    assert (cache.stats.misses, cache.stats.memory_hits) == (1, 7)
    assert len({g.image for g in got}) == 1
    assert {g.symbol(n) for g, n in zip(got, names, strict=True)} == {got[0].name}
    bad = BROKEN.replace("k0", "seg")
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(cache.get, bad.replace("seg", f"b{i}"), name=f"b{i}", options=SM90) for i in range(3)]
    for i, f in enumerate(futures):
        with pytest.raises(CompileError, match=f"b{i}"):
            f.result()


def test_cache_rejects_corrupt_or_truncated_files(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    good = cache.get(VADD, name="vadd", options=SM90)
    (path,) = tmp_path.iterdir()
    data = path.read_bytes()
    for bad in (data[:-10], data[:20], b"garbage", data[:-1] + bytes([data[-1] ^ 1])):
        path.write_bytes(bad)
        fresh = KernelCache(tmp_path)
        assert fresh.get(VADD, name="vadd", options=SM90).image == good.image
        assert fresh.stats.misses == 1  # recompiled ...
        assert path.read_bytes() == data  # ... and rewritten whole


def test_cache_memory_only_and_unwritable_dir(tmp_path: Path) -> None:
    mem = KernelCache(tmp_path / "unused", disk=False)
    mem.get(VADD, name="vadd", options=SM90)
    assert not (tmp_path / "unused").exists() and len(mem) == 1
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    ro = KernelCache(blocker / "sub")
    assert ro.get(VADD, name="vadd", options=SM90).kind == "cubin"  # no crash


def test_cache_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fuser.codegen.kernel_cache import default_cache_dir

    monkeypatch.setenv("FUSER_CACHE_DIR", str(tmp_path / "k"))
    assert default_cache_dir() == tmp_path / "k"
    monkeypatch.delenv("FUSER_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "fuser" / "kernels"


_WORKER = textwrap.dedent("""
    import sys
    from fuser.codegen.kernel_cache import KernelCache
    from fuser.codegen.nvrtc import CompileOptions
    role, directory, source = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
    opts = CompileOptions(arch="sm_90")
    cache = KernelCache(directory)
    ref = cache.get(source, name="vadd", options=opts)
    key = cache.disk_key(source, "vadd", opts, "sm_90")
    seen = 0
    for _ in range(300):
        if role == "writer":
            cache._write(key, ref)
        else:
            got = cache._read(key)
            assert got is not None and got.image == ref.image, "partial or stale read"
            seen += 1
    print(role, seen, cache.stats.misses + cache.stats.disk_hits)
""")


def test_cache_is_safe_for_concurrent_processes(tmp_path: Path) -> None:
    src = tmp_path / "k.cu"
    src.write_text(VADD)
    cache_dir = tmp_path / "cache"
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, role, str(cache_dir), str(src)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for role in ("writer", "reader", "writer", "reader")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    assert sorted(o.split()[0] for o, _ in outs) == ["reader", "reader", "writer", "writer"]
    assert all(o.split()[1] in ("0", "300") for o, _ in outs)
    # Exactly one entry, valid, and no temporary file left behind.
    names = sorted(p.name for p in cache_dir.iterdir())
    assert len(names) == 1 and names[0].endswith(".fk"), names
    assert KernelCache(cache_dir).get(VADD, name="vadd", options=SM90).kind == "cubin"
