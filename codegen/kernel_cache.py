"""A cache of compiled kernels, in memory and on disk.

Compiling with NVRTC takes tens to hundreds of milliseconds, so each compiled kernel is
kept:

- in memory, keyed by ``(canonical source, options, arch)``;
- on disk, in ``$FUSER_CACHE_DIR`` or ``~/.cache/fuser/kernels``, one file per kernel
  named by the SHA-256 of (canonical source, NVRTC options, arch, NVRTC version, header dir).

The canonical source is the source with its kernel name (``name``: the first kernel's,
which the others extend, as ``<name>_finish``) replaced by a marker, so segments that
differ only in their names (a transformer's layers: the backward graph of GPT-2 small
has 75 segments and needs 6 NVRTC compiles) compile once. A hit under
another name returns the image compiled under the first name, with ``asked`` set:
``CompiledKernel.symbol`` maps a kernel's name to its name in the image.

Several processes may share the directory: a file is written to a temporary name in the
same directory and renamed into place with ``os.replace`` (atomic on POSIX), so a reader
sees either no file or a whole one. Each file also records its payload's length and
SHA-256; a file that fails the check (disk full, foreign file) is a miss and is rewritten.

File layout: ``FUSERK1\\n``, an 8-byte little-endian header length, a JSON header
(``key``, ``name``, ``arch``, ``kind``, ``log``, ``size``, ``sha256``), the image.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from fuser.codegen.nvrtc import (
    CompiledKernel,
    CompileOptions,
    compile_cuda,
    cuda_include_dirs,
    nvrtc_version,
)

MAGIC = b"FUSERK1\n"
SUFFIX = ".fk"


def default_cache_dir() -> Path:
    env = os.environ.get("FUSER_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "fuser" / "kernels"


@dataclass
class CacheStats:
    memory_hits: int = 0
    disk_hits: int = 0
    misses: int = 0


class KernelCache:
    """Compiled kernels by source and options. ``directory=None`` means the default
    directory; ``disk=False`` keeps the cache in memory only."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, *,
                 disk: bool = True) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.disk = disk
        self.stats = CacheStats()
        self._memory: dict[tuple[str, CompileOptions, str], CompiledKernel] = {}
        self._compiling: dict[tuple[str, CompileOptions, str], threading.Event] = {}
        """Canonical sources being compiled (or read from disk) by some thread."""
        self._lock = threading.Lock()

    # ---- keys ----------------------------------------------------------------------
    def disk_key(self, source: str, name: str, options: CompileOptions, arch: str) -> str:
        h = hashlib.sha256()
        for part in (canonical_source(source, name), repr(options), arch, repr(nvrtc_version()),
                     repr(cuda_include_dirs())):
            h.update(part.encode())
            h.update(b"\x00")
        return h.hexdigest()

    def path_for(self, key: str) -> Path:
        return self.directory / (key + SUFFIX)

    # ---- lookup --------------------------------------------------------------------
    def get(self, source: str, *, name: str = "kernel", fusion: str | None = None,
            options: CompileOptions | None = None) -> CompiledKernel:
        """The compiled kernel for ``source``, compiling it on a miss."""
        options = options or CompileOptions()
        arch = options.resolved_arch()
        mkey = (canonical_source(source, name), options, arch)
        with self._lock:
            hit = self._memory.get(mkey)
            compiling = self._compiling.get(mkey)
            if hit is None and compiling is None:
                self._compiling[mkey] = done = threading.Event()
        if hit is None and compiling is not None:
            # Another thread compiles the same canonical source (``FusionCompiler.prepare``
            # compiles a program's segments side by side): wait for its image. If it
            # failed, compile here and raise this source's own error.
            compiling.wait()
            hit = self._memory.get(mkey)
            if hit is None:
                return self._compile(mkey, source, name, fusion, options, arch)
        if hit is not None:
            with self._lock:
                self.stats.memory_hits += 1
            return _as_asked(hit, name)
        try:
            return self._compile(mkey, source, name, fusion, options, arch)
        finally:
            with self._lock:
                del self._compiling[mkey]
            done.set()

    def _compile(self, mkey: tuple, source: str, name: str, fusion: str | None, options: CompileOptions,
                 arch: str) -> CompiledKernel:
        """The disk cache's image, or NVRTC's, of a source the memory cache misses."""
        key = self.disk_key(source, name, options, arch) if self.disk else ""
        if self.disk:
            loaded = self._read(key)
            if loaded is not None:
                with self._lock:
                    self.stats.disk_hits += 1
                    self._memory[mkey] = loaded
                return _as_asked(loaded, name)
        compiled = compile_cuda(source, name=name, fusion=fusion,
                                options=replace(options, arch=arch))
        if self.disk:
            self._write(key, compiled)
        with self._lock:
            self.stats.misses += 1
            self._memory.setdefault(mkey, compiled)
        return compiled

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    def __len__(self) -> int:
        return len(self._memory)

    # ---- disk ----------------------------------------------------------------------
    def _read(self, key: str) -> CompiledKernel | None:
        try:
            data = self.path_for(key).read_bytes()
        except OSError:
            return None
        try:
            if not data.startswith(MAGIC):
                return None
            off = len(MAGIC)
            (hlen,) = struct.unpack_from("<Q", data, off)
            off += 8
            header = json.loads(data[off:off + hlen])
            image = data[off + hlen:]
            if (header["key"] != key or header["size"] != len(image)
                    or header["sha256"] != hashlib.sha256(image).hexdigest()):
                return None
            return CompiledKernel(image=image, kind=header["kind"], arch=header["arch"],
                                  name=header["name"], log=header["log"])
        except (ValueError, KeyError, struct.error, TypeError):
            return None

    def _write(self, key: str, compiled: CompiledKernel) -> None:
        header = json.dumps({
            "key": key, "name": compiled.name, "arch": compiled.arch, "kind": compiled.kind,
            "log": compiled.log, "size": len(compiled.image),
            "sha256": hashlib.sha256(compiled.image).hexdigest(),
        }).encode()
        blob = MAGIC + struct.pack("<Q", len(header)) + header + compiled.image
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp",
                                       dir=self.directory)
        except OSError:
            return  # an unwritable cache directory only costs recompilation
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path_for(key))
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


NAME_MARKER = "\x00kernel\x00"
"""What a source's kernel name becomes in its canonical form (no CUDA source holds it)."""


def canonical_source(source: str, name: str) -> str:
    """``source`` with its kernel name ``name`` replaced by ``NAME_MARKER`` (module
    docstring): two sources are equal here when one is the other with its name
    changed (every occurrence, so that a name also used for something else cannot
    make two different programs equal)."""
    return source.replace(name, NAME_MARKER) if name else source


def _as_asked(compiled: CompiledKernel, name: str) -> CompiledKernel:
    return compiled if compiled.name == name else replace(compiled, asked=name)


_default: KernelCache | None = None


def default_cache() -> KernelCache:
    """The process-wide cache (directory from ``$FUSER_CACHE_DIR`` at first use)."""
    global _default
    if _default is None:
        _default = KernelCache()
    return _default


def compile_cached(source: str, *, name: str = "kernel", fusion: str | None = None,
                   options: CompileOptions | None = None) -> CompiledKernel:
    """:func:`fuser.codegen.nvrtc.compile_cuda` through the default cache."""
    return default_cache().get(source, name=name, fusion=fusion, options=options)
