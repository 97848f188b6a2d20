"""The ``xdsl.universe`` entry point: plain ``xdsl-opt`` sees fuser's dialects and
passes once fuser is installed. Both are registered lazily: building the multiverse
imports no dialect or pass module (``fuser.ir.dialects.available_dialects``,
``fuser.passes.all_passes``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.ir import Dialect
from xdsl.universe import Universe

from fuser.ir import xdsl_fixes
from fuser.ir.dialects import available_dialects

if TYPE_CHECKING:
    from fuser.passes import PassFactory

xdsl_fixes.install()


def _fuser_passes() -> dict[str, PassFactory]:
    """fuser's passes (``fuser.passes.all_passes``: factories that import a pass's module
    when it is asked for) without the names xDSL's own passes hold: xdsl-opt refuses
    duplicate names, so upstream passes (e.g. its own canonicalize) keep theirs;
    fuser-opt registers fuser's over them."""
    from xdsl.transforms import get_all_passes

    from fuser.passes import all_passes

    upstream = get_all_passes()
    return {k: v for k, v in all_passes().items() if k not in upstream}


def _fuser_dialects() -> dict[str, Callable[[], Dialect]]:
    """fuser's dialect factories; loading ``fuser`` also installs the ``fuser.schedule``
    check of ``fuser.fusion`` (``fuser.schedulers.params``: the scheduler kinds and their
    parameters are defined above the dialect), as fuser-opt does."""
    dialects = available_dialects()
    load_fuser = dialects["fuser"]

    def fuser_with_schedule_check() -> Dialect:
        import fuser.schedulers.params  # noqa: F401 - installs the check

        return load_fuser()

    dialects["fuser"] = fuser_with_schedule_check
    return dialects


FUSER_UNIVERSE = Universe(all_dialects=_fuser_dialects(), all_passes=_fuser_passes())
