"""Checking execute() inputs against the definition before anything runs.

Inputs are numpy arrays (torch CPU tensors are converted to numpy views of their
storage, so in-place outputs reach them), Python numbers for scalar inputs and
lists or tuples of ints for vector inputs. Every mismatch is a ``ValueError``
naming the input by position and by its name in the printed definition::

    input 1 (T1): expected dtype float32, got float64
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fuser.frontend.state import InputSpec
from fuser.ir.dialects.fuser import TensorType
from fuser.ir.dtypes import DType
from fuser.ir.shapes import DYN
from fuser.runtime.torch_arrays import torch_to_numpy


def is_torch_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and type(x).__name__ in ("Tensor", "Parameter")


def plain_inputs(inputs: Sequence[Any]) -> list[Any]:
    """Torch tensors as numpy arrays, numpy scalars as Python numbers, and a list or
    tuple spread into consecutive inputs (the n scalar inputs of ``define_vector(n)``
    may be passed as one list)."""
    out: list[Any] = []
    for x in inputs:
        if is_torch_tensor(x):
            out.append(torch_to_numpy(x))
        elif isinstance(x, np.generic):
            out.append(x.item())
        elif isinstance(x, list | tuple):
            out.extend(e.item() if isinstance(e, np.generic) else e for e in x)
        else:
            out.append(x)
    return out


def spread_lists(inputs: Sequence[Any]) -> list[Any]:
    """``inputs`` with each list or tuple spread into consecutive inputs (as
    ``plain_inputs`` does), the rest unchanged."""
    out: list[Any] = []
    for x in inputs:
        out.extend(x) if isinstance(x, list | tuple) else out.append(x)
    return out


def actual_contiguity(a: np.ndarray) -> tuple[bool | None, ...]:
    """nvFuser's contiguity of an array: per axis, whether its stride is the extent
    times stride of the next inner non-broadcast axis (``None`` for broadcast axes:
    extent-1 ones and expanded ones, of stride 0)."""
    item = a.itemsize
    axes = sorted(range(a.ndim), key=lambda i: (a.strides[i], -i))  # innermost first
    out: list[bool | None] = [None] * a.ndim
    expected = 1
    for i in axes:
        if a.shape[i] == 1 or a.strides[i] == 0:
            continue
        stride = a.strides[i] // item
        out[i] = stride == expected
        expected = stride * a.shape[i]
    return tuple(out)


def actual_stride_order(a: np.ndarray) -> tuple[int, ...]:
    """``stride_order[i]``: rank of axis i's stride (``ndim-1`` for the outermost)."""
    ranked = sorted(range(a.ndim), key=lambda i: (a.strides[i], -i))
    order = [0] * a.ndim
    for r, i in enumerate(ranked):
        order[i] = r
    return tuple(order)


# nvFuser's C++ spelling of each dtype (``data_type2string``), used in its messages.
_CPP_DTYPE = {
    "bool": "bool",
    "int32": "int",
    "int64": "int64_t",
    "float16": "__half",
    "bfloat16": "__bfloat",
    "float32": "float",
    "float64": "double",
    "complex64": "std::complex<float>",
    "complex128": "std::complex<double>",
    "float8_e4m3fn": "__e4m3",
    "float8_e5m2": "__e5m2",
}


def cpp_dtype(dt: DType) -> str:
    """nvFuser's name of ``dt`` in its error messages (``float``, ``__half``, ...)."""
    return _CPP_DTYPE.get(dt.value, dt.value)


def _scalar_prefix(dt: DType) -> str:
    """nvFuser's ``typePrefix``: the letter its scalar names start with."""
    if dt.is_bool:
        return "b"
    if dt.is_integer:
        return "i"
    if dt.value.startswith("complex"):
        return "c"
    return "d" if dt is DType.float64 else "f"


