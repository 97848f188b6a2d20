"""The ``sizes`` option, one grammar for every pass that takes it (``segment``,
``select-schedulers``, ``schedule-fusions``, ``lower-to-kernels``): the concrete shapes
of inputs whose types have symbolic extents.

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

__all__ = ["SizesOptionError", "parse_sizes"]


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
