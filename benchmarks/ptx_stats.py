"""The instruction mix of a kernel's main loop in NVRTC's PTX, without a GPU.

``loop_mix(source, kernel)`` compiles ``source`` to PTX for ``compute_90`` (the
options fuser's NVRTC compiles use) and counts the instructions of ``kernel``'s
longest loop (the span from a label to the furthest branch back to it): a proxy for
the instructions an iteration issues when a kernel is bound by issue rather than by
memory (``benchmarks/RESULTS.md``, eleventh session: the wide bf16 layer-norm
backward). PTX is before ptxas's own scheduling and register allocation, so the
counts compare variants of one kernel, not kernels with each other.
"""

from __future__ import annotations

import collections
import re

from fuser.codegen.nvrtc import CompileOptions, compile_cuda

_LABEL = re.compile(r"^(\$L__BB\d+_\d+):", re.M)
_BRANCH = re.compile(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);")
_INSTR = re.compile(r"^\s+(?:@!?%p\d+\s+)?([a-z]+(?:\.[a-z0-9]+)*)", re.M)


def ptx_of(source: str) -> str:
    """NVRTC's PTX for ``source``, for ``compute_90``."""
    return compile_cuda(source, name="ptx_stats", options=CompileOptions(arch="sm_90"), ptx=True).image.decode()


def loop_mix(source: str, kernel: str) -> dict[str, int]:
    """``instructions`` of ``kernel``'s longest loop in PTX, ``f32_arith`` of them
    (``add``/``sub``/``mul``/``fma`` on f32) and ``global_loads``; all zero for a
    kernel without a loop."""
    ptx = ptx_of(source)
    start = ptx.index(f".entry {kernel}(")
    end = ptx.find(".entry ", start + 1)
    body = ptx[start:] if end < 0 else ptx[start:end]
    labels = {m.group(1): m.start() for m in _LABEL.finditer(body)}
    back = [(labels[m.group(1)], m.start()) for m in _BRANCH.finditer(body) if labels.get(m.group(1), m.start()) < m.start()]
    if not back:
        return {"instructions": 0, "f32_arith": 0, "global_loads": 0}
    lo, hi = max(back, key=lambda b: b[1] - b[0])
    ops = collections.Counter(_INSTR.findall(body[lo:hi]))
    return {
        "instructions": sum(ops.values()),
        "f32_arith": sum(n for op, n in ops.items() if op.split(".")[0] in ("add", "sub", "mul", "fma") and op.endswith("f32")),
        "global_loads": sum(n for op, n in ops.items() if op.startswith("ld.global")),
    }
