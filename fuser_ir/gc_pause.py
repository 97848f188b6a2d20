"""Compile without Python's cyclic garbage collector.

IR is a graph full of reference cycles (an op and its block, a value and its uses), so
every automatic collection of the oldest generation walks all of it: on a 10,000-op
fusion (``benchmarks/compile_scaling.py``, the DAG) collections were 30% of the whole
pipeline (100 s against 71 s without). The compiler's entry points (``fuser-opt``, the
compiler driver's ``compile``, a segment's lowering) run inside ``paused_gc()``; what
they leave unreachable is collected by the next automatic collection after it::

    with paused_gc():
        pipeline.apply(ctx, module)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block (nested uses keep it disabled until
    the outermost ends; a collector already disabled by the caller stays so)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
