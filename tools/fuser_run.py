"""``fuser-run``: run a module on the CPU with the reference interpreter.

::

    fuser-run examples/gelu_bookend_views.mlir                 # random inputs, seed 0
    fuser-run FILE.mlir --fusion gelu --seed 3 -o out.npz       # save the outputs
    fuser-run FILE.mlir --shapes 8x?=16 --scalars 2.5           # bind symbolic extents
    fuser-run FILE.mlir --inputs in.npz                         # inputs from a file

The module's ``hir.program`` runs if there is one (``fuser.runtime.host_evaluator``),
otherwise its fusion (``--fusion NAME`` when there are several) runs through
``fuser.ir.reference.run_fusion``. Random tensors are normal for floats, integers in
``[-8, 8)`` (``[0, 8)`` for unsigned use), uniform booleans; a tensor input with
symbolic extents (``?``) needs its shape from ``--shapes``: one entry per tensor
input, in order, e.g. ``--shapes 4x16 8x?`` where a ``?`` may be given as ``?=N``
or simply as the number. Scalar inputs take ``--scalars`` values (random otherwise).
An ``--inputs`` npz holds one array per input, named ``arg0``, ``arg1``, ... (or by
the input's SSA name).

Outputs are printed (shape, dtype, min/max/mean and the first values) or written to
``-o out.npz`` as ``out0``, ``out1``, ... (bfloat16 stored as float32) with the tensor inputs as ``argN`` (after
the run: outputs aliased to inputs are written into them). Errors exit with status 1 and a message, no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError

import fuser.schedulers.params  # noqa: F401 - installs fuser.fusion's fuser.schedule check
from fuser.ir.context import make_context
from fuser.ir.dialects.fuser import FusionOp, TensorType, dtype_of
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN


class RunError(Exception):
    """A user-facing error of ``fuser-run``."""


# ---- input construction -------------------------------------------------------------


def parse_shape(text: str, declared: Sequence[int], what: str) -> list[int]:
    """``8x?=16x4`` or ``8x16x4`` against the declared shape (``?`` symbolic)."""
    parts = [p for p in text.lower().split("x")] if text else []
    if len(parts) != len(declared):
        raise RunError(f"{what}: --shapes entry '{text}' has {len(parts)} extents, expected {len(declared)}")
    out: list[int] = []
    for axis, (part, want) in enumerate(zip(parts, declared, strict=True)):
        part = part.removeprefix("?=")
        try:
            extent = int(part)
        except ValueError:
            raise RunError(f"{what}: extent '{part}' of axis {axis} is not an integer") from None
        if extent < 0 or (want != DYN and extent != want):
            raise RunError(f"{what}: extent {extent} of axis {axis} does not match the declared {want}")
        out.append(extent)
    return out


def random_value(dtype: DType, shape: Sequence[int] | None, rng: np.random.Generator) -> Any:
    """A random tensor (``shape`` given) or scalar of ``dtype``."""
    size = tuple(shape) if shape is not None else ()
    if dtype.is_bool:
        data = rng.random(size) < 0.5
    elif dtype.is_float:
        data = rng.standard_normal(size)
    elif dtype.is_complex:
        data = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    else:
        data = rng.integers(-8, 8, size=size)
    arr = np.asarray(data).astype(dtype.to_numpy())
    return arr if shape is not None else arr[()]


def parse_scalar(text: str, dtype: DType, what: str) -> Any:
    try:
        if dtype.is_bool:
            if text.lower() not in ("true", "false", "0", "1"):
                raise ValueError(text)
            return np.bool_(text.lower() in ("true", "1"))
        if dtype.is_float:
            return np.asarray(float(text)).astype(dtype.to_numpy())[()]
        if dtype.is_complex:  # Python's spelling: 1+2j
            return np.asarray(complex(text.replace(" ", ""))).astype(dtype.to_numpy())[()]
        return np.asarray(int(text)).astype(dtype.to_numpy())[()]
    except ValueError:
        raise RunError(f"{what}: --scalars value '{text}' is not a {dtype.name}") from None


def make_inputs(
    args: Sequence[SSAValue],
    mode: str,
    seed: int,
    shapes: Sequence[str],
    scalars: Sequence[str],
) -> list[Any]:
    """Inputs for the block arguments ``args`` (random, or from an npz file)."""
    if mode != "random":
        return load_inputs(args, mode)
    rng = np.random.default_rng(seed)
    tensors = [a for a in args if isinstance(a.type, TensorType)]
    if shapes and len(shapes) != len(tensors):
        raise RunError(f"--shapes has {len(shapes)} entries for {len(tensors)} tensor inputs")
    scalar_args = [a for a in args if not isinstance(a.type, TensorType)]
    if scalars and len(scalars) != len(scalar_args):
        raise RunError(f"--scalars has {len(scalars)} entries for {len(scalar_args)} scalar inputs")
    shape_of = dict(zip(tensors, shapes, strict=False))
    scalar_of = dict(zip(scalar_args, scalars, strict=False))
    values: list[Any] = []
    for i, a in enumerate(args):
        what = f"input #{i} ({_describe(a)})"
        t = a.type
        if isinstance(t, TensorType):
            declared = t.get_shape()
            if a in shape_of:
                shape = parse_shape(shape_of[a], declared, what)
            elif DYN in declared:
                raise RunError(f"{what} has symbolic extents: give its shape with --shapes")
            else:
                shape = list(declared)
            values.append(random_value(t.dtype, shape, rng))
        else:
            dtype = dtype_of(t)
            if a in scalar_of:
                values.append(parse_scalar(scalar_of[a], dtype, what))
            else:
                values.append(random_value(dtype, None, rng))
    return values


def load_inputs(args: Sequence[SSAValue], path: str) -> list[Any]:
    if not os.path.isfile(path):
        raise RunError(f"cannot open inputs file '{path}'")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise RunError(f"cannot read '{path}' as an npz file: {e}") from None
    values: list[Any] = []
    for i, a in enumerate(args):
        keys = [f"arg{i}"] + ([a.name_hint] if a.name_hint else [])
        key = next((k for k in keys if k in data.files), None)
        if key is None:
            raise RunError(f"'{path}' has no array for input #{i} (expected key {' or '.join(keys)})")
        arr = data[key]
        dtype = dtype_of(a.type)
        if isinstance(a.type, TensorType) and tuple(arr.shape) != a.type.get_shape():
            declared = a.type.get_shape()
            if len(declared) != arr.ndim or any(d not in (DYN, e) for d, e in zip(declared, arr.shape, strict=True)):
                raise RunError(f"array '{key}' has shape {tuple(arr.shape)}, input #{i} is {a.type}")
        # Stored bfloat16 comes back as float32 (see ``_storable``): cast to the input's dtype.
        arr = np.ascontiguousarray(arr.astype(dtype.to_numpy(), copy=False))
        values.append(arr if isinstance(a.type, TensorType) else arr[()])
    return values


def _describe(v: SSAValue) -> str:
    return f"%{v.name_hint}: {v.type}" if v.name_hint else str(v.type)


# ---- running ---------------------------------------------------------------------------


def find_program(module: ModuleOp) -> Operation | None:
    for op in module.walk():
        if op.name == "hir.program":
            return op
    return None


def find_fusion(module: ModuleOp, name: str | None) -> FusionOp:
    fusions = [op for op in module.walk() if isinstance(op, FusionOp)]
    if name is not None:
        for f in fusions:
            if f.sym_name.data == name:
                return f
        have = ", ".join(f"@{f.sym_name.data}" for f in fusions) or "none"
        raise RunError(f"no fusion @{name} in the module (fusions: {have})")
    if not fusions:
        raise RunError("the module has no fuser.fusion and no hir.program to run")
    if len(fusions) > 1:
        have = ", ".join(f"@{f.sym_name.data}" for f in fusions)
        raise RunError(f"the module has several fusions ({have}): pick one with --fusion")
    return fusions[0]


def run_module(module: ModuleOp, ns: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    """Run the module; returns (inputs, outputs)."""
    program = find_program(module) if ns.fusion is None else None
    if program is not None:
        try:
            from fuser.runtime.host_evaluator import run_program
        except ImportError:
            raise RunError(
                "the module holds an hir.program but the host evaluator "
                "(fuser.runtime.host_evaluator) is not available; run one fusion with --fusion NAME"
            ) from None
        args = program.regions[0].blocks[0].args if program.regions and program.regions[0].blocks else ()
        inputs = make_inputs(args, ns.inputs, ns.seed, ns.shapes, ns.scalars)
        name = program.properties.get("sym_name")
        name_str = name.data if isinstance(name, StringAttr) else "main"
        return inputs, list(run_program(module, inputs, name_str))
    fusion = find_fusion(module, ns.fusion)
    try:
        from fuser.ir.reference import run_fusion
    except ImportError:
        raise RunError("the reference interpreter (fuser.ir.reference) is not available") from None
    inputs = make_inputs(fusion.inputs, ns.inputs, ns.seed, ns.shapes, ns.scalars)
    return inputs, list(run_fusion(fusion, inputs))


# ---- output ------------------------------------------------------------------------------


def summarize(name: str, value: Any, max_values: int = 6) -> str:
    arr = np.asarray(value)
    dtype = DType.from_numpy(arr.dtype).name if arr.dtype != object else str(arr.dtype)
    head = f"{name}: shape {tuple(arr.shape)} {dtype}"
    if arr.size == 0:
        return f"{head} (empty)"
    complex_ = arr.dtype.kind == "c"
    wide = arr.astype(np.complex128 if complex_ else np.float64)
    finite = wide[np.isfinite(wide)]
    if not finite.size:
        stats = "no finite values"
    elif complex_:  # the largest modulus and the mean
        stats = f"max |x| {np.abs(finite).max():.6g} mean {finite.mean():.6g}"
    else:
        stats = f"min {finite.min():.6g} max {finite.max():.6g} mean {finite.mean():.6g}"
    first = ", ".join(f"{x:.6g}" for x in wide.reshape(-1)[:max_values])
    more = ", ..." if arr.size > max_values else ""
    return f"{head} {stats} [{first}{more}]"


def _storable(value: Any) -> np.ndarray:
    """npz cannot hold bfloat16: store it as float32 (exact)."""
    arr = np.asarray(value)
    if arr.dtype == DType.bfloat16.to_numpy():
        return arr.astype(np.float32)
    return arr


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fuser-run", description="Run a fuser module on the CPU (reference interpreter)."
    )
    p.add_argument("file", help="the .mlir module")
    p.add_argument("--fusion", help="name of the fusion to run (default: the only one)")
    p.add_argument("--inputs", default="random", help="'random' (default) or an .npz file")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--shapes", nargs="+", default=[], metavar="AxB", help="shapes of the tensor inputs")
    p.add_argument("--scalars", nargs="+", default=[], metavar="V", help="values of the scalar inputs")
    p.add_argument("-o", "--output", help="write the outputs to this .npz instead of printing")
    return p


def main(argv: Sequence[str] | None = None) -> None:
    ns = _parser().parse_args(argv)
    try:
        if not os.path.isfile(ns.file):
            raise RunError(f"cannot open input file '{ns.file}': no such file")
        with open(ns.file) as f:
            text = f.read()
        try:
            module = Parser(make_context(), text, ns.file).parse_module()
            module.verify()
        except ParseError as e:
            raise RunError(f"parse error at {e}") from None
        except DiagnosticException as e:
            raise RunError(str(e)) from None
        inputs, outputs = run_module(module, ns)
    except RunError as e:
        sys.stderr.write(f"fuser-run: error: {e}\n")
        sys.exit(1)
    except ValueError as e:  # the interpreter's run-time errors (bad inputs, shapes)
        sys.stderr.write(f"fuser-run: error: {e}\n")
        sys.exit(1)
    except MemoryError:
        sys.stderr.write(
            "fuser-run: error: the inputs or outputs do not fit in this machine's memory; "
            "give smaller shapes with --shapes\n"
        )
        sys.exit(1)
    if ns.output:
        arrays = {f"out{i}": _storable(v) for i, v in enumerate(outputs)}
        arrays |= {f"arg{i}": _storable(v) for i, v in enumerate(inputs) if isinstance(v, np.ndarray)}
        try:
            np.savez(ns.output, **arrays)
        except OSError as e:
            sys.stderr.write(f"fuser-run: error: cannot write '{ns.output}': {e.strerror or e}\n")
            sys.exit(1)
        print(f"wrote {len(outputs)} outputs to {ns.output}")
        return
    for i, v in enumerate(outputs):
        print(summarize(f"out{i}", v))


if __name__ == "__main__":
    main(sys.argv[1:])
