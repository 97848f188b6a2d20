"""Compiler scaling: the full pipeline to CUDA on very large fusions, against parse + print.

Issue 15, item 6: a 10,000-op pointwise chain and a 10,000-op DAG with reductions go
through the whole pipeline to CUDA, and the pipeline takes at most 3x the time of
parsing and printing the same module. This script generates both modules as fuser IR
text with static shapes ([1024, 1024] f32 inputs) and measures, side by side in one
process and for each N (after a warm-up on small modules, so imports are not timed):

- ``parse+print``: parse the module text (xDSL's parser, fuser's context) and print it
  back as MLIR text;
- ``pipeline``: what ``fuser-opt in.mlir -p "<driver pipeline>,lower-to-kernels" -t cuda``
  does after parsing: every pass of ``fuser.runtime.driver.PASSES`` (the module has
  static shapes: no ``bind-sizes``) and ``lower-to-kernels``, then the CUDA printer,
  each timed; ``ratio`` is pipeline / (parse + print);
- ``+verify``: fuser-opt also verifies the module before the first pass and after
  each one (``--disable-verify`` turns that off; the compiler driver verifies once, at
  the end): timed apart, and the second ratio counts it in.

The chain cycles through binary ops with an input and unary ops; the DAG is blocks of
17 elementwise ops with fan-in and fan-out, each ending in a row ``sum``/``max``
broadcast back into the block's value (chained normalizations), every fifth block
also an output. Both are one kernel (pointwise; inner persistent).

::

    python benchmarks/compile_scaling.py                   # N = 1000 3000 10000, both modules
    python benchmarks/compile_scaling.py 500 2000 --kinds chain --json out.json
    python benchmarks/compile_scaling.py 1000 --nvrtc     # also compile the CUDA (NVRTC)
    python benchmarks/compile_scaling.py 1000 --profile chain   # cProfile of the pipeline

No GPU is needed (``--nvrtc`` needs NVRTC, not a device).
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

ROWS, COLS = 1024, 1024
"""Static extents of every input ([ROWS, COLS] f32)."""

_CHAIN_CYCLE = ("mul y", "tanh", "add x", "sin", "sub y", "cos", "mul x", "sigmoid")
"""The pointwise chain's ops, in turn: binary ops take the chain and an input."""


