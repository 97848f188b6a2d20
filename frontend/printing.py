"""Records printed as Python in nvFuser's form::

    def nvfuser_fusion_id3(fd : FusionDefinition) -> None :
        T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
        S1 = fd.define_scalar(2.0, dtype=DataType.Double)
        T2 = fd.ops.mul(T0, S1)
        fd.add_output(T2)

Floats print with ``repr`` so that the text rebuilds the same constants; the body
(without the function name) is also the cache key of the definition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fuser.frontend.datatype import DataType
from fuser.frontend.state import Record, State
from fuser.ir.dtypes import DType


def format_value(v: Any) -> str:
    """``v`` as Python source that evaluates to it (complex numbers as
    ``complex(re, im)``, so that infinite and NaN parts rebuild too)."""
    if isinstance(v, State):
        return v.name
    if isinstance(v, DataType):
        return repr(v)
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, complex):
        return f"complex({format_value(v.real)}, {format_value(v.imag)})"
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    return repr(v)


def format_record(r: Record) -> str:
    parts = [format_value(a) for a in r.args]
    parts += [f"{k}={format_value(v)}" for k, v in r.kwargs]
    call = f"fd.{r.target}({', '.join(parts)})"
    if not r.outputs:
        return call
    return f"{', '.join(o.name for o in r.outputs)} = {call}"


def definition_body(records: Sequence[Record]) -> str:
    return "".join(f"    {format_record(r)}\n" for r in records)


def definition_text(records: Sequence[Record], fusion_id: int | None) -> str:
    name = "nvfuser_fusion" if fusion_id is None else f"nvfuser_fusion_id{fusion_id}"
    body = definition_body(records) or "    pass\n"
    return f"def {name}(fd : FusionDefinition) -> None :\n{body}"


def _array_expr(value: np.ndarray) -> str:
    dt = DType.from_numpy(value.dtype)
    shape = tuple(int(s) for s in value.shape)
    if dt.is_bool:
        base = f"rng.random({shape}) < 0.5"
    elif dt.is_integer:
        base = f"rng.integers(-8, 8, {shape}).astype(np.{dt.value})"
    elif dt is DType.bfloat16:
        base = f"rng.standard_normal({shape}).astype(ml_dtypes.bfloat16)"
    else:
        base = f"rng.standard_normal({shape}).astype(np.{dt.value})"
    strides = value.strides
    if value.ndim > 1 and value.size > 1:
        order = sorted(range(value.ndim), key=lambda a: -strides[a])
        if order != list(range(value.ndim)):
            inv = list(np.argsort(order))
            perm_shape = tuple(shape[a] for a in order)
            base = base.replace(str(shape), str(perm_shape)) + f".transpose({inv})"
    return base


def repro_script(text: str, fn_name: str, inputs: Sequence[Any]) -> str:
    """A self-contained script: imports, the definition, inputs, execution."""
    from fuser.frontend.validation import plain_inputs

    lines = [
        "import ml_dtypes",
        "import numpy as np",
        "",
        "from fuser import DataType, FusionDefinition",
        "",
        "",
        text.rstrip(),
        "",
        "",
        "with FusionDefinition() as fd:",
        f"    {fn_name}(fd)",
        "",
        "rng = np.random.default_rng(0)",
        "inputs = [",
    ]
    for v in plain_inputs(inputs):
        if isinstance(v, np.ndarray):
            lines.append(f"    {_array_expr(v)},")
        elif isinstance(v, list | tuple):
            lines.append(f"    {format_value(list(v))},")
        else:
            lines.append(f"    {format_value(v)},")
    lines += ["]", "outputs = fd.execute(inputs)", "for out in outputs:", "    print(out)", ""]
    return "\n".join(lines)
