"""Which kernels are programmatic dependent launches (sm_90 and later).

Kernels of one stream run one after the other, and between two of them the GPU sits
idle while the second is launched: about 1-3 us a boundary on the H200, what a
three-kernel outer normalization loses beside its 34 us of kernels. A kernel launched
with programmatic stream serialization may be launched while the kernel before it
finishes, provided it waits for that kernel before touching memory: its first
statement (the printer's ``fuser_dependent_launch``) waits for the previous kernel to
complete and its writes to be visible (``griddepcontrol.wait``), then lets the next
kernel launch once all of its own blocks are past that wait
(``griddepcontrol.launch_dependents``).

The order matters. The other one (let the next launch, then wait) allowed three
kernels of a stream in flight: C could start beside A while B waited for A. When A
read a buffer, B rewrote it and C read it through the read-only path
(``ld.global.nc``: ``const __restrict__`` parameters), C got A's stale copy. Random
seed 12891 (an outer persistent kernel's statistics scratch buffer read by its apply
kernel after another size's apply kernel read the same buffer) gave wrong outputs on
the H200 in 79 of 80 alternations under CUDA graphs. Waiting first, or no
``launch_dependents`` at all, or no ``__restrict__``, each gave 0 of 80, and no
failure in the fuzz sequence that found it (``tests/gpu/test_gpu_dependent_launch.py``
keeps that alternation).

The two instructions cost every block some latency, also when nothing overlaps: a
row sum of 65536 rows in 65536 blocks of 128 threads (31 waves of blocks) took 83.7
us with them against 70.8 without. So only kernels of at most ``MAX_WAVES`` waves of
blocks are marked (``kernel.func``'s ``dependent_launch``): the kernels that gain most
(a grid reduction's partials and finishing kernels, a persistent kernel with one
block an SM) are one wave or less. Kernels over thread-block clusters are not marked:
the few-rows softmaxes (one kernel of 8 to 32 clusters) were 0.7-1.0 us slower as
dependent launches in two calls, with no kernel before them to overlap.

    kernel.func @k(...) {block_size = ...}      kernel.func @k(...) {block_size = ...,
                                                                     dependent_launch}

``mark_dependent_launches(lowered, target)`` runs after the lowering, for the target
that schedules the fusion: ``lower_for_launch`` does both, and every path that makes
kernels calls it (the compiler driver's launch path, ``runtime/compile_fusion.py``; the
frontend's lowered segments and kernel strings; the ``lower-to-kernels`` pass), so that
``fuser-opt`` shows the attribute (and ``-t cuda`` the prologue) of what runs. The runtime launches marked kernels with the
attribute (``runtime/cuda_driver.py``, ``runtime/hot_launch.py``) unless
``FUSER_DEPENDENT_LAUNCH=0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import UnitAttr

from fuser.codegen.aliased_args import mark_aliased_args
from fuser.codegen.cuda_printer import kernels_of
from fuser.codegen.lower import lower_segment
from fuser.codegen.lower.common import LoweredFusion, LoweredKernel, TensorLayout
from fuser.ir.dialects import fuser as F
from fuser.schedulers.target import GpuTarget

__all__ = ["MAX_WAVES", "lower_for_launch", "mark_dependent_launches", "waves"]

MAX_WAVES = 2.0
"""Waves of blocks (``waves``) a kernel may have and be a dependent launch."""


def waves(kernel: LoweredKernel, target: GpuTarget) -> float:
    """The kernel's blocks over what the target's SMs hold at once, by threads and
    blocks an SM (registers and shared memory can only make that fewer)."""
    threads = max(1, math.prod(kernel.block))
    per_sm = max(1, min(target.max_threads_per_sm // threads, target.max_blocks_per_sm))
    return math.prod(kernel.grid) / (target.sm_count * per_sm)


def mark_dependent_launches(lowered: LoweredFusion, target: GpuTarget) -> None:
    """Mark the kernels of ``lowered`` that are dependent launches on ``target``: an
    sm_90 or later target, at most ``MAX_WAVES`` waves of blocks, no thread-block
    clusters (module docstring)."""
    if target.compute_capability < (9, 0):
        return
    for kernel in lowered.kernels:
        funcs = kernels_of(kernel.module)
        if waves(kernel, target) > MAX_WAVES or any(f.get_cluster_size() is not None for f in funcs):
            continue
        for func in funcs:
            func.attributes["dependent_launch"] = UnitAttr()


def lower_for_launch(
    fusion: F.FusionOp,
    in_layouts: Sequence[TensorLayout | None],
    target: GpuTarget,
    scalar_values: Sequence[object] | None = None,
    out_layouts: Sequence[TensorLayout] | None = None,
    name: str | None = None,
    in_place: Sequence[tuple[int, int]] = (),
) -> LoweredFusion:
    """The kernels of a scheduled segment as the runtime launches them on ``target``:
    ``lower_segment`` (its arguments), then ``mark_dependent_launches``, and
    ``mark_aliased_args`` for the launch's ``in_place`` pairs (output, input)."""
    lowered = lower_segment(fusion, in_layouts, scalar_values, out_layouts, target, name)
    mark_dependent_launches(lowered, target)
    mark_aliased_args(lowered, in_place)
    return lowered