def _ty(shape: tuple[int, ...]) -> str:
    return "!fuser.tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def chain_module(n: int, rows: int = ROWS, cols: int = COLS) -> str:
    """A fusion of ``n`` pointwise ops, each consuming the previous one's result (and
    for binary ops one of the two inputs)."""
    t = _ty((rows, cols))
    lines = [f"fuser.fusion @chain(%x : {t}, %y : {t}) -> {t} {{"]
    prev = "%x"
    for i in range(n):
        op = _CHAIN_CYCLE[i % len(_CHAIN_CYCLE)]
        name, _, other = op.partition(" ")
        if other:
            lines.append(f"  %v{i} = fuser.{name} {prev}, %{other} : ({t}, {t}) -> {t}")
        else:
            lines.append(f"  %v{i} = fuser.{name} {prev} : ({t}) -> {t}")
        prev = f"%v{i}"
    lines.append(f"  fuser.output {prev} : {t}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dag_module(n: int, rows: int = ROWS, cols: int = COLS, block: int = 20) -> str:
    """A DAG of about ``n`` ops: blocks of ``block`` ops, each block elementwise ops with
    fan-in (binary ops also read the value three back, so values fan out to two
    consumers, across blocks too), then a row reduction (``sum`` or ``max`` over dim 1)
    of the block's last value, broadcast back and subtracted from the value before it
    (values live across the reduction: persistent buffers), which the next block
    continues from; every fifth block's result is also an output of the fusion."""
    t = _ty((rows, cols))
    r = _ty((rows,))
    b = _ty((rows, 1))
    lines = [f"fuser.fusion @dag(%x : {t}, %y : {t}) -> ({{results}}) {{"]
    outs: list[str] = []
    vals = ["%x", "%y"]
    count = 0
    k = 0
    unary = ("tanh", "sin", "exp", "cos", "sigmoid")
    binary = ("add", "mul", "sub", "maximum")
    while count < n:
        k += 1
        body = max(1, min(block - 3, n - count - 3))
        for j in range(body):
            name = f"%a{k}_{j}"
            if j % 2 == 0:
                op = unary[(k + j) % len(unary)]
                lines.append(f"  {name} = fuser.{op} {vals[-1]} : ({t}) -> {t}")
            else:
                op = binary[(k + j) % len(binary)]
                lines.append(f"  {name} = fuser.{op} {vals[-1]}, {vals[-3]} : ({t}, {t}) -> {t}")
            vals.append(name)
        count += body
        red = "sum" if k % 2 else "max"
        lines.append(f"  %r{k} = fuser.{red} {vals[-1]} {{dims = array<i64: 1>}} : ({t}) -> {r}")
        lines.append(
            f"  %b{k} = fuser.broadcast %r{k} {{is_broadcast_dim = array<i1: false, true>}} : ({r}) -> {b}"
        )
        lines.append(f"  %c{k} = fuser.sub {vals[-2]}, %b{k} : ({t}, {b}) -> {t}")
        vals.append(f"%c{k}")
        count += 3
        if k % 5 == 0 and count < n:
            outs.append(f"%c{k}")
    if not outs or outs[-1] != vals[-1]:
        outs.append(vals[-1])
    lines.append(f"  fuser.output {', '.join(outs)} : {', '.join(t for _ in outs)}")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    return text.replace("{results}", ", ".join(t for _ in outs), 1)


KINDS: dict[str, Callable[[int], str]] = {"chain": chain_module, "dag": dag_module}


def pipeline_passes() -> list[str]:
    """The driver's passes after ``bind-sizes`` (shapes are static), then the lowering."""
    from fuser.runtime.driver import PASSES

    return [*PASSES, "lower-to-kernels"]


@dataclass
class Measurement:
    kind: str
    n: int
    ops: int
    parse_s: float
    print_s: float
    pipeline_s: float
    passes: dict[str, float] = field(default_factory=dict)
    kernels: int = 0
    cuda_chars: int = 0
    nvrtc_s: float | None = None
    verify_s: float = 0.0
    """fuser-opt's verifications (before the first pass and after each), not in
    ``pipeline_s``."""

    @property
    def parse_print_s(self) -> float:
        return self.parse_s + self.print_s

    @property
    def ratio(self) -> float:
        """The passes and the CUDA printer over parse + print."""
        return self.pipeline_s / self.parse_print_s

    @property
    def ratio_verified(self) -> float:
        """The same with fuser-opt's verification after every pass."""
        return (self.pipeline_s + self.verify_s) / self.parse_print_s

    def slowest(self, k: int = 3) -> list[tuple[str, float]]:
        return sorted(((p, t) for p, t in self.passes.items() if p != "verify"), key=lambda kv: -kv[1])[:k]


def parse(text: str):
    from xdsl.parser import Parser

    from fuser.ir.context import make_context

    return Parser(make_context(), text).parse_module()


def print_mlir(module) -> str:
    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def run_pipeline(
    module, passes: list[str] | None = None, times: dict[str, float] | None = None, verify: bool = True
) -> str:
    """Every pass of ``passes`` (default: ``pipeline_passes()``) on ``module``, then the
    CUDA printer: fuser-opt's ``-p ... -t cuda`` after the parse. With ``verify`` the
    module is verified before the first pass and after each one, as fuser-opt does.
    ``times`` gets seconds per pass, ``verify`` (all verifications) and ``cuda-print``."""
    from xdsl.passes import PassPipeline

    from fuser.codegen.cuda_printer import print_cuda
    from fuser.ir.context import make_context
    from fuser.ir.gc_pause import paused_gc
    from fuser.passes import all_passes

    times = {} if times is None else times
    ctx = make_context()
    spec = ",".join(passes or pipeline_passes())
    pipeline = PassPipeline.parse_spec(all_passes(), spec)

    def timed(name: str, fn: Callable[[], object]) -> object:
        t0 = time.perf_counter()
        result = fn()
        times[name] = times.get(name, 0.0) + time.perf_counter() - t0
        return result

    with paused_gc():  # as fuser-opt runs (no cyclic collections after the parse)
        if verify:
            timed("verify", module.verify)
        for p in pipeline.passes:
            timed(p.name, lambda p=p: p.apply(ctx, module))
            if verify:
                timed("verify", module.verify)
        return str(timed("cuda-print", lambda: print_cuda(module)))


def measure(kind: str, n: int, nvrtc: bool = False) -> Measurement:
    """Parse + print of the ``kind`` module of ``n`` ops, then the pipeline on a fresh
    parse of it (timed without the parse), side by side."""
    text = KINDS[kind](n)
    ops = sum(1 for line in text.splitlines() if " = fuser." in line)
    gc.collect()  # what an earlier measurement left (the pipeline collects nothing) is not timed here
    t0 = time.perf_counter()
    module = parse(text)
    t1 = time.perf_counter()
    print_mlir(module)
    t2 = time.perf_counter()
    module = parse(text)  # a fresh module for the pipeline (not timed again)
    gc.collect()
    times: dict[str, float] = {}
    cuda = run_pipeline(module, times=times)
    m = Measurement(kind, n, ops, t1 - t0, t2 - t1, sum(v for k, v in times.items() if k != "verify"), times)
    m.verify_s = times.get("verify", 0.0)
    m.kernels = cuda.count("__global__")
    m.cuda_chars = len(cuda)
    if nvrtc:
        from fuser.codegen.nvrtc import compile_cuda

        t5 = time.perf_counter()
        compile_cuda(cuda)
        m.nvrtc_s = time.perf_counter() - t5
    return m


def warm_up() -> None:
    """Import and run everything once on small modules, so that the first measurement
    does not pay for imports."""
    for kind in KINDS:
        text = KINDS[kind](40)
        print_mlir(parse(text))
        run_pipeline(parse(text))


def profile(kind: str, n: int, top: int = 40, sort: str = "tottime") -> None:
    import cProfile
    import pstats

    module = parse(KINDS[kind](n))
    prof = cProfile.Profile()
    prof.enable()
    run_pipeline(module, verify=False)  # as the ratio is measured
    prof.disable()
    pstats.Stats(prof).sort_stats(sort).print_stats(top)


def table(rows: list[Measurement]) -> str:
    head = (
        f"{'kind':<6} {'N':>6} {'parse+print s':>14} {'pipeline s':>11} {'ratio':>6} "
        f"{'+verify s':>10} {'ratio':>6} {'kernels':>8}  slowest passes"
    )
    lines = [head, "-" * len(head)]
    for m in rows:
        slow = ", ".join(f"{k} {v:.2f}" for k, v in m.slowest())
        lines.append(
            f"{m.kind:<6} {m.n:>6} {m.parse_print_s:>14.2f} {m.pipeline_s:>11.2f} {m.ratio:>6.2f} "
            f"{m.verify_s:>10.2f} {m.ratio_verified:>6.2f} {m.kernels:>8}  {slow}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sizes", nargs="*", type=int, default=[1000, 3000, 10000], help="values of N")
    ap.add_argument("--kinds", nargs="+", choices=sorted(KINDS), default=["chain", "dag"])
    ap.add_argument("--json", metavar="PATH", help="also write the measurements as JSON")
    ap.add_argument("--nvrtc", action="store_true", help="also compile the CUDA with NVRTC")
    ap.add_argument("--profile", choices=sorted(KINDS), help="cProfile the pipeline of this kind at the first N")
    ap.add_argument("--recursion-limit", type=int, default=None, help="sys.setrecursionlimit first (default: Python's)")
    args = ap.parse_args(argv)
    if args.recursion_limit:
        sys.setrecursionlimit(args.recursion_limit)
    if args.profile:
        profile(args.profile, args.sizes[0])
        return 0
    warm_up()
    rows: list[Measurement] = []
    for n in args.sizes:
        for kind in args.kinds:
            m = measure(kind, n, args.nvrtc)
            rows.append(m)
            per_pass = "  ".join(f"{k} {v:.2f}" for k, v in m.passes.items())
            print(
                f"{kind} N={n}: parse {m.parse_s:.2f} s, print {m.print_s:.2f} s, pipeline {m.pipeline_s:.2f} s "
                f"(+ verify {m.verify_s:.2f} s): {per_pass}",
                flush=True,
            )
    print()
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            rows_out = [
                {**asdict(m), "parse_print_s": m.parse_print_s, "ratio": m.ratio, "ratio_verified": m.ratio_verified}
                for m in rows
            ]
            json.dump(rows_out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
