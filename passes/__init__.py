"""fuser's passes, one per module. Every ``ModulePass`` subclass defined in a module of
this package is registered under its ``name`` (kebab-case) for ``fuser-opt`` and
``xdsl-opt``; adding a pass is adding a file."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable

from xdsl.passes import ModulePass


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    found: dict[str, type[ModulePass]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(obj, ModulePass)
                and obj is not ModulePass
                and obj.__module__ == module.__name__
                and isinstance(getattr(obj, "name", None), str)
            ):
                found[obj.name] = obj
    return {name: (lambda cls=cls: cls) for name, cls in sorted(found.items())}
