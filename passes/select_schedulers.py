"""``select-schedulers``: annotate each fusion with the scheduler that runs it.

Options: ``gpu`` (``h100`` (default), ``h200`` or ``device``; a module's
``fuser.target`` wins), ``debug`` (also record why the schedulers tried first rejected
the fusion; ``fuser-opt --debug-schedulers`` sets it on every ``select-schedulers`` of
the pipeline). The schedulers decide at the extents of the inputs' types: symbolic
ones are bound first by ``bind-sizes`` (``bind-sizes{sizes="0=4x1024"},select-schedulers``).

Before::

    fuser.fusion @row_sum(%x : !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32> { ... }

After ``select-schedulers``::

    fuser.fusion @row_sum(%x : !fuser.tensor<4x1024xf32>) -> !fuser.tensor<4xf32>
        attributes {fuser.schedule = {kind = "reduction", fastest_dim = true,
                    vectorization = 4 : i64, threads_per_row = 256 : i64, ...}} { ... }

A fusion that no scheduler accepts is an error that lists every rejection
(segmentation calls the registry directly and splits such fusions).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from fuser.ir.dialects.fuser import FusionOp
from fuser.passes.sizes_option import static_sizes
from fuser.passes.target_option import resolve_target
from fuser.schedulers.analysis.sizes import SizeBindingError, bind_sizes
from fuser.schedulers.params import REJECTIONS_ATTR, SCHEDULE_ATTR, schedule_attr
from fuser.schedulers.registry import select


class SelectSchedulersError(DiagnosticException):
    """Bad pass options, or a fusion that no scheduler accepts."""


@dataclass(frozen=True)
class SelectSchedulers(ModulePass):
    """Annotate every ``fuser.fusion`` with ``fuser.schedule`` (kind and params)."""

    name = "select-schedulers"

    gpu: str = ""
    debug: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = resolve_target(op, self.gpu, self.name)
        debug = self.debug
        for fusion in op.walk():
            if not isinstance(fusion, FusionOp):
                continue
            name = f"@{fusion.sym_name.data}"
            try:
                concrete = bind_sizes(fusion, static_sizes(fusion, self.name))
            except SizeBindingError as e:
                raise SelectSchedulersError(f"select-schedulers: {e}") from None
            sel = select(fusion, concrete, target)
            if sel.scheduler is None:
                raise SelectSchedulersError(
                    f"select-schedulers: no scheduler accepts {name} on {target.name}:\n"
                    + sel.explain()
                )
            fusion.attributes[SCHEDULE_ATTR] = schedule_attr(sel.scheduler.kind, sel.params)
            if debug:
                fusion.attributes[REJECTIONS_ATTR] = DictionaryAttr(
                    {k: StringAttr(r) for k, r in sel.rejections}
                )
            elif REJECTIONS_ATTR in fusion.attributes:
                del fusion.attributes[REJECTIONS_ATTR]
