"""Which kernel arguments may point into one buffer: an in-place update's.

The printer declares a tensor argument the kernel only reads ``const T* __restrict__``
(NVRTC then loads it through the read-only path, ``ld.global.nc``) and one it writes
``T* __restrict__``. Both promise that no other argument reaches the same memory. An
in-place update breaks that promise: ``mark-aliases`` makes the launch write output
``j`` into the buffer of its input ``i`` (``hir.launch @f(%x, ...) outs(%x)``), and a
segment may alias an output to an input itself (``alias_inputs``). The kernel then
reads ``in{i}`` and writes ``out{j}`` at the same addresses: undefined behaviour under
``__restrict__``, and read-only loads of memory that changes while the kernel (or,
with programmatic dependent launch, the kernel after it) runs.

``mark_aliased_args(lowered, in_place)`` lists, on each kernel of a lowered segment,
the positions of the arguments that are such an input or output
(``kernel.func``'s ``aliased_args``); the printer declares them plain ``T*``::

    kernel.func @k(%in0 : memref<?xf32>, %in1 : memref<?xf32>, %out0 : memref<?xf32>)
        attributes {..., aliased_args = array<i64: 0, 2>}

    extern "C" __global__ void ... k(float* in0, const float* __restrict__ in1,
                                     float* out0)

``in_place`` pairs come from the program (``in_place_pairs``: what ``fuser-opt`` and
``fd.generate_cuda_code`` show) or, at run time, from the pointers themselves
(``runtime/compile_fusion.launch_fusion``: an output buffer that is an input's).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, i64

from fuser.codegen.cuda_printer import kernels_of
from fuser.codegen.lower.common import LoweredFusion, LoweringError
from fuser.ir.dialects import fuser as F
from fuser.ir.dialects import hir as H

__all__ = ["in_place_pairs", "mark_aliased_args"]


def in_place_pairs(launch: H.LaunchOp, seg: F.FusionOp) -> tuple[tuple[int, int], ...]:
    """(output ``j``, input ``i``) for every output of ``seg`` that ``launch`` writes
    into the buffer of its argument ``i``: an output the segment aliases to an input
    (``alias_inputs``), or a returned output whose ``outs`` buffer is one of the
    launch's arguments."""
    outs = list(launch.outs)
    args = list(launch.args)
    pairs: list[tuple[int, int]] = []
    returned = 0
    for j, alias in enumerate(seg.output_op.get_alias_inputs()):
        if alias >= 0:
            pairs.append((j, alias))
            continue
        if returned < len(outs):
            buf = outs[returned]
            pairs.extend((j, i) for i, a in enumerate(args) if a is buf)
        returned += 1
    return tuple(sorted(set(pairs)))


def mark_aliased_args(lowered: LoweredFusion, in_place: Sequence[tuple[int, int]]) -> None:
    """Set ``aliased_args`` on the kernels of ``lowered`` that take an input or an
    output of the ``in_place`` pairs (output ``j``, input ``i``)."""
    if not in_place:
        return
    inputs = {i for _, i in in_place}
    outputs = {j for j, _ in in_place}
    for kernel in lowered.kernels:
        positions = [
            p for p, a in enumerate(kernel.args)
            if (a.kind == "input" and a.index in inputs) or (a.kind == "output" and a.index in outputs)
        ]
        if not positions:
            continue
        funcs = [f for f in kernels_of(kernel.module) if f.sym_name.data == kernel.name]
        if len(funcs) != 1 or len(funcs[0].args) != len(kernel.args):
            # Never leave an aliased argument __restrict__ on a guess.
            raise LoweringError(f"kernel {kernel.name}: its module has no kernel.func @{kernel.name} "
                                f"of its {len(kernel.args)} arguments to mark aliased_args on")
        funcs[0].attributes["aliased_args"] = DenseArrayBase.from_list(i64, positions)
