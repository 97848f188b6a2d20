"""Environment variables set for the length of a block: the benchmarks compare
settings fuser reads from the environment when it compiles (``FUSER_PREFETCH``,
``FUSER_PARTITIONS``, ``FUSER_AOT_PARTITIONER``, ...) in one process."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    """``env`` set in ``os.environ`` inside the block, the old values (or their
    absence) back after."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
