"""Where the time of a first call goes: fuser's compile stages, timed in place.

``stage_times()`` wraps the function of each stage for the length of a block, adds
each call's wall time to its stage, and puts the functions back after::

    with stage_times() as spent:
        fd.execute(inputs)
    spent["nvrtc"]  # seconds in NVRTC (disk-cache misses)

The stages (``STAGES``): ``backend``, the torch backend's partitioning and translation
of a captured graph (``torch_backend.compile_graph``); ``driver``, the compiler
driver's pipeline (``driver.compile``); ``schedule``, ``schedule-fusions`` (run on a
segment's first use); ``lower``, the lowering to kernel IR (``lower_for_launch``);
``nvrtc``, NVRTC compiles that miss the disk cache (``compile_cached``). A stage
nested in another (the driver inside the backend's first call) counts in both.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

STAGES: dict[str, tuple[str, str]] = {
    "backend": ("fuser.frontend.torch_backend", "compile_graph"),
    "driver": ("fuser.runtime.driver", "compile"),
    "schedule": ("fuser.runtime.driver:Executable", "schedule"),
    "lower": ("fuser.runtime.compile_fusion", "lower_for_launch"),
    "nvrtc": ("fuser.codegen.kernel_cache", "compile_cached"),
}
"""Stage -> (``module`` or ``module:Class``, attribute): where the wrapped function is
looked up when it is called."""


def _owner(where: str) -> Any:
    module, _, cls = where.partition(":")
    owner = importlib.import_module(module)
    return getattr(owner, cls) if cls else owner


@contextlib.contextmanager
def stage_times(stages: tuple[str, ...] = tuple(STAGES)) -> Iterator[dict[str, float]]:
    """Seconds spent in each of ``stages`` inside the block (module docstring)."""
    spent: dict[str, float] = defaultdict(float)
    saved: list[tuple[Any, str, Any]] = []

    def timed(stage: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - t0

        return wrapper

    try:
        for stage in stages:
            where, attr = STAGES[stage]
            owner = _owner(where)
            inner = owner.__dict__[attr]
            saved.append((owner, attr, inner))
            setattr(owner, attr, timed(stage, getattr(owner, attr)))
        yield spent
    finally:
        for owner, attr, inner in reversed(saved):
            setattr(owner, attr, inner)
