"""fuser's passes, one per module. Every ``ModulePass`` subclass defined in a module of
this package is registered under its ``name`` (kebab-case) for ``fuser-opt`` and
``xdsl-opt``; adding a pass is adding a file.

Registration is lazy: the passes are found by reading the package's files (a class
whose bases name ``ModulePass`` and whose body sets ``name = "..."``), and a pass
module is imported only when its pass is asked for, so building xDSL's multiverse
imports none of them. Modules whose name starts with ``_``, and modules without such
a class (``host_rewrites``: helpers), register nothing.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from functools import cache
from pathlib import Path

from xdsl.passes import ModulePass

PassFactory = Callable[[], type[ModulePass]]


def _is_module_pass(node: ast.ClassDef) -> bool:
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id == "ModulePass":
            return True
        if isinstance(base, ast.Attribute) and base.attr == "ModulePass":
            return True
    return False


def _pass_name(node: ast.ClassDef) -> str | None:
    """The string the class body assigns to ``name``, if any."""
    for stmt in node.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "name" for t in targets):
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    return None


def scan(directory: Path, package: str) -> dict[str, tuple[str, str]]:
    """Pass name -> (module, class) for the pass classes of the modules in
    ``directory`` (package ``package``), read with ``ast``: nothing is imported."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = f"{package}.{path.stem}"
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and _is_module_pass(node):
                name = _pass_name(node)
                if name is None:
                    continue
                if name in found:
                    other = found[name]
                    raise RuntimeError(
                        f"pass name {name!r} is defined twice: {other[0]}.{other[1]} "
                        f"and {module}.{node.name}"
                    )
                found[name] = (module, node.name)
    return dict(sorted(found.items()))


@cache
def pass_locations() -> dict[str, tuple[str, str]]:
    """Pass name -> (module, class) of this package's passes (not imported)."""
    return scan(Path(__file__).parent, __name__)


def _loader(module: str, cls: str) -> PassFactory:
    def load() -> type[ModulePass]:
        return getattr(importlib.import_module(module), cls)

    return load


def all_passes() -> dict[str, PassFactory]:
    """Pass name -> a factory that imports the pass's module and returns its class."""
    return {name: _loader(module, cls) for name, (module, cls) in pass_locations().items()}
