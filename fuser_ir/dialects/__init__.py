"""fuser's xDSL dialects: ``fuser`` (tensors), ``iterdomain`` (iteration domains and
their transforms), ``hir`` (host programs) and ``kernel`` (kernel-level IR).

Each dialect lives in its own module that ends with its ``Dialect(...)``. This
package only knows where they are, so that a new dialect is one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.ir import Dialect

# dialect name -> (module, attribute holding the Dialect)
_DIALECTS: dict[str, tuple[str, str]] = {
    "fuser": ("fuser.ir.dialects.fuser", "Fuser"),
    "iterdomain": ("fuser.ir.dialects.iterdomain", "IterDomain"),
    "hir": ("fuser.ir.dialects.hir", "Hir"),
    "kernel": ("fuser.ir.dialects.kernel", "Kernel"),
}


def _loader(module: str, attr: str) -> Callable[[], Dialect]:
    def load() -> Dialect:
        return getattr(importlib.import_module(module), attr)

    return load


def available_dialects() -> dict[str, Callable[[], Dialect]]:
    """Name -> factory for every fuser dialect whose module exists."""
    out: dict[str, Callable[[], Dialect]] = {}
    for name, (module, attr) in _DIALECTS.items():
        if importlib.util.find_spec(module) is not None:
            out[name] = _loader(module, attr)
    return out