def nvfuser_input_names(specs: Sequence[InputSpec]) -> list[str]:
    """The name nvFuser's C++ IR gives each input (``T0``, ``d2``), as its input
    errors print it: tensors count TensorViews, scalars count every scalar ``Val``
    created before them (a ``-1`` or static extent of a tensor input, the shared
    ``0`` and ``1`` extents, constants). Only definitions whose inputs come before
    their first op can be counted this way; other inputs keep their name in the
    printed definition (``S5``)."""
    names = [s.name for s in specs]
    records = _definition_records(specs)
    by_state = {s.state.index: k for k, s in enumerate(specs)}
    tensors = scalars = 0
    shared: set[str] = set()  # the lazily created 0 and 1 Index values

    def special(which: str) -> None:
        nonlocal scalars
        if which not in shared:
            shared.add(which)
            scalars += 1

    for r in records:
        kw = dict(r.kwargs)
        out = r.outputs[0].index if r.outputs else None
        if r.target == "define_tensor":
            shape = list(kw.get("shape", []))
            for d in shape:  # TensorViewBuilder::shape
                if d == 1:
                    special("one")
                elif d == 0:
                    special("zero")
                else:
                    scalars += 1
            contig = list(kw.get("contiguity", []))
            order = kw.get("stride_order")
            rank = len(shape)
            for i, d in enumerate(shape):  # TensorViewBuilder::build, per axis
                p = i if order is None else rank - 1 - order[i]
                if d != 1 and p < len(contig) and contig[p] is None:
                    special("one")
                special("zero")
            if out in by_state:
                names[by_state[out]] = f"T{tensors}"
            tensors += 1
        elif r.target == "define_scalar":
            dt = kw.get("dtype")
            if out in by_state and dt is not None:
                names[by_state[out]] = f"{_scalar_prefix(dt.to_dtype())}{scalars}"
            scalars += 1
        elif r.target == "define_vector" and r.args and isinstance(r.args[0], int):
            scalars += r.args[0]  # one Int scalar input per entry
        elif r.target == "define_vector" and r.args and isinstance(r.args[0], list | tuple):
            scalars += sum(1 for e in r.args[0] if isinstance(e, int))  # inline constants
        else:
            break  # an op: the values it creates are not counted here
    return names


def _definition_records(specs: Sequence[InputSpec]) -> Sequence[Any]:
    """The records of the definition the inputs belong to (empty when unknown)."""
    if not specs:
        return ()
    fd = getattr(specs[0].state, "fd", None)
    state = getattr(fd, "_state", None)
    return getattr(state, "records", ())


