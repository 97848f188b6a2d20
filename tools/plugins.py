"""Third-party dialects, passes and targets for ``fuser-opt``: every ``xdsl.universe``
entry point in the environment other than xDSL's and fuser's own.

A researcher's package declares, as for ``xdsl-opt``::

    [project.entry-points."xdsl.universe"]
    my_project = "my_project.universe:MY_UNIVERSE"

and its passes become ``fuser-opt`` flags (``--my-pass``) and ``-p`` names, its
dialects parse, its targets are ``-t`` choices. A plugin that cannot be loaded, is not
a ``Universe``, or reuses a name already taken is an error naming the plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import XDSL_UNIVERSE, Universe

from fuser.tools.universe import FUSER_UNIVERSE

GROUP = "xdsl.universe"


class PluginError(ValueError):
    """A broken or clashing ``xdsl.universe`` plugin."""


@dataclass
class Plugins:
    """What the plugins add, each name mapped to (plugin, factory)."""

    dialects: dict[str, tuple[str, Callable[[], Dialect]]] = field(default_factory=dict)
    passes: dict[str, tuple[str, Callable[[], type[ModulePass]]]] = field(default_factory=dict)
    targets: dict[str, tuple[str, Callable[[], Any]]] = field(default_factory=dict)


def _load(ep: EntryPoint) -> Universe:
    try:
        universe = ep.load()
    except Exception as e:  # noqa: BLE001 - any import error of a third-party package
        raise PluginError(
            f"xdsl.universe plugin '{ep.name}' ({ep.value}) cannot be loaded: "
            f"{type(e).__name__}: {e}"
        ) from None
    if not isinstance(universe, Universe):
        raise PluginError(
            f"xdsl.universe plugin '{ep.name}' ({ep.value}) is a "
            f"{type(universe).__name__}, not an xdsl.universe.Universe"
        )
    return universe


def _add(
    kind: str,
    table: dict[str, tuple[str, Any]],
    plugin: str,
    names: Iterable[tuple[str, Any]],
    taken: set[str],
) -> None:
    for name, factory in names:
        if name in taken:
            raise PluginError(
                f"xdsl.universe plugin '{plugin}' defines the {kind} '{name}', "
                "which xDSL or fuser already defines"
            )
        if name in table:
            raise PluginError(
                f"xdsl.universe plugins '{table[name][0]}' and '{plugin}' both define "
                f"the {kind} '{name}'"
            )
        table[name] = (plugin, factory)


def discover(
    taken_dialects: Iterable[str], taken_passes: Iterable[str], taken_targets: Iterable[str]
) -> Plugins:
    """The plugins' dialects, passes and targets; ``taken_*`` are the names xDSL and
    fuser already define (a plugin may not redefine them)."""
    found = Plugins()
    dialects, passes, targets = set(taken_dialects), set(taken_passes), set(taken_targets)
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        universe = _load(ep)
        if universe is FUSER_UNIVERSE or universe is XDSL_UNIVERSE:
            continue
        _add("dialect", found.dialects, ep.name, universe.all_dialects.items(), dialects)
        _add("pass", found.passes, ep.name, universe.all_passes.items(), passes)
        _add("target", found.targets, ep.name, universe.all_targets.items(), targets)
    return found
