"""The ``sizes`` option of ``bind-sizes`` (the one pass that takes concrete shapes:
the passes after it read the bound types, ``static_sizes``): the concrete shapes of
inputs whose types have symbolic extents.

Entries are separated by commas. Each is ``INDEX=EXTENTS`` or, by position,
``EXTENTS`` (the entry's position is the input index); extents are joined by ``x``
(``4x1024``), and ``INDEX=`` with nothing after it is a rank-0 shape. ``-`` (or an
empty entry) skips an input. For a scalar input, a one-extent entry is its value::

    sizes="0=128x1024,1=128x1024"     inputs #0 and #1
    sizes="128x1024,-,7"              input #0, input #2 (a scalar: 7)

Not a pass: the helper those passes share, as ``host_rewrites`` is for the host passes.
"""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects.fuser import FusionOp, TensorType
from fuser.ir.shapes import DYN, fmt_shape

__all__ = ["SizesOptionError", "input_sizes", "parse_sizes", "static_sizes"]


class SizesOptionError(DiagnosticException):
    """A malformed ``sizes`` option; the message names the pass."""


def parse_sizes(text: str, pass_name: str) -> dict[int, tuple[int, ...]]:
    """``"0=4x1024,1=1024"`` -> ``{0: (4, 1024), 1: (1024,)}`` (see the module
    docstring); errors name ``pass_name``."""
    out: dict[int, tuple[int, ...]] = {}
    for pos, item in enumerate(s.strip() for s in text.split(",")):
        if not item or item == "-":
            continue
        key, sep, value = item.partition("=") if "=" in item else ("", "", item)
        try:
            index = int(key) if sep else pos
            value = value.strip()
            dims = tuple(int(d) for d in value.split("x")) if value else ()
            if index < 0 or any(d < 0 for d in dims) or (not sep and not value):
                raise ValueError
        except ValueError:
            raise SizesOptionError(
                f"{pass_name}: bad sizes entry '{item}'; expected INDEX=EXTENTS such as "
                "0=4x1024 (extents joined by 'x'), EXTENTS by position, or - to skip"
            ) from None
        if index in out:
            raise SizesOptionError(f"{pass_name}: sizes give input #{index} twice")
        out[index] = dims
    return out


def input_sizes(
    fusion: FusionOp, given: dict[int, tuple[int, ...]], pass_name: str
) -> list[object]:
    """What ``fuser.schedulers.analysis.sizes.bind_sizes`` takes for ``fusion``: per
    input, the given shape or its static extents (tensors), the given value or None
    (scalars). Errors (an index past the inputs, a symbolic extent not given, a shape
    of the wrong rank or against a static extent) name ``pass_name``."""
    name = f"@{fusion.sym_name.data}"
    extra = sorted(i for i in given if i >= len(fusion.inputs))
    if extra:
        raise SizesOptionError(
            f"{pass_name}: sizes name input #{extra[0]} but {name} has "
            f"{len(fusion.inputs)} inputs"
        )
    out: list[object] = []
    for i, a in enumerate(fusion.inputs):
        if isinstance(a.type, TensorType):
            if i not in given and DYN in a.type.get_shape():
                raise SizesOptionError(
                    f"{pass_name}: input #{i} of {name} has symbolic extents "
                    f'{fmt_shape(a.type.get_shape())}; give them with sizes="{i}=..."'
                )
            declared = a.type.get_shape()
            shape = given.get(i, declared)
            if len(shape) != len(declared) or any(
                d != DYN and d != s for d, s in zip(declared, shape, strict=True)
            ):
                raise SizesOptionError(
                    f"{pass_name}: {name}: input #{i} has type {a.type} but the "
                    f"given shape is {fmt_shape(shape)}"
                )
            out.append(shape)
        else:
            v = given.get(i)
            out.append(v[0] if v is not None and len(v) == 1 else None)
    return out


def static_sizes(fusion: FusionOp, pass_name: str) -> list[object]:
    """What ``bind_sizes`` takes for ``fusion`` from its types alone (the passes after
    ``bind-sizes``): the static shape of each tensor input, None for scalars. A
    symbolic extent is an error naming ``pass_name`` and pointing at ``bind-sizes``."""
    out: list[object] = []
    for i, a in enumerate(fusion.inputs):
        if isinstance(a.type, TensorType):
            if DYN in a.type.get_shape():
                raise SizesOptionError(
                    f"{pass_name}: input #{i} of @{fusion.sym_name.data} has symbolic extents "
                    f'{fmt_shape(a.type.get_shape())}; bind them first with bind-sizes{{sizes="{i}=..."}}'
                )
            out.append(a.type.get_shape())
        else:
            out.append(None)
    return out