def _cpp_value(x: Any) -> str:
    """A Python number as nvFuser prints a ``PolymorphicValue`` (C++ ``ostream``:
    ``2`` for 2.0, ``(2,1)`` for 2+1j, ``1``/``0`` for booleans)."""
    if isinstance(x, bool | np.bool_):
        return str(int(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, complex | np.complexfloating):
        return f"({_cpp_value(float(x.real))},{_cpp_value(float(x.imag))})"
    if isinstance(x, float | np.floating):
        return f"{float(x):g}"
    return repr(x)


def user_specs(specs: Sequence[InputSpec]) -> list[InputSpec]:
    """The inputs the caller passes: all but the hidden Philox seed/offset (``rng``)."""
    return [s for s in specs if s.kind != "rng"]


def rng_spec(specs: Sequence[InputSpec]) -> InputSpec | None:
    """The hidden Philox seed/offset inputs of a fusion's random ops, if any."""
    return next((s for s in specs if s.kind == "rng"), None)


def validate_inputs(specs: Sequence[InputSpec], inputs: Sequence[Any]) -> None:
    """Check ``inputs`` against the definition's ``specs``: a ``ValueError`` naming the
    first bad input. A tensor where a scalar is expected, a scalar or a tensor of
    another rank or dtype where a tensor is expected, and a scalar of an incompatible
    kind raise nvFuser's own messages followed by fuser's (``Expected input 0, T0, to be
    an at::Tensor but got scalar 2 (input 0 (T0): expected a tensor, got 2.0 (float))``)."""
    specs = user_specs(specs)
    if len(inputs) != len(specs):
        names = ", ".join(s.name for s in specs)
        raise ValueError(f"expected {len(specs)} inputs ({names}), got {len(inputs)}")
    cpp_names: list[str] | None = None
    for pos, (spec, x) in enumerate(zip(specs, inputs, strict=True)):
        where = f"input {pos} ({spec.name})"
        if spec.kind in ("tensor", "scalar"):
            problem = _nvfuser_type_mismatch(spec, x)
            if problem is not None:
                if cpp_names is None:
                    cpp_names = nvfuser_input_names(specs)
                text = problem[0].format(prefix=f"Expected input {pos}, {cpp_names[pos]}, ")
                raise ValueError(f"{text} ({where}: {problem[1]})")
        if spec.kind == "tensor":
            _check_tensor(where, spec.type, x)
        elif spec.kind == "scalar":
            _check_scalar(where, DType.from_xdsl(spec.type), x)
        else:
            if not isinstance(x, list | tuple) and not (isinstance(x, np.ndarray) and x.ndim == 1):
                raise ValueError(f"{where}: expected a list or tuple of {spec.length} integers, got {type(x).__name__}")
            if len(x) != spec.length:
                raise ValueError(f"{where}: expected {spec.length} entries, got {len(x)}")
            for k, e in enumerate(x):
                if isinstance(e, bool) or not isinstance(e, int | np.integer):
                    raise ValueError(f"{where}: entry {k} must be an integer, got {e!r}")


def _nvfuser_type_mismatch(spec: InputSpec, x: Any) -> tuple[str, str] | None:
    """When ``x`` is the wrong kind of value for ``spec`` (or a tensor of another rank
    or dtype): nvFuser's ``validateValWithConcreteValue`` message, with a ``{prefix}``
    field for ``Expected input N, NAME, ``, and fuser's own detail; None otherwise
    (fuser's other checks follow)."""
    if spec.kind == "tensor":
        t = spec.type
        assert isinstance(t, TensorType)
        if not isinstance(x, np.ndarray):
            if isinstance(x, bool | int | float | complex | np.generic):
                return (
                    "{prefix}to be an at::Tensor but got scalar " + _cpp_value(x),
                    f"expected a tensor, got {x!r} ({type(x).__name__})",
                )
            return None
        if x.ndim != t.rank:
            return (
                f"{{prefix}}to be bound to a tensor of rank {t.rank}, but got a tensor of rank {x.ndim}",
                f"expected rank {t.rank}, got rank {x.ndim} (shape {list(x.shape)})",
            )
        try:
            got = DType.from_numpy(x.dtype)
        except ValueError:
            return None
        if got != t.dtype:
            return (
                f"{{prefix}}to be bound to a tensor of dtype {cpp_dtype(t.dtype)}, "
                f"but got a tensor of dtype {cpp_dtype(got)}",
                f"expected dtype {t.dtype}, got {got}",
            )
        return None
    dt = DType.from_xdsl(spec.type)
    if isinstance(x, np.ndarray) and x.ndim > 0:
        try:
            got_name = cpp_dtype(DType.from_numpy(x.dtype))
        except ValueError:
            got_name = str(x.dtype)
        return (
            f"{{prefix}}to be a scalar but got {got_name} tensor of rank {x.ndim}",
            f"expected a scalar of dtype {dt}, got a tensor of shape {list(x.shape)}",
        )
    v = x.item() if isinstance(x, np.ndarray | np.generic) else x
    if isinstance(v, complex) and not dt.value.startswith("complex"):
        # nvFuser's isCompatibleDataType: a complex value fits only a complex scalar.
        return (
            f"Scalar value {_cpp_value(v)} is not compatible with the expected data type: {cpp_dtype(dt)}.",
            f"expected a scalar of dtype {dt}, got {v!r} (complex)",
        )
    return None


def _check_tensor(where: str, t: Any, x: Any) -> None:
    assert isinstance(t, TensorType)
    if not isinstance(x, np.ndarray):
        raise ValueError(f"{where}: expected a tensor (numpy array), got {type(x).__name__}")
    want = t.dtype
    try:
        got = DType.from_numpy(x.dtype)
    except ValueError:
        raise ValueError(f"{where}: expected dtype {want}, got unsupported dtype {x.dtype}") from None
    if got != want:
        raise ValueError(f"{where}: expected dtype {want}, got {got}")
    if x.ndim != t.rank:
        raise ValueError(f"{where}: expected rank {t.rank}, got rank {x.ndim} (shape {list(x.shape)})")
    shape = t.get_shape()
    for a, (e, g) in enumerate(zip(shape, x.shape, strict=True)):
        if e != DYN and e != g:
            kind = "broadcast axis" if e == 1 else "static axis"
            raise ValueError(f"{where}: {kind} {a} must have size {e}, got shape {list(x.shape)}")
    problem = layout_mismatch(t, x)
    if problem is not None:
        raise ValueError(f"{where}: {problem}")


def layout_mismatch(t: TensorType, x: np.ndarray) -> str | None:
    """Why the strides of ``x`` (of ``t``'s shape) break ``t``'s declared contiguity
    or stride order; None when they do not."""
    if x.size == 0:
        return None
    declared = t.get_contiguity()
    order = t.get_stride_order()
    got_contig = actual_contiguity(x)
    strides = [s // x.itemsize for s in x.strides]
    for a, c in enumerate(declared):
        if x.shape[a] == 1:
            continue
        if c is None and strides[a] != 0:
            return (
                f"axis {a} is declared an expanded broadcast (contiguity None) but the array's "
                f"strides {strides} (in elements) give it stride {strides[a]}, not 0"
            )
        if c and got_contig[a] is not True:
            return f"axis {a} is declared contiguous but the array's strides {strides} (in elements) are not"
    # Declared contiguous axes also fix the order of the strides (expanded axes,
    # of stride 0, have no place in it).
    if any(declared):
        got_order = actual_stride_order(x)
        relevant = [a for a in range(x.ndim) if x.shape[a] != 1 and strides[a] != 0]
        want_rank = sorted(relevant, key=lambda a: order[a])
        got_rank = sorted(relevant, key=lambda a: got_order[a])
        if want_rank != got_rank:
            return f"expected stride order {list(order)}, but the array's strides are {strides} (in elements)"
    return None


def _check_scalar(where: str, dt: DType, x: Any) -> None:
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    if dt.is_bool:
        ok = isinstance(x, bool | np.bool_)
    elif dt.is_integer:
        ok = isinstance(x, int | np.integer) and not isinstance(x, bool)
    elif dt.is_complex:
        ok = isinstance(x, int | float | complex | np.number) and not isinstance(x, bool)
    else:
        ok = isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
    if not ok:
        raise ValueError(f"{where}: expected a scalar of dtype {dt}, got {x!r} ({type(x).__name__})")


def flatten_inputs(specs: Sequence[InputSpec], inputs: Sequence[Any], *, draw_rng: bool = False) -> list[Any]:
    """One value per fusion block argument (vector inputs become their entries). The
    hidden Philox seed and offset of random ops without ``rng_seed``/``rng_offset``
    come last, from the generator (``fuser.ir.philox.next_seed_and_offset``, as nvFuser
    takes them from torch's): an execution passes ``draw_rng=True`` (the generator
    moves on), planning and code printing only peek."""
    rng = rng_spec(specs)
    flat = _flatten(user_specs(specs), inputs)
    if rng is not None:
        from fuser.ir.philox import next_seed_and_offset

        flat.extend(next_seed_and_offset(rng.length, advance=draw_rng))
    return flat


def _flatten(specs: Sequence[InputSpec], inputs: Sequence[Any]) -> list[Any]:
    flat: list[Any] = []
    for spec, x in zip(specs, inputs, strict=True):
        if spec.kind == "vector":
            flat.extend(int(e) for e in x)
        elif spec.kind == "scalar":
            flat.append(x.item() if isinstance(x, np.ndarray | np.generic) else x)
        else:
            flat.append(x)
    return flat


def input_signature(specs: Sequence[InputSpec], inputs: Sequence[Any], concrete: bool) -> tuple:
    """The second-level cache key: per tensor rank, dtype, contiguity and which axes
    are size 1; sizes and scalar values only when the fusion must be concretized."""
    key: list[Any] = []
    for spec, x in zip(user_specs(specs), inputs, strict=True):
        if spec.kind == "tensor":
            entry: tuple = (x.dtype.str, x.ndim, actual_contiguity(x), tuple(s == 1 for s in x.shape))
            if concrete:
                entry += (tuple(x.shape),)
            key.append(entry)
        elif concrete:
            key.append(tuple(int(e) for e in x) if spec.kind == "vector" else x)
        else:
            key.append(spec.kind)
    return tuple(key)
