"""The scheduler interface.

Every scheduler answers three questions about a ``fuser.fusion``:

* ``can_schedule_compile_time(fusion)``: from the IR alone (ops, reduction type,
  persistent buffers), ``None`` when it can, else a ``Reject`` with the reason;
* ``can_schedule_run_time(fusion, sizes, target)``: given concrete sizes and the
  target GPU (buffers fit, enough rows...), ``None`` or a ``Reject``;
* ``heuristic(fusion, sizes, target)``: the typed parameters of the kernel.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from xdsl.ir import BlockArgument, Operation, SSAValue

from fuser.ir.dialects.fuser import FusionOp, OutputOp, TensorType

from .analysis.sizes import ConcreteSizes
from .params import Params
from .target import GpuTarget


@dataclass(frozen=True)
class Reject:
    """Why a scheduler cannot take a fusion."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def alone_reject(fusion: FusionOp, op: Operation, runs: str) -> Reject | None:
    """Why ``op`` is not alone in ``fusion``: it must be the fusion's only op, on
    fusion inputs only, its result the only output (the segments a library call or a
    communication runs; ``runs`` names who runs it)."""
    ops = [o for o in fusion.body.block.ops if not isinstance(o, OutputOp)]
    if len(ops) != 1:
        others = sorted({o.name for o in ops if o is not op})
        return Reject(f"{op.name} shares the fusion with {', '.join(others)}; {runs} runs it alone")
    for i, v in enumerate(op.operands):
        if not isinstance(v, BlockArgument):
            return Reject(f"operand #{i} of {op.name} is computed in the fusion, not an input")
    outs = fusion.output_op.values
    if not outs or any(v is not op.results[0] for v in outs):
        return Reject(f"the fusion's outputs are not just the result of {op.name}")
    return None


class Scheduler(ABC):
    kind: ClassVar[str]
    launches_kernel: ClassVar[bool] = True
    runs_library_ops: ClassVar[bool] = False
    """Whether it takes ``fuser.matmul``/``fuser.linear`` (only the ``matmul``
    scheduler: a library call runs them); ``select_among`` rejects a fusion holding
    one for every other scheduler."""
    runs_communications: ClassVar[bool] = False
    """Whether it takes ``fuser.reshard`` (only the ``communication`` scheduler);
    ``select_among`` rejects a fusion holding one for every other scheduler."""

    @classmethod
    @abstractmethod
    def can_schedule_compile_time(cls, fusion: FusionOp) -> Reject | None: ...

    @classmethod
    def can_schedule_run_time(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        return None

    @classmethod
    @abstractmethod
    def heuristic(cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget) -> Params: ...

    @classmethod
    def can_schedule(
        cls, fusion: FusionOp, sizes: ConcreteSizes, target: GpuTarget
    ) -> Reject | None:
        return cls.can_schedule_compile_time(fusion) or cls.can_schedule_run_time(
            fusion, sizes, target
        )


# ---- helpers shared by the heuristics ---------------------------------------------


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def round_up(n: int, multiple: int) -> int:
    return ceil_div(n, multiple) * multiple


def vector_width(itemsize: int, extents: list[int], target: GpuTarget) -> int:
    """The widest vector (in elements) of at most 16 bytes that divides every extent
    in ``extents`` (the innermost extents of the vectorized tensors)."""
    vec = max(1, target.max_access_bytes // itemsize)
    while vec > 1 and any(e % vec for e in extents):
        vec //= 2
    return vec


def max_itemsize(values: list[SSAValue]) -> int:
    sizes = [v.type.dtype.itemsize for v in values if isinstance(v.type, TensorType)]
    return max(sizes, default=4)


def tensor_io(fusion: FusionOp) -> list[SSAValue]:
    """Tensor inputs and outputs (what a kernel reads and writes)."""
    ins = [a for a in fusion.inputs if isinstance(a.type, TensorType)]
    outs = [v for v in fusion.output_op.values if isinstance(v.type, TensorType)]
    return ins + outs


def prod(xs: list[int] | tuple[int, ...]) -> int:
    return math.prod(xs)
