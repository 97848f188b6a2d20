"""The ``cuda`` xDSL target: ``fuser-opt file.mlir -t cuda`` prints every
``kernel.func`` of the module as one CUDA C translation unit (see
``codegen/cuda_printer.py``), then a comment naming the segments a library runs
(matrix products: no kernel).

Until ``fuser-opt`` registers it, the same output comes from::

    python -m fuser.codegen.cuda_target file.mlir     # or '-' / no argument: stdin

which exits 1 with a diagnostic (no traceback) on a parse, verifier or print error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from fuser.codegen.cuda_printer import print_cuda
from fuser.ir.dialects.fuser import FusionOp, library_ops


@dataclass(frozen=True)
class CudaTarget(Target):
    """Emit CUDA C for the ``kernel.func`` ops of a module."""

    name = "cuda"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(print_cuda(module) + library_calls(module))


def library_calls(module: ModuleOp) -> str:
    """A closing comment naming the segments that have no kernel because a library
    runs them (``fuser.matmul``/``fuser.linear``: cuBLAS at run time), so the printed
    translation unit accounts for every segment; empty when there are none."""
    lines = [
        f"// @{f.sym_name.data}: {op.name} (cuBLAS through torch at run time)"
        for f in module.walk()
        if isinstance(f, FusionOp)
        for op in library_ops(f)
    ]
    return "\n// Library calls, no generated kernel:\n" + "\n".join(lines) + "\n" if lines else ""


def main(argv: list[str] | None = None) -> int:
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from fuser.codegen.cuda_printer import CudaPrintError
    from fuser.ir.context import make_context, parse_module

    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else "-"
    try:
        text = sys.stdin.read() if path == "-" else open(path).read()
        ctx = make_context()
        if "vector" not in ctx.registered_dialect_names:  # until fuser.ir.context has it
            from xdsl.dialects.vector import Vector

            ctx.load_dialect(Vector)
        module = parse_module(text, ctx)
        CudaTarget().emit(ctx, module, sys.stdout)
    except (OSError, ParseError, DiagnosticException, CudaPrintError) as e:
        sys.stderr.write(f"cuda_target: error: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
