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

import ml_dtypes
import numpy as np

from fuser_ir.dialects.fuser import TensorType
from fuser_ir.dtypes import DType
from fuser_ir.frontend.state import InputSpec
from fuser_ir.shapes import DYN


def is_torch_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and type(x).__name__ in ("Tensor", "Parameter")


def torch_to_numpy(t: Any) -> np.ndarray:
    """A numpy view of a CPU torch tensor (bfloat16 through an int16 view)."""
    import torch

    if t.device.type != "cpu":
        raise ValueError(f"only CPU tensors can be executed on the CPU, got a tensor on {t.device}")
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    fp8 = _FP8_TORCH_NUMPY.get(str(t.dtype))
    if fp8 is not None:  # float8: through a uint8 view
        return t.view(torch.uint8).numpy().view(fp8)
    return t.numpy()


#: torch's float8 dtypes (by name) and their ml_dtypes types.
_FP8_TORCH_NUMPY = {
    "torch.float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "torch.float8_e5m2": ml_dtypes.float8_e5m2,
}


def numpy_to_torch(a: Any) -> Any:
    import torch

    if not isinstance(a, np.ndarray):
        return torch.tensor(a)
    if not a.flags.writeable:
        a = a.copy()
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    for name, fp8 in _FP8_TORCH_NUMPY.items():
        if a.dtype == fp8:
            return torch.from_numpy(a.view(np.uint8)).view(getattr(torch, name.removeprefix("torch.")))
    return torch.from_numpy(a)


def plain_inputs(inputs: Sequence[Any]) -> list[Any]:
    """Torch tensors as numpy arrays, numpy scalars as Python numbers."""
    out: list[Any] = []
    for x in inputs:
        if is_torch_tensor(x):
            out.append(torch_to_numpy(x))
        elif isinstance(x, np.generic):
            out.append(x.item())
        else:
            out.append(x)
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


def user_specs(specs: Sequence[InputSpec]) -> list[InputSpec]:
    """The inputs the caller passes: all but the hidden Philox seed/offset (``rng``)."""
    return [s for s in specs if s.kind != "rng"]


def rng_spec(specs: Sequence[InputSpec]) -> InputSpec | None:
    """The hidden Philox seed/offset inputs of a fusion's random ops, if any."""
    return next((s for s in specs if s.kind == "rng"), None)


def validate_inputs(specs: Sequence[InputSpec], inputs: Sequence[Any]) -> None:
    specs = user_specs(specs)
    if len(inputs) != len(specs):
        names = ", ".join(s.name for s in specs)
        raise ValueError(f"expected {len(specs)} inputs ({names}), got {len(inputs)}")
    for pos, (spec, x) in enumerate(zip(specs, inputs, strict=True)):
        where = f"input {pos} ({spec.name})"
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
    come last, from the generator (``runtime.philox.next_seed_and_offset``, as nvFuser
    takes them from torch's): an execution passes ``draw_rng=True`` (the generator
    moves on), planning and code printing only peek."""
    rng = rng_spec(specs)
    flat = _flatten(user_specs(specs), inputs)
    if rng is not None:
        from runtime.philox import next_seed_and_offset

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
