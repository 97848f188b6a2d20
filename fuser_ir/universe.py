"""The ``xdsl.universe`` entry point: plain ``xdsl-opt`` sees fuser's dialects and
passes once fuser is installed."""

from __future__ import annotations

from xdsl.universe import Universe

from fuser_ir import xdsl_fixes
from fuser_ir.dialects import available_dialects

xdsl_fixes.install()


class _LazyPasses(dict):
    """Import the passes only when xdsl-opt first asks for them."""

    def _fill(self) -> None:
        if not self:
            from xdsl.transforms import get_all_passes

            from passes import all_passes

            # xdsl-opt refuses duplicate names: upstream passes (e.g. its own
            # canonicalize) keep theirs; fuser-opt registers fuser's over them.
            upstream = get_all_passes()
            self.update({k: v for k, v in all_passes().items() if k not in upstream})

    def items(self):  # type: ignore[override]
        self._fill()
        return super().items()

    def keys(self):  # type: ignore[override]
        self._fill()
        return super().keys()

    def __iter__(self):
        self._fill()
        return super().__iter__()

    def __getitem__(self, key):
        self._fill()
        return super().__getitem__(key)


FUSER_UNIVERSE = Universe(all_dialects=available_dialects(), all_passes=_LazyPasses())
